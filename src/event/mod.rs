//! The events of a subscription besides its messages, for both APIs: one
//! [`Event`] enum, made from the connection's notices by one function
//! (`api::events::render`, above the connection: this module sits below it,
//! ARCHITECTURE.md "Layers"), read as is by the Rust API
//! (`Subscription::events`) and turned into JS event objects by [`js`]. Messages
//! are not here: they cross to JS in batches (`Notice::Messages`,
//! `boundary.js`) and to Rust as `Message`s.
// Without the `rust` feature the JS API reads only what it renders.
#![cfg_attr(not(feature = "rust"), allow(dead_code))]

mod error;
// The JS objects: the JS API's listeners, the debug log and the reporter
// read them; a Rust app with none of those reads only `error`.
#[cfg_attr(not(any(feature = "js", feature = "debug")), allow(dead_code))]
pub(crate) mod js;

pub use error::Error;

use tidings_core::calm::Status;
use tidings_core::engine::{Action, Reason, ResetReason, State, TransportKind};

/// What happens to a subscription besides its messages: the JS `open`,
/// `statechange`, `transportchange`, `error`, `reset`, `uptodate` and
/// `statuschange` events (README "API"), from `Subscription::events` in Rust.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// The connection is open (`open`).
    Open {
        /// The transport it opened on.
        transport: &'static str,
    },
    /// The state changed (`statechange`).
    State {
        /// The new state.
        state: State,
        /// Why.
        reason: Reason,
        /// For [`State::Waiting`]: milliseconds until the next attempt.
        delay_ms: Option<u64>,
    },
    /// Another transport is used from now on (`transportchange`).
    Transport {
        /// The new one.
        transport: TransportKind,
        /// The one before (`None` at start).
        previous: Option<TransportKind>,
        /// Why.
        reason: Reason,
    },
    /// Something went wrong (`error`); [`Error::is_fatal`] when it stopped.
    /// Always an [`Error::Connection`].
    Error(Error),
    /// The server cannot fill the gap since the cursor: refetch your state.
    Reset {
        /// Why.
        reason: ResetReason,
    },
    /// Caught up with everything the server had (Durable Streams).
    UpToDate {
        /// The offset at that moment.
        last_event_id: String,
    },
    /// The calm status changed (`statuschange`; docs/reconnects.md,
    /// "Connection status"): lost only after `lost_after_ms` down, back as soon as a
    /// transport is open or a request was answered.
    Status {
        /// The new status.
        status: Status,
        /// The reason of the state change behind it.
        reason: Reason,
    },
}

impl Event {
    /// Whether the subscription's connection stopped with this event (state
    /// `closed`, or a fatal error), `None` when it says nothing about that
    /// (a `gave-up` connection may be revived by `reconnect()`: a later
    /// `State` says so).
    pub(crate) fn stops(&self) -> Option<bool> {
        match self {
            Event::State { state, .. } => Some(*state == State::Closed),
            Event::Error(e) if e.is_fatal() => Some(true),
            _ => None,
        }
    }
}

/// The event of an engine action the app hears of; `None` for the others.
pub(crate) fn from_action(a: &Action) -> Option<Event> {
    Some(match a {
        Action::State {
            state,
            reason,
            delay_ms,
        } => Event::State {
            state: *state,
            reason: *reason,
            delay_ms: *delay_ms,
        },
        Action::TransportChanged {
            transport,
            previous,
            reason,
        } => Event::Transport {
            transport: *transport,
            previous: *previous,
            reason: *reason,
        },
        Action::Error {
            code,
            status,
            retry_in_ms,
            fatal,
            id,
        } => Event::Error(Error::Connection {
            code: *code,
            status: *status,
            retry_in_ms: *retry_in_ms,
            fatal: *fatal,
            id: id.clone(),
        }),
        Action::Reset { reason } => Event::Reset { reason: *reason },
        Action::UpToDate { last_event_id } => Event::UpToDate {
            last_event_id: last_event_id.clone(),
        },
        _ => return None,
    })
}
