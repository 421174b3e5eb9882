//! A `fetch` response head: the verdict on it (see `decode` for the status
//! rules) and what each verdict does. A failing head aborts the request.

use super::action::{Action, ErrorCode, Reason};
use super::decode::{self, Verdict};
use super::input::{AttemptId, ResponseHead};
use super::retry::Failure;
use super::state::{Attempt, AuthRetry, BodyKind};
use super::Input;
use super::{Engine, TransportKind};
use crate::policy::headers::HeaderLookup;
use crate::policy::retry_after::{poll_interval_hint_ms, server_wait};
use crate::policy::validators::Outcome;
use crate::time::Now;

impl Engine {
    /// A `fetch` response head arrived (every `fetch` transport). See
    /// `decode` for the status rules; a failing head aborts the request.
    /// Only the first head of an attempt counts.
    pub fn handle_response_head(&mut self, now: Now, id: AttemptId, head: &ResponseHead) {
        self.handle(now, Input::ResponseHead(id, head));
    }

    pub(crate) fn on_response_head(&mut self, now: Now, id: AttemptId, head: &ResponseHead) {
        let Some(verdict) = self.head_verdict(now, id, head) else {
            return;
        };
        match verdict {
            Verdict::OpenStream => self.head_opens_stream(now),
            Verdict::Body(kind) => self.head_has_body(head, kind),
            Verdict::NoNews => self.head_no_news(now, head),
            Verdict::Retry {
                server_hint,
                step_multiplier,
            } => self.head_retry(now, head, server_hint, step_multiplier),
            Verdict::Unauthorized => self.head_unauthorized(now, head.status),
            Verdict::Fatal(code) => self.fatal(code, Some(head.status), Reason::PermanentError),
        }
    }

    /// Record `head` on live attempt `id` and judge it: `None` when there is
    /// nothing more to do (a stale attempt, a second head, a head the
    /// Durable Streams profile or the cursor rules already handled).
    fn head_verdict(&mut self, now: Now, id: AttemptId, head: &ResponseHead) -> Option<Verdict> {
        let a = self.live_mut(id)?;
        if a.status.is_some() {
            return None;
        }
        a.status = Some(head.status);
        a.last_activity = now;
        let transport = a.transport;
        let held_ms = now.mono.since(a.started);
        self.last_status = Some(head.status);
        self.on_request_time(transport, held_ms);
        if transport == TransportKind::LongPoll {
            self.long_poll_timeouts = 0;
        }
        self.judge_head(now, transport, held_ms, head)
    }

    /// The default profile's verdict on a head (the status rules of
    /// `decode`, nchan's transient 410, a 409 to a resume).
    pub(crate) fn default_head(
        &mut self,
        now: Now,
        transport: TransportKind,
        held_ms: u64,
        head: &ResponseHead,
    ) -> Option<Verdict> {
        let mut verdict = decode::classify(transport, head.status, head.content_type.as_deref());
        if head.status == 410 && self.gone_is_transient(transport, held_ms) {
            verdict = Verdict::Retry {
                server_hint: false,
                step_multiplier: 1,
            };
        }
        (!self.cursor_verdict(now, head.status, verdict)).then_some(verdict)
    }

    /// A stream opens, unless it already counted as open (`handle_opened`
    /// came first): then it keeps its parser state.
    fn head_opens_stream(&mut self, now: Now) {
        if self.phase.attempt().is_none_or(|a| a.opened_at.is_none()) {
            self.stream_opened(now);
        }
    }

    /// A request transport's answer with a body of `kind` follows.
    fn head_has_body(&mut self, head: &ResponseHead, kind: BodyKind) {
        let outcome = self.validators.update(head.status, head);
        if outcome == Outcome::Unchanged {
            self.stats.not_modified = self.stats.not_modified.saturating_add(1);
        }
        if kind == BodyKind::EventStream {
            self.new_body();
        }
        if let Some(r) = self.phase.attempt_mut().and_then(Attempt::request_mut) {
            r.body = kind;
            r.outcome = Some(outcome);
            r.hint_ms = interval_hint_ms(head);
        }
    }

    /// 204/304 (or a long-poll's 408): the request succeeded with no news.
    fn head_no_news(&mut self, now: Now, head: &ResponseHead) {
        if self.validators.update(head.status, head) == Outcome::NotModified {
            self.stats.not_modified = self.stats.not_modified.saturating_add(1);
        }
        if let Some(mut a) = self.phase.take_attempt() {
            if let Some(r) = a.request_mut() {
                r.hint_ms = interval_hint_ms(head);
            }
            self.actions.push_back(Action::Abort(a.id));
            self.succeed_request(now, &a, false);
        }
    }

    /// A retryable status: after the server's wait when it sent one
    /// (`server_hint`), else after the backoff delay, its step scaled by
    /// `step_multiplier`.
    fn head_retry(
        &mut self,
        now: Now,
        head: &ResponseHead,
        server_hint: bool,
        step_multiplier: u32,
    ) {
        let wait = if server_hint {
            server_wait(head, now.wall, self.config.max_retry_after_ms)
        } else {
            None
        };
        if let Some(a) = self.phase.take_attempt() {
            self.actions.push_back(Action::Abort(a.id));
            let f = Failure {
                status: Some(head.status),
                wait,
                step_multiplier: if wait.is_some() { 1 } else { step_multiplier },
                ..Failure::new(ErrorCode::HttpStatus, Reason::Backoff)
            };
            self.fail(now, &a, f);
        }
    }

    /// 401 or 403: once, with custom headers or a `url` function, the
    /// request is retried at once asking them again (`refresh_auth`), before
    /// any backoff; otherwise, and after that one retry, a fatal `auth`
    /// error (never a loop).
    fn head_unauthorized(&mut self, now: Now, status: u16) {
        let refreshable = self.config.has_custom_headers || self.config.url_function;
        if !refreshable || self.auth_retry != AuthRetry::Unused {
            return self.fatal(ErrorCode::Auth, Some(status), Reason::PermanentError);
        }
        if let Some(a) = self.phase.take_attempt() {
            self.actions.push_back(Action::Abort(a.id));
            self.release_probe(now);
            self.auth_retry = AuthRetry::Next;
            self.report(Some(ErrorCode::Auth), Some(status), 0, false);
            self.schedule(now, 0, a.reason);
        }
    }
}

/// The server's `X-Poll-Interval` hint, ms (read once per head).
fn interval_hint_ms(head: &ResponseHead) -> Option<u64> {
    head.header("X-Poll-Interval")
        .and_then(poll_interval_hint_ms)
}
