//! # tidings-core: the sans-IO engine of tidings
//!
//! Every decision about when to connect, how long to wait, what to send and what
//! to deliver is made here, for all transports alike. This crate never reads a
//! clock, never draws ambient randomness and never touches a socket or a JS
//! object: time ([`time::Now`]) and randomness ([`rng::Rng`]) are arguments,
//! decisions are return values. It is `no_std` + `alloc`, so it runs natively in
//! tests and benchmarks and inside the wasm bundle unchanged.
#![cfg_attr(not(any(test, feature = "std")), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod engine;
pub mod policy;
pub mod rng;
pub mod sse;
pub mod time;
