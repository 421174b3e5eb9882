//! The news probe: a buffering proxy found in seconds, a quiet server left
//! alone (ARCHITECTURE.md "Selection").
//!
//! A stream (`eventsource`, `fetch-sse`) that has shown nothing
//! [`NEWS_PROBE_AFTER_MS`] after its request went out gets ONE plain
//! `long-poll` request with the cursor, beside it (`OpenRequest::beside`).
//! - The answer brings news (an event, a message, a resource) and the stream
//!   still shows nothing [`NEWS_PROBE_GRACE_MS`] later: something holds the
//!   stream back. The stream is aborted, the connection moves to `long-poll`
//!   (`buffered-stream`, remembered as any downgrade), and the probe's answer
//!   is that transport's first answer: its events are delivered then, through
//!   the cursor and dedupe like any other, so none is lost or repeated.
//! - The probe holds until its timeout, or answers "no news": the server is
//!   quiet, the stream stays, and its first-event deadline is off (a server
//!   that pings only every 15 s is never reconnected for its silence).
//! - Anything else (an error status, a network failure): no verdict, the
//!   first-event deadline stays the judge.
//! - The stream shows a byte (`fetch-sse`) or an event (`eventsource`): the
//!   probe is aborted; once a stream has shown something it gets none.
//!
//! Only with a `long-poll` endpoint of its own (`urls["long-poll"]`) and
//! `long-poll` where the selector would go from the streams: a single URL is
//! the stream's endpoint, and a long-poll answer may itself be an event
//! stream, so a probe there could not be told from a second stream held open
//! for the whole hold.

use alloc::string::String;
use alloc::vec::Vec;

use super::action::{Action, Reason};
use super::decode::{classify, Verdict};
use super::input::{AttemptId, IncomingMessage, ResponseHead};
use super::state::{Attempt, BodyKind, Phase};
use super::{Config, Engine, Input, TransportKind};
use crate::time::{MonoMs, Now};

/// How long a stream may show nothing after its request went out before
/// the probe goes, ms.
pub const NEWS_PROBE_AFTER_MS: u64 = 3_000;

/// How long after the probe's answer with news the stream may still bring
/// the same news before it counts as held back, ms.
pub const NEWS_PROBE_GRACE_MS: u64 = 1_000;

/// The probe's answer, held until the verdict.
#[derive(Debug)]
pub(crate) enum Answer {
    /// A JSON body's messages and `_polling.next_interval_ms`.
    Messages(Vec<Option<IncomingMessage>>, Option<u64>),
    /// Any other body, read whole as text (an event stream too: the probe's
    /// answer is complete before the verdict).
    Text(String),
}

/// The probe of the live stream.
#[derive(Debug)]
pub(crate) struct Probe {
    /// The stream it probes.
    stream: AttemptId,
    /// Its own `long-poll` attempt (the live one if the stream is held back).
    attempt: Attempt,
    /// Its response head, once a usable one came.
    head: Option<ResponseHead>,
    /// Its answer, held only when it brought news.
    answer: Option<Answer>,
    /// Its one deadline: the end of its hold, then, once it brought news,
    /// the end of the grace.
    until: MonoMs,
}

impl Engine {
    /// The news probe's request, if one is out.
    pub fn news_probe(&self) -> Option<AttemptId> {
        self.probe.as_ref().map(|p| p.attempt.id)
    }

    /// The live attempt or the news probe's, if it is `id` (how its body is
    /// read, `body_read`).
    pub(crate) fn read_attempt(&self, id: AttemptId) -> Option<&Attempt> {
        let probe = self.probe.as_ref().map(|p| &p.attempt);
        let is_id = |a: &&Attempt| a.id == id;
        self.phase.attempt().filter(is_id).or(probe.filter(is_id))
    }

    /// When the news probe has something to do next.
    pub(crate) fn probe_deadline(&self) -> Option<MonoMs> {
        match &self.probe {
            Some(p) => Some(p.until),
            None => self
                .phase
                .attempt()
                .filter(|a| self.probe_wanted(a))
                .map(|a| a.started.plus(NEWS_PROBE_AFTER_MS)),
        }
    }

    /// Whether stream `a` is still to get its probe.
    fn probe_wanted(&self, a: &Attempt) -> bool {
        a.transport.is_streaming()
            && !a.news_probed
            && silent(a)
            && self.config.urls.long_poll.is_some()
            && self.profile().probes_news()
            && self.selector.requests_target() == Some(TransportKind::LongPoll)
            && !app_request(&self.config)
    }

    /// Run what is due of the news probe at `now`; `true` when something
    /// changed (the caller looks at every deadline again).
    pub(crate) fn news_probe_step(&mut self, now: Now) -> bool {
        let Some(p) = &self.probe else {
            if self.probe_deadline().is_some_and(|at| at <= now.mono) {
                self.send_news_probe(now);
                return true;
            }
            return false;
        };
        let stream = p.stream;
        if !self
            .phase
            .attempt()
            .is_some_and(|a| a.id == stream && silent(a))
        {
            self.end_news_probe(false);
        } else if self.probe_deadline().is_some_and(|at| at <= now.mono) {
            if p.answer.is_some() {
                self.held_back(now);
            } else {
                self.end_news_probe(true);
            }
        } else {
            return false;
        }
        true
    }

    fn send_news_probe(&mut self, now: Now) {
        let Some(a) = self.phase.attempt_mut() else {
            return;
        };
        a.news_probed = true;
        let stream = a.id;
        let (attempt, open) =
            self.new_attempt(now, TransportKind::LongPoll, Reason::BufferedStream, true);
        self.probe = Some(Probe {
            stream,
            attempt,
            head: None,
            answer: None,
            until: now.mono.plus(self.config.long_poll.timeout_ms),
        });
        self.actions.push_back(Action::Open(open));
    }

    /// Abort the probe; `quiet`: it found the server quiet, so the stream
    /// keeps no first-event deadline.
    fn end_news_probe(&mut self, quiet: bool) {
        if let Some(p) = self.probe.take() {
            self.actions.push_back(Action::Abort(p.attempt.id));
            if let Some(a) = self.live_mut(p.stream) {
                a.quiet |= quiet;
            }
        }
    }

    /// A fact about the probe's request.
    pub(crate) fn on_probe_fact(&mut self, now: Now, input: Input<'_>) {
        let Some(p) = &mut self.probe else {
            return;
        };
        if p.answer.is_some() {
            return;
        }
        let answer = match input {
            Input::ResponseHead(_, head) if p.head.is_none() => {
                match classify(
                    TransportKind::LongPoll,
                    head.status,
                    head.content_type.as_deref(),
                ) {
                    Verdict::Body(kind) => {
                        if let Some(r) = p.attempt.request_mut() {
                            // Read whole (`body_read`): JSON as JSON, the
                            // rest as text; the head's replay decides again.
                            r.body = if kind == BodyKind::Json {
                                kind
                            } else {
                                BodyKind::Resource
                            };
                        }
                        p.head = Some(head.clone());
                        return;
                    }
                    v => return self.end_news_probe(v == Verdict::NoNews),
                }
            }
            Input::Messages {
                msgs,
                polling_hint_ms,
                ..
            } if !msgs.is_empty() => Answer::Messages(msgs, polling_hint_ms),
            Input::BodyResource(_, body) if !body.trim().is_empty() => Answer::Text(body),
            // An empty answer: the server is quiet.
            Input::Messages { .. } | Input::BodyResource(..) => return self.end_news_probe(true),
            // A failure, or a fact no long-poll answer brings: no verdict.
            _ => return self.end_news_probe(false),
        };
        p.answer = Some(answer);
        p.until = now.mono.plus(NEWS_PROBE_GRACE_MS);
        let id = p.attempt.id;
        self.actions.push_back(Action::Abort(id));
    }

    /// The probe brought news the silent stream still lacks: abort the
    /// stream, move to `long-poll` and take the probe's answer as its first.
    fn held_back(&mut self, now: Now) {
        let (Some(p), Some(stream)) = (self.probe.take(), self.phase.take_attempt()) else {
            return;
        };
        self.actions.push_back(Action::Abort(stream.id));
        self.drop_body();
        if let Some(change) = self.selector.held_back(now) {
            self.push_transport_change(change);
        }
        let id = p.attempt.id;
        self.phase = Phase::Live(p.attempt);
        // Through `handle`, as if the answer came now: the same code as
        // every long-poll answer (cursor, dedupe, the next request), and
        // the one call of the fact router, which stays inlined there.
        if let Some(head) = &p.head {
            self.handle(now, Input::ResponseHead(id, head));
        }
        let stream = self
            .phase
            .attempt()
            .and_then(Attempt::request)
            .map(|r| r.body)
            == Some(BodyKind::EventStream);
        let last = match p.answer {
            Some(Answer::Text(body)) if stream => {
                self.handle(now, Input::Bytes(id, body.as_bytes()));
                Input::StreamEnd(id)
            }
            Some(Answer::Text(body)) => Input::BodyResource(id, body),
            Some(Answer::Messages(msgs, polling_hint_ms)) => Input::Messages {
                id,
                msgs,
                polling_hint_ms,
            },
            None => return,
        };
        self.handle(now, last);
    }
}

/// A stream that has shown nothing: no byte on `fetch-sse`, no event on
/// `eventsource` (it cannot show comments).
fn silent(a: &Attempt) -> bool {
    a.bytes == 0 && !a.saw_event()
}

/// Whether the stream is started by the app's own request (`method`,
/// `body`, `resume`): such a stream is never probed, since the probe would
/// send that request (a `POST` that starts work) a second time.
#[cfg(feature = "post-streams")]
fn app_request(config: &Config) -> bool {
    super::start::request(config).is_some()
}

/// Without the `post-streams` feature every stream is a `GET`.
#[cfg(not(feature = "post-streams"))]
fn app_request(_: &Config) -> bool {
    false
}
