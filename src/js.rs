//! Small helpers for building the plain JS objects tidings hands to the app.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsValue;

thread_local! {
    /// Constant strings already handed to JS, by address and length of the
    /// `&'static str`. Each crossing of a string is a `TextDecoder.decode` in
    /// the glue: the property names of every message object (and the
    /// transport names) cross once instead of once per message, the largest
    /// cost of ingest otherwise (docs/bench.md). Bounded by the number of
    /// literals in the program.
    static NAMES: RefCell<Vec<((usize, usize), JsValue)>> = const { RefCell::new(Vec::new()) };
}

/// The JS string for the constant `s` (a cached handle), decoded once per
/// program.
pub fn name(s: &'static str) -> JsValue {
    let key = (s.as_ptr() as usize, s.len());
    NAMES.with(|names| {
        let mut names = names.borrow_mut();
        // The name used last is first: the hot path's (a message batch's
        // transport) is found at once in a list of every literal.
        match names.iter().position(|(k, _)| *k == key) {
            Some(i) => names.swap(0, i),
            None => names.insert(0, (key, JsValue::from_str(s))),
        }
        match names.first() {
            Some((_, v)) => v.clone(),
            None => JsValue::from_str(s),
        }
    })
}

/// `o[key] = value` for a constant `key` (decoded once, see [`name`]);
/// a failure is impossible on a fresh plain object.
pub fn set(o: &js_sys::Object, key: &'static str, value: &JsValue) {
    // Through `name` (a handle of its own, dropped after): one copy of the
    // cache's code for every caller.
    let _ = js_sys::Reflect::set(o, &name(key), value);
}

/// `o[key] = value` for a key only known at run time (decoded each call).
#[cfg(any(feature = "debug", feature = "rust"))]
pub fn set_dyn(o: &js_sys::Object, key: &str, value: &JsValue) {
    let _ = js_sys::Reflect::set(o, &JsValue::from_str(key), value);
}

/// `value` converted to a string as WebIDL does for a `DOMString` argument
/// (`String(value)`, except that a Symbol is a `TypeError`; a `toString`
/// that throws is its error). For app values the glue cannot take as `&str`:
/// wasm-bindgen's string passing reads `.length` and traps on a number.
pub fn to_string(value: &JsValue) -> Result<String, JsValue> {
    dom_string(value)
}

#[wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// [`to_string`]'s conversion (`domString` in `boundary.js`).
    #[wasm_bindgen(js_name = domString, catch)]
    fn dom_string(value: &JsValue) -> Result<String, JsValue>;
}

/// ` (<url>)`, after an error's message (nothing for an empty `url`): every
/// error names the URL it concerns, so an app with several streams can tell
/// which one failed.
pub(crate) fn push_url(message: &mut String, url: &str) {
    if !url.is_empty() {
        message.push_str(" (");
        message.push_str(url);
        message.push(')');
    }
}

/// A JS `Error` with a stable `code` property (the contract's error codes).
pub(crate) fn error(code: &str, message: &str) -> JsValue {
    let e = js_sys::Error::new(message);
    set(&e, "code", &JsValue::from_str(code));
    e.into()
}

#[wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// Write one debug entry `what` with `details` to `to`: the app's
    /// `debug` function (what it throws is reported, the caller goes on),
    /// else (`to` not a function) `console.debug("[tidings]", what, details)`.
    #[wasm_bindgen(js_name = debugLog)]
    pub fn debug_log(to: &JsValue, what: &str, details: &JsValue);
}

#[cfg(feature = "send")]
#[wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// The global scope (the window, or a worker's scope) as the target of
    /// its `online`/`offline`/`pagehide` events (`globalScope` in
    /// `boundary.js`).
    #[wasm_bindgen(js_name = globalScope)]
    pub(crate) fn global() -> web_sys::EventTarget;

    /// Whether the global scope is a `Window` (a `JsValue`: an import with
    /// nothing to convert would take the whole snippet module into the
    /// bundle).
    #[wasm_bindgen(js_name = inWindow)]
    fn in_window_js() -> JsValue;
}

/// Whether this runs in a window (`pagehide` is a window's event).
#[cfg(feature = "send")]
pub(crate) fn in_window() -> bool {
    in_window_js().is_truthy()
}
