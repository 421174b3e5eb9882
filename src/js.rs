//! Small helpers for building the plain JS objects tidings hands to the app.

use wasm_bindgen::prelude::*;

/// `o[key] = value`; a failure is impossible on a fresh plain object.
pub fn set(o: &js_sys::Object, key: &str, value: &JsValue) {
    let _ = js_sys::Reflect::set(o, &JsValue::from_str(key), value);
}

#[wasm_bindgen]
extern "C" {
    /// The global `String` function: `String(value)`.
    #[wasm_bindgen(js_name = String, catch)]
    fn js_string(value: &JsValue) -> Result<JsValue, JsValue>;
}

/// `value` converted to a string as WebIDL does for a `DOMString` argument
/// (`String(value)`, except that a Symbol is a `TypeError`; a `toString`
/// that throws is its error). For app values the glue cannot take as `&str`:
/// wasm-bindgen's string passing reads `.length` and traps on a number.
pub fn to_string(value: &JsValue) -> Result<String, JsValue> {
    if value.is_symbol() {
        return Err(js_sys::TypeError::new("cannot convert a Symbol to a string").into());
    }
    Ok(js_string(value)?.as_string().unwrap_or_default())
}
