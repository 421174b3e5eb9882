//! `make fuzz` target `crosstab_wire`: the oracle `tidings_core::testing::decoders::check_wire`
//! (its doc says what it checks). A disagreement panics: libFuzzer reports a
//! crash and saves the input; copy it to fuzz/regressions/crosstab_wire/ so the
//! normal suite replays it (core/tests/fuzz_regressions.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tidings_core::testing::decoders;

fuzz_target!(|case: decoders::WireCase| {
    if let Err(e) = decoders::check_wire(&case) {
        panic!("crosstab_wire: {e}");
    }
});
