//! [`Session`]: one connection in one tab, as one sans-IO machine. It owns
//! the connection's [`Engine`] (a fresh one on every `Run` of the cross-tab
//! coordinator, an idle one on `Halt`), its [`CrossTab`] coordinator (a solo
//! one when the connection is not shared across tabs) and its [`Calm`]
//! status, and applies the rules that combine them, so that the browser
//! side only reports facts and carries out actions:
//!
//! - **One input, one output, one timer.** Every fact is an [`Input`] fed to
//!   [`Session::handle`]; [`Session::poll`] drains [`SessionAction`]s (the
//!   adapter's work first: requests, cross-tab IO, debug lines; then what
//!   subscribers hear) and ends with one `Wait` at the earliest of the
//!   engine's, the coordinator's and the calm status's deadlines.
//! - **Whose state the app sees** ([`Session::state`], `transport`,
//!   `last_event_id`): the leader tab's, as the coordinator mirrors it,
//!   while this tab follows; else this tab's engine's.
//! - **Own notices** (`drain.rs`): each of this tab's engine's deliveries
//!   and notices goes to the coordinator first, with the engine's cursor (a
//!   leader relays it, and every tab drops a message it already delivered);
//!   subscribers hear it only when the coordinator says it is fresh. The
//!   app's `headers` failure is this tab's alone and is never relayed.
//! - **Run and Halt**: the coordinator's `Run { cursor }` replaces the
//!   engine by one resuming from `cursor`, tells it the page's state (hidden,
//!   offline, the network hint) and starts it; `Halt` replaces it by an idle
//!   one. Either aborts the old engine's live request.
//! - **Page facts** (`handle.rs`) reach the coordinator first (a leader
//!   leaving the page hands over and halts before its engine hears of it),
//!   then the engine: `pagehide` is frozen, `pageshow` with `persisted` is
//!   resumed, a first `pageshow` nothing.
//! - **`reconnect()`**: the coordinator says whose engine hears it; the
//!   answer is this tab's engine's, `leader` in a follower, `closed` when
//!   nothing heard it.
//! - **Calm**: every state change subscribers hear (own or relayed) goes to
//!   the calm status; a change is told right after the state that caused it.
//! - **Batches**: consecutive deliveries are told as one `Messages`; every
//!   drain that told anything ends with one `BatchEnd`.
//! - **Close**: the coordinator first (a leader says `bye`, its lock and
//!   channel go), then the engine; every later input is ignored.

mod drain;
mod handle;
mod input;
mod output;

use crate::fifo::Fifo;

pub use input::{Input, PageFact, TabFact};
pub use output::{Delivery, SessionAction};

use crate::calm::{Calm, Status};
use crate::crosstab::{CrossTab, Mirror};
use crate::engine::{
    Capabilities, Config, Engine, NetworkHint, Protocol, ReconnectAnswer, State, TransportKind,
};
use crate::machine::Lifecycle;
use crate::time::{earlier, MonoMs, Monotone};

/// What the session remembers of the page, for a fresh engine.
#[derive(Clone, Copy, Debug)]
struct Page {
    hidden: bool,
    online: bool,
    network: Option<NetworkHint>,
}

/// One connection in one tab (see the module doc). Every input takes
/// [`Now`](crate::time::Now); after every input drain [`Session::poll`]
/// until [`SessionAction::Wait`]. No input sequence panics.
#[derive(Debug)]
pub struct Session {
    seed: u64,
    caps: Capabilities,
    /// `New` until [`Input::Start`], `Done` once closed (no closing step).
    life: Lifecycle,
    /// Every input's time, never before an earlier one's: the engine is
    /// swapped on every `Run`, and the calm status has no guard of its own.
    clock: Monotone,
    engine: Engine,
    tabs: CrossTab,
    calm: Calm,
    page: Page,
    debug: bool,
    /// The engine's and the coordinator's latest `Wait`.
    engine_until: Option<MonoMs>,
    tabs_until: Option<MonoMs>,
    /// The adapter's work, in order.
    work: Fifo<SessionAction>,
    /// What subscribers hear, in order.
    told: Fifo<SessionAction>,
    /// Something was told since the last `BatchEnd`.
    batch_open: bool,
    answer: ReconnectAnswer,
}

impl Session {
    /// A session for a connection made of `config`. `seed` seeds every
    /// engine it runs (the `seed` option); `tab_seed` seeds the cross-tab
    /// steal jitter and must differ between tabs (the adapter draws it from
    /// the platform's random source); `lost_after_ms` is the calm status's
    /// `lostAfterMs`. Durable Streams messages are placed across tabs by
    /// offset (they carry no id).
    pub fn new(config: Config, seed: u64, tab_seed: u64, lost_after_ms: u64) -> Self {
        let tabs = CrossTab::new(config.last_event_id.clone(), tab_seed);
        let tabs = match config.protocol {
            Protocol::DurableStreams => tabs.with_offsets(),
            _ => tabs,
        };
        Session {
            engine: Engine::new(config, seed),
            seed,
            caps: Capabilities::default(),
            life: Lifecycle::New,
            clock: Monotone::default(),
            tabs,
            calm: Calm::new(lost_after_ms),
            page: Page {
                hidden: false,
                online: true,
                network: None,
            },
            debug: false,
            engine_until: None,
            tabs_until: None,
            work: Fifo::new(),
            told: Fifo::new(),
            batch_open: false,
            answer: ReconnectAnswer::Closed,
        }
    }

    /// This session with `debug: true`: every engine action is also
    /// given out as [`SessionAction::Debug`] as it is drained. Without the
    /// crate's `debug` feature none is (the flag is kept, the copy is not
    /// built).
    pub fn with_debug(mut self, debug: bool) -> Self {
        self.debug = debug;
        self
    }

    /// The next action; drain until [`SessionAction::Wait`].
    #[must_use = "an action not carried out is lost"]
    pub fn poll(&mut self) -> SessionAction {
        if let Some(a) = self.work.pop_front() {
            return a;
        }
        if let Some(a) = self.told.pop_front() {
            self.batch_open = true;
            return a;
        }
        if core::mem::take(&mut self.batch_open) {
            return SessionAction::BatchEnd;
        }
        SessionAction::Wait {
            until: self.deadline(),
        }
    }

    /// The earliest deadline of the three machines (`None` once closed).
    fn deadline(&self) -> Option<MonoMs> {
        if self.life.is_done() {
            return None;
        }
        let earliest = earlier(
            earlier(self.engine_until, self.tabs_until),
            self.calm.deadline(),
        );
        self.clock.wait_until(earliest)
    }

    /// The leader's connection while this tab follows one (see
    /// [`CrossTab::following`]).
    fn mirror(&self) -> Option<&Mirror> {
        self.tabs.following()
    }

    /// The state the app sees: the leader's while this tab follows, else
    /// this tab's engine's.
    pub fn state(&self) -> State {
        self.mirror()
            .map_or_else(|| self.engine.state(), |m| m.state)
    }

    /// The transport the app sees (as [`Session::state`]); `None` before one
    /// was chosen.
    pub fn transport(&self) -> Option<TransportKind> {
        self.mirror()
            .map_or_else(|| self.engine.transport(), |m| m.transport)
    }

    /// The cursor the app sees (as [`Session::state`]).
    pub fn last_event_id(&self) -> &str {
        self.mirror()
            .map_or_else(|| self.engine.last_event_id(), |m| &m.last_event_id)
    }

    /// The calm status (`connecting`, `connected`, `reconnecting`,
    /// `offline`, `closed`).
    pub fn status(&self) -> Status {
        self.calm.status()
    }

    /// Whether this tab follows another tab's connection: it does not
    /// acknowledge deliveries, the leader does.
    pub fn follows(&self) -> bool {
        self.mirror().is_some()
    }

    /// Whether the connection stopped for good (closed, or its state the app
    /// sees is `closed`): a new subscriber must not join it.
    pub fn is_stopped(&self) -> bool {
        self.life.is_done() || self.state() == State::Closed
    }

    /// Whether [`Input::Close`] was handled: every later input is ignored.
    pub fn is_closed(&self) -> bool {
        self.life.is_done()
    }

    /// What the last [`Input::Reconnect`] did: this tab's engine's answer,
    /// `Leader` in a follower, `Closed` when nothing heard it.
    pub fn reconnected(&self) -> ReconnectAnswer {
        self.answer
    }

    /// This tab's engine (idle while this tab follows).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The coordinator.
    pub fn tabs(&self) -> &CrossTab {
        &self.tabs
    }

    /// A fresh engine, resuming from `cursor` (`None`: from the configured
    /// start, which also stays in the config for a Durable Streams 410).
    fn fresh_engine(&self, cursor: Option<&str>) -> Engine {
        let fresh = Engine::with_config(self.engine.shared_config(), self.seed);
        match cursor {
            Some(c) => fresh.resume_from(c),
            None => fresh,
        }
    }
}
