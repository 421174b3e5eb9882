//! `reconnect()`: the app's "the network is back, try now" (issue 22 item 2).
//!
//! A user action, not a failure: it ends a client-side wait early and is
//! never counted for the backoff, the breaker or `maxAttempts`. The rules:
//! - open or connecting (a live attempt, or a request transport between two
//!   answers, state `open`): nothing to do;
//! - waiting after a client-side backoff (`backoff`, `stalled`,
//!   `open-failed`, …): the next attempt starts at once, reason `reconnect`;
//! - never earlier than a server-requested wait (`Retry-After`, rate-limit
//!   reset: the server's wait as asked, measured from the answer that asked
//!   it) nor an open circuit breaker's cool-down: `reconnect()` during such a
//!   wait changes nothing;
//! - paused for offline: resumes only when the adapter reports the browser
//!   online now (`navigator.onLine`: its `online` event may be late or
//!   missing); paused for hidden or frozen: nothing (the page comes back by
//!   itself);
//! - stopped by `gave-up` (`backoff.maxAttempts`): revived, with the backoff
//!   count reset (still behind the breaker and the server's wait); stopped
//!   by a permanent error, `close()` or no usable transport: nothing;
//! - a floor between honoured reconnects, [`Engine::user_reconnect_floor_ms`]
//!   (`backoff.floorMs`, raised by the server's `retry:`, default 1000 ms):
//!   a button pressed in a loop gets one attempt per floor, and each attempt
//!   that fails still counts toward the breaker, which then holds it off.

use super::action::{Reason, State};
use super::state::Phase;
use super::Engine;
use crate::policy::breaker::BreakerState;
use crate::time::{MonoMs, Now};

/// A wait `reconnect()` never ends: the server asked for it, or the breaker
/// is open.
fn is_server_or_breaker_wait(reason: Reason) -> bool {
    matches!(
        reason,
        Reason::RetryAfter | Reason::RateLimit | Reason::BreakerOpen
    )
}

/// What `reconnect()` must respect, kept by the engine.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct UserReconnect {
    /// Stopped by `gave-up` after `maxAttempts`: `reconnect()` may revive it.
    pub revivable: bool,
    /// The end of the last server-requested wait (the wait as asked, from
    /// the answer that asked it).
    pub server_wait_until: Option<MonoMs>,
    /// When the last honoured `reconnect()` scheduled its attempt.
    pub last: Option<MonoMs>,
}

impl Engine {
    /// The app called `reconnect()`; `online` is `navigator.onLine` read now.
    /// See the module rules. Returns nothing: the effect shows as a `state`
    /// change with reason `reconnect` (or none).
    pub fn handle_reconnect(&mut self, now: Now, online: bool) {
        self.handle(now, super::Input::Reconnect { online });
    }

    /// The least time between two honoured `reconnect()` calls, ms:
    /// `backoff.floorMs` raised by the server's `retry:`.
    pub fn user_reconnect_floor_ms(&self) -> u64 {
        self.backoff.floor_ms()
    }

    /// A closed engine that gave up is opened again (before the common input
    /// entry, which ignores everything once closed), unless the browser says
    /// offline now (`online`: a closed engine heard no page facts) or the
    /// page was frozen or paused hidden when it stopped: then it stays as it
    /// is, revivable. `true` when revived.
    pub(crate) fn revive_if_gave_up(&mut self, online: bool) -> bool {
        if !self.phase.is_closed() || !self.user.revivable {
            return false;
        }
        if !online || self.life.frozen || self.life.paused_hidden {
            return false;
        }
        self.user.revivable = false;
        self.phase = Phase::Idle;
        self.backoff.record_healthy();
        // Any state but `open`/`connecting`, so the rule below goes on.
        self.state = State::Closed;
        true
    }

    pub(crate) fn on_reconnect(&mut self, now: Now, online: bool) {
        if !self.started || self.phase.attempt().is_some() {
            return;
        }
        if matches!(self.state, State::Open | State::Connecting) {
            return;
        }
        if self.life.offline {
            if !online {
                return;
            }
            self.life.offline = false;
        }
        if self.life.paused() {
            return;
        }
        let scheduled = self.phase.scheduled();
        if scheduled.is_some_and(|s| is_server_or_breaker_wait(s.reason)) {
            // The wait is the server's (its herd spread included) or the
            // breaker's: it stays exactly as it is.
            return;
        }
        let at = self.user_reconnect_earliest(now);
        let sooner = scheduled.is_none_or(|s| at < s.at);
        if sooner {
            self.user.last = Some(at);
            self.schedule(now, at.since(now.mono), Reason::Reconnect);
        }
    }

    /// The earliest the app's reconnect may start: now, but never before the
    /// server's requested wait, the breaker's cool-down, or one floor after
    /// the last honoured reconnect.
    fn user_reconnect_earliest(&self, now: Now) -> MonoMs {
        let breaker = match self.breaker.state() {
            BreakerState::Open { until } => Some(until),
            _ => None,
        };
        let floor = self.user_reconnect_floor_ms();
        let after_last = self.user.last.map(|t| t.plus(floor));
        [self.user.server_wait_until, breaker, after_last]
            .into_iter()
            .flatten()
            .fold(now.mono, MonoMs::max)
    }
}
