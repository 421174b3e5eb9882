//! What the adapter reports to a [`Session`](super::Session): one [`Input`].

use crate::crosstab::{Support, Wire};
use crate::engine::{self, Capabilities, NetworkHint};

/// A fact about the page, as the browser reports it (`visibilitychange`,
/// `online`/`offline`, `freeze`/`resume`, `navigator.connection`,
/// `pagehide`/`pageshow`). The session hands each to the cross-tab
/// coordinator first, then to the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageFact {
    /// `document.hidden` changed (or is `true` at start).
    Hidden(bool),
    /// `freeze` (`true`) / `resume` (`false`).
    Frozen(bool),
    /// `online` (`true`) / `offline` (`false`; or offline at start).
    Online(bool),
    /// `navigator.connection` (at start, and on `change`).
    Network(NetworkHint),
    /// `pagehide`: closing, navigating, or entering the back-forward cache.
    /// The engine takes it for frozen.
    PageHide,
    /// `pageshow`; `persisted`: restored from the back-forward cache (a
    /// first load also fires it, with `false`, which the engine ignores).
    PageShow {
        /// `PageTransitionEvent.persisted`.
        persisted: bool,
    },
}

/// A fact of the cross-tab resources (Web Locks, `BroadcastChannel`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TabFact {
    /// The lock was granted.
    LockGranted,
    /// Another tab stole the lock.
    LockStolen,
    /// The lock request threw or its promise rejected before a grant.
    LockFailed,
    /// A message another tab posted, decoded (a malformed post never
    /// reaches the session).
    Wire(Wire),
}

/// One fact for [`Session::handle`](super::Session::handle).
#[derive(Debug)]
pub enum Input<'a> {
    /// Start: what this browser can do, and whether this tab can coordinate
    /// across tabs (both `false`: a connection of this tab only, which runs
    /// its engine at once). Report the page's current state first (a page that starts
    /// hidden or offline must not send a request). A second start is ignored.
    Start {
        /// The browser's transports.
        caps: Capabilities,
        /// Web Locks and a `BroadcastChannel` are there.
        support: Support,
    },
    /// A page fact.
    Page(PageFact),
    /// A fact about this tab's engine's request (its `AttemptId` decides
    /// whether it still counts). Start, close, timers, page facts and
    /// `reconnect()` go through the session's own inputs, which know the
    /// other machines.
    Engine(engine::Input<'a>),
    /// A fact of the cross-tab resources.
    Tab(TabFact),
    /// The one timer fired (at or after the last `Wait`).
    Timer,
    /// The app's `reconnect()`; `online`: `navigator.onLine` now. The answer
    /// is [`Session::reconnected`](super::Session::reconnected).
    Reconnect {
        /// `navigator.onLine`.
        online: bool,
    },
    /// The app closed the connection for good.
    Close,
}
