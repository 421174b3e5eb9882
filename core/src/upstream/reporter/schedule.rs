//! When the reporter collects and sends: ticks, pacing, the page lifecycle.

use super::{HiddenPolicy, ReportAction, Reporter, TICK_JITTER_PERMILLE};
use crate::engine::{Reason, State, RESUME_JITTER_MS};
use crate::time::{clamp_timer_ms, MonoMs, Now};
use crate::upstream::IdempotencyKey;

impl Reporter {
    /// Nothing is collected nor sent: offline, or hidden under `Stop`.
    pub(super) fn paused(&self) -> bool {
        !self.online || (!self.visible && self.config.hidden == HiddenPolicy::Stop)
    }

    /// The interval now, ms: the policy's, or the slower hidden pace.
    pub(super) fn effective_interval_ms(&self) -> u64 {
        let ms = self.interval.current_ms();
        match self.config.hidden {
            HiddenPolicy::Every { interval_ms } if !self.visible => {
                clamp_timer_ms(ms.max(interval_ms))
            }
            _ => ms,
        }
    }

    /// The next tick: one interval, times this tick's ±10 % factor, after
    /// the last tick; in supersede mode (where a tick sends) never before a
    /// failure's wait nor within `interval.min_ms` of the last request (a
    /// hint may shorten the interval after a slow answer).
    pub(super) fn schedule_next_tick(&mut self) {
        let ms = u128::from(self.effective_interval_ms());
        let delay = ms * u128::from(self.tick_factor) / 1000;
        let delay = clamp_timer_ms(u64::try_from(delay).unwrap_or(u64::MAX));
        let at = self.tick_at.plus(delay);
        if self.config.keep_all {
            // Collecting sends nothing: keep_all paces its requests itself.
            self.next_tick = Some(at);
            return;
        }
        let paced = self
            .last_request
            .map_or(self.gate, |t| t.plus(self.interval.min_ms()).max(self.gate));
        self.next_tick = Some(at.max(paced));
    }

    /// The earliest a request may go (flush, resume): not before a failure's
    /// wait, not within `interval.min_ms` of the last request.
    pub(super) fn earliest_request(&self, now: Now) -> MonoMs {
        let paced = self
            .last_request
            .map_or(now.mono, |t| t.plus(self.interval.min_ms()));
        now.mono.max(self.gate).max(paced)
    }

    pub(super) fn in_flight(&self) -> bool {
        self.current.as_ref().is_some_and(|c| c.in_flight)
    }

    /// A due tick can be acted on now (else its timer is not armed: no
    /// wake-up that would do nothing).
    fn tick_ready(&self) -> bool {
        !self.paused() && self.collecting.is_none() && (self.config.keep_all || !self.in_flight())
    }

    /// The earliest time something is due.
    pub(super) fn next_deadline(&self) -> Option<MonoMs> {
        if !self.life.is_live() {
            return None;
        }
        let tick = self.next_tick.filter(|_| self.tick_ready());
        let sender = self.current.as_ref().filter(|c| c.driven).and_then(|c| {
            // A retry waits for the gate (a breaker's cool-down); a live
            // attempt's own timeout does not.
            let gate = (!c.in_flight).then_some(self.gate);
            c.wait.map(|w| w.max(gate.unwrap_or(w)))
        });
        let queued = self
            .queue_at
            .filter(|_| !self.paused() && self.current.is_none());
        crate::time::earlier(crate::time::earlier(tick, sender), queued)
    }

    /// Everything due at `now`: the Sender's timer, a queued report, a tick.
    pub(super) fn advance(&mut self, now: Now) {
        if !self.life.is_live() {
            return;
        }
        self.drive_sender(now);
        self.start_queued(now);
        if self.life.is_done() || self.paused() || self.collecting.is_some() {
            return;
        }
        if self.next_tick.is_none_or(|t| t > now.mono) {
            return;
        }
        if !self.config.keep_all && self.in_flight() {
            // Never abort a report the server may be applying: the next one
            // waits for its answer.
            self.owed = true;
            self.next_tick = None;
            return;
        }
        let paced = self.earliest_request(now);
        if !self.config.keep_all && paced > now.mono {
            // A request went since this tick was scheduled (a retry, a
            // resume): the tick sends, so it keeps the pace.
            self.next_tick = Some(paced);
            return;
        }
        self.tick(now);
    }

    /// Collect the next report.
    fn tick(&mut self, now: Now) {
        self.tick_at = now.mono;
        let spread = self.rng.below(2 * TICK_JITTER_PERMILLE + 1);
        self.tick_factor = 1000 - TICK_JITTER_PERMILLE + spread;
        self.next_tick = None;
        if !self.config.keep_all {
            // The collection decides between a fresh report and the waiting
            // one's retry: the retry does not go on its own meanwhile.
            if let Some(cur) = self.current.as_mut() {
                cur.driven = false;
            }
        }
        self.next_report += 1;
        self.collecting = Some(self.next_report);
        self.actions.push(ReportAction::Collect {
            report: self.next_report,
        });
    }

    /// The task answered for `report`.
    pub(super) fn collected(&mut self, now: Now, report: u64, key: Option<IdempotencyKey>) {
        self.interval.record_answer(key.is_some());
        self.schedule_next_tick();
        match key {
            Some(key) => {
                self.stats.reports += 1;
                self.take_body(now, report, key);
            }
            None => {
                self.stats.skipped += 1;
                self.choose_retry(now);
            }
        }
    }

    /// `keep_all`: start the next queued report once its time came.
    fn start_queued(&mut self, now: Now) {
        if self.current.is_some() || self.paused() {
            return;
        }
        if self.queue_at.is_none_or(|t| t > now.mono) {
            return;
        }
        self.queue_at = None;
        if let Some((report, key, collected)) = crate::upstream::pop_front(&mut self.queue) {
            self.start_report(now, report, key, Some(collected));
        }
    }

    /// `keep_all`: the next queued report `min + U[0, interval − min]` from
    /// now (`min` = `interval.min_ms`): a backlog drains at about two reports
    /// per interval, spread over the interval, so a fleet that an outage
    /// left with one report each does not send them all in the same second
    /// (README, herd benchmark: 1.5× the steady peak instead of 2×).
    pub(super) fn pace_queue(&mut self, now: Now) {
        if self.queue.is_empty() {
            return;
        }
        let min = self.interval.min_ms();
        let spread = self.effective_interval_ms().saturating_sub(min);
        let delay = min + self.rng.below(spread + 1);
        self.queue_at = Some(now.mono.plus(delay).max(self.gate));
    }

    /// Visibility or connectivity changed; `was_paused` before the change.
    pub(super) fn lifecycle_changed(&mut self, now: Now, reason: Reason, was_paused: bool) {
        self.sync_sender_online(now);
        if !self.life.is_live() {
            return;
        }
        let paused = self.paused();
        if paused {
            if !was_paused {
                self.set_state(State::Paused, reason, None);
            }
            return;
        }
        if matches!(self.config.hidden, HiddenPolicy::Every { .. })
            && matches!(reason, Reason::Hidden | Reason::Visible)
            && self.collecting.is_none()
            && self.next_tick.is_some()
        {
            self.schedule_next_tick();
            self.next_tick = self.next_tick.map(|t| t.max(self.gate));
        }
        if was_paused {
            self.resume(now, reason);
        }
    }

    /// Back from a pause: the missed report `U[0, 250)` ms from now (never
    /// before a failure's wait), and the state held before the pause.
    fn resume(&mut self, now: Now, reason: Reason) {
        let missed = self.owed || self.next_tick.is_some_and(|t| t <= now.mono);
        if missed && !self.in_flight() {
            let prompt = now.mono.plus(self.rng.below(RESUME_JITTER_MS));
            self.next_tick = Some(prompt.max(self.earliest_request(now)));
            self.owed = false;
        }
        self.wake_reason = reason;
        let healthy = self.backoff.attempts() == 0 && self.stats.delivered > 0;
        if healthy {
            self.set_state(State::Open, reason, None);
        } else {
            let delay = self
                .next_deadline()
                .map(|t| t.since(now.mono))
                .filter(|_| !self.in_flight());
            let state = if delay.is_some() {
                State::Waiting
            } else {
                State::Connecting
            };
            self.set_state(state, reason, delay);
        }
    }
}
