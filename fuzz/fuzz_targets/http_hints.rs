//! `make fuzz` target `http_hints`: the oracle `tidings_core::testing::hints::check_hints`
//! (its doc says what it checks). A disagreement panics: libFuzzer reports a
//! crash and saves the input; copy it to fuzz/regressions/http_hints/ so the
//! normal suite replays it (core/tests/fuzz_regressions.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tidings_core::testing::hints;

fuzz_target!(|case: hints::HintCase| {
    if let Err(e) = hints::check_hints(&case) {
        panic!("http_hints: {e}");
    }
});
