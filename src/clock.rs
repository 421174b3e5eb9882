//! Reads the two clocks the engine needs. `std::time::Instant::now()` panics on
//! wasm32-unknown-unknown, so the monotonic clock is `performance.now()`.

use tidings_core::time::Now;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// The global `performance.now()` (window or worker), one crossing per
    /// read: every fact reads the clocks, and going through `window()` and
    /// its `performance` getter cost four crossings, a `catch` wrapper a
    /// closure per call (issue 19). Called only where `performance.now` is a
    /// function ([`has_performance`]), so it cannot throw.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

thread_local! {
    /// Whether the global scope has `performance.now`, looked up once.
    static HAS_PERFORMANCE: bool = has_performance();
}

fn has_performance() -> bool {
    let get = |o: &JsValue, k: &str| js_sys::Reflect::get(o, &JsValue::from_str(k)).ok();
    get(&js_sys::global(), "performance")
        .filter(JsValue::is_object)
        .and_then(|p| get(&p, "now"))
        .is_some_and(|f| f.is_function())
}

/// Both clocks, read together: monotonic (`performance.now()`, floored ms;
/// `Date.now()` where there is no `performance`) and wall (`Date.now()`, ms
/// since the Unix epoch).
pub fn now() -> Now {
    let wall = js_sys::Date::now();
    let mono = match HAS_PERFORMANCE.with(|h| *h) {
        true => performance_now(),
        false => wall,
    };
    Now::at(mono.max(0.0) as u64, wall as i64)
}
