//! Small helpers for building the plain JS objects tidings hands to the app.

use wasm_bindgen::JsValue;

/// `o[key] = value`; a failure is impossible on a fresh plain object.
pub fn set(o: &js_sys::Object, key: &str, value: &JsValue) {
    let _ = js_sys::Reflect::set(o, &JsValue::from_str(key), value);
}
