//! # tidings-core: the sans-IO engine of tidings
//!
//! Every decision about when to connect, how long to wait, what to send and what
//! to deliver is made here, for all transports alike. This crate never reads a
//! clock, never draws ambient randomness and never touches a socket or a JS
//! object: time ([`time::Now`]) and randomness ([`rng::Rng`]) are arguments,
//! decisions are return values. It is `no_std` + `alloc`, so it runs natively in
//! tests and benchmarks and inside the wasm bundle unchanged.
//!
//! The upstream direction (`send`, one request that takes effect
//! once) has its own machine under the same contract:
//! [`upstream::Sender`], reusing the engine's backoff and `Retry-After`.
//!
//! Cross-tab coordination (`crossTab: true`: one connection per URL
//! across a profile's tabs) is a third machine under the same contract:
//! [`crosstab::CrossTab`]. Fed Web Locks grants and steals, decoded
//! `BroadcastChannel` messages, the page's visibility, freezing and
//! back-forward cache, and its own engine's notices, it answers with
//! actions: post this, request or drop the lock, run or halt the engine from
//! this cursor, tell the page this relayed notice, wait until the steal
//! timer. Its module doc lists every input, output and rule.
//!
//! [`session::Session`] composes one connection in one tab: its engine
//! (swapped on the coordinator's `Run`/`Halt`), its coordinator and its calm
//! status, behind one input, one output and one `Wait`. A browser adapter
//! drives a session; the engine alone is driven as below.
//!
//! ## The drive loop
//!
//! An adapter owns one [`engine::Engine`] per connection and one timer. It
//! feeds every fact it observes to a `handle_*` method, with both clocks read
//! at that moment, then drains [`engine::Engine::poll`] until it returns
//! [`engine::Action::Wait`], carrying out each action in order: `Open` a request
//! (and report facts about it with its `AttemptId`), `Abort` one, `Deliver` a
//! message, announce `State` / `TransportChanged` / `Error` / `Reset`. `Wait`
//! says when to call [`engine::Engine::handle_timer`] (clamp the delay to
//! [`time::MAX_TIMER_MS`]). Facts about an aborted or older attempt are ignored,
//! so the adapter never has to filter them.
//!
//! ```
//! use tidings_core::engine::{Action, Capabilities, Config, Engine, ResponseHead, TransportKind};
//! use tidings_core::time::Now;
//!
//! let mut config = Config::new("/updates");
//! config.transports = vec![TransportKind::FetchSse];
//! config.last_event_id = "41".into();
//! let mut engine = Engine::new(config, 7);
//!
//! /// Drain until `Wait`; return the actions and the timer deadline.
//! fn drain(engine: &mut Engine) -> (Vec<Action>, Option<u64>) {
//!     let mut out = Vec::new();
//!     loop {
//!         match engine.poll() {
//!             Action::Wait { until } => return (out, until.map(|t| t.0)),
//!             action => out.push(action),
//!         }
//!     }
//! }
//! let header = |name: &str, value: &str| (String::from(name), String::from(value));
//!
//! // Start: the engine picks the transport and asks for a request.
//! let t0 = Now::at(0, 1_700_000_000_000);
//! engine.handle_start(t0, Capabilities::ALL);
//! let (actions, _) = drain(&mut engine);
//! let Some(Action::Open(req)) = actions.iter().find(|a| matches!(a, Action::Open(_))) else {
//!     panic!("no Open in {actions:?}");
//! };
//! assert_eq!(req.url, "/updates");
//! assert!(req.headers.contains(&header("Last-Event-ID", "41")));
//! let id = req.id;
//!
//! // The response head and a chunk of the body arrive.
//! engine.handle_response_head(t0.plus_ms(30), id, &ResponseHead::event_stream());
//! engine.handle_bytes(t0.plus_ms(35), id, b"id: 42\ndata: hello\n\n");
//! let (actions, timer) = drain(&mut engine);
//! assert!(actions.iter().any(|a| matches!(a, Action::Deliver(m) if m.data == "hello")));
//! assert_eq!(engine.last_event_id(), "42");
//! // The idle watchdog: 45 s after the last byte.
//! assert_eq!(timer, Some(45_035));
//!
//! // The server closes the stream: the engine schedules a reconnect...
//! engine.handle_stream_end(t0.plus_ms(1000), id);
//! let (_, timer) = drain(&mut engine);
//! let at = timer.ok_or("no timer")?;
//! // ...which the adapter's timer triggers, resuming from the cursor.
//! engine.handle_timer(t0.plus_ms(at));
//! let (actions, _) = drain(&mut engine);
//! let Some(Action::Open(again)) = actions.iter().find(|a| matches!(a, Action::Open(_))) else {
//!     panic!("no reconnect in {actions:?}");
//! };
//! assert!(again.headers.contains(&header("Last-Event-ID", "42")));
//! # Ok::<(), &str>(())
//! ```
#![cfg_attr(not(any(test, feature = "std")), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod calm;
pub mod crosstab;
pub mod engine;
pub mod fifo;
pub mod keys;
pub mod machine;
pub mod persist;
pub mod policy;
pub mod rng;
pub mod session;
pub mod sse;
#[cfg(feature = "testing")]
pub mod testing;
pub mod time;
pub mod upstream;
pub mod wire;
