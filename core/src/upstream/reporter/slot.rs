//! One report at a time through its [`Sender`]: start it, feed it the
//! adapter's facts, and turn its actions and outcome into the reporter's.

use super::{Current, ReportAction, ReportOutcome, Reporter};
use crate::engine::{ErrorCode, Reason, ResponseHead, State, TransportError};
use crate::policy::headers::HeaderLookup;
use crate::policy::retry_after::{poll_interval_hint_ms, server_wait, WaitSource};
use crate::time::Now;
use crate::upstream::{IdempotencyKey, Outcome, SendAction, Sender};

/// What the fact fed to the Sender was, for the `error` event and the state
/// reason if the attempt failed, and the interval hint if it succeeded.
#[derive(Clone, Copy, Debug)]
struct Fact {
    code: ErrorCode,
    status: Option<u16>,
    reason: Reason,
    hint_ms: Option<u64>,
}

impl Fact {
    /// The Sender's own timer: an attempt that fails on it timed out.
    const TIMER: Fact = Fact {
        code: ErrorCode::Timeout,
        status: None,
        reason: Reason::Backoff,
        hint_ms: None,
    };
}

impl Reporter {
    /// A body for `report` arrived: supersede a waiting report, or queue it.
    pub(super) fn take_body(&mut self, now: Now, report: u64, key: IdempotencyKey) {
        if self.config.keep_all {
            let paced = self.earliest_request(now);
            if self.current.is_some() || !self.queue.is_empty() || paced > now.mono {
                if self.current.is_none() && self.queue.is_empty() {
                    self.queue_at = Some(paced);
                }
                self.queue.push((report, key, now));
                if self.queue.len() > self.config.max_queued.max(1) {
                    if let Some((old, _, _)) = crate::upstream::pop_front(&mut self.queue) {
                        self.settle(old, ReportOutcome::Dropped);
                    }
                }
                return;
            }
        } else if let Some(old) = self.current.take() {
            if old.in_flight {
                // Unreachable by the tick rule (a tick waits for the answer);
                // kept so no input sequence leaves a fetch running.
                let attempt = old.sender.attempts();
                self.actions.push(ReportAction::Abort {
                    report: old.report,
                    attempt,
                });
            }
            self.settle(old.report, ReportOutcome::Superseded);
        }
        self.start_report(now, report, key, None);
    }

    /// Supersede mode, the task had nothing new: send the waiting report's
    /// retry (its key) now that its turn came.
    pub(super) fn choose_retry(&mut self, now: Now) {
        if let Some(cur) = self.current.as_mut() {
            cur.driven = true;
        }
        self.sync_sender_online(now);
    }

    /// Start `report` as a new Sender whose backoff floor is the interval;
    /// `queued`: when a `keep_all` report was collected and queued (its
    /// deadline runs from then; one already past settles it at once).
    pub(super) fn start_report(
        &mut self,
        now: Now,
        report: u64,
        key: IdempotencyKey,
        queued: Option<Now>,
    ) {
        let mut send = self.config.send.clone();
        send.backoff.floor_ms = send.backoff.floor_ms.max(self.effective_interval_ms());
        let mut sender = Sender::new(send, &key, self.rng.next_u64());
        let online = !self.paused();
        if let Some(collected) = queued {
            sender.handle_queued(collected);
        }
        if !online {
            sender.handle_online(now, false);
        }
        sender.handle_start(now);
        self.current = Some(Current {
            report,
            sender,
            in_flight: false,
            driven: true,
            wait: None,
            online,
        });
        self.drain_sender(now, Fact::TIMER, false);
    }

    /// Tell a driven Sender whether it may send (online and not paused).
    pub(super) fn sync_sender_online(&mut self, now: Now) {
        let online = !self.paused();
        let Some(cur) = self.current.as_mut().filter(|c| c.driven) else {
            return;
        };
        if cur.online != online {
            cur.online = online;
            cur.sender.handle_online(now, online);
            self.drain_sender(now, Fact::TIMER, false);
        }
    }

    /// Forward a due timer to a driven Sender (a retry not before the gate:
    /// an open breaker holds it).
    pub(super) fn drive_sender(&mut self, now: Now) {
        let gated = self.gate > now.mono;
        let Some(cur) = self.current.as_mut().filter(|c| c.driven) else {
            return;
        };
        if gated && !cur.in_flight {
            return;
        }
        if cur.wait.is_some_and(|t| t <= now.mono) {
            cur.sender.handle_timer(now);
            self.drain_sender(now, Fact::TIMER, false);
        }
    }

    /// The response head of `attempt` of `report`.
    pub(super) fn answer(
        &mut self,
        now: Now,
        report: u64,
        attempt: u32,
        head: &ResponseHead,
        body_hint_ms: Option<u64>,
    ) {
        let Some(cur) = self.live_attempt(report, attempt) else {
            return;
        };
        cur.sender.handle_response(now, attempt, head);
        cur.in_flight = false;
        let reason = match server_wait(head, now.wall, self.config.send.max_retry_after_ms) {
            Some(w) if w.source == WaitSource::RetryAfter => Reason::RetryAfter,
            Some(_) => Reason::RateLimit,
            None => Reason::Backoff,
        };
        let header_hint = head
            .header("X-Poll-Interval")
            .and_then(poll_interval_hint_ms);
        let fact = Fact {
            code: ErrorCode::HttpStatus,
            status: Some(head.status),
            reason,
            hint_ms: body_hint_ms.or(header_hint),
        };
        self.drain_sender(now, fact, true);
    }

    /// `attempt` of `report` failed without a head.
    pub(super) fn transport_error(
        &mut self,
        now: Now,
        report: u64,
        attempt: u32,
        error: TransportError,
    ) {
        let Some(cur) = self.live_attempt(report, attempt) else {
            return;
        };
        cur.sender.handle_error(now, attempt, error);
        cur.in_flight = false;
        let code = match error {
            TransportError::Timeout => ErrorCode::Timeout,
            _ => ErrorCode::NetworkOrCors,
        };
        let fact = Fact {
            code,
            ..Fact::TIMER
        };
        self.drain_sender(now, fact, true);
    }

    /// The current report if `attempt` of `report` is in flight (facts about
    /// any other attempt are stale and ignored).
    fn live_attempt(&mut self, report: u64, attempt: u32) -> Option<&mut Current> {
        self.current
            .as_mut()
            .filter(|c| c.report == report && c.in_flight && c.sender.attempts() == attempt)
    }

    /// Drain the current Sender; `fact` is what was just fed to it, `ended`
    /// when it ended the attempt in flight.
    fn drain_sender(&mut self, now: Now, fact: Fact, ended: bool) {
        let Some(cur) = self.current.as_mut() else {
            return;
        };
        let was_in_flight = ended || cur.in_flight;
        let report = cur.report;
        let mut issued = false;
        let mut admit = false;
        let mut settled = None;
        for _ in 0..16 {
            match cur.sender.poll() {
                SendAction::Issue(issue) => {
                    cur.in_flight = true;
                    issued = true;
                    self.stats.requests += 1;
                    self.stats.retries += u64::from(issue.attempt > 1);
                    self.last_request = Some(now.mono);
                    self.actions.push(ReportAction::Issue { report, issue });
                    admit = true;
                }
                SendAction::Abort { attempt } => {
                    cur.in_flight = false;
                    self.actions.push(ReportAction::Abort { report, attempt });
                }
                SendAction::Settle(outcome) => settled = Some(outcome),
                SendAction::Wait { until } => {
                    cur.wait = until;
                    break;
                }
            }
        }
        let failed = was_in_flight && !cur.in_flight && !issued;
        if admit {
            self.breaker_admit(now);
        }
        if let Some(outcome) = settled {
            self.current = None;
            self.finish(now, report, outcome, fact);
        } else if failed {
            self.transient(now, fact);
        } else if issued && self.state != State::Open {
            self.set_state(State::Connecting, self.wake_reason, None);
        }
    }

    /// An attempt failed and its Sender will retry: when the next request
    /// goes (module doc, "Supersede" / `keep_all`), `waiting`, `error`.
    fn transient(&mut self, now: Now, fact: Fact) {
        self.stats.transient_failures += 1;
        let floor = self.effective_interval_ms();
        let Some(cur) = self.current.as_mut() else {
            return;
        };
        let retry_at = cur.wait.unwrap_or(now.mono);
        let wake = if self.config.keep_all {
            retry_at
        } else {
            cur.driven = false;
            // The next report keeps this reporter's own slot (one interval
            // ± 10 % after the failed one: a fleet's phases stay as spread
            // as they were); a server's wait holds it back; a second failure
            // in a row backs off (floor = the interval, full jitter).
            let regular = self.next_tick.unwrap_or(now.mono);
            let server = (fact.reason != Reason::Backoff).then_some(retry_at);
            let backoff = if self.backoff.attempts() == 0 {
                let _ = self.backoff.record_failure();
                None
            } else {
                self.backoff.set_interval_floor_ms(Some(floor));
                let delay = self.backoff.next_delay_ms(&mut self.rng).unwrap_or(floor);
                Some(now.mono.plus(delay))
            };
            let paced = self.earliest_request(now);
            self.owed = false;
            // The latest of them (a `match` each, not a chained iterator).
            let at = regular.max(paced);
            let at = server.map_or(at, |s| at.max(s));
            backoff.map_or(at, |b| at.max(b))
        };
        let (wake, reason) = self.breaker_failed(now, wake, fact.reason);
        if !self.config.keep_all {
            self.next_tick = Some(wake);
        }
        self.gate = wake;
        self.wake_reason = match reason {
            Reason::BreakerOpen => Reason::BreakerProbe,
            r => r,
        };
        let delay = wake.since(now.mono);
        self.actions.push(ReportAction::Error {
            code: fact.code,
            status: fact.status,
            retry_in_ms: Some(delay),
            fatal: false,
        });
        // Failed while paused: the wait is told with the resume.
        if !self.paused() {
            self.set_state(State::Waiting, reason, Some(delay));
        }
    }

    /// `report`'s Sender settled.
    fn finish(&mut self, now: Now, report: u64, outcome: Outcome, fact: Fact) {
        if let Outcome::Ok { status, attempts } = outcome {
            self.delivered(now, report, status, attempts, fact.hint_ms);
            return;
        }
        let (code, status) = match outcome {
            Outcome::Err { code, status, .. } => (code, status),
            _ => (fact.code, fact.status),
        };
        self.settle(report, ReportOutcome::Failed(outcome));
        if matches!(code, ErrorCode::HttpStatus | ErrorCode::Auth) {
            self.actions.push(ReportAction::Error {
                code,
                status,
                retry_in_ms: None,
                fatal: true,
            });
            self.close(Reason::PermanentError, ReportOutcome::Stopped);
            return;
        }
        let retry_in_ms = self.next_tick.map(|t| t.since(now.mono));
        self.actions.push(ReportAction::Error {
            code,
            status,
            retry_in_ms,
            fatal: false,
        });
        self.after_report(now);
    }

    /// `report` was delivered: reset the backoff, apply the server's
    /// interval hint, `open`.
    fn delivered(&mut self, now: Now, report: u64, status: u16, attempts: u32, hint: Option<u64>) {
        self.backoff.record_healthy();
        self.breaker.record_success();
        self.gate = now.mono;
        self.settle(report, ReportOutcome::Delivered { status, attempts });
        let reason = match hint {
            Some(h) => {
                self.interval.apply_server_hint_ms(h);
                if self.collecting.is_none() && self.next_tick.is_some() {
                    self.schedule_next_tick();
                }
                Reason::ServerHint
            }
            None => self.wake_reason,
        };
        // An answer that arrives while paused (the page went hidden or
        // offline with the report in flight) leaves the state paused:
        // `open` comes with the resume.
        if !self.paused() {
            self.set_state(State::Open, reason, None);
        }
        self.after_report(now);
    }

    /// A report ended: a tick that waited for it, the next queued one.
    fn after_report(&mut self, now: Now) {
        if self.owed {
            self.owed = false;
            self.next_tick = Some(self.earliest_request(now));
        }
        if self.config.keep_all {
            self.pace_queue(now);
        }
    }
}
