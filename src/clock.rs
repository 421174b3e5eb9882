//! Reads the two clocks the engine needs, and the seed of its jitter: the
//! ambient sources the core never reads itself. `std::time::Instant::now()` panics on
//! wasm32-unknown-unknown, so the monotonic clock is `performance.now()`.

use tidings_core::time::Now;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// The global `performance.now()` (High Resolution Time: on `Window` and
    /// `WorkerGlobalScope` alike), one crossing per read: every fact reads
    /// the clocks, and going through `window()` and its `performance` getter
    /// would cost four crossings, and `Date.now()` is no monotonic clock.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// Both clocks, read together: monotonic (`performance.now()`, floored ms)
/// and wall (`Date.now()`, ms since the Unix epoch).
pub fn now() -> Now {
    let wall = js_sys::Date::now();
    let mono = performance_now();
    Now::at(mono.max(0.0) as u64, wall as i64)
}

/// 64 random bits from `crypto.getRandomValues` (via getrandom) to seed a
/// machine's jitter PRNG, so the jitter differs between clients; the wall
/// clock when crypto is missing (clients started in the same millisecond
/// then share a seed).
pub fn random_seed() -> u64 {
    let mut b = [0u8; 8];
    if getrandom::fill(&mut b).is_err() {
        return js_sys::Date::now() as u64;
    }
    u64::from_le_bytes(b)
}
