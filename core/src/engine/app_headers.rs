//! The app's `headers` function failed: the engine's rule for it.
//!
//! A `headers` function that throws or rejects, or returns an invalid header,
//! is the app's failure: nothing was sent, so it says nothing about the
//! server, the network or the transport.

use super::action::{ErrorCode, Reason};
use super::input::AttemptId;
use super::retry::Failure;
use super::Engine;
use crate::time::Now;

impl Engine {
    /// The app's `headers` failed before attempt `id` sent anything.
    ///
    /// Reported as [`ErrorCode::Headers`] (not fatal) and retried after the
    /// backoff delay, with state `waiting` and reason
    /// [`Reason::HeadersFailed`]. It counts toward `backoff.maxAttempts`
    /// (the delay grows, and a function that keeps failing ends in
    /// `gave-up`), but not toward the circuit breaker and never as evidence
    /// against the transport (no fallback): the server was never asked.
    pub fn handle_headers_failed(&mut self, now: Now, id: AttemptId) {
        self.handle(now, super::Input::HeadersFailed(id));
    }

    pub(crate) fn on_headers_failed(&mut self, now: Now) {
        let Some(a) = self.phase.take_attempt() else {
            return;
        };
        self.drop_body();
        let f = Failure {
            counts: false,
            ..Failure::new(ErrorCode::Headers, Reason::HeadersFailed)
        };
        self.fail(now, &a, f);
    }
}
