//! `make fuzz` target `validators`: the oracle `tidings_core::testing::hints::check_validators`
//! (its doc says what it checks). A disagreement panics: libFuzzer reports a
//! crash and saves the input; copy it to fuzz/regressions/validators/ so the
//! normal suite replays it (core/tests/fuzz_regressions.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tidings_core::testing::hints;

fuzz_target!(|case: hints::ValidatorCase| {
    if let Err(e) = hints::check_validators(&case) {
        panic!("validators: {e}");
    }
});
