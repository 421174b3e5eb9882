//! [`Reporter`]: the sans-IO machine of `report(url, task, options)` (issue
//! 15), the design study's general poller for the upstream direction. Same
//! contract as the connection engine and [`Sender`]: every input takes a
//! [`Now`] (both clocks), randomness comes from a seeded [`Rng`], and after
//! every input the adapter drains [`Reporter::poll`] until
//! [`ReportAction::Wait`].
//!
//! ## The drive loop
//! `Collect { report }`: call the app's `task()` and answer
//! `handle_collected(report, Some(key))` with a fresh idempotency key when it
//! gave a body (keep the body under that report number), or `None` when it
//! had nothing to report (or threw). `Issue { report, issue }`: `fetch` that
//! report's body with the issue's method and headers (its key), then report
//! `handle_response` / `handle_error` with both numbers. `Abort`: abort that
//! fetch. `Settled { report, outcome }`: forget that body. `State` / `Error`:
//! dispatch `statechange` / `error`. `Wait { until }`: arm the one timer.
//!
//! ## Rules
//! - Startup: the first report `U[0, 2w]` after start, `w` =
//!   [`ReportConfig::startup_jitter_ms`] (default half the interval).
//! - Pace: report `n + 1` is collected one interval (`± 10 %`) after report
//!   `n` was, the interval being the `poll` transport's
//!   [`PollInterval`] (modes, bounds, clamped server hints: `X-Poll-Interval`
//!   on the answer, `_polling.next_interval_ms` from its JSON body).
//! - Each report is one [`Sender`]: its key goes on every attempt of that
//!   report and on no other; transient / permanent classes, `Retry-After`,
//!   per-attempt timeouts and offline handling are the Sender's. Its backoff
//!   floor is the current interval, so a failing reporter never reports
//!   faster than a healthy one.
//! - Supersede (default): after a transient failure the next report keeps
//!   the reporter's own slot (one interval ± 10 % after the failed one, as
//!   if it had succeeded: a fleet's phases stay as spread as before the
//!   outage, so recovery costs no extra request), held back by a server's
//!   wait (`Retry-After`, rate-limit reset) and by `interval.min_ms` after
//!   the last request; from the second failure in a row it backs off
//!   (`now + interval + U[0, min(60 s, 500 ms · 2^k)]`, the `poll`
//!   transport's rule: a long outage slows the reporter down). At that slot
//!   a body replaces the waiting report (settled `Superseded`, its retry
//!   never sent), and "nothing to report" lets the waiting report's retry go
//!   with its key (at the Sender's own time, an interval after the
//!   failure). A report in flight is never aborted for a newer one (the
//!   server may be applying it): the next report waits for its answer.
//! - `keep_all`: every body is queued (at most `max_queued`, oldest dropped)
//!   and sent in order, one at a time; the head is retried by its Sender;
//!   after a success the next queued one goes `min + U[0, interval − min]`
//!   later (`min` = `interval.min_ms`): a backlog drains at about two
//!   reports per interval, spread over it. A queued report's `deadline_ms`
//!   runs from its collection (its "call", as for an `ordered` send queued
//!   behind another: [`Sender::handle_queued`]), so a queue that does not
//!   move cannot send a report older than its deadline.
//! - Hidden ([`HiddenPolicy`]): stop (default), slower, or unchanged.
//!   Offline: nothing is collected nor sent; online: the missed report
//!   `U[0, 250)` ms later, never before a server's wait.
//! - `flush()`: the next report as soon as the pace allows: not before a
//!   failure's wait, not within `interval.min_ms` of the last request, not
//!   while hidden (stop) or offline, and after a report in flight answers.
//! - Circuit breaker (`breaker.rs`, the engine's [`Breaker`], same
//!   defaults): `breaker.failure_threshold` (5) failed attempts in a row
//!   with no server wait hold every request for a cool-down of
//!   `U[15 s, 45 s]` (never shorter than the wait already chosen; state
//!   `waiting`, reason `breaker-open`), then one probe (`breaker-probe`):
//!   delivered closes it, failed opens it again at once. Answers carrying a
//!   server's wait never open it (the server paces its own load).
//! - A permanent answer (4xx but 408, 409, 425, 429) stops the reporter with
//!   a fatal error (every later report would get the same); other ends of a
//!   report (a Sender giving up, a deadline, a 409 without `Retry-After`:
//!   `conflict`, that report's own) drop it with a non-fatal error.
//! - `stop()` aborts the request in flight, settles every report `Stopped`,
//!   and nothing follows.

mod breaker;
mod config;
mod schedule;
mod slot;

use alloc::vec::Vec;

pub use config::{
    HiddenPolicy, ReportConfig, DEFAULT_MAX_QUEUED, DEFAULT_REPORT_INTERVAL_MS,
    TICK_JITTER_PERMILLE,
};

use super::{IdempotencyKey, Issue, Outcome, Sender};
use crate::engine::{ErrorCode, Reason, ResponseHead, State, TransportError};
use crate::machine::{Lifecycle, Machine};
use crate::policy::backoff::Backoff;
use crate::policy::breaker::Breaker;
use crate::policy::interval::PollInterval;
use crate::rng::Rng;
use crate::time::{MonoMs, Monotone, Now};

/// How one report ended ([`ReportAction::Settled`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReportOutcome {
    /// The server took it (2xx/3xx) after `attempts` attempts.
    Delivered {
        /// The HTTP status.
        status: u16,
        /// Attempts issued for this report.
        attempts: u32,
    },
    /// A newer report replaced it while it waited for a retry.
    Superseded,
    /// It failed for good (the Sender's outcome).
    Failed(Outcome),
    /// `keep_all` queue full: the oldest report was dropped.
    Dropped,
    /// `stop()`.
    Stopped,
}

/// A fact for the reporter ([`Reporter::handle`]); each is the `handle_*`
/// method of the same name, which documents its rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReportInput {
    /// [`Reporter::handle_start`].
    Start,
    /// [`Reporter::handle_collected`]: the report, its key.
    Collected(u64, Option<IdempotencyKey>),
    /// [`Reporter::handle_response`]: report, attempt, head,
    /// `_polling.next_interval_ms`.
    Response(u64, u32, ResponseHead, Option<u64>),
    /// [`Reporter::handle_error`]: report, attempt, error.
    Error(u64, u32, TransportError),
    /// [`Reporter::handle_timer`].
    Timer,
    /// [`Reporter::handle_visibility`] (`true`: visible).
    Visible(bool),
    /// [`Reporter::handle_online`].
    Online(bool),
    /// [`Reporter::handle_flush`].
    Flush,
    /// [`Reporter::handle_stop`].
    Stop,
}

/// What the adapter does next ([`Reporter::poll`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReportAction {
    /// Call the task for report `report`; answer [`Reporter::handle_collected`].
    Collect {
        /// The report number (1, 2, …).
        report: u64,
    },
    /// Send an attempt of `report` (its body, `issue.method`, `issue.headers`).
    Issue {
        /// The report number.
        report: u64,
        /// The attempt, method and idempotency header.
        issue: Issue,
    },
    /// Abort attempt `attempt` of `report`.
    Abort {
        /// The report number.
        report: u64,
        /// The attempt.
        attempt: u32,
    },
    /// `report` ended: drop its body.
    Settled {
        /// The report number.
        report: u64,
        /// How it ended.
        outcome: ReportOutcome,
    },
    /// The reporter's state changed (`statechange`).
    State {
        /// The new state.
        state: State,
        /// Why.
        reason: Reason,
        /// The delay before the next request when `waiting`, ms.
        delay_ms: Option<u64>,
    },
    /// An attempt failed (`error`).
    Error {
        /// The error code.
        code: ErrorCode,
        /// The HTTP status, if an answer came.
        status: Option<u16>,
        /// When the next request goes, ms from now (`None` when fatal).
        retry_in_ms: Option<u64>,
        /// The reporter stopped.
        fatal: bool,
    },
    /// Arm the single timer for `until` (clamp to 2^31−1 ms) and call
    /// [`Reporter::handle_timer`]; `None` = no timer.
    Wait {
        /// When, monotonic ms.
        until: Option<MonoMs>,
    },
}

/// Counters of one reporter (`stats()`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ReportStats {
    /// Bodies the task gave.
    pub reports: u64,
    /// Collections with nothing to report.
    pub skipped: u64,
    /// Requests issued (every attempt).
    pub requests: u64,
    /// Of those, retries (attempt 2 and later of a report).
    pub retries: u64,
    /// Reports delivered.
    pub delivered: u64,
    /// Reports superseded by a newer one.
    pub superseded: u64,
    /// Reports that failed for good or were dropped.
    pub failed: u64,
    /// Attempts that failed transiently.
    pub transient_failures: u64,
    /// The current interval, ms.
    pub interval_ms: u64,
}

/// The report being sent.
#[derive(Clone, Debug)]
struct Current {
    report: u64,
    sender: Sender,
    /// An attempt is out.
    in_flight: bool,
    /// The Sender's own timer is driven (always with `keep_all`; in supersede
    /// mode only while in flight, or once its retry was chosen).
    driven: bool,
    /// The Sender's next deadline (its last `Wait`).
    wait: Option<MonoMs>,
    /// What the Sender was last told about connectivity.
    online: bool,
}

/// The sans-IO reporter machine. No input sequence panics; at most one
/// request is in flight.
#[derive(Clone, Debug)]
pub struct Reporter {
    config: ReportConfig,
    interval: PollInterval,
    /// Consecutive failed reports (supersede mode), floor = the interval.
    backoff: Backoff,
    /// Failed attempts in a row (`breaker.rs`).
    breaker: Breaker,
    rng: Rng,
    life: Lifecycle,
    visible: bool,
    online: bool,
    /// When the next report is collected.
    next_tick: Option<MonoMs>,
    /// When the last report was collected (the pace's origin).
    tick_at: MonoMs,
    /// The ±10 % factor of the current interval, per mille (900..=1100).
    tick_factor: u64,
    collecting: Option<u64>,
    /// A report is due but one is in flight (supersede mode).
    owed: bool,
    current: Option<Current>,
    /// `keep_all`: reports waiting for their turn, with when each was
    /// collected (its send's deadline runs from then).
    queue: Vec<(u64, IdempotencyKey, Now)>,
    /// `keep_all`: when the next queued report may start.
    queue_at: Option<MonoMs>,
    next_report: u64,
    /// No request before this (a failure's wait).
    gate: MonoMs,
    last_request: Option<MonoMs>,
    state: State,
    /// The reason for the state the next request leaves.
    wake_reason: Reason,
    stats: ReportStats,
    clock: Monotone,
    actions: Vec<ReportAction>,
}

impl Reporter {
    /// A reporter with `config` and a PRNG seeded with `seed`. Online and
    /// visible until told otherwise; nothing happens before `handle_start`.
    pub fn new(config: ReportConfig, seed: u64) -> Reporter {
        let interval = PollInterval::new(config.interval);
        let backoff = Backoff::new(crate::policy::backoff::BackoffConfig {
            max_attempts: None,
            ..config.send.backoff
        });
        Reporter {
            stats: ReportStats {
                interval_ms: interval.current_ms(),
                ..ReportStats::default()
            },
            interval,
            backoff,
            breaker: Breaker::new(config.breaker),
            rng: Rng::new(seed),
            life: Lifecycle::New,
            visible: true,
            online: true,
            next_tick: None,
            tick_at: MonoMs(0),
            tick_factor: 1000,
            collecting: None,
            owed: false,
            current: None,
            queue: Vec::new(),
            queue_at: None,
            next_report: 0,
            gate: MonoMs(0),
            last_request: None,
            state: State::Connecting,
            wake_reason: Reason::Start,
            clock: Monotone::default(),
            actions: Vec::new(),
            config,
        }
    }

    /// The current state.
    pub fn state(&self) -> State {
        self.state
    }

    /// The counters.
    pub fn stats(&self) -> ReportStats {
        ReportStats {
            interval_ms: self.effective_interval_ms(),
            ..self.stats
        }
    }

    /// The next action; after the last one, `Wait`.
    #[must_use = "an action not carried out is lost"]
    pub fn poll(&mut self) -> ReportAction {
        if let Some(a) = crate::upstream::pop_front(&mut self.actions) {
            return a;
        }
        ReportAction::Wait {
            until: self.clock.wait_until(self.next_deadline()),
        }
    }

    /// Feed one fact at `now` (the `handle_*` method it names).
    pub fn handle(&mut self, now: Now, input: ReportInput) {
        match input {
            ReportInput::Start => self.handle_start(now),
            ReportInput::Collected(n, key) => self.handle_collected(now, n, key),
            ReportInput::Response(n, a, head, hint) => self.handle_response(now, n, a, &head, hint),
            ReportInput::Error(n, a, e) => self.handle_error(now, n, a, e),
            ReportInput::Timer => self.handle_timer(now),
            ReportInput::Visible(v) => self.handle_visibility(now, v),
            ReportInput::Online(on) => self.handle_online(now, on),
            ReportInput::Flush => self.handle_flush(now),
            ReportInput::Stop => self.handle_stop(now),
        }
    }

    /// Start: the first report `U[0, 2w]` ms from now. A second start is
    /// ignored.
    pub fn handle_start(&mut self, now: Now) {
        let Some(now) = self.begin(now) else { return };
        if !self.life.start() {
            return;
        }
        let w = self
            .config
            .startup_jitter_ms
            .unwrap_or(self.interval.current_ms() / 2);
        let delay = self.rng.below(w.saturating_mul(2).saturating_add(1));
        self.tick_at = now.mono;
        self.next_tick = Some(now.mono.plus(delay));
        self.set_state(State::Waiting, Reason::Start, Some(delay));
        self.advance(now);
    }

    /// The task's answer for `report`: `Some(key)` with a fresh idempotency
    /// key when it gave a body, `None` when it had nothing (or threw).
    /// Answers for any other report are ignored.
    pub fn handle_collected(&mut self, now: Now, report: u64, key: Option<IdempotencyKey>) {
        let Some(now) = self.begin(now) else { return };
        if self.collecting != Some(report) {
            return;
        }
        self.collecting = None;
        self.collected(now, report, key);
        self.advance(now);
    }

    /// The response head of `attempt` of `report` arrived; `body_hint_ms` is
    /// `_polling.next_interval_ms` from its JSON body, if any (`None` for a
    /// body over the Issue's `max_answer_bytes`, not read: a report's answer
    /// matters only for its status, headers and this hint). Facts about
    /// other reports or attempts are ignored.
    pub fn handle_response(
        &mut self,
        now: Now,
        report: u64,
        attempt: u32,
        head: &ResponseHead,
        body_hint_ms: Option<u64>,
    ) {
        let Some(now) = self.begin(now) else { return };
        self.answer(now, report, attempt, head, body_hint_ms);
        self.advance(now);
    }

    /// `attempt` of `report` failed without a response head.
    pub fn handle_error(&mut self, now: Now, report: u64, attempt: u32, error: TransportError) {
        let Some(now) = self.begin(now) else { return };
        self.transport_error(now, report, attempt, error);
        self.advance(now);
    }

    /// The timer fired (early or late calls are fine).
    pub fn handle_timer(&mut self, now: Now) {
        let Some(now) = self.begin(now) else { return };
        self.advance(now);
    }

    /// The page became hidden (`false`) or visible (`true`).
    pub fn handle_visibility(&mut self, now: Now, visible: bool) {
        let Some(now) = self.begin(now) else { return };
        if self.visible != visible {
            let was_paused = self.paused();
            self.visible = visible;
            let reason = if visible {
                Reason::Visible
            } else {
                Reason::Hidden
            };
            self.lifecycle_changed(now, reason, was_paused);
        }
        self.advance(now);
    }

    /// `online` / `offline`.
    pub fn handle_online(&mut self, now: Now, online: bool) {
        let Some(now) = self.begin(now) else { return };
        if self.online != online {
            let was_paused = self.paused();
            self.online = online;
            let reason = if online {
                Reason::Online
            } else {
                Reason::Offline
            };
            self.lifecycle_changed(now, reason, was_paused);
        }
        self.advance(now);
    }

    /// `flush()`: the next report as soon as the pace allows (module doc).
    pub fn handle_flush(&mut self, now: Now) {
        let Some(now) = self.begin(now) else { return };
        if self.life.is_live() {
            let at = self.earliest_request(now);
            self.next_tick = Some(self.next_tick.map_or(at, |t| t.min(at)));
        }
        self.advance(now);
    }

    /// `stop()`: abort the request in flight, settle every report `Stopped`,
    /// state `closed`. Nothing follows.
    pub fn handle_stop(&mut self, now: Now) {
        if self.begin(now).is_none() {
            return;
        }
        self.close(Reason::ClosedByUser, ReportOutcome::Stopped);
    }

    // ----- internals ---------------------------------------------------

    /// Ignore everything after `closed`; monotonic time never goes back.
    fn begin(&mut self, now: Now) -> Option<Now> {
        if self.life.is_done() {
            return None;
        }
        Some(self.clock.observe(now))
    }

    fn set_state(&mut self, state: State, reason: Reason, delay_ms: Option<u64>) {
        if self.state == state && state != State::Waiting {
            return;
        }
        self.state = state;
        self.actions.push(ReportAction::State {
            state,
            reason,
            delay_ms,
        });
    }

    /// Stop for good: abort, settle every report with `outcome`, close.
    fn close(&mut self, reason: Reason, outcome: ReportOutcome) {
        if let Some(cur) = self.current.take() {
            if cur.in_flight {
                let attempt = cur.sender.attempts();
                self.actions.push(ReportAction::Abort {
                    report: cur.report,
                    attempt,
                });
            }
            self.settle(cur.report, outcome);
        }
        while let Some((report, _, _)) = crate::upstream::pop_front(&mut self.queue) {
            self.settle(report, ReportOutcome::Stopped);
        }
        self.collecting = None;
        self.next_tick = None;
        self.queue_at = None;
        self.set_state(State::Closed, reason, None);
        self.life.finish();
    }

    fn settle(&mut self, report: u64, outcome: ReportOutcome) {
        match outcome {
            ReportOutcome::Delivered { .. } => self.stats.delivered += 1,
            ReportOutcome::Superseded => self.stats.superseded += 1,
            ReportOutcome::Failed(_) | ReportOutcome::Dropped => self.stats.failed += 1,
            ReportOutcome::Stopped => {}
        }
        self.actions.push(ReportAction::Settled { report, outcome });
    }
}

impl Machine for Reporter {
    type Input<'a> = ReportInput;
    type Action = ReportAction;
    const TIMER: Self::Input<'static> = ReportInput::Timer;

    fn handle(&mut self, now: Now, input: ReportInput) {
        Reporter::handle(self, now, input);
    }

    fn poll(&mut self) -> ReportAction {
        Reporter::poll(self)
    }

    fn split_wait(action: ReportAction) -> Result<ReportAction, Option<MonoMs>> {
        match action {
            ReportAction::Wait { until } => Err(until),
            a => Ok(a),
        }
    }
}
