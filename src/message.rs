//! A delivered server message as the app sees it.

use wasm_bindgen::JsValue;

/// One message delivered to the app. Structured-cloneable (plain strings and
/// a `data` value), so a later cross-tab leader can post it as is.
pub struct Message {
    /// The event's own id (`id:` line of its block), or `""` when it had none.
    pub id: String,
    /// The cursor after this event (WHATWG "last event ID string").
    pub last_event_id: String,
    /// Event type: `"message"` unless the server named it (`event:`).
    pub event: String,
    /// The data: a string, or the `JSON.parse`d value when `parse: "json"`.
    pub data: JsValue,
    /// The transport that delivered it (`"eventsource"`, `"fetch-sse"`, …).
    pub transport: &'static str,
}

impl Message {
    /// The JS object handed to listeners: `{ type, id, lastEventId, event, data, transport }`.
    pub fn to_js(&self) -> JsValue {
        let o = js_sys::Object::new();
        set(&o, "type", &JsValue::from_str(&self.event));
        set(&o, "id", &JsValue::from_str(&self.id));
        set(&o, "lastEventId", &JsValue::from_str(&self.last_event_id));
        set(&o, "event", &JsValue::from_str(&self.event));
        set(&o, "data", &self.data);
        set(&o, "transport", &JsValue::from_str(self.transport));
        o.into()
    }
}

/// `o[key] = value`; a failure is impossible on a fresh plain object.
pub fn set(o: &js_sys::Object, key: &str, value: &JsValue) {
    let _ = js_sys::Reflect::set(o, &JsValue::from_str(key), value);
}
