//! Reads the two clocks the engine needs. `std::time::Instant::now()` panics on
//! wasm32-unknown-unknown, so the monotonic clock is `performance.now()`.

use tidings_core::time::Now;

/// Both clocks, read together: monotonic (`performance.now()`, floored ms)
/// and wall (`Date.now()`, ms since the Unix epoch).
#[allow(dead_code)] // read by the engine drive loop (streaming-transports issue)
pub fn now() -> Now {
    let wall = js_sys::Date::now();
    let mono = web_sys::window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or(wall);
    Now::at(mono.max(0.0) as u64, wall as i64)
}
