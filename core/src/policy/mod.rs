//! Standalone policies the engine composes: backoff, Retry-After, the circuit
//! breaker, the poll interval and its network tier, validators and dedupe. Each is a plain value with
//! its own tests, reusable outside the engine.

pub mod backoff;
pub mod breaker;
pub mod dedupe;
pub mod headers;
pub mod http_date;
pub mod interval;
pub mod network;
pub mod retry_after;
pub mod validators;
