//! What happens after an attempt ends: the reconnect delay (backoff, the
//! server's requested wait, the circuit breaker), the next request of a
//! request transport, and fatal stops.
//!
//! The delay after a failure, in order:
//! 1. `d = backoff` (ARCHITECTURE.md "Defaults"): `floor + jitter(min(cap, base · m · 2^k))`,
//!    floor = max(`backoff.floorMs`, server `retry:`) for streams and the current
//!    poll interval for `poll` (a failing poller never polls faster than a
//!    healthy one); `m` = 2 for a 429 without a hint; `k` counts consecutive
//!    unhealthy attempts; `maxAttempts` reached → fatal `gave-up`.
//! 2. A stream is healthy when it was open `healthyAfterMs` with a byte, or
//!    when it ended cleanly after making progress ([`Engine::made_progress`]:
//!    a server that ends every stream after a few events, as serverless time
//!    limits do, is reconnected after the floor like native `EventSource`
//!    does, not after a growing backoff). After a healthy
//!    stream ends (server restart, time limit), the first reconnect waits
//!    `floor + U[0, max(floor, base))` instead: the "first connect of a fleet"
//!    width of ARCHITECTURE.md ("Jitter width by purpose", ±100 %) and the BC-13
//!    yardstick `R + U[0, R)`, so a restarted server sees its clients spread
//!    over a whole floor, not crowded into its first half. (Strategy `none`
//!    keeps the plain delay.)
//! 3. A server-requested wait `w` (Retry-After, else RateLimit-Reset, else
//!    X-RateLimit-Reset; on 429/503; clamped to `maxRetryAfterMs`) is honoured
//!    as asked: `delay = max(w, floor) + U[0, min(max(w, floor) / 10, 1000)]`,
//!    NOT plus the exponential term (which grew a 3 s wait to 5 s and put a
//!    clamped one 5 s over the clamp). Never earlier than asked, never below
//!    the floor (a date already past gives `w = 0`, i.e. the floor). The
//!    spread is for the herd: a fleet told the same HTTP-date, or the same
//!    delta at the same moment, comes back over 10 % of the wait instead of
//!    in one millisecond (peak ≈ N / spread), and the 1 s ceiling keeps a long
//!    wait "as asked" (a clamped 300 s wait ends within 301 s). Strategy
//!    `none` adds no spread. The failure still counts for `k` (the next
//!    unhinted retry backs off further, `maxAttempts` applies) but NOT for
//!    the circuit breaker: the server is pacing its own load, and a 30 s
//!    cool-down must not override its "come back in 3 s".
//! 4. A counted failure goes to the circuit breaker; when it opens, the wait
//!    becomes its cool-down (never shorter than `delay`), reason `breaker-open`.

use super::action::{Action, ErrorCode, Reason, State};
use super::config::TransportKind;
use super::state::{Attempt, AuthRetry, Scheduled};
use super::Engine;
use crate::policy::backoff::{Backoff, GaveUp, Strategy};
use crate::policy::retry_after::{ServerWait, WaitSource};
use crate::rng::Rng;
use crate::time::{clamp_timer_ms, Now};

/// Jitter before the next long-poll request after an answer, ms: `U[0, 100]`
/// after "no news" (and the ceiling of the spread after news, see
/// [`long_poll_spread_max_ms`]).
pub const LONG_POLL_JITTER_MS: u64 = 100;

/// The spread after a long-poll answer with news is at most this fraction
/// (1 / n) of the time the request waited for it: 10 %.
pub const LONG_POLL_SPREAD_DIVISOR: u64 = 10;

/// The widest spread before the next long-poll request after an answer with
/// news whose first byte came `held_ms` after its request went out, ms:
/// `min(held_ms / 10, 100)` (decided with `make bench-herd`'s
/// broadcast). The first byte, not the last: the time a large answer takes
/// to arrive and parse is no hold (a 1,000-event backlog answer that took
/// 10 ms to read would pay a spread for it, 20 times over a 20,000-event
/// backlog), and a server that sends its head at once and holds the body
/// is still held until the body's first byte.
///
/// The spread is for the broadcast: one publish answers every held request
/// of a fleet in the same instant, and without a spread the re-polls come
/// back in that instant too. The requests a publish synchronises are the
/// ones that waited; an answer that came at once (a backlog: the client is
/// behind) or after a short hold (a busy feed) synchronised nothing, and a
/// spread there only delays what comes next (a flat `U[0, 100]` made
/// `make bench`'s long-poll p50 35 ms for events 10 ms apart, and a
/// 20,000-event backlog paid it 20 times). Capped at 10 % of the hold, the
/// gap in which a new event waits is at most a tenth of the quiet before it,
/// and the fleet's re-poll burst stays at most about 10× its steady rate
/// for holds up to 1 s (the same 10 % as the herd spread of a
/// server-requested wait, `herd_spread_max_ms`).
pub fn long_poll_spread_max_ms(held_ms: u64) -> u64 {
    (held_ms / LONG_POLL_SPREAD_DIVISOR).min(LONG_POLL_JITTER_MS)
}

/// Ceiling of the herd spread added to a server-requested wait, ms (module
/// doc, rule 3): `U[0, min(wait / RETRY_AFTER_SPREAD_DIVISOR, this)]`.
pub const RETRY_AFTER_SPREAD_MAX_MS: u64 = 1000;

/// The herd spread after a server-requested wait is at most this fraction
/// (1 / n) of the wait: 10 %.
pub const RETRY_AFTER_SPREAD_DIVISOR: u64 = 10;

/// The widest herd spread for a server-requested wait of `wait_ms`, ms:
/// `min(wait_ms / 10, 1000)`.
pub fn herd_spread_max_ms(wait_ms: u64) -> u64 {
    (wait_ms / RETRY_AFTER_SPREAD_DIVISOR).min(RETRY_AFTER_SPREAD_MAX_MS)
}

/// The delay after a server-requested wait `wait_ms` (already clamped to
/// `maxRetryAfterMs`), rule 3 of the module doc: `max(wait, floor)` plus the
/// herd spread `U[0, herd_spread_max_ms(that)]` (none for strategy `none`),
/// ms, clamped to `MAX_TIMER_MS`. The failure still counts for `k` (and
/// `maxAttempts`). Shared by the connection engine and the upstream sender
/// (the `upstream` module), so both honour a server's wait the same way.
///
/// # Errors
/// [`GaveUp`] once `max_attempts` consecutive failures are counted.
pub fn server_wait_delay_ms(
    backoff: &mut Backoff,
    rng: &mut Rng,
    wait_ms: u64,
) -> Result<u64, GaveUp> {
    backoff.record_failure()?;
    let asked = wait_ms.max(backoff.floor_ms());
    let spread = if backoff.config().strategy == Strategy::None {
        0
    } else {
        rng.below(herd_spread_max_ms(asked).saturating_add(1))
    };
    Ok(clamp_timer_ms(asked.saturating_add(spread)))
}

/// How an attempt failed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Failure {
    /// The error to report (`None`: a stream that simply ended).
    pub code: Option<ErrorCode>,
    /// The HTTP status involved.
    pub status: Option<u16>,
    /// The server's requested wait.
    pub wait: Option<ServerWait>,
    /// Backoff step multiplier (2 for a 429 without a hint).
    pub step_multiplier: u32,
    /// Counts toward the circuit breaker.
    pub counts: bool,
    /// Evidence against the transport (`open-failed`, `buffered-stream`).
    pub evidence: Option<Reason>,
    /// The ended stream was healthy: reset `k` first, fleet-wide spread.
    pub healthy: bool,
    /// The reason of the `waiting` state.
    pub reason: Reason,
}

impl Failure {
    /// A counted failure with `code`.
    pub fn new(code: ErrorCode, reason: Reason) -> Self {
        Failure {
            code: Some(code),
            status: None,
            wait: None,
            step_multiplier: 1,
            counts: true,
            evidence: None,
            healthy: false,
            reason,
        }
    }

    /// With evidence against the transport.
    pub fn evidence(mut self, evidence: Reason) -> Self {
        self.evidence = Some(evidence);
        self
    }
}

impl Engine {
    /// `attempt` failed (it is already detached from the engine; the caller
    /// emitted `Abort` if the transport may still be running).
    pub(crate) fn fail(&mut self, now: Now, attempt: &Attempt, f: Failure) {
        if let Some(change) = self.selector.on_failure(now, attempt.transport, f.evidence) {
            self.push_transport_change(change);
            if attempt.failback_probe && f.evidence.is_some() {
                // The preferred transport is still unusable: back to the one
                // that works, at once, without counting a failure.
                self.release_probe(now);
                let delay = self.rng.below(LONG_POLL_JITTER_MS + 1);
                self.report(f.code, f.status, delay, false);
                self.schedule(now, delay, f.evidence.unwrap_or(Reason::OpenFailed));
                return;
            }
        }
        let hinted = f.wait.is_some();
        if f.healthy {
            self.backoff.record_healthy();
            self.breaker.record_success();
        } else if !f.counts || hinted {
            self.release_probe(now);
        }
        let floor = (attempt.transport == TransportKind::Poll).then(|| self.interval.current_ms());
        self.backoff.set_interval_floor_ms(floor);
        if let Some(w) = f.wait {
            // `reconnect()` never comes back before the server asked.
            self.user.server_wait = Some((now.mono.plus(w.wait_ms), w.source));
        }
        let delay = match f.wait {
            Some(w) => self.server_wait_delay_ms(w.wait_ms),
            None => self.backoff_delay_ms(&f),
        };
        let Ok(mut delay) = delay else {
            self.fatal(ErrorCode::GaveUp, f.status, Reason::GaveUp);
            // Not a verdict on the server: `reconnect()` may try again.
            self.user.revivable = true;
            return;
        };
        let mut reason = match f.wait.map(|w| w.source) {
            Some(WaitSource::RetryAfter) => Reason::RetryAfter,
            Some(WaitSource::RateLimitReset) => Reason::RateLimit,
            None => f.reason,
        };
        // A hinted answer is the server pacing its own load: its wait, not
        // the breaker's cool-down, says when to come back.
        if f.counts && !hinted {
            if let Some(until) = self.breaker.record_failure(now.mono, delay, &mut self.rng) {
                delay = until.since(now.mono);
                reason = Reason::BreakerOpen;
            }
        }
        self.report(f.code, f.status, delay, false);
        self.schedule(now, delay, reason);
    }

    /// The backoff delay after an unhinted failure (rule 1 of the module
    /// doc; rule 2 after a healthy stream).
    fn backoff_delay_ms(&mut self, f: &Failure) -> Result<u64, GaveUp> {
        let delay = self
            .backoff
            .next_delay_scaled_ms(&mut self.rng, f.step_multiplier)?;
        if f.healthy && self.backoff.config().strategy != Strategy::None {
            let floor = self.backoff.floor_ms();
            let width = floor.max(self.backoff.config().base_ms);
            return Ok(clamp_timer_ms(floor.saturating_add(self.rng.below(width))));
        }
        Ok(delay)
    }

    /// The delay after a server-requested wait `wait_ms` (rule 3 of the
    /// module doc; see [`server_wait_delay_ms`]).
    fn server_wait_delay_ms(&mut self, wait_ms: u64) -> Result<u64, GaveUp> {
        server_wait_delay_ms(&mut self.backoff, &mut self.rng, wait_ms)
    }

    /// A request transport's answer is complete: a success (never a
    /// failure: `k` resets, no error). `news`: it delivered something.
    /// Schedules the next request:
    /// - `poll`: after the interval (slower after "unchanged", faster after
    ///   news, set by a server hint within bounds);
    /// - `long-poll` with a server hint: after the clamped hint;
    /// - `long-poll` news: at once, spread by
    ///   `U[0, min(held / 10, 100)]` ms, `held` = the time from the request to
    ///   the answer's first body byte, or to the whole answer when its body is
    ///   read whole ([`long_poll_spread_max_ms`]): reading a large body is
    ///   no hold, a publish synchronises only the wait before its bytes;
    /// - `long-poll` "no news" (204, 304, 408, an empty 200, a hold that timed
    ///   out, an answer of repeats): paced by the START of the request, at
    ///   `max(now, started + floor) + U[0, 100]`, floor = `backoff.floorMs`
    ///   raised by the server's `retry:`. A held answer
    ///   re-polls at once; a server that does not hold (or says "stop" with a
    ///   204 on a stream URL, BC-10 NATIVE caveat) gets at most one request
    ///   per floor, at a fixed pace: never the growing backoff, which
    ///   delayed news published meanwhile by tens of seconds
    ///   (durable-streams PR #55, etcd #2053).
    pub(crate) fn succeed_request(&mut self, now: Now, attempt: &Attempt, news: bool) {
        self.backoff.record_healthy();
        self.mark_success(attempt.transport, attempt.status.is_some());
        if !attempt.open {
            self.set_state(State::Open, attempt.reason, None);
        }
        let delay = if attempt.transport == TransportKind::Poll {
            self.interval.record_answer(news);
            if let Some(hint) = attempt.hint_ms() {
                self.interval.apply_server_hint_ms(hint);
            }
            self.interval.current_ms()
        } else if let Some(hint) = attempt.hint_ms() {
            hint.clamp(self.interval.min_ms(), self.interval.max_ms())
        } else {
            let (pace, spread) = if news {
                let held = attempt.opened_at.unwrap_or(now.mono);
                let held = held.since(attempt.started);
                (0, long_poll_spread_max_ms(held))
            } else {
                // `backoff.floorMs`, raised by the server's `retry:` (an
                // interval floor left from a poll failure does not apply).
                self.backoff.set_interval_floor_ms(None);
                let earliest = attempt.started.plus(self.backoff.floor_ms());
                (earliest.since(now.mono), LONG_POLL_JITTER_MS)
            };
            clamp_timer_ms(pace.saturating_add(self.rng.below(spread + 1)))
        };
        let reason = if attempt.hint_ms().is_some() {
            Reason::ServerHint
        } else {
            Reason::Backoff
        };
        self.stats.current_delay_ms = delay;
        self.phase.schedule(Scheduled {
            at: now.mono.plus(delay),
            reason,
            shows: State::Open,
        });
    }

    /// Whether the ended attempt `a` made progress: at least one fresh event
    /// (delivered, skipped for its size, or left out by the `events` filter;
    /// never a heartbeat, a reset or a duplicate) and the cursor moved to a new
    /// non-empty id. Without ids a short stream proves nothing: a server that
    /// accepts, sends a `goaway` event and hangs up (BC-11 B) keeps backing
    /// off, and so does one that replays what was already delivered.
    pub(crate) fn made_progress(&self, a: &Attempt) -> bool {
        let fresh = a.delivered > 0 || a.filtered > 0;
        fresh && !self.cursor().is_empty() && self.cursor() != a.cursor_at_start
    }

    /// The transport delivered: close the breaker, tell the selector, allow a
    /// new 401 refresh. The backoff count is NOT reset here: for a stream only
    /// `healthyAfterMs` open with a byte, or a clean end after progress, does
    /// that (BC-11: not headers, not a short connection that died at once).
    /// `answered`: the server itself answered (a response head, an `open`);
    /// a long-poll hold that timed out on the client is a success without
    /// proving the transport works.
    pub(crate) fn mark_success(&mut self, transport: TransportKind, answered: bool) {
        self.mark_answered();
        self.selector.on_success(transport, answered);
    }

    /// The server answered (a native `open`): close the breaker, allow a new
    /// 401 refresh, but leave the selector's evidence alone: a buffering
    /// proxy opens streams too, so for the selector only an event counts.
    pub(crate) fn mark_answered(&mut self) {
        self.server_answered = true;
        self.breaker.record_success();
        self.auth_retry = AuthRetry::Unused;
    }

    /// A breaker probe that ends without an outcome lets a new probe through.
    pub(crate) fn release_probe(&mut self, now: Now) {
        self.breaker.abandon_probe(now.mono);
    }

    /// Emit an `Error` action.
    pub(crate) fn report(
        &mut self,
        code: Option<ErrorCode>,
        status: Option<u16>,
        retry_in_ms: u64,
        fatal: bool,
    ) {
        if let Some(code) = code {
            self.actions.push_back(Action::Error {
                code,
                status,
                retry_in_ms: (!fatal).then_some(retry_in_ms),
                fatal,
                id: None,
            });
        }
    }

    /// Schedule the next attempt `delay` ms from now, in state `waiting`
    /// (no state change for a 0 ms delay).
    pub(crate) fn schedule(&mut self, now: Now, delay: u64, reason: Reason) {
        let shows = if delay > 0 {
            State::Waiting
        } else {
            self.told.0
        };
        self.phase.schedule(Scheduled {
            at: now.mono.plus(delay),
            reason,
            shows,
        });
        self.stats.current_delay_ms = delay;
        if delay > 0 {
            self.set_state(State::Waiting, reason, Some(delay));
        }
    }

    /// Stop for good: abort the live attempt, cancel everything, report.
    pub(crate) fn fatal(&mut self, code: ErrorCode, status: Option<u16>, reason: Reason) {
        if let Some(a) = self.phase.close() {
            self.actions.push_back(Action::Abort(a.id));
        }
        self.report(Some(code), status, 0, true);
        self.set_state(State::Closed, reason, None);
    }
}
