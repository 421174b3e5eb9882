//! A `409 Conflict` to a resume: the cursor is no longer valid.
//!
//! Electric's shape API answers 409 ("must-refetch") when the position a
//! client resumes from is gone (electric-sql/electric issues #3116, #3020,
//! PR #3625). Stopping with a fatal `http-status` there leaves the app with
//! nothing; the rule instead, on every transport (on `eventsource` the status
//! comes from the status probe, the same `handle_response_head` fact):
//! - a 409 to a request that carried a cursor (an event id, or the
//!   validators `If-None-Match` / `If-Modified-Since`) → [`Action::Reset`]
//!   with [`ResetReason::CursorInvalid`]; the cursor, the dedupe memory and
//!   the validators are forgotten; one new request without a cursor goes out
//!   at once (`U[0, 100]` ms jitter), with no error and no failure counted;
//! - a 409 to a request without a cursor stays fatal `http-status`;
//! - so does a 409 to a cursor again before any request with a cursor was
//!   accepted since that restart (a server that rejects every cursor would
//!   otherwise make the app refetch everything in a loop).
//!
//! `410 Gone` is NOT treated this way: nchan answers it to held long-polls
//! on a routine restart (see `decode::gone_is_transient`).

use super::action::{Action, ResetReason};
use super::config::TransportKind;
use super::decode::Verdict;
use super::retry::LONG_POLL_JITTER_MS;
use super::state::Scheduled;
use super::Engine;
use crate::policy::validators::Validators;
use crate::time::Now;

/// The status that says the cursor is no longer valid.
pub const CURSOR_INVALID_STATUS: u16 = 409;

impl Engine {
    /// Whether a request on `transport` sent now carries a cursor: the event
    /// id goes on every transport when set; the validators on the request
    /// transports (`request::render` sends one or the other).
    pub(crate) fn request_carries_cursor(&self, transport: TransportKind) -> bool {
        let request = matches!(transport, TransportKind::LongPoll | TransportKind::Poll);
        !self.cursor().is_empty() || (request && !self.validators.is_empty())
    }

    /// What a response head with `status` and `verdict` says about the live
    /// attempt's cursor: a usable answer accepts it ([`Engine::cursor_accepted`]);
    /// a 409 may reject it ([`Engine::cursor_rejected`]). Returns `true` when
    /// the head is handled (reset and restart scheduled).
    pub(crate) fn cursor_verdict(&mut self, now: Now, status: u16, verdict: Verdict) -> bool {
        if matches!(
            verdict,
            Verdict::OpenStream | Verdict::Body(_) | Verdict::NoNews
        ) {
            self.cursor_accepted();
        }
        status == CURSOR_INVALID_STATUS && self.cursor_rejected(now)
    }

    /// A 409 arrived for the live attempt: reset and restart without a
    /// cursor when the rule allows it (module doc). Returns `false` when the
    /// caller should treat it as any other status (fatal `http-status`).
    pub(crate) fn cursor_rejected(&mut self, now: Now) -> bool {
        let allowed = self
            .phase
            .attempt()
            .is_some_and(|a| a.carried_cursor && !self.cursor_reset_pending);
        if !allowed {
            return false;
        }
        let Some(a) = self.phase.take_attempt() else {
            return false;
        };
        self.actions.push_back(Action::Abort(a.id));
        self.drop_body_quietly();
        self.forget_cursor();
        self.cursor_reset_pending = true;
        // The server answered: the transport works, the breaker closes.
        self.mark_answered();
        self.reset_and_restart(now, ResetReason::CursorInvalid, a.reason);
        true
    }

    /// The live attempt's request was accepted (a usable answer, a stream
    /// opened): when it carried a cursor, a later 409 may reset again.
    pub(crate) fn cursor_accepted(&mut self) {
        if self.phase.attempt().is_some_and(|a| a.carried_cursor) {
            self.cursor_reset_pending = false;
        }
    }

    /// Forget where to resume from: the cursor, the
    /// dedupe memory (the server will send those ids again) and the
    /// validators. A pending `unresumable` reset is covered by this one.
    /// Tell the app `reset` (`reason`), then start again from the cursor as
    /// it now stands after `U[0, LONG_POLL_JITTER_MS]` ms: a reset is the
    /// server's answer, not a failure, so no backoff (used for 409 to a
    /// resume and a Durable Streams 410).
    pub(crate) fn reset_and_restart(
        &mut self,
        now: Now,
        reason: ResetReason,
        cause: super::Reason,
    ) {
        self.actions.push_back(Action::Reset { reason });
        let delay = self.rng.below(LONG_POLL_JITTER_MS + 1);
        self.stats.current_delay_ms = delay;
        self.phase.schedule(Scheduled {
            at: now.mono.plus(delay),
            reason: cause,
            shows: self.told.0,
        });
    }

    fn forget_cursor(&mut self) {
        self.set_cursor("");
        self.dedupe.clear();
        self.validators = Validators::new();
        self.unresumable = false;
    }

    /// Fresh parser buffers (a 409 has no body the engine reads).
    fn drop_body_quietly(&mut self) {
        self.parser.new_stream();
    }
}
