//! `reconnect()`: the app's "the network is back, try now",
//! and the user's button.
//!
//! A user action, not a failure: it ends a client-side wait early and is
//! never counted for the backoff, the breaker or `maxAttempts`. Every call
//! answers what it did and why ([`ReconnectAnswer`]: the JS return value, and
//! a debug-log `note`). The rules:
//! - open or connecting (a live attempt, or a request transport between two
//!   answers, state `open`): nothing to do (`already-open`, `connecting`);
//! - waiting after a client-side backoff (`backoff`, `stalled`,
//!   `open-failed`, …): the next attempt starts at once, reason `reconnect`
//!   (`now`);
//! - an open circuit breaker's cool-down: the breaker's one half-open probe
//!   starts at once (`breaker-probe`; state reason `breaker-probe`). It is
//!   the probe the cool-down's end would have sent: a success closes the
//!   breaker, a failure opens it again for a new cool-down;
//! - never earlier than a server-requested wait (`Retry-After`, rate-limit
//!   reset: the server's wait as asked, measured from the answer that asked
//!   it): the wait stays as it is (`retry-after`, `rate-limit`);
//! - paused for offline: resumes only when the adapter reports the browser
//!   online now (`navigator.onLine`: its `online` event may be late or
//!   missing; `offline` otherwise); paused for hidden or frozen: nothing
//!   (`hidden`: the page comes back by itself);
//! - stopped by `gave-up` (`backoff.maxAttempts`): revived, with the backoff
//!   count reset (still behind the server's wait); stopped by a permanent
//!   error, `close()`, the end of the stream or no usable transport: nothing
//!   (`closed`);
//! - a floor between honoured reconnects, [`Engine::user_reconnect_floor_ms`]
//!   (`backoff.floorMs`, raised by the server's `retry:`, default 1000 ms):
//!   a button pressed in a loop gets one attempt (or breaker probe) per
//!   floor; a call within the floor moves the next attempt to the floor's
//!   end when that is sooner (`too-soon`).

use super::action::{Note, Reason, State};
use super::Engine;
use crate::policy::breaker::BreakerState;
use crate::policy::retry_after::WaitSource;
use crate::time::{MonoMs, Now};

/// What `reconnect()` did, and why: its JS return value (the name) and the
/// debug log's `note` (`reconnect: ` and the name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReconnectAnswer {
    /// `"now"`: the next attempt starts now (a backoff wait ended, an
    /// offline pause ended by `navigator.onLine`, a `gave-up` revived).
    Now,
    /// `"breaker-probe"`: the circuit breaker was open; its one half-open
    /// probe starts now (a failure opens it again for its cool-down).
    BreakerProbe,
    /// `"too-soon"`: within `backoff.floorMs` of the last honoured call; the
    /// next attempt goes one floor after that call, or sooner if it was
    /// already due sooner.
    TooSoon,
    /// `"retry-after"`: the server asked for a wait (`Retry-After`); the next
    /// attempt goes when it said.
    RetryAfter,
    /// `"rate-limit"`: the server's rate-limit reset
    /// (`RateLimit-Reset` / `X-RateLimit-Reset`); the next attempt goes then.
    RateLimit,
    /// `"already-open"`: open (or a request transport between two
    /// answers): nothing to do.
    AlreadyOpen,
    /// `"connecting"`: an attempt is out: nothing to do.
    Connecting,
    /// `"hidden"`: paused for a hidden or frozen page; it resumes when shown.
    Hidden,
    /// `"offline"`: paused offline, and `navigator.onLine` still says so.
    Offline,
    /// `"closed"`: stopped for good (permanent error, `close()`, the stream
    /// closed, no usable transport).
    Closed,
    /// `"leader"`: a `crossTab` follower tab asked the leader tab, whose
    /// connection decides (its own debug log says what it did).
    Leader,
}

/// The debug log's notes, in the order of [`ReconnectAnswer`]: `reconnect: `
/// and the JS name (one table for both: the name is the note's tail).
const NOTES: [&str; 11] = [
    "reconnect: now",
    "reconnect: breaker-probe",
    "reconnect: too-soon",
    "reconnect: retry-after",
    "reconnect: rate-limit",
    "reconnect: already-open",
    "reconnect: connecting",
    "reconnect: hidden",
    "reconnect: offline",
    "reconnect: closed",
    "reconnect: leader",
];

impl ReconnectAnswer {
    /// The JS name (`"now"`, `"breaker-probe"`, …).
    pub fn as_str(self) -> &'static str {
        &self.note()["reconnect: ".len()..]
    }

    /// The debug log's note: `reconnect: ` and the JS name.
    pub(crate) const fn note(self) -> &'static str {
        NOTES[self as usize]
    }
}

/// The answer for a server-requested wait from `source`.
fn server_wait_answer(source: WaitSource) -> ReconnectAnswer {
    match source {
        WaitSource::RetryAfter => ReconnectAnswer::RetryAfter,
        WaitSource::RateLimitReset => ReconnectAnswer::RateLimit,
    }
}

/// What `reconnect()` must respect, kept by the engine.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct UserReconnect {
    /// Stopped by `gave-up` after `maxAttempts`: `reconnect()` may revive it.
    pub revivable: bool,
    /// The end of the last server-requested wait (the wait as asked, from
    /// the answer that asked it), and who asked it.
    pub server_wait: Option<(MonoMs, WaitSource)>,
    /// When the last honoured `reconnect()` scheduled its attempt.
    pub last: Option<MonoMs>,
    /// The answer of the call being handled.
    pub answer: Option<ReconnectAnswer>,
}

impl Engine {
    /// The app called `reconnect()`; `online` is `navigator.onLine` read now.
    /// See the module rules. Returns what it did and why; the same is noted
    /// for the debug log ([`Note::Reconnect`]).
    pub fn handle_reconnect(&mut self, now: Now, online: bool) -> ReconnectAnswer {
        self.user.answer = None;
        self.handle(now, super::Input::Reconnect { online });
        self.user.answer.take().unwrap_or_else(|| {
            // Closed, and not revived: still revivable only when the
            // browser is offline or the page paused.
            let answer = match (self.user.revivable, online) {
                (false, _) => ReconnectAnswer::Closed,
                (true, false) => ReconnectAnswer::Offline,
                (true, true) => ReconnectAnswer::Hidden,
            };
            self.note(Note::Reconnect(answer));
            answer
        })
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
        self.phase = super::state::Phase::Idle;
        self.backoff.record_healthy();
        true
    }

    pub(crate) fn on_reconnect(&mut self, now: Now, online: bool) {
        let answer = self.reconnect_answer(now, online);
        self.user.answer = Some(answer);
        self.note(Note::Reconnect(answer));
    }

    /// The module rules: what `reconnect()` does now, and why.
    fn reconnect_answer(&mut self, now: Now, online: bool) -> ReconnectAnswer {
        let state = self.state();
        if state == State::Open {
            return ReconnectAnswer::AlreadyOpen;
        }
        if self.phase.attempt().is_some() || state == State::Connecting {
            return ReconnectAnswer::Connecting;
        }
        if self.life.offline {
            if !online {
                return ReconnectAnswer::Offline;
            }
            self.life.offline = false;
        }
        if self.life.paused() {
            return ReconnectAnswer::Hidden;
        }
        let scheduled = self.phase.scheduled();
        match scheduled.map(|s| s.reason) {
            // The server's wait (its herd spread included) stays exactly as
            // it is.
            Some(Reason::RetryAfter) => return ReconnectAnswer::RetryAfter,
            Some(Reason::RateLimit) => return ReconnectAnswer::RateLimit,
            _ => {}
        }
        let (at, why) = self.user_reconnect_earliest(now);
        if scheduled.is_some_and(|s| s.at <= at) {
            // Already due as soon as the rules allow: it stays.
            return match scheduled.map(|s| s.reason) {
                _ if at > now.mono => why,
                Some(Reason::BreakerOpen) => ReconnectAnswer::BreakerProbe,
                _ => ReconnectAnswer::Now,
            };
        }
        self.user.last = Some(at);
        let probe = matches!(self.breaker.state(), BreakerState::Open { until } if until > at);
        if probe {
            // The probe the cool-down's end would send, sent at `at`.
            self.breaker.probe_at(at);
        }
        self.schedule(now, at.since(now.mono), Reason::Reconnect);
        match (at == now.mono, probe) {
            (true, true) => ReconnectAnswer::BreakerProbe,
            (true, false) => ReconnectAnswer::Now,
            (false, _) => why,
        }
    }

    /// The earliest the app's reconnect may start, and what holds it back
    /// when that is not now: the server's requested wait, or one floor after
    /// the last honoured reconnect (the breaker's cool-down does not: the
    /// call sends its probe).
    fn user_reconnect_earliest(&self, now: Now) -> (MonoMs, ReconnectAnswer) {
        let floor = self.user_reconnect_floor_ms();
        let after_last = self
            .user
            .last
            .map(|t| (t.plus(floor), ReconnectAnswer::TooSoon));
        let server = self
            .user
            .server_wait
            .map(|(t, source)| (t, server_wait_answer(source)));
        [server, after_last]
            .into_iter()
            .flatten()
            .fold((now.mono, ReconnectAnswer::Now), |a, b| {
                if b.0 > a.0 {
                    b
                } else {
                    a
                }
            })
    }
}
