//! The JS API: `subscribe(url, options)` → [`Subscription`].
//!
//! ```js
//! import init, { subscribe } from "tidings";
//! await init();
//! const sub = subscribe("/sse", { parse: "json" });
//! sub.addEventListener("message", (e) => console.log(e.id, e.event, e.data));
//! sub.close();
//! ```

pub(crate) mod events;
pub(crate) mod options;
mod subscription;

pub use subscription::Subscription;

use wasm_bindgen::prelude::*;

/// Subscribe to `url` (relative, `http:` or `https:`).
///
/// Throws an `Error` whose `code` is `invalid-url` for any other URL. Options
/// of the wrong type fall back to their defaults.
#[wasm_bindgen]
pub fn subscribe(url: &str, options: JsValue) -> Result<Subscription, JsValue> {
    if !is_allowed_url(url) {
        return Err(error(
            "invalid-url",
            "url must be relative, http: or https:",
        ));
    }
    let parsed = options::Options::from_js(url, &options);
    Ok(Subscription::start(url, &options, parsed))
}

/// Relative URLs, and absolute ones with an `http`/`https` scheme only.
/// A scheme is letters/digits/`+-.` before the first `:` that comes before any
/// `/`, `?` or `#` (RFC 3986 §3.1).
pub(crate) fn is_allowed_url(url: &str) -> bool {
    let url = url.trim();
    if url.is_empty() {
        return false;
    }
    let end = url.find(['/', '?', '#']).unwrap_or(url.len());
    match url[..end].find(':') {
        None => true,
        Some(i) => {
            let scheme = &url[..i];
            scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
        }
    }
}

/// A JS `Error` with a stable `code` property (the contract's error codes).
pub(crate) fn error(code: &str, message: &str) -> JsValue {
    let e = js_sys::Error::new(message);
    crate::js::set(&e, "code", &JsValue::from_str(code));
    e.into()
}
