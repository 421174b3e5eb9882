//! `make fuzz` target `sse`: the oracle `tidings_core::testing::sse_reference::check`
//! (its doc says what it checks). A disagreement panics: libFuzzer reports a
//! crash and saves the input; copy it to fuzz/regressions/sse/ so the
//! normal suite replays it (core/tests/fuzz_regressions.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tidings_core::testing::sse_reference;

fuzz_target!(|case: sse_reference::SseCase| {
    if let Err(e) = sse_reference::check(&case) {
        panic!("sse: {e}");
    }
});
