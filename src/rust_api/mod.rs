//! # The Rust API
//!
//! `tidings::subscribe(url, Options)` for Rust web apps (Leptos, Yew,
//! Dioxus, plain `wasm-bindgen`): a [`Subscription`] is a
//! `futures_core::Stream` of [`Message`]s, with typed JSON decoding through
//! serde ([`Message::json`]), and a second stream of [`Event`]s.
//!
//! It sits on the same connection layer as the JS API (`src/connection/`:
//! engine, transports, page lifecycle, `crossTab`, one connection shared by
//! subscriptions to the same URL and options, JS and Rust alike), and its
//! options go through the JS API's checks (`src/options.rs`), so both
//! accept and refuse the same things. Enable it with the `rust` feature;
//! `default-features = false` leaves the `#[wasm_bindgen]` exports and the
//! talc allocator out:
//!
//! ```toml
//! tidings = { version = "0.1", default-features = false, features = ["rust"] }
//! ```
//!
//! ```no_run
//! use tidings::{Options, Event};
//! #[derive(serde::Deserialize)]
//! struct Price { symbol: String, cents: u64 }
//!
//! async fn prices() -> Result<(), tidings::Error> {
//!     let mut sub = tidings::subscribe("/updates", Options::new().events(["price"]))?;
//!     while let Some(msg) = sub.next().await {
//!         match msg.json::<Price>() {
//!             Ok(p) => web_sys::console::log_1(&format!("{}: {}", p.symbol, p.cents).into()),
//!             Err(e) => web_sys::console::warn_1(&e.to_string().into()),
//!         }
//!     }
//!     Ok(()) // ended: closed, or a fatal error (see `sub.events()`)
//! }
//! ```

#[cfg(feature = "append")]
mod append;
mod headers;
mod message;
mod options;
#[cfg(feature = "report")]
mod report;
#[cfg(feature = "send")]
mod send;
mod subscription;

pub use crate::event::{Error, Event};
#[cfg(feature = "append")]
pub use append::{appender, AppendFailure, Appender, AppenderOptions};
pub use headers::{HeadersContext, HeadersResult};
pub use message::Message;
pub use options::Options;
#[cfg(feature = "report")]
pub use report::{report, ReportOptions, Reporter};
#[cfg(feature = "send")]
pub use send::{send, Response, SendError, SendOptions};
pub use subscription::{Events, Subscription};
pub use tidings_core::calm::Status;
pub use tidings_core::engine::{
    ErrorCode, Protocol, Reason, ReconnectAnswer, ResetReason, State, Stats, TransportKind,
};
pub use tidings_core::persist::Scope;
pub use tidings_core::policy::backoff::Strategy;
pub use tidings_core::policy::interval::IntervalMode;
#[cfg(feature = "append")]
pub use tidings_core::upstream::AppendError;
#[cfg(feature = "report")]
pub use tidings_core::upstream::ReportStats;

/// Subscribe to `url`: relative (resolved against the page) or absolute
/// `http:`/`https:` with a host, as in JS.
///
/// Everything is checked before anything starts: [`Error::InvalidUrl`] for a
/// URL that does not resolve, [`Error::InvalidOption`] for an option the JS
/// API would refuse. The connection starts on a microtask; a subscription to
/// the same URL with the same options (and no `headers`) shares the
/// connection of one already open in this page.
///
/// ```no_run
/// let sub = tidings::subscribe("/sse", tidings::Options::new())?;
/// assert_eq!(sub.last_event_id(), "");
/// # Ok::<(), tidings::Error>(())
/// ```
pub fn subscribe(url: &str, options: Options) -> Result<Subscription, Error> {
    let (raw, headers) = options.to_js();
    let (url, checked) = crate::api::prepare(url, &raw).map_err(|e| Error::from_js(&e))?;
    Ok(Subscription::start(&url, checked, headers))
}
