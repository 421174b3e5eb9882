//! What this browser can do, detected once per connection at start: the
//! engine filters the transport preference list by it.

use tidings_core::engine::Capabilities;
use wasm_bindgen::JsValue;

fn has(global: &JsValue, name: &str) -> bool {
    js_sys::Reflect::get(global, &JsValue::from_str(name))
        .map(|v| v.is_function())
        .unwrap_or(false)
}

/// `EventSource`, streaming `fetch` bodies (`ReadableStream` + `Response.body`)
/// and `AbortController` on the global object.
pub fn detect() -> Capabilities {
    let g: JsValue = js_sys::global().into();
    let response_body = js_sys::Reflect::get(&g, &"Response".into())
        .ok()
        .filter(|r| r.is_function())
        .and_then(|r| js_sys::Reflect::get(&r, &"prototype".into()).ok())
        .map(|p| js_sys::Reflect::has(&p, &"body".into()).unwrap_or(false))
        .unwrap_or(false);
    Capabilities {
        event_source: has(&g, "EventSource"),
        fetch_streaming: has(&g, "fetch") && has(&g, "ReadableStream") && response_body,
        abort_controller: has(&g, "AbortController"),
    }
}

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// Whether `url` resolves to another origin than the page's. Relative
    /// URLs are same-origin; outside a page (no `Window`) everything counts
    /// as cross-origin, which only moves the cursor from a header to the
    /// query. `crossOrigin` in `boundary.js`: one crossing instead of the
    /// window, its location, two strings copied into wasm and a `URL` read
    /// one getter at a time.
    #[wasm_bindgen(js_name = crossOrigin)]
    pub fn is_cross_origin(url: &str) -> bool;
}
