//! The coordinator of a build without the `cross-tab` feature (there it is
//! `CrossTab`): every connection runs alone in its tab. Same calls as the
//! full machine (`machine.rs`), which given a `Support` without locks or a
//! channel answers the same (tests/crosstab_solo.rs compares them): `Run` from the initial cursor at the start, the app's
//! `reconnect()` to its own engine, every own notice heard, nothing posted,
//! no lock, no timer. A session's code is the same in both builds; this one
//! lets the wasm leave the coordination code out.

use alloc::string::String;

use super::{Mirror, Support, TabAction, Wire};
use crate::engine::{Action, Message, TransportKind};
use crate::time::Now;

/// What the solo coordinator has queued (at most one action between polls:
/// each input queues at most one and the session drains after each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Queued {
    Nothing,
    Run,
    Reconnect,
}

/// The coordinator of one connection that runs alone in its tab.
#[derive(Clone, Debug)]
pub struct Solo {
    cursor: String,
    started: bool,
    done: bool,
    queued: Queued,
}

impl Solo {
    /// A coordinator for a connection that starts from `cursor`; `_seed`
    /// (the steal jitter's) is not used alone.
    pub fn new(cursor: String, _seed: u64) -> Self {
        Solo {
            cursor,
            started: false,
            done: false,
            queued: Queued::Nothing,
        }
    }

    /// As the full machine's (offsets only matter across tabs).
    pub fn with_offsets(self) -> Self {
        self
    }

    /// Never following: `None`.
    pub fn following(&self) -> Option<&Mirror> {
        None
    }

    /// Never leading: `false`.
    pub fn is_leader(&self) -> bool {
        false
    }

    /// The next action; drain until [`TabAction::Wait`] (never a timer).
    #[must_use = "an action not carried out is lost"]
    pub fn poll(&mut self) -> TabAction {
        match core::mem::replace(&mut self.queued, Queued::Nothing) {
            Queued::Run => TabAction::Run {
                cursor: self.cursor.clone(),
            },
            Queued::Reconnect => TabAction::Reconnect,
            Queued::Nothing => TabAction::Wait { until: None },
        }
    }

    /// Start (a second call, or one after the close, is ignored): `Run`
    /// from the initial cursor.
    pub fn handle_start(&mut self, _now: Now, _support: Support) {
        if !self.started && !self.done {
            self.started = true;
            self.queued = Queued::Run;
        }
    }

    /// The app called `reconnect()`: its own engine's (ignored after the
    /// close).
    pub fn handle_reconnect(&mut self, _now: Now) {
        if !self.done {
            self.queued = Queued::Reconnect;
        }
    }

    /// The connection closed: every later input is ignored.
    pub fn handle_close(&mut self, _now: Now) {
        self.done = true;
    }

    /// Heard: `true` (no other tab delivers).
    pub fn handle_own_message(&mut self, _: &Message, _: Option<TransportKind>, _: &str) -> bool {
        true
    }

    /// Heard: `true`.
    pub fn handle_own_action(&mut self, _action: &Action, _cursor: &str) -> bool {
        true
    }

    /// No lock alone: ignored.
    pub fn handle_lock_granted(&mut self, _now: Now) {}

    /// No lock alone: ignored.
    pub fn handle_lock_stolen(&mut self, _now: Now) {}

    /// No lock alone: ignored.
    pub fn handle_lock_failed(&mut self, _now: Now) {}

    /// No steal alone: ignored.
    pub fn handle_visibility(&mut self, _now: Now, _hidden: bool) {}

    /// No steal alone: ignored.
    pub fn handle_frozen(&mut self, _now: Now, _frozen: bool) {}

    /// No lock or channel alone: ignored.
    pub fn handle_page_hide(&mut self, _now: Now) {}

    /// No lock or channel alone: ignored.
    pub fn handle_page_show(&mut self, _now: Now, _persisted: bool) {}

    /// No timer alone: ignored.
    pub fn handle_timer(&mut self, _now: Now) {}

    /// No channel alone: ignored.
    pub fn handle_wire(&mut self, _now: Now, _wire: Wire) {}
}
