//! `subscribe()` options as the app passes them (JS names, camelCase). Every
//! duration is a number of milliseconds and says so in its name (`…Ms`).
//! The full table, with defaults, is in the README and DESIGN.md.
//!
//! Read with `Reflect.get` rather than serde-wasm-bindgen: serde's error path
//! formats floats and links `core::fmt`, which cost 13.6 KB gzip of the bundle
//! (measured with `make size`, see README "Size"). Unknown keys are ignored and
//! a value of the wrong type falls back to the default, so an app written
//! against a newer version keeps working.

use wasm_bindgen::JsValue;

/// How message data reaches the app.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
pub enum Parse {
    /// The data string as sent (default).
    #[default]
    Text,
    /// `JSON.parse(data)`; a failure is an `error` event with code `parse`.
    Json,
}

/// The subscription options read so far.
#[derive(Default)]
pub struct Options {
    /// `events`: named event types delivered besides `message`. Default `[]`.
    pub events: Vec<String>,
    /// `parse`: `"text"` (default) or `"json"`.
    pub parse: Parse,
    /// `withCredentials`: send cookies cross-origin. Default `false`.
    pub with_credentials: bool,
    /// `lastEventId`: initial cursor (resume from a stored id). Default `""`.
    pub last_event_id: String,
    /// `lastEventIdParam`: query parameter carrying the cursor. Default
    /// `"lastEventId"` (nchan: `last_event_id`).
    pub last_event_id_param: Option<String>,
    /// `seed`: seeds the jitter PRNG, for reproducible tests. Default: random
    /// (`crypto.getRandomValues`).
    pub seed: Option<f64>,
    /// `backoff.floorMs`: least delay before any reconnect, ms. Default 1000.
    pub floor_ms: Option<f64>,
    /// `backoff.baseMs`: exponential step, ms. Default 500.
    pub base_ms: Option<f64>,
    /// `backoff.maxMs`: cap of the exponential part, ms. Default 60 000.
    pub max_ms: Option<f64>,
}

impl Options {
    /// Read options from a JS value; `undefined`/`null` give the defaults.
    pub fn from_js(v: &JsValue) -> Self {
        if !v.is_object() {
            return Options::default();
        }
        let backoff = get(v, "backoff");
        Options {
            events: get_strings(v, "events"),
            parse: match get(v, "parse").as_string().as_deref() {
                Some("json") => Parse::Json,
                _ => Parse::Text,
            },
            with_credentials: get(v, "withCredentials").as_bool().unwrap_or(false),
            last_event_id: get(v, "lastEventId").as_string().unwrap_or_default(),
            last_event_id_param: get(v, "lastEventIdParam").as_string(),
            seed: get(v, "seed").as_f64(),
            floor_ms: get(&backoff, "floorMs").as_f64(),
            base_ms: get(&backoff, "baseMs").as_f64(),
            max_ms: get(&backoff, "maxMs").as_f64(),
        }
    }

    /// The cursor's query parameter name.
    pub fn cursor_param(&self) -> &str {
        self.last_event_id_param.as_deref().unwrap_or("lastEventId")
    }
}

/// `o[key]`, or `undefined` when `o` is not an object or the getter throws.
fn get(o: &JsValue, key: &str) -> JsValue {
    if !o.is_object() {
        return JsValue::UNDEFINED;
    }
    js_sys::Reflect::get(o, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// `o[key]` as an array of strings; non-string entries are skipped.
fn get_strings(o: &JsValue, key: &str) -> Vec<String> {
    let v = get(o, key);
    if !js_sys::Array::is_array(&v) {
        return Vec::new();
    }
    js_sys::Array::from(&v)
        .iter()
        .filter_map(|x| x.as_string())
        .collect()
}
