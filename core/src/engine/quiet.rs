//! A silent native stream with nowhere to go.
//!
//! A native `EventSource` cannot see comments, so a healthy server that only
//! sends comment heartbeats (the most common SSE server) shows it no event,
//! and the first-event deadline takes the stream for a buffering proxy. That
//! is evidence only when another transport could do better: with `eventsource`
//! the only usable transport (by options and capability, the selector knows),
//! aborting it would reconnect the same quiet stream again and again (`make
//! bench`'s idle row read 75 requests where a native `EventSource` makes 1).
//! So then the stream is kept open at the deadline, the debug log says so
//! once per connection ([`Note::SilentStreamKept`]), and the idle watchdog
//! starts with the first event, as it always does on `eventsource`.
//!
//! A kept stream the server later closes ended healthy once it was open
//! `backoff.healthyAfterMs`: it was kept because the server is presumed
//! alive (it shows the browser nothing, so "a byte or an event" cannot be
//! asked of it), and counting each close as a failure would grow the backoff
//! step and give up after `backoff.maxAttempts` hour-long streams.

use super::action::Note;
use super::state::Attempt;
use super::Engine;
use crate::time::MonoMs;

impl Engine {
    /// The first-event deadline of the live attempt expired: keep the stream
    /// (and return `true`) when it is a native one with no other transport
    /// usable.
    pub(crate) fn keep_silent_stream(&mut self) -> bool {
        let alone = self.selector.alone();
        let Some(a) = self.phase.attempt_mut() else {
            return false;
        };
        let Some(n) = a.native_mut().filter(|_| alone) else {
            return false;
        };
        n.silence_kept = true;
        if !self.silence_noted {
            self.silence_noted = true;
            self.note(Note::SilentStreamKept);
        }
        true
    }

    /// Whether `a`, ending at `now`, is a kept silent stream open at least
    /// `backoff.healthyAfterMs`: healthy without a byte or an event.
    pub(crate) fn kept_silent_healthy(&self, a: &Attempt, now: MonoMs) -> bool {
        let after = self.backoff.config().healthy_after_ms;
        a.native().is_some_and(|n| n.silence_kept)
            && a.opened_at.is_some_and(|at| now.since(at) >= after)
    }
}
