//! `make fuzz` target `engine`: the oracle `tidings_core::testing::engine_model::check`
//! (its doc says what it checks). A disagreement panics: libFuzzer reports a
//! crash and saves the input; copy it to fuzz/regressions/engine/ so the
//! normal suite replays it (core/tests/fuzz_regressions.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tidings_core::testing::engine_model;

fuzz_target!(|case: engine_model::EngineCase| {
    if let Err(e) = engine_model::check(&case) {
        panic!("engine: {e}");
    }
});
