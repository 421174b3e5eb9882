//! Cross-tab coordination (`crossTab: true`): one connection per
//! URL + options across the tabs of a browser profile, as a sans-IO machine
//! with the engine's contract. [`CrossTab`] never reads a clock, never draws
//! ambient randomness (its steal jitter comes from a seeded [`Rng`]) and
//! never touches Web Locks or `BroadcastChannel`: the adapter feeds it facts
//! with both clocks ([`Now`]) and drains [`CrossTab::poll`] until
//! [`TabAction::Wait`].
//!
//! ## Inputs (`handle_*`)
//! - [`CrossTab::handle_start`]: whether this tab can coordinate (Web Locks
//!   and a `BroadcastChannel` opened). Without them the machine is *solo*: it
//!   says `Run` once and passes every notice of its own engine through.
//! - Web Locks: [`CrossTab::handle_lock_granted`], [`CrossTab::handle_lock_stolen`]
//!   (another tab requested with `{ steal: true }`),
//!   [`CrossTab::handle_lock_failed`] (the API missing, `request` throwing, or
//!   its promise rejecting before a grant: a sandboxed frame, an opaque
//!   origin).
//! - [`CrossTab::handle_wire`]: a [`Wire`] message another tab posted,
//!   decoded by the adapter (a malformed or foreign post never reaches the
//!   machine: the decoder drops it).
//! - [`CrossTab::handle_reconnect`]: the app's `reconnect()` in this tab.
//! - [`CrossTab::handle_own_message`], [`CrossTab::handle_own_action`]: a
//!   notice of this tab's own engine (the leader's, or a solo tab's), with
//!   the engine's cursor; returns whether this tab's subscriptions hear it.
//! - Page: [`CrossTab::handle_visibility`], [`CrossTab::handle_frozen`],
//!   [`CrossTab::handle_page_hide`], [`CrossTab::handle_page_show`] (with
//!   `persisted`), [`CrossTab::handle_timer`], [`CrossTab::handle_close`].
//!
//! ## Outputs ([`TabAction`])
//! `Post` a wire message; `RequestLock` (queued, or `steal`) / `DropLock`;
//! `OpenChannel` / `CloseChannel`; `Run` this tab's engine from a cursor /
//! `Halt` it without telling anyone; `Reconnect` it (the engine's
//! `handle_reconnect`); `Tell` this tab's subscriptions a relayed notice;
//! `Wait` until the steal timer.
//!
//! ## Rules
//! - Election: every tab queues for the lock; the holder leads and runs the
//!   one engine, from the last cursor this tab saw (messages carry
//!   `lastEventId`, states carry the leader's cursor). A closed or crashed
//!   tab releases its lock and the browser grants it to the next in line.
//! - Relay: the leader posts every notice; followers tell their
//!   subscriptions. A newcomer posts `hello`; the leader re-posts its last
//!   transport change and state, and (Durable Streams) its `uptodate` since
//!   the last `reset` at its current offset, marked `sync` (ignored by a tab
//!   that already knows them): a tab that joins after the leader caught up
//!   hears its "caught up" too.
//! - No gap, no duplicate at a hand-over: every tab drops a message whose id
//!   it already delivered (the engine's [`Dedupe`] over the last
//!   [`SEEN_IDS`] ids), which covers two leaders overlapping during a steal.
//!   Durable Streams messages have no id: every tab drops a message whose
//!   place in the stream it already delivered (`offsets.rs`: the leader posts
//!   each message with its cursor and its index in its chunk), and an
//!   `uptodate` at the offset it last heard one for (a new leader catching
//!   up to where the tab already was).
//! - `reconnect()`: in a leader or a solo tab, its own engine's; in a
//!   follower, posted as `reconnect` to the leader, whose engine decides (the
//!   same rules, its `navigator.onLine`; a forged post is no more than an
//!   app calling `reconnect()` there). A follower that heard the leader stop
//!   (`closed`, e.g. `gave-up`) and then hears it run again queues for the
//!   lock again. After `gave-up` the follower also queues for the lock
//!   itself (the leader's tab may have gone since): granted, it runs from
//!   the cursor. Between two leaders the post reaches nobody.
//! - Visibility: a visible follower that hears the leader report `paused`
//!   for `hidden` or `frozen` steals after [`STEAL_AFTER_MS`] + U[0,
//!   [`STEAL_JITTER_MS`]) ms (several visible tabs rarely steal at once;
//!   a closing leader says `bye` in that window, and the lock passes on by
//!   itself). The tab that lost the lock halts, queues again and says
//!   `hello`.
//! - `pagehide` (closing, navigating, or entering the back-forward cache): a
//!   leader says `bye`, halts and tells its subscriptions `paused`
//!   (`frozen`); every tab drops its lock and closes its channel (Chromium
//!   evicts a cached page whose channel receives a message, or that holds or
//!   waits for a lock). `pageshow` with `persisted`: open the channel, say
//!   `hello`, queue; the first state heard with another cursor than the one
//!   this tab left with is a `reset` (`unresumable`): what was relayed
//!   meanwhile is gone.
//! - A leader that stopped (state `closed`) is never replaced: every tab
//!   drops its lock, and queues again if the leader runs again (a `gave-up`
//!   connection revived by `reconnect()`).

#[cfg(feature = "cross-tab")]
mod machine;
// Alone (no `cross-tab`), only `REMEMBERED_OFFSETS` of it is used.
#[cfg_attr(not(feature = "cross-tab"), allow(dead_code))]
mod offsets;
pub mod wire;

mod solo;

#[cfg(feature = "cross-tab")]
pub use machine::CrossTab;
// A build without the `cross-tab` feature runs every connection alone: the
// solo coordinator (the same calls, the same answers as the full one
// without locks or a channel) leaves the coordination code out.
pub use offsets::REMEMBERED_OFFSETS;
#[cfg(not(feature = "cross-tab"))]
pub use solo::Solo as CrossTab;
pub use solo::Solo;

use alloc::string::String;

use crate::engine::{Action, Message, Reason, State, TransportKind};
use crate::time::MonoMs;

/// How many delivered message ids a tab remembers to drop a repeat.
pub const SEEN_IDS: usize = 64;
/// The least wait before a visible follower steals from a hidden leader (ms):
/// a leader tab that is closing says `bye` right after its `paused`.
pub const STEAL_AFTER_MS: u64 = 50;
/// The width of the steal jitter (ms), drawn from the seeded RNG.
pub const STEAL_JITTER_MS: u64 = 200;

/// What a subscription hears, relayed between tabs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Relay {
    /// A message, and the transport that carried it.
    Message(Message, Option<TransportKind>),
    /// A state change, transport change, error or reset (other actions are
    /// never relayed).
    Action(Action),
}

/// What travels on the channel (encoded by the adapter; see `src/tabs/`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wire {
    /// A new tab asks the leader to re-post its last transport and state.
    Hello,
    /// The leader's page is going away: the lock passes on by itself.
    Bye,
    /// A follower's app called `reconnect()`: the leader's engine decides.
    Reconnect,
    /// A notice of the leader's engine.
    Notice {
        /// The notice.
        notice: Relay,
        /// The leader's cursor (carried by states and messages; `""` when
        /// unknown).
        cursor: String,
        /// A message's index after its `lastEventId` in its chunk (Durable
        /// Streams; `0` otherwise, see `offsets.rs`).
        index: u32,
        /// A re-post for a newcomer.
        sync: bool,
    },
}

/// What a follower knows of the leader's connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mirror {
    /// The leader's state.
    pub state: State,
    /// Its reason.
    pub reason: Reason,
    /// The leader's transport.
    pub transport: Option<TransportKind>,
    /// The last cursor this tab saw.
    pub last_event_id: String,
}

/// Whether this tab can coordinate ([`CrossTab::handle_start`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Support {
    /// `navigator.locks` is present.
    pub locks: bool,
    /// The `BroadcastChannel` opened.
    pub channel: bool,
}

/// What the adapter does next ([`CrossTab::poll`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TabAction {
    /// Post this on the channel.
    Post(Wire),
    /// Request the lock, replacing any request or hold (`steal`: take it
    /// from its holder at once).
    RequestLock {
        /// `{ steal: true }`.
        steal: bool,
    },
    /// Release the lock, or withdraw the queued request.
    DropLock,
    /// Open the channel again (after `pagehide`).
    OpenChannel,
    /// Close the channel.
    CloseChannel,
    /// Start a fresh engine from `cursor` (this tab leads, or runs alone).
    Run {
        /// The cursor to resume from.
        cursor: String,
    },
    /// Stop this tab's engine without telling its subscriptions.
    Halt,
    /// Give this tab's engine the app's "try now" (`handle_reconnect`, with
    /// the browser's `navigator.onLine`).
    Reconnect,
    /// Tell this tab's subscriptions.
    Tell(Relay),
    /// Nothing more now: call [`CrossTab::handle_timer`] at `until` (`None`:
    /// no timer).
    Wait {
        /// When (monotonic ms).
        until: Option<MonoMs>,
    },
}
