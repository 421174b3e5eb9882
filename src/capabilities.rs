//! What this browser can do, detected once per connection at start: the
//! engine filters the transport preference list by it.

use tidings_core::engine::Capabilities;

/// `EventSource`, streaming `fetch` bodies (`ReadableStream` + `Response.body`)
/// and `AbortController` on the global object, found by `capabilities` in
/// `boundary.js` (one crossing instead of a `Reflect` call and a name
/// string per global).
pub fn detect() -> Capabilities {
    // A number as a `JsValue`: an import with no argument to convert would
    // be handed the snippet module whole (no tree-shaking of the bundle).
    let found = capabilities().as_f64().unwrap_or(0.0) as u32;
    Capabilities {
        event_source: found & 1 != 0,
        fetch_streaming: found & 2 != 0,
        abort_controller: found & 4 != 0,
    }
}

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// The capabilities found: 1 `EventSource`, 2 streaming `fetch`
    /// bodies, 4 `AbortController` (`boundary.js`).
    fn capabilities() -> wasm_bindgen::JsValue;

    /// Whether `url` resolves to another origin than the page's. Relative
    /// URLs are same-origin; outside a page (no `Window`) everything counts
    /// as cross-origin, which only moves the cursor from a header to the
    /// query. `crossOrigin` in `boundary.js`: one crossing instead of the
    /// window, its location, two strings copied into wasm and a `URL` read
    /// one getter at a time.
    #[wasm_bindgen(js_name = crossOrigin)]
    pub fn is_cross_origin(url: &str) -> bool;
}
