//! Oracles shared by the property tests (`core/tests/*_props.rs`), the
//! coverage-guided fuzz targets (`fuzz/`, docs/reliability.md) and the fuzz regression
//! suite (`core/tests/fuzz_regressions.rs`). Behind the `testing` feature: it
//! is never part of the wasm bundle.
//!
//! Each `check` function takes one structured case (built by `arbitrary` in
//! the fuzzer, by `proptest` in the property tests) and returns `Err` with a
//! description when an oracle disagrees; a panic inside the code under test
//! is a failure too (the fuzzer reports it as a crash).

pub mod decoders;
pub mod engine_model;
pub mod hints;
pub mod sse_reference;
