//! The news probe: a buffering proxy found in seconds, a quiet server left
//! alone (ARCHITECTURE.md "Selection").
//!
//! A stream (`eventsource`, `fetch-sse`) that has shown nothing
//! [`NEWS_PROBE_AFTER_MS`] after its request went out gets ONE plain
//! `long-poll` request with the cursor, beside it (`OpenRequest::beside`).
//! Its answer is an ordinary `long-poll` answer: while one of its facts is
//! handled, its attempt is the live one and the stream waits beside it
//! ([`Engine::probe_turn`]), so its events go through the cursor and dedupe
//! like any other as they come; what that asks for (the deliveries) is held
//! until the verdict, so the app gets them from the transport they are
//! told with. The connection's records of an answer take it as any (the
//! breaker's success, the last status, `long-poll` proven, the byte count);
//! the next request it schedules is dropped, the stream being live again.
//! - The answer brings news (an event, a message, a resource) and the stream
//!   still shows nothing [`NEWS_PROBE_GRACE_MS`] later: something holds the
//!   stream back. The stream is aborted, the connection moves to
//!   `long-poll` (`buffered-stream`, remembered as any downgrade), the held
//!   deliveries are made, and its next request goes out from the cursor the
//!   probe's answer moved.
//! - The stream brings the same news within the grace: it stays, the held
//!   deliveries are made then, and dedupe drops the stream's copy of each
//!   event with an id.
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

use crate::fifo::Fifo;
use core::mem;

use super::action::{Action, Reason, State};
use super::decode::{classify, is_blank, Verdict};
use super::input::AttemptId;
use super::state::{Attempt, Phase, Scheduled};
use super::{Config, Engine, Input, TransportKind};
use crate::time::{MonoMs, Now};

/// How long a stream may show nothing after its request went out before
/// the probe goes, ms.
pub const NEWS_PROBE_AFTER_MS: u64 = 3_000;

/// How long after the probe's answer with news the stream may still bring
/// the same news before it counts as held back, ms.
pub const NEWS_PROBE_GRACE_MS: u64 = 1_000;

/// The probe of the live stream.
#[derive(Debug)]
pub(crate) struct Probe {
    /// Its request.
    id: AttemptId,
    /// The stream it probes.
    stream: AttemptId,
    /// The attempt that is not live: the probe's own while it is out, the
    /// stream's while one of the probe's facts is handled; `None` once its
    /// answer is complete.
    other: Option<Attempt>,
    /// What handling its answer asked for (deliveries above all), held
    /// until the verdict: after the move to `long-poll`, or, the stream
    /// staying, when the probe ends (dedupe has its events, so the stream's
    /// copies are dropped and these are the ones the app gets).
    held: Fifo<Action>,
    /// Its answer brought news.
    news: bool,
    /// Its one deadline: the end of its hold, then, once its answer is
    /// complete, the end of the grace.
    until: MonoMs,
}

impl Engine {
    /// The news probe's request, if one is out.
    pub fn news_probe(&self) -> Option<AttemptId> {
        self.probe.as_ref().map(|p| p.id)
    }

    /// The live attempt or the news probe's, if it is `id` (how its body is
    /// read, `body_read`).
    pub(crate) fn read_attempt(&self, id: AttemptId) -> Option<&Attempt> {
        let probe = self.probe.as_ref().and_then(|p| p.other.as_ref());
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
        } else if p.until <= now.mono {
            if p.news {
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
        let (mut attempt, open) =
            self.new_attempt(now, TransportKind::LongPoll, Reason::BufferedStream, true);
        // An answer of an open connection: it shows no state of its own.
        attempt.open = true;
        self.probe = Some(Probe {
            id: attempt.id,
            stream,
            other: Some(attempt),
            held: Fifo::new(),
            news: false,
            until: now.mono.plus(self.config.long_poll.timeout_ms),
        });
        self.actions.push_back(Action::Open(open));
    }

    /// Abort the probe; `quiet`: it found the server quiet, so the stream
    /// keeps no first-event deadline.
    fn end_news_probe(&mut self, quiet: bool) {
        if let Some(p) = self.probe.take() {
            self.actions.push_back(Action::Abort(p.id));
            self.release(p.held);
            if let Some(a) = self.live_mut(p.stream) {
                a.quiet |= quiet;
            }
        }
    }

    /// A fact of the probe's request, before it is routed: `true` when it
    /// is to be handled as the live attempt's (the probe's attempt is then
    /// live and the stream's waits in its place until [`Engine::probe_back`]).
    /// A head without a body ends the probe (quiet on "no news"), and so
    /// does a failure (no verdict): neither reaches the connection's rules.
    pub(crate) fn probe_turn(&mut self, id: Option<AttemptId>, input: &Input<'_>) -> bool {
        let Some(p) = self.probe.as_mut().filter(|p| Some(p.id) == id) else {
            return false;
        };
        match input {
            Input::ResponseHead(_, head) => {
                let v = classify(
                    TransportKind::LongPoll,
                    head.status,
                    head.content_type.as_deref(),
                );
                if !matches!(v, Verdict::Body(_)) {
                    self.end_news_probe(v == Verdict::NoNews);
                    return false;
                }
            }
            Input::Messages { msgs, .. } => p.news = !msgs.is_empty(),
            Input::BodyResource(_, body) => p.news = !is_blank(body),
            Input::Bytes(_, bytes) => p.news |= !bytes.is_empty(),
            Input::StreamEnd(_) => {}
            _ => {
                self.end_news_probe(false);
                return false;
            }
        }
        match (self.phase.attempt_mut(), &mut p.other) {
            (Some(live), Some(other)) => mem::swap(live, other),
            _ => return false,
        }
        mem::swap(&mut self.actions, &mut p.held);
        true
    }

    /// After a fact of the probe's: the stream is the live attempt again;
    /// the probe's attempt waits for its next fact, or, its answer complete,
    /// the verdict waits for the grace (an empty answer: quiet).
    pub(crate) fn probe_back(&mut self, now: Now) {
        let Some(mut p) = self.probe.take() else {
            return;
        };
        let Some(stream) = p.other.take() else {
            return;
        };
        mem::swap(&mut self.actions, &mut p.held);
        if self.phase.is_closed() {
            // The answer closed the connection (the `end` rule).
            self.release(p.held);
            self.actions.push_back(Action::Abort(stream.id));
            return;
        }
        if let Phase::Live(a) = mem::replace(&mut self.phase, Phase::Live(stream)) {
            p.other = Some(a);
        } else if p.news {
            p.until = now.mono.plus(NEWS_PROBE_GRACE_MS);
        } else {
            self.probe = Some(p);
            return self.end_news_probe(true);
        }
        self.probe = Some(p);
    }

    /// Queue the held actions after the ones already queued.
    fn release(&mut self, mut held: Fifo<Action>) {
        while let Some(a) = held.pop_front() {
            self.actions.push_back(a);
        }
    }

    /// The probe brought news the silent stream still lacks: the stream is
    /// aborted and the connection moves to `long-poll`, from the cursor the
    /// probe's answer moved.
    fn held_back(&mut self, now: Now) {
        let held = self.probe.take().map(|p| p.held);
        if let Some(a) = self.phase.take_attempt() {
            self.actions.push_back(Action::Abort(a.id));
        }
        self.drop_body();
        if let Some(change) = self.selector.held_back(now) {
            self.push_transport_change(change);
        }
        if let Some(held) = held {
            self.release(held);
        }
        // Now, by the deadline loop's one call of `start_attempt`.
        self.phase.schedule(Scheduled {
            at: now.mono,
            reason: Reason::BufferedStream,
            shows: State::Open,
        });
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
