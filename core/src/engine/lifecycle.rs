//! The page lifecycle and the device's sleep (ARCHITECTURE.md "Defaults": hidden,
//! offline; BC-18; BC-14 V5).
//!
//! - Hidden, once `pauseWhenHidden.afterMs` has passed (0 = at once): the live
//!   attempt is aborted and every pending retry cancelled, state `paused`
//!   (`hidden`). No `Open` while paused, also when the server is failing.
//! - Visible again: one attempt at once (0 ms: one page becoming
//!   visible is not a fleet, and a user looking at the tab waits for it),
//!   with the backoff count reset and the cursor. Only a `visible` that
//!   reveals a wake from sleep (below) waits `U[0, RESUME_JITTER_MS)`:
//!   devices scheduled to wake together (kiosks, laptops at 9:00) would
//!   otherwise arrive in the same millisecond. (This reverses BC-18's "resume
//!   delay U[0, 250 ms)" for the plain case.)
//! - Offline: no attempts (state `paused`, `offline`); online: one prompt
//!   attempt, `U[0, 250)` ms later (a network restored for a whole office or
//!   a region brings its fleet back at once).
//! - Frozen (`freeze`, `pagehide` into the back/forward cache): like hidden
//!   without grace; resumed: one prompt attempt (`resumed`).
//! - Wake detection: a timer firing ≥ 1 s late, or the monotonic and wall
//!   clocks disagreeing by ≥ 5 s since the last input, means the device (or
//!   the tab's timers) slept. Then every deadline is re-checked against now
//!   instead of firing a burst: a live attempt whose deadline passed (on either
//!   clock) is replaced by ONE prompt attempt (`resumed`), and the silence is
//!   not counted as a failure or as evidence against the transport — a sleep
//!   says nothing about the server or the path. A deadline that has not passed
//!   (bytes kept arriving while timers were throttled) changes nothing.

use super::action::{Action, Reason, State};
use super::watchdog;
use super::Engine;
use crate::time::Now;

/// Delay window of the prompt attempt after online / resumed / a wake from
/// sleep (also a `visible` that reveals one), ms: `U[0, 250)`.
pub const RESUME_JITTER_MS: u64 = 250;
/// A timer this late (ms) means the tab or device slept.
pub const LATE_TIMER_MS: u64 = 1000;
/// Monotonic and wall clocks drifting apart this much (ms) between two inputs
/// means the device slept (or the wall clock was set).
pub const CLOCK_DISAGREEMENT_MS: u64 = 5000;

/// Whether the two clocks moved by amounts that differ by ≥ 5 s.
pub(crate) fn clocks_disagree(before: Now, now: Now) -> bool {
    let mono = i128::from(now.mono.0) - i128::from(before.mono.0);
    let wall = i128::from(now.wall.0) - i128::from(before.wall.0);
    (wall - mono).unsigned_abs() >= u128::from(CLOCK_DISAGREEMENT_MS)
}

impl Engine {
    /// Release everything: abort the live attempt, cancel the pending retry.
    pub(crate) fn pause(&mut self, now: Now, reason: Reason) {
        if let Some(a) = self.phase.take_attempt() {
            self.actions.push_back(Action::Abort(a.id));
            self.note_stream_gap(&a);
            self.parser.new_stream();
        }
        self.release_probe(now);
        self.phase.cancel_scheduled();
        self.stats.current_delay_ms = 0;
        self.set_state(State::Paused, reason, None);
    }

    /// Leave a pause: one prompt attempt.
    pub(crate) fn resume(&mut self, now: Now, reason: Reason, reset_backoff: bool) {
        if self.phase.is_closed()
            || !self.started
            || self.life.paused()
            || self.phase.attempt().is_some()
        {
            return;
        }
        if reset_backoff {
            self.backoff.record_healthy();
        }
        let delay = self.resume_delay_ms(now, reason);
        self.schedule(now, delay, reason);
    }

    /// The delay of the prompt attempt (module doc): 0 after `visible`,
    /// unless that same input revealed a wake from sleep; else the fleet
    /// spread `U[0, RESUME_JITTER_MS)`.
    fn resume_delay_ms(&mut self, now: Now, reason: Reason) -> u64 {
        if reason == Reason::Visible && self.life.woke_at != Some(now.mono) {
            return 0;
        }
        self.rng.below(RESUME_JITTER_MS)
    }

    /// The page's visibility changed.
    pub(crate) fn on_visibility(&mut self, now: Now, hidden: bool) {
        if hidden == self.life.hidden {
            return;
        }
        self.life.hidden = hidden;
        if hidden {
            self.life.hidden_since = Some(now.mono);
            // The pause itself happens in `advance` once the grace has passed.
        } else {
            self.life.hidden_since = None;
            let was_paused = self.life.paused_hidden;
            self.life.paused_hidden = false;
            if was_paused {
                self.resume_or_stay_paused(now, Reason::Visible, true);
            }
        }
    }

    /// The browser went offline or online.
    pub(crate) fn on_online(&mut self, now: Now, online: bool) {
        if online != self.life.offline {
            return;
        }
        self.life.offline = !online;
        if !self.started || self.phase.is_closed() {
            return;
        }
        if online {
            self.resume_or_stay_paused(now, Reason::Online, false);
        } else {
            self.pause(now, Reason::Offline);
        }
    }

    /// The page was frozen or resumed.
    pub(crate) fn on_frozen(&mut self, now: Now, frozen: bool) {
        if frozen == self.life.frozen {
            return;
        }
        self.life.frozen = frozen;
        if !self.started || self.phase.is_closed() {
            return;
        }
        if frozen {
            self.pause(now, Reason::Frozen);
        } else {
            self.resume_or_stay_paused(now, Reason::Resumed, false);
        }
    }

    fn resume_or_stay_paused(&mut self, now: Now, reason: Reason, reset_backoff: bool) {
        if !self.started || self.phase.is_closed() {
            return;
        }
        if self.life.paused() {
            let still = self.life.pause_reason();
            self.set_state(State::Paused, still, None);
        } else {
            self.resume(now, reason, reset_backoff);
        }
    }

    /// The device or the tab's timers slept: re-check the live attempt's
    /// deadline on both clocks; replace a dead attempt by one prompt attempt.
    pub(crate) fn on_wake(&mut self, now: Now) {
        self.life.woke_at = Some(now.mono);
        if !self.started || self.phase.is_closed() || self.life.paused() {
            return;
        }
        let Some(attempt) = self.phase.attempt() else {
            return;
        };
        let overdue = watchdog::overdue(
            attempt,
            &self.config.watchdog,
            self.config.long_poll.timeout_ms,
            now,
        );
        if overdue.is_none() {
            return;
        }
        if let Some(a) = self.phase.take_attempt() {
            self.actions.push_back(Action::Abort(a.id));
            self.note_stream_gap(&a);
            self.parser.new_stream();
        }
        self.release_probe(now);
        let delay = self.rng.below(RESUME_JITTER_MS);
        self.schedule(now, delay, Reason::Resumed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disagreement_threshold() {
        let a = Now::at(1000, 1_000_000);
        assert!(!clocks_disagree(a, Now::at(5000, 1_004_000)));
        assert!(!clocks_disagree(a, Now::at(1000, 1_004_999)));
        assert!(clocks_disagree(a, Now::at(1000, 1_005_000)));
        assert!(clocks_disagree(a, Now::at(3_601_000, 1_000_000)));
        // Extremes neither overflow nor disagree when both moved 2^64 − 1.
        assert!(!clocks_disagree(
            Now::at(0, i64::MIN),
            Now::at(u64::MAX, i64::MAX)
        ));
        assert!(clocks_disagree(
            Now::at(0, i64::MAX),
            Now::at(u64::MAX, i64::MIN)
        ));
    }
}
