//! # tidings: realtime server updates for the browser
//!
//! One call, `subscribe(url, options)`, gives a web app a stream of server
//! messages over the best transport available, kept healthy by one engine
//! (`tidings-core`): backoff with jitter, `Retry-After`, resume from the last
//! event id.
//!
//! Layout: [`tidings_core`] decides; this crate only touches the browser.
//! - `clock`: reads both clocks (`performance.now()`, `Date.now()`).
//! - `guard`: owners of JS listeners and timers that undo them on drop.
//! - `js`, `options`: building and reading JS values; the option checks.
//! - `transport/`: one file per transport (`eventsource`, …).
//! - `tabs/`: `crossTab`, one connection shared by every tab (Web Locks +
//!   `BroadcastChannel`), behind the default `cross-tab` feature.
//! - `api/`: the `#[wasm_bindgen]` exports, behind the default `js` feature.
//! - `rust_api/`: the Rust API ([`subscribe`] → a `Stream` of [`Message`]s
//!   with typed JSON decoding), behind the `rust` feature.
//! - `upstream/`: `send()`, behind the default `send` feature, and
//!   `report()`, behind the default `report` feature (which implies `send`).
//!
//! Everything that touches JS is compiled for `wasm32` only; on other targets
//! the crate re-exports the engine so `cargo test` works natively.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub use tidings_core as core;

#[cfg(all(target_arch = "wasm32", any(feature = "js", feature = "rust")))]
mod capabilities;
#[cfg(all(target_arch = "wasm32", any(feature = "js", feature = "rust")))]
mod clock;
// Without `js`, parts only the JS API reads (a `headers` function's throw,
// the `parse` error log) are unused.
#[cfg(all(target_arch = "wasm32", any(feature = "js", feature = "rust")))]
#[cfg_attr(not(feature = "js"), allow(dead_code))]
mod connection;
// The events besides messages, one enum for both APIs (`tidings::Event` in
// the Rust API).
#[cfg(all(target_arch = "wasm32", any(feature = "js", feature = "rust")))]
mod event;
#[cfg(all(target_arch = "wasm32", any(feature = "js", feature = "rust")))]
mod guard;
#[cfg(all(target_arch = "wasm32", any(feature = "js", feature = "rust")))]
mod js;
#[cfg(all(target_arch = "wasm32", any(feature = "js", feature = "rust")))]
mod lifecycle;
// The option readers and the JS reflection helpers every layer above uses;
// without `js`, the checks only `send()` and the JS API read are unused.
#[cfg(all(target_arch = "wasm32", any(feature = "js", feature = "rust")))]
#[cfg_attr(not(feature = "js"), allow(dead_code))]
mod options;
#[cfg(all(
    target_arch = "wasm32",
    feature = "cross-tab",
    any(feature = "js", feature = "rust")
))]
mod tabs;
// `addEventListener` rules, shared by the JS `Subscription` and `Reporter`
// (the reporter's drive loop dispatches through them in both APIs).
#[cfg(all(
    target_arch = "wasm32",
    any(feature = "js", all(feature = "rust", feature = "report"))
))]
#[cfg_attr(not(feature = "js"), allow(dead_code))]
mod target;
#[cfg(all(target_arch = "wasm32", any(feature = "js", feature = "rust")))]
mod transport;
#[cfg(all(
    target_arch = "wasm32",
    feature = "send",
    any(feature = "js", feature = "rust")
))]
pub mod upstream;

#[cfg(all(target_arch = "wasm32", feature = "js"))]
pub mod api;
// The Rust API reads its options through the JS API's `prepare` (one copy of
// every check): without `js` the module is there, its #[wasm_bindgen]
// exports are not.
#[cfg(all(target_arch = "wasm32", feature = "rust", not(feature = "js")))]
mod api;

#[cfg(all(target_arch = "wasm32", feature = "rust"))]
mod rust_api;
#[cfg(all(target_arch = "wasm32", feature = "rust"))]
pub use rust_api::*;

/// talc instead of std's dlmalloc: 4.7 KB less code in the bundle (measured by
/// `make size`), and faster for the small, short-lived allocations we make.
/// Behind the default `talc` feature: an app with its own allocator turns
/// default features off.
#[cfg(all(
    target_arch = "wasm32",
    feature = "talc",
    not(target_feature = "atomics")
))]
#[global_allocator]
static TALC: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
