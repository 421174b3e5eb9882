//! The engine's internal bookkeeping: the live attempt, the scheduled next
//! attempt, and the page lifecycle (hidden, offline, frozen).

use alloc::string::String;

use super::action::{Reason, State};
use super::config::TransportKind;
use super::input::AttemptId;
use super::replay::ReplayWatch;
use crate::policy::validators::Outcome;
use crate::time::{MonoMs, Now, WallMs};

/// How the body of a request-transport response is delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyKind {
    /// No usable head yet.
    Pending,
    /// `text/event-stream`: bytes through the SSE parser, ended by
    /// `handle_stream_end`.
    EventStream,
    /// JSON: the adapter decodes it and calls `handle_messages`.
    Json,
    /// Anything else: one message via `handle_body_resource`.
    Resource,
}

/// The one 401 retry with refreshed headers, between two successes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AuthRetry {
    /// Not used: a 401 may retry once with refreshed headers.
    Unused,
    /// A 401 asked for it: the next `Open` asks the adapter to refresh.
    Next,
    /// Used: another 401 before a success is fatal.
    Used,
}

impl AuthRetry {
    /// At an `Open`: whether it asks for refreshed headers (`Next` becomes
    /// `Used`).
    pub fn take_next(&mut self) -> bool {
        let next = *self == AuthRetry::Next;
        if next {
            *self = AuthRetry::Used;
        }
        next
    }
}

/// What only one transport's attempt keeps (`fetch-sse` keeps nothing of
/// its own: its body goes through the engine's parser).
#[derive(Clone, Debug)]
pub(crate) enum PerTransport {
    /// `eventsource`.
    Native(Native),
    /// `fetch-sse`.
    FetchSse,
    /// `long-poll` and `poll`.
    Request(RequestAttempt),
}

impl PerTransport {
    fn new(transport: TransportKind) -> Self {
        match transport {
            TransportKind::EventSource => PerTransport::Native(Native::default()),
            TransportKind::FetchSse => PerTransport::FetchSse,
            TransportKind::LongPoll | TransportKind::Poll => {
                PerTransport::Request(RequestAttempt::default())
            }
        }
    }
}

/// An `eventsource` attempt's own data.
#[derive(Clone, Debug, Default)]
pub(crate) struct Native {
    /// A message or heartbeat event arrived, so the idle watchdog runs
    /// (BC-14 V1 NATIVE).
    pub saw_event: bool,
    /// The `lastEventId` of this attempt's previous native event. Each
    /// attempt is a new `EventSource`, whose last event ID starts empty
    /// (WHATWG HTML §9.2.2), whatever cursor its URL carries.
    pub last_event_id: String,
    /// Silent past the first-event deadline with no other transport usable,
    /// and kept open (`quiet`).
    pub silence_kept: bool,
    /// Failed before it opened, and the status probe was asked for.
    pub probed: bool,
}

/// A `long-poll` or `poll` attempt's own data.
#[derive(Clone, Debug)]
pub(crate) struct RequestAttempt {
    /// How the body is delivered.
    pub body: BodyKind,
    /// The validators' verdict on the response head.
    pub outcome: Option<Outcome>,
    /// A server interval hint from this response (X-Poll-Interval or
    /// `_polling.next_interval_ms`), ms.
    pub hint_ms: Option<u64>,
}

impl Default for RequestAttempt {
    fn default() -> Self {
        RequestAttempt {
            body: BodyKind::Pending,
            outcome: None,
            hint_ms: None,
        }
    }
}

/// The live attempt: from its `Open` until the engine learns it ended or
/// aborts it.
#[derive(Clone, Debug)]
pub(crate) struct Attempt {
    pub id: AttemptId,
    pub transport: TransportKind,
    /// Why it was started (the reason of its `Connecting`/`Open` state).
    pub reason: Reason,
    /// When the `Open` went out.
    pub started: MonoMs,
    /// When the stream opened (`open` event, or a usable response head); on
    /// `long-poll` and `poll`, when the body's first byte came (the end of
    /// the server's hold: the long-poll spread's `held`, `retry.rs`).
    pub opened_at: Option<MonoMs>,
    /// The app sees `open` (a stream opened, a request transport's usable
    /// answer, or a request that follows one), else `connecting`.
    pub open: bool,
    /// The response status, once known.
    pub status: Option<u16>,
    /// What only this attempt's transport keeps.
    pub per: PerTransport,
    /// Body bytes received.
    pub bytes: u64,
    /// Last sign of life (byte, event or head), both clocks.
    pub last_activity: Now,
    /// Messages delivered by this attempt, and skipped for their size (an
    /// answer carrying only a skipped message is still news: the server did
    /// not hold, it answered with an event).
    pub delivered: u32,
    /// Events of this attempt left out by the `events` filter: the server's
    /// news, for other listeners (heartbeats, resets and duplicates are not).
    pub filtered: u32,
    /// The engine's cursor when this attempt started: a clean end after
    /// fresh events that moved it is a stream that made progress.
    pub cursor_at_start: String,
    /// The stream has already counted as healthy (open `healthyAfterMs` with
    /// a byte), and reset the backoff count.
    pub healthy_seen: bool,
    /// This attempt probes the preferred transport after a downgrade.
    pub failback_probe: bool,
    /// Whether this attempt's leading events replay the remembered history
    /// (`replay`).
    pub replay: ReplayWatch,
    /// The request carried a cursor (event id or validators): a 409 to it
    /// means the cursor is no longer valid (see `cursor_reset`).
    pub carried_cursor: bool,
    /// The news probe went out for this stream (one per stream, `news_probe`).
    pub news_probed: bool,
    /// The news probe found the server quiet: no first-event deadline.
    pub quiet: bool,
}

impl Attempt {
    pub fn new(
        id: AttemptId,
        transport: TransportKind,
        reason: Reason,
        now: Now,
        failback_probe: bool,
    ) -> Self {
        Attempt {
            id,
            transport,
            reason,
            started: now.mono,
            opened_at: None,
            open: false,
            status: None,
            per: PerTransport::new(transport),
            bytes: 0,
            last_activity: now,
            delivered: 0,
            filtered: 0,
            cursor_at_start: String::new(),
            healthy_seen: false,
            failback_probe,
            replay: ReplayWatch::Off,
            carried_cursor: false,
            news_probed: false,
            quiet: false,
        }
    }

    /// The `eventsource` attempt's own data.
    pub fn native(&self) -> Option<&Native> {
        match &self.per {
            PerTransport::Native(n) => Some(n),
            _ => None,
        }
    }

    /// The `eventsource` attempt's own data, mutably.
    pub fn native_mut(&mut self) -> Option<&mut Native> {
        match &mut self.per {
            PerTransport::Native(n) => Some(n),
            _ => None,
        }
    }

    /// The request transport's own data.
    pub fn request(&self) -> Option<&RequestAttempt> {
        match &self.per {
            PerTransport::Request(r) => Some(r),
            _ => None,
        }
    }

    /// The request transport's own data, mutably.
    pub fn request_mut(&mut self) -> Option<&mut RequestAttempt> {
        match &mut self.per {
            PerTransport::Request(r) => Some(r),
            _ => None,
        }
    }

    /// On `eventsource`: a message or heartbeat event arrived.
    pub fn saw_event(&self) -> bool {
        self.native().is_some_and(|n| n.saw_event)
    }

    /// A request transport's server interval hint, ms.
    pub fn hint_ms(&self) -> Option<u64> {
        self.request().and_then(|r| r.hint_ms)
    }

    /// Whether this stream counted as healthy when it ended at `now`: open at
    /// least `healthy_after_ms` with at least one byte (BC-11).
    pub fn healthy_at(&self, now: MonoMs, healthy_after_ms: u64) -> bool {
        let got_something = self.bytes > 0 || self.saw_event();
        match self.opened_at {
            Some(at) => got_something && now.since(at) >= healthy_after_ms,
            None => false,
        }
    }
}

/// The next attempt, scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Scheduled {
    /// When it goes out.
    pub at: MonoMs,
    /// Why (the reason of its `Connecting` state).
    pub reason: Reason,
    /// The state the app sees meanwhile: `waiting` behind a delay, else the
    /// state of what came before (`open` between two answers of a request
    /// transport, `connecting` on a prompt retry, `paused` or `closed` until
    /// a resume's or revival's attempt goes out).
    pub shows: State,
}

/// The page lifecycle as reported by the adapter.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Lifecycle {
    /// `document.visibilityState == "hidden"`.
    pub hidden: bool,
    /// When it became hidden (for the `pauseWhenHidden.afterMs` grace).
    pub hidden_since: Option<MonoMs>,
    /// The hidden grace has passed: paused for hidden.
    pub paused_hidden: bool,
    /// `navigator.onLine == false`.
    pub offline: bool,
    /// `freeze`, or `pagehide` into the back/forward cache.
    pub frozen: bool,
    /// When the last wake from sleep was noticed (`lifecycle`): a `visible`
    /// at that instant is a fleet waking, and keeps the resume spread.
    pub woke_at: Option<MonoMs>,
}

impl Lifecycle {
    /// No attempt may start or stay live.
    pub fn paused(&self) -> bool {
        self.paused_hidden || self.offline || self.frozen
    }

    /// The reason to show for the pause, most specific first.
    pub fn pause_reason(&self) -> Reason {
        if self.frozen {
            Reason::Frozen
        } else if self.offline {
            Reason::Offline
        } else {
            Reason::Hidden
        }
    }
}

/// The wall time `ms` after `now` (saturating).
pub(crate) fn wall_after(now: WallMs, ms: u64) -> WallMs {
    WallMs(now.0.saturating_add(i64::try_from(ms).unwrap_or(i64::MAX)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn healthy_needs_time_and_a_byte() {
        let mut a = Attempt::new(
            AttemptId(1),
            TransportKind::FetchSse,
            Reason::Start,
            Now::at(0, 0),
            false,
        );
        assert!(!a.healthy_at(MonoMs(20_000), 10_000));
        a.opened_at = Some(MonoMs(100));
        assert!(!a.healthy_at(MonoMs(20_000), 10_000));
        a.bytes = 1;
        assert!(!a.healthy_at(MonoMs(10_099), 10_000));
        assert!(a.healthy_at(MonoMs(10_100), 10_000));
    }

    #[test]
    fn pause_reasons() {
        let mut l = Lifecycle::default();
        assert!(!l.paused());
        l.paused_hidden = true;
        assert_eq!(l.pause_reason(), Reason::Hidden);
        l.offline = true;
        assert_eq!(l.pause_reason(), Reason::Offline);
        l.frozen = true;
        assert_eq!(l.pause_reason(), Reason::Frozen);
        assert_eq!(wall_after(WallMs(i64::MAX - 1), 10), WallMs(i64::MAX));
    }
}

/// The connection's phase: one of these at a time, each with its own data
/// only (a live attempt and a scheduled one never coexist; closed has
/// neither).
#[derive(Clone, Debug, Default)]
pub(crate) enum Phase {
    /// Nothing live, nothing scheduled (before start, or paused).
    #[default]
    Idle,
    /// The next attempt goes out at `Scheduled::at`.
    Scheduled(Scheduled),
    /// A request is out: its facts are accepted.
    Live(Attempt),
    /// Stopped for good: every later input is ignored.
    Closed,
}

impl Phase {
    /// The live attempt, if any.
    pub fn attempt(&self) -> Option<&Attempt> {
        match self {
            Phase::Live(a) => Some(a),
            _ => None,
        }
    }

    /// The live attempt, mutably.
    pub fn attempt_mut(&mut self) -> Option<&mut Attempt> {
        match self {
            Phase::Live(a) => Some(a),
            _ => None,
        }
    }

    /// End the live attempt (the phase becomes idle); other phases stay.
    pub fn take_attempt(&mut self) -> Option<Attempt> {
        if !matches!(self, Phase::Live(_)) {
            return None;
        }
        match core::mem::take(self) {
            Phase::Live(a) => Some(a),
            _ => None,
        }
    }

    /// The scheduled attempt, if any.
    pub fn scheduled(&self) -> Option<Scheduled> {
        match self {
            Phase::Scheduled(s) => Some(*s),
            _ => None,
        }
    }

    /// Schedule the next attempt. Every caller ends the live attempt first
    /// (the native tests ran with an assertion of it); a live or closed
    /// phase is left as it is.
    pub fn schedule(&mut self, s: Scheduled) {
        if matches!(self, Phase::Idle | Phase::Scheduled(_)) {
            *self = Phase::Scheduled(s);
        }
    }

    /// Cancel the scheduled attempt, if any.
    pub fn cancel_scheduled(&mut self) {
        if matches!(self, Phase::Scheduled(_)) {
            *self = Phase::Idle;
        }
    }

    /// Stop for good; the live attempt, if any, is returned to abort.
    pub fn close(&mut self) -> Option<Attempt> {
        match core::mem::replace(self, Phase::Closed) {
            Phase::Live(a) => Some(a),
            _ => None,
        }
    }

    /// The state the app sees in this phase. `started`: the engine was
    /// started; `paused`: the page lifecycle holds every attempt. Idle after
    /// start and not paused is a stopped engine revived by `reconnect()`
    /// before its attempt is scheduled (or a step inside one input).
    pub fn state(&self, started: bool, paused: bool) -> State {
        match self {
            Phase::Idle if !started => State::Connecting,
            Phase::Idle if paused => State::Paused,
            Phase::Idle | Phase::Closed => State::Closed,
            Phase::Scheduled(s) => s.shows,
            Phase::Live(a) if a.open => State::Open,
            Phase::Live(_) => State::Connecting,
        }
    }

    /// Whether the connection stopped for good.
    pub fn is_closed(&self) -> bool {
        matches!(self, Phase::Closed)
    }
}
