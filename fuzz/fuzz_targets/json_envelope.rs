//! `make fuzz` target `json_envelope`: the oracle `tidings_core::testing::decoders::check_json`
//! (its doc says what it checks). A disagreement panics: libFuzzer reports a
//! crash and saves the input; copy it to fuzz/regressions/json_envelope/ so the
//! normal suite replays it (core/tests/fuzz_regressions.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tidings_core::testing::decoders;

fuzz_target!(|case: decoders::Json| {
    if let Err(e) = decoders::check_json(&case) {
        panic!("json_envelope: {e}");
    }
});
