//! What happens after an attempt ends: the reconnect delay (backoff, the
//! server's requested wait, the circuit breaker), the next request of a
//! request transport, and fatal stops.
//!
//! The delay after a failure, in order:
//! 1. `d = backoff` (DESIGN.md "Defaults"): `floor + jitter(min(cap, base · m · 2^k))`,
//!    floor = max(`backoff.floorMs`, server `retry:`) for streams and the current
//!    poll interval for `poll` (a failing poller never polls faster than a
//!    healthy one); `m` = 2 for a 429 without a hint; `k` counts consecutive
//!    unhealthy attempts; `maxAttempts` reached → fatal `gave-up`.
//! 2. A stream is healthy when it was open `healthyAfterMs` with a byte, or
//!    when it ended cleanly after making progress ([`Engine::made_progress`]:
//!    a server that ends every stream after a few events, as serverless time
//!    limits do, is reconnected after the floor like native `EventSource`
//!    does, not after a growing backoff; issue 24 rule 2). After a healthy
//!    stream ends (server restart, time limit), the first reconnect waits
//!    `floor + U[0, max(floor, base))` instead: the "first connect of a fleet"
//!    width of DESIGN.md ("Jitter width by purpose", ±100 %) and the BC-13
//!    yardstick `R + U[0, R)`, so a restarted server sees its clients spread
//!    over a whole floor, not crowded into its first half. (Strategy `none`
//!    keeps the plain delay.)
//! 3. A server-requested wait `w` (Retry-After, else RateLimit-Reset, else
//!    X-RateLimit-Reset; on 429/503; clamped to `maxRetryAfterMs`) is ADDED:
//!    `delay = w + d`. The sum never comes earlier than the server asked, never
//!    skips the backoff floor (a date already past gives `w = 0`, not 0 delay),
//!    and keeps the backoff jitter: a fleet that all read `Retry-After: 30` at
//!    the same moment does not return in the same millisecond, as it would with
//!    `max(w, d)`. The cost is at most `floor + step` of extra wait.
//! 4. A counted failure goes to the circuit breaker; when it opens, the wait
//!    becomes its cool-down (never shorter than `delay`), reason `breaker-open`.

use super::action::{Action, ErrorCode, Reason, State};
use super::config::TransportKind;
use super::state::{Attempt, Scheduled};
use super::Engine;
use crate::policy::backoff::Strategy;
use crate::policy::retry_after::{ServerWait, WaitSource};
use crate::time::{clamp_timer_ms, Now};

/// Jitter before the next long-poll request after an answer, ms: `U[0, 100]`.
pub const LONG_POLL_JITTER_MS: u64 = 100;

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
        if f.healthy {
            self.backoff.record_healthy();
            self.breaker.record_success();
        } else if !f.counts {
            self.release_probe(now);
        }
        let floor = (attempt.transport == TransportKind::Poll).then(|| self.interval.current_ms());
        self.backoff.set_interval_floor_ms(floor);
        let mut delay = match self
            .backoff
            .next_delay_scaled_ms(&mut self.rng, f.step_multiplier)
        {
            Ok(d) => d,
            Err(_) => {
                self.fatal(ErrorCode::GaveUp, f.status, Reason::PermanentError);
                return;
            }
        };
        if f.healthy && self.backoff.config().strategy != Strategy::None {
            let floor = self.backoff.floor_ms();
            let width = floor.max(self.backoff.config().base_ms);
            delay = clamp_timer_ms(floor.saturating_add(self.rng.below(width)));
        }
        let mut reason = f.reason;
        if let Some(w) = f.wait {
            // `w.wait_ms` is already capped at `maxRetryAfterMs`; the backoff
            // delay goes on top of the cap on purpose: a fleet told the same
            // long wait must not come back in lockstep (README `maxRetryAfterMs`).
            delay = clamp_timer_ms(delay.saturating_add(w.wait_ms));
            reason = match w.source {
                WaitSource::RetryAfter => Reason::RetryAfter,
                WaitSource::RateLimitReset => Reason::RateLimit,
            };
        }
        if f.counts {
            if let Some(until) = self.breaker.record_failure(now.mono, delay, &mut self.rng) {
                delay = until.since(now.mono);
                reason = Reason::BreakerOpen;
            }
        }
        self.report(f.code, f.status, delay, false);
        self.schedule(now, delay, reason);
    }

    /// A request transport's answer is complete: a success. `news`: it
    /// delivered something. Schedules the next request:
    /// - `poll`: after the interval (slower after "unchanged", faster after
    ///   news, set by a server hint within bounds);
    /// - `long-poll`: at once (`U[0, 100]` ms jitter), or after a clamped
    ///   server hint. An empty answer that came back faster than
    ///   `backoff.floorMs` was not held: the server does not hold (or says
    ///   "stop" with a 204 on a stream URL, BC-10 NATIVE caveat), so it is
    ///   paced by the backoff like an unhealthy attempt (k grows, no breaker
    ///   failure) instead of looping at once.
    pub(crate) fn succeed_request(&mut self, now: Now, attempt: &Attempt, news: bool) {
        let held = now.mono.since(attempt.started);
        let fast_empty = attempt.transport == TransportKind::LongPoll
            && !news
            && attempt.hint_ms.is_none()
            && held < self.backoff.config().floor_ms;
        if !fast_empty {
            // Any successful response of a request transport resets the count.
            self.backoff.record_healthy();
        }
        self.mark_success(attempt.transport, attempt.status.is_some());
        if self.state != State::Open {
            self.set_state(State::Open, attempt.reason, None);
        }
        let delay = if attempt.transport == TransportKind::Poll {
            self.interval.record_answer(news);
            if let Some(hint) = attempt.hint_ms {
                self.interval.apply_server_hint_ms(hint);
            }
            self.interval.current_ms()
        } else if let Some(hint) = attempt.hint_ms {
            hint.clamp(self.interval.min_ms(), self.interval.max_ms())
        } else if fast_empty {
            self.backoff.set_interval_floor_ms(None);
            match self.backoff.next_delay_ms(&mut self.rng) {
                Ok(d) => d,
                Err(_) => {
                    self.fatal(ErrorCode::GaveUp, attempt.status, Reason::PermanentError);
                    return;
                }
            }
        } else {
            self.rng.below(LONG_POLL_JITTER_MS + 1)
        };
        let reason = if attempt.hint_ms.is_some() {
            Reason::ServerHint
        } else {
            Reason::Backoff
        };
        self.stats.current_delay_ms = delay;
        self.scheduled = Some(Scheduled {
            at: now.mono.plus(delay),
            reason,
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
        fresh && !self.cursor.is_empty() && self.cursor != a.cursor_at_start
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
        self.auth_refreshed = false;
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
            });
        }
    }

    /// Schedule the next attempt `delay` ms from now, in state `waiting`
    /// (no state change for a 0 ms delay).
    pub(crate) fn schedule(&mut self, now: Now, delay: u64, reason: Reason) {
        self.scheduled = Some(Scheduled {
            at: now.mono.plus(delay),
            reason,
        });
        self.stats.current_delay_ms = delay;
        if delay > 0 {
            self.set_state(State::Waiting, reason, Some(delay));
        }
    }

    /// Stop for good: abort the live attempt, cancel everything, report.
    pub(crate) fn fatal(&mut self, code: ErrorCode, status: Option<u16>, reason: Reason) {
        if let Some(a) = self.attempt.take() {
            self.actions.push_back(Action::Abort(a.id));
        }
        self.scheduled = None;
        self.closed = true;
        self.report(Some(code), status, 0, true);
        self.set_state(State::Closed, reason, None);
    }
}
