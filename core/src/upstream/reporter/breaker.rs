//! The reporter's circuit breaker: the connection engine's [`Breaker`]
//! (`policy::breaker`, ARCHITECTURE.md "Circuit breaker": 5 failures in a row
//! open it, a cool-down of `U[15 s, 45 s]` never shorter than the current
//! wait, then one probe), not a copy of it. Its failures are the failed
//! attempts the reporter itself paces; an answer that carries a server's
//! wait (`Retry-After`, rate-limit reset) is the server pacing its own load
//! and never opens it, as for subscriptions (README "Reconnects"). While
//! open, no request goes before the cool-down ends (the reporter's `gate`):
//! neither a new report nor a retry.

use super::Reporter;
use crate::engine::Reason;
use crate::policy::breaker::Admission;
use crate::time::{MonoMs, Now};

impl Reporter {
    /// A failed attempt whose next request would go at `wake` for `reason`:
    /// count it (unless the server paced it) and, when that opens the
    /// breaker (or a probe failed), hold the next request to the end of the
    /// cool-down. Returns when the next request may go and why.
    pub(super) fn breaker_failed(
        &mut self,
        now: Now,
        wake: MonoMs,
        reason: Reason,
    ) -> (MonoMs, Reason) {
        if reason != Reason::Backoff {
            return (wake, reason);
        }
        let waited = wake.since(now.mono);
        match self.breaker.record_failure(now.mono, waited, &mut self.rng) {
            Some(until) => (wake.max(until), Reason::BreakerOpen),
            None => (wake, reason),
        }
    }

    /// A request goes at `now`: past a cool-down it is the one probe (its
    /// state reason `breaker-probe`).
    pub(super) fn breaker_admit(&mut self, now: Now) {
        if self.breaker.admit(now.mono) == Admission::Probe {
            self.wake_reason = Reason::BreakerProbe;
        }
    }
}
