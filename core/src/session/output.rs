//! What a [`Session`](super::Session) asks of the adapter: one
//! [`SessionAction`] at a time, ending with `Wait`.

use alloc::boxed::Box;
use alloc::vec::Vec;

use crate::calm::Change;
use crate::crosstab::Wire;
use crate::engine::{Action, AttemptId, Message, OpenRequest, TransportKind};
use crate::time::MonoMs;

/// One message for subscribers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The message.
    pub msg: Message,
    /// The transport that carried it (`None`: relayed without one).
    pub transport: Option<TransportKind>,
    /// Delivered by this tab's own engine (`false`: relayed from the leader
    /// tab). Only an own delivery can carry a value the adapter kept for
    /// the fact it fed (a native `EventSource` event's `data`).
    pub own: bool,
}

/// What the adapter does next ([`Session::poll`](super::Session::poll)).
/// The adapter's own work (requests, cross-tab IO, debug lines) comes before
/// what subscribers hear; a drain ends with `Wait`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionAction {
    /// Start this request (replacing the live one).
    Open(OpenRequest),
    /// Abort this request if it is the live one.
    Abort(AttemptId),
    /// Probe why this native request failed, if it is the live one (see
    /// [`Action::Probe`]).
    Probe(AttemptId),
    /// Post this on the cross-tab channel. Boxed: the largest payload, so
    /// every other action moves and copies in fewer bytes.
    Post(Box<Wire>),
    /// Request the cross-tab lock, replacing any request or hold.
    RequestLock {
        /// `{ steal: true }`.
        steal: bool,
    },
    /// Release the lock, or withdraw the queued request.
    DropLock,
    /// Open the cross-tab channel.
    OpenChannel,
    /// Close the cross-tab channel.
    CloseChannel,
    /// `debug: true` only: an engine action as it was drained (the debug
    /// log's line; `note` and `ignore` have no other output).
    Debug(Action),
    /// Tell subscribers these messages, in order: consecutive deliveries form
    /// one batch.
    Messages(Vec<Delivery>),
    /// Tell subscribers this engine action (a state or transport change, an
    /// error, a reset, `uptodate`), this tab's own or relayed.
    Tell(Action),
    /// Tell subscribers the calm status changed (`statuschange`).
    Status(Change),
    /// What subscribers were told since the last `BatchEnd` is complete
    /// (`persist` writes then).
    BatchEnd,
    /// Nothing more now: feed [`Input::Timer`](super::Input::Timer) at
    /// `until` (the earliest of the engine's, the coordinator's and the
    /// calm status's deadlines; `None`: no timer).
    Wait {
        /// When (monotonic ms).
        until: Option<MonoMs>,
    },
}
