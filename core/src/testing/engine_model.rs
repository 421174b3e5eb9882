//! The engine driven by arbitrary input sequences through its one entry,
//! [`Engine::handle`], on virtual time, with these invariants (docs/reliability.md)
//! checked after every input:
//!
//! - never two attempts in flight (an `Open` only when none is live, and
//!   [`Engine::live_attempt`] agrees with the `Open`/`Abort` actions);
//! - no `Open` while hidden (with `pauseWhenHidden` at 0), offline, frozen or
//!   closed;
//! - every reconnect wait after a failure (`waiting` with reason `backoff`,
//!   `retry-after` or `rate-limit`) within `[floor, the largest of floor + cap,
//!   floor + max(floor, base) and max(floor, maxRetryAfterMs) + 1 s]`, floor =
//!   the backoff floor in force (`backoff.floorMs`, the server's `retry:`, a
//!   poll's interval), clamped to `MAX_TIMER_MS` (`engine::retry`);
//! - with the default (SSE) profile, an input that carries no id of its own
//!   (event-stream bytes of an attempt whose body has had no `id` field so
//!   far, JSON messages without ids, a native event repeating the cursor)
//!   moves the cursor nowhere, and every
//!   message it delivers carries the cursor from before it (unless the engine
//!   reported a `reset`);
//! - nothing but `closed` after `closed` (no delivery after close);
//! - no `Wait` before the last input's time, and `poll` reaches `Wait`.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use arbitrary::Arbitrary;

use crate::engine::{
    Action, AttemptId, Capabilities, Config, Engine, IncomingMessage, Input, NetworkHint, Protocol,
    Reason, ResponseHead, State, TransportError, TransportKind,
};
use crate::policy::backoff::Strategy;
use crate::time::{Now, MAX_TIMER_MS};

const STATUSES: [u16; 24] = [
    200, 200, 200, 200, 200, 200, 200, 304, 304, 408, 408, 429, 500, 503, 503, 425, 502, 204, 401,
    403, 404, 205, 302, 409,
];
const TYPES: [Option<&str>; 5] = [
    Some("text/event-stream"),
    Some("application/json"),
    Some("text/plain"),
    None,
    Some("Text/Event-Stream; charset=utf-8"),
];
const HEADERS: [&str; 8] = [
    "retry-after",
    "date",
    "etag",
    "last-modified",
    "x-poll-interval",
    "x-ratelimit-reset",
    "ratelimit-reset",
    "stream-next-offset",
];
const VALUES: [&str; 10] = [
    "3",
    "0",
    "120",
    "Tue, 14 Nov 2023 22:13:50 GMT",
    "Tue, 14 Nov 2023 22:13:20 GMT",
    "\"7\"",
    "W/\"7\"",
    "99999999999",
    "1.5",
    "",
];
const EVENTS: [&str; 6] = ["message", "price", "heartbeat", "reset", "", "other"];
const STREAM_PARTS: [&[u8]; 11] = [
    b"data: x\n\n",
    b"id: 1\n",
    b"id: 2\ndata: y\n\n",
    b"id\n\n",
    b"retry: 5\n",
    b"retry: 99999999\n",
    b": hb\n",
    b"event: reset\ndata: r\n\n",
    b"event: heartbeat\ndata:\n\n",
    b"\r\n",
    b"event: price\ndata: p\n\n",
];

/// Which attempt a fact is about: the live one (0, 1), the one before (2),
/// one never handed out (3).
#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct Which(pub u8);

/// A header value: from a table of interesting ones, or arbitrary text.
#[derive(Arbitrary, Debug, Clone)]
pub enum HeaderValue {
    /// `VALUES[i % len]`.
    Known(u8),
    /// Anything.
    Raw(String),
}

/// A piece of an event-stream body.
#[derive(Arbitrary, Debug, Clone)]
pub enum Part {
    /// `STREAM_PARTS[i % len]`.
    Known(u8),
    /// Anything.
    Raw(Vec<u8>),
}

/// One fact, its time, or a lifecycle flip.
#[derive(Arbitrary, Debug, Clone)]
pub enum Op {
    /// Let time pass (ms, scaled: `n · 37`), firing the timer at each deadline.
    Advance(u16),
    /// A clock jump: monotonic forward, wall either way (s).
    Jump(u16, i16),
    /// A spurious timer call.
    Timer,
    /// A second `Start` (ignored) with these capability bits.
    Start(u8),
    /// A response head: status index, content type index, headers.
    Head(Which, u8, u8, Vec<(u8, HeaderValue)>),
    /// The native `EventSource` status probe's head (`None`: it failed).
    NativeProbe(Which, Option<(u8, u8)>),
    /// The native `EventSource` opened.
    Opened(Which),
    /// Body bytes.
    Bytes(Which, Vec<Part>),
    /// A native `EventSource` event: type index, data, `lastEventId` index.
    Native(Which, u8, String, u8),
    /// Decoded JSON messages: (id, type index) each, `_polling` hint.
    Messages(Which, Vec<(Option<u8>, u8)>, Option<u32>),
    /// A raw resource body.
    Resource(Which, String),
    /// A Durable Streams JSON chunk.
    JsonChunk(Which, Option<Vec<String>>),
    /// A transport error (index).
    Error(Which, u8),
    /// The body ended.
    End(Which),
    /// The app's `headers` function failed.
    HeadersFailed(Which),
    /// `visibilitychange`.
    Visibility(bool),
    /// `online` / `offline`.
    Online(bool),
    /// `freeze` / `resume`.
    Frozen(bool),
    /// `navigator.connection`.
    Hint(Option<u16>, bool),
    /// `close()`.
    Close,
}

/// The options that change the engine's paths.
#[derive(Arbitrary, Debug, Clone)]
pub struct FuzzConfig {
    /// Transport indexes (the preference order).
    pub transports: Vec<u8>,
    /// `headers` set.
    pub headers: bool,
    /// Every endpoint cross-origin.
    pub cross_origin: bool,
    /// Watchdog, long-poll and backoff choices (indexes).
    pub knobs: [u8; 6],
    /// `backoff.maxAttempts`.
    pub max_attempts: Option<u8>,
    /// The Durable Streams profile.
    pub durable: bool,
    /// The initial cursor.
    pub last_event_id: Option<u8>,
}

impl FuzzConfig {
    /// The engine configuration.
    pub fn config(&self) -> Config {
        let pick = |i: usize, choices: &[u64]| choices[usize::from(self.knobs[i]) % choices.len()];
        let mut c = Config::new("/s?x=1");
        c.transports = self
            .transports
            .iter()
            .take(6)
            .map(|&i| TransportKind::ALL[usize::from(i) % TransportKind::ALL.len()])
            .collect();
        c.has_custom_headers = self.headers;
        c.cross_origin = self.cross_origin.into();
        c.watchdog.idle_timeout_ms = pick(0, &[45_000, 0, 15_000]);
        c.watchdog.first_event_timeout_ms = pick(1, &[15_000, 0, 100_000]);
        c.long_poll.timeout_ms = pick(2, &[35_000, 0]);
        c.fallback.after_failures = u32::from(self.knobs[3] % 3);
        c.backoff.floor_ms = pick(4, &[0, 1000, 250]);
        c.backoff.strategy = [
            Strategy::FullJitter,
            Strategy::EqualJitter,
            Strategy::Decorrelated,
            Strategy::None,
        ][usize::from(self.knobs[5]) % 4];
        c.backoff.max_attempts = self.max_attempts.map(|n| u32::from(n % 12));
        c.fallback.remember_ms = 60_000;
        c.events = alloc::vec!["price".into()];
        c.last_event_id = self
            .last_event_id
            .map(|i| i.to_string())
            .unwrap_or_default();
        if self.durable {
            c.protocol = Protocol::DurableStreams;
        }
        c
    }
}

/// One fuzz case: a configuration, a seed and the inputs after `Start`.
#[derive(Arbitrary, Debug, Clone)]
pub struct EngineCase {
    /// The options.
    pub config: FuzzConfig,
    /// The jitter seed.
    pub seed: u64,
    /// The inputs.
    pub ops: Vec<Op>,
}

/// Run `case` and check every invariant after every input.
///
/// # Errors
/// The first broken invariant, with the input that broke it.
pub fn check(case: &EngineCase) -> Result<(), String> {
    let mut m = Model::new(case.config.config(), case.seed);
    m.start(Capabilities::ALL)?;
    for (i, op) in case.ops.iter().enumerate() {
        m.step(op).map_err(|e| format!("input {i} {op:?}: {e}"))?;
    }
    // Whatever happened, a long quiet hour keeps the invariants.
    m.step(&Op::Advance(u16::MAX))
        .map_err(|e| format!("the quiet hour: {e}"))?;
    m.run_for(3_600_000)
        .map_err(|e| format!("the quiet hour: {e}"))
}

/// The engine and what the invariants need to know about its past.
pub struct Model {
    engine: Engine,
    now: Now,
    live: Option<(AttemptId, TransportKind)>,
    last_open: u64,
    hidden: bool,
    offline: bool,
    frozen: bool,
    closed: bool,
    sse_profile: bool,
    pause_at_once: bool,
    /// An `id` field may be in the live attempt's body so far (a block's
    /// `id:` line can come chunks before its blank line); with the last
    /// chunk ending in `i`, for an `id` split across chunks.
    body_id: (bool, bool),
}

/// What one drain saw that the per-input invariants need.
#[derive(Default)]
struct Drained {
    /// The attempt the input ended (its abort is a harmless no-op).
    ended: Option<AttemptId>,
    delivered_without_id: Vec<String>,
    reset: bool,
}

impl Model {
    /// An engine for `config` at mono 1000, wall 2023-11-14T22:13:20Z.
    pub fn new(config: Config, seed: u64) -> Model {
        let sse_profile = config.protocol == Protocol::Default;
        let pause_at_once = config.pause_when_hidden == Some(0);
        Model {
            engine: Engine::new(config, seed),
            now: Now::at(1000, 1_700_000_000_000),
            live: None,
            last_open: 0,
            hidden: false,
            offline: false,
            frozen: false,
            closed: false,
            sse_profile,
            pause_at_once,
            body_id: (false, false),
        }
    }

    /// `Start` with `caps`, then drain.
    ///
    /// # Errors
    /// A broken invariant.
    pub fn start(&mut self, caps: Capabilities) -> Result<(), String> {
        self.engine.handle(self.now, Input::Start(caps));
        self.drain(None).map(|_| ())
    }

    /// The live attempt, as the actions say.
    pub fn live(&self) -> Option<AttemptId> {
        self.live.map(|l| l.0)
    }

    /// Feed one engine input directly (`ended`: the attempt it ends, if
    /// any), then drain and check.
    ///
    /// # Errors
    /// A broken invariant.
    pub fn input(&mut self, input: Input<'_>, ended: Option<AttemptId>) -> Result<(), String> {
        self.engine.handle(self.now, input);
        self.drain(ended).map(|_| ())
    }

    fn id(&self, which: Which) -> AttemptId {
        let live = self.live.map_or(self.last_open, |l| l.0 .0);
        match which.0 % 4 {
            0 | 1 => AttemptId(live),
            2 => AttemptId(live.saturating_sub(1)),
            _ => AttemptId(live + 1),
        }
    }

    /// Drain until `Wait`, checking every action; `ended` is the attempt the
    /// input itself ended, if it was live.
    fn drain(&mut self, ended: Option<AttemptId>) -> Result<Drained, String> {
        if let (Some(e), Some((l, _))) = (ended, self.live) {
            if e == l {
                self.live = None;
            }
        }
        let mut seen = Drained {
            ended,
            ..Drained::default()
        };
        for _ in 0..10_000 {
            let action = self.engine.poll();
            if let Action::Wait { until } = action {
                self.check_wait(until.map(|u| u.0))?;
                return Ok(seen);
            }
            self.check_action(action, &mut seen)?;
        }
        Err("poll never returned Wait".into())
    }

    fn check_wait(&self, until: Option<u64>) -> Result<(), String> {
        if until.is_some_and(|u| u < self.now.mono.0) {
            return Err(format!("Wait {until:?} before {:?}", self.now));
        }
        if self.engine.live_attempt() != self.live.map(|l| l.0) {
            return Err(format!(
                "live attempt {:?}, the actions say {:?}",
                self.engine.live_attempt(),
                self.live
            ));
        }
        if self.paused() && self.live.is_some() {
            return Err("a live attempt while paused".into());
        }
        Ok(())
    }

    fn paused(&self) -> bool {
        (self.hidden && self.pause_at_once) || self.offline || self.frozen
    }

    fn check_action(&mut self, action: Action, seen: &mut Drained) -> Result<(), String> {
        if self.closed
            && !matches!(
                action,
                Action::State {
                    state: State::Closed,
                    ..
                }
            )
        {
            return Err(format!("{action:?} after closed"));
        }
        match action {
            Action::Abort(id) if seen.ended == Some(id) && self.live.is_none() => {}
            Action::Abort(id) => {
                if self.live.map(|l| l.0) != Some(id) {
                    return Err(format!("abort of {id:?}, live {:?}", self.live));
                }
                self.live = None;
            }
            Action::Open(o) => {
                if let Some(l) = self.live {
                    return Err(format!("two live attempts: {l:?} and {:?}", o.id));
                }
                if self.paused() {
                    return Err("Open while hidden, offline or frozen".into());
                }
                if o.id.0 <= self.last_open {
                    return Err(format!("attempt id {:?} after {}", o.id, self.last_open));
                }
                self.last_open = o.id.0;
                self.live = Some((o.id, o.transport));
                self.body_id = (false, false);
            }
            Action::State {
                state,
                reason,
                delay_ms,
            } => {
                if state == State::Closed {
                    self.closed = true;
                }
                if state == State::Waiting {
                    self.check_reconnect_wait(reason, delay_ms)?;
                }
            }
            Action::Deliver(m) if m.id.is_empty() => {
                seen.delivered_without_id.push(m.last_event_id)
            }
            Action::Reset { .. } => seen.reset = true,
            _ => {}
        }
        Ok(())
    }

    /// Rule of `engine::retry`: a failure's wait is within the bounds of the
    /// module doc (see the module doc of this file).
    fn check_reconnect_wait(&self, reason: Reason, delay_ms: Option<u64>) -> Result<(), String> {
        if !matches!(
            reason,
            Reason::Backoff | Reason::RetryAfter | Reason::RateLimit
        ) {
            return Ok(());
        }
        let c = self.engine.config();
        let floor = self.engine.backoff_floor_ms();
        let cap = c.backoff.max_ms;
        let server = floor.max(c.max_retry_after_ms.min(MAX_TIMER_MS));
        let hi = (floor.saturating_add(cap))
            .max(floor.saturating_add(floor.max(c.backoff.base_ms)))
            .max(server.saturating_add(1000))
            .min(MAX_TIMER_MS);
        let lo = floor.min(MAX_TIMER_MS);
        match delay_ms {
            Some(d) if (lo..=hi).contains(&d) => Ok(()),
            d => Err(format!(
                "{reason:?} wait {d:?} outside [{lo}, {hi}] (floor {floor})"
            )),
        }
    }

    /// Run the timer forward `ms`, firing each deadline on the way.
    ///
    /// # Errors
    /// A broken invariant.
    pub fn run_for(&mut self, ms: u64) -> Result<(), String> {
        let target = self.now.mono.0.saturating_add(ms);
        for _ in 0..500 {
            let Some(w) = self.next_wait() else { break };
            if w > target {
                break;
            }
            let d = w.saturating_sub(self.now.mono.0);
            self.now = self.now.plus_ms(d);
            self.engine.handle(self.now, Input::Timer);
            self.drain(None)?;
        }
        let d = target.saturating_sub(self.now.mono.0);
        self.now = self.now.plus_ms(d);
        Ok(())
    }

    fn next_wait(&mut self) -> Option<u64> {
        match self.engine.poll() {
            Action::Wait { until } => until.map(|u| u.0),
            _ => None,
        }
    }

    /// Feed one op and check the invariants.
    ///
    /// # Errors
    /// A broken invariant.
    pub fn step(&mut self, op: &Op) -> Result<(), String> {
        let cursor = String::from(self.engine.last_event_id());
        let (ended, no_id) = match op {
            Op::Advance(n) => return self.run_for(u64::from(*n) * 37),
            _ => self.feed(op),
        };
        let seen = self.drain(ended)?;
        if no_id && self.sse_profile && !seen.reset {
            let now = self.engine.last_event_id();
            if now != cursor {
                return Err(format!(
                    "the cursor moved from {cursor:?} to {now:?} without an id"
                ));
            }
            if let Some(bad) = seen.delivered_without_id.iter().find(|c| **c != cursor) {
                return Err(format!(
                    "a message without an id carries cursor {bad:?}, was {cursor:?}"
                ));
            }
        }
        Ok(())
    }

    /// Hand `op` to the engine; returns the attempt it ended (if it may
    /// have) and whether it carries no id of its own.
    fn feed(&mut self, op: &Op) -> (Option<AttemptId>, bool) {
        let now = self.now;
        let e = &mut self.engine;
        match op {
            Op::Advance(_) | Op::Timer => e.handle(now, Input::Timer),
            Op::Jump(m, w) => {
                self.now.mono.0 += u64::from(*m) * 1000;
                self.now.wall.0 += i64::from(*w) * 1000;
                e.handle(self.now, Input::Timer);
            }
            Op::Start(c) => e.handle(now, Input::Start(caps(*c))),
            Op::Visibility(h) => {
                self.hidden = *h;
                e.handle(now, Input::Visibility { hidden: *h });
            }
            Op::Online(o) => {
                self.offline = !o;
                e.handle(now, Input::Online(*o));
            }
            Op::Frozen(f) => {
                self.frozen = *f;
                e.handle(now, Input::Frozen(*f));
            }
            Op::Hint(rtt, save) => {
                let hint = NetworkHint {
                    rtt_ms: rtt.map(u64::from),
                    save_data: *save,
                    effective_type: None,
                };
                e.handle(now, Input::NetworkHint(hint));
            }
            Op::Close => e.handle(now, Input::Close),
            _ => return self.feed_attempt(op),
        }
        (None, false)
    }

    /// A fact about an attempt (see [`Model::feed`]).
    fn feed_attempt(&mut self, op: &Op) -> (Option<AttemptId>, bool) {
        let now = self.now;
        let request_live = self.live.is_some_and(|l| !l.1.is_streaming());
        let ends = |id: AttemptId, yes: bool| Some(id).filter(|_| yes);
        match op {
            Op::Head(w, s, t, h) => {
                let head = head(*s, *t, h);
                self.engine
                    .handle(now, Input::ResponseHead(self.id(*w), &head));
            }
            Op::NativeProbe(w, probe) => {
                let id = self.id(*w);
                let head = probe.map(|(s, t)| head(s, t, &[]));
                self.engine
                    .handle(now, Input::NativeProbe(id, head.as_ref()));
                // The native `EventSource` behind a probe already failed:
                // whatever the probe saw, it ends the attempt, on any
                // transport (`engine::native_probe`).
                return (Some(id), false);
            }
            Op::Opened(w) => self.engine.handle(now, Input::Opened(self.id(*w))),
            Op::Bytes(w, parts) => {
                let body = bytes(parts);
                let split = self.body_id.1 && body.first() == Some(&b'd');
                self.body_id.0 |= split || body.windows(2).any(|p| p == b"id");
                self.body_id.1 = body.last() == Some(&b'i');
                let no_id = !self.body_id.0;
                self.engine.handle(now, Input::Bytes(self.id(*w), &body));
                return (None, no_id);
            }
            Op::Native(w, t, data, l) => return self.native(*w, *t, data, *l),
            Op::Messages(w, msgs, hint) => return self.messages(*w, msgs, *hint, request_live),
            Op::Resource(w, body) => {
                let id = self.id(*w);
                self.engine
                    .handle(now, Input::BodyResource(id, body.clone()));
                return (ends(id, request_live), false);
            }
            // A Durable Streams JSON body, whole (the adapter `JSON.parse`d
            // it): it ends its request when the 200 said `application/json`
            // (`engine::durable`, found by `make fuzz`); the model does not
            // follow heads, so it takes the engine's word for that, and only
            // in the Durable Streams profile (elsewhere it is ignored).
            Op::JsonChunk(w, elements) => {
                let id = self.id(*w);
                self.engine
                    .handle(now, Input::JsonChunk(id, elements.clone()));
                let gone = !self.sse_profile && self.engine.live_attempt() != Some(id);
                return (ends(id, gone), false);
            }
            Op::Error(w, k) => return self.ending(*w, |id| Input::TransportError(id, error(*k))),
            Op::End(w) => return (self.ending(*w, Input::StreamEnd).0, true),
            Op::HeadersFailed(w) => return self.ending(*w, Input::HeadersFailed),
            _ => {}
        }
        (None, false)
    }

    /// Decoded JSON messages; they end a request transport's attempt.
    fn messages(
        &mut self,
        w: Which,
        msgs: &[(Option<u8>, u8)],
        hint: Option<u32>,
        request_live: bool,
    ) -> (Option<AttemptId>, bool) {
        let id = self.id(w);
        let no_id = msgs.iter().all(|(i, _)| i.is_none());
        let input = Input::Messages {
            id,
            msgs: messages(msgs),
            polling_hint_ms: hint.map(u64::from),
        };
        self.engine.handle(self.now, input);
        (Some(id).filter(|_| request_live), no_id)
    }

    /// A fact that ends its attempt.
    fn ending(
        &mut self,
        w: Which,
        input: impl FnOnce(AttemptId) -> Input<'static>,
    ) -> (Option<AttemptId>, bool) {
        let id = self.id(w);
        self.engine.handle(self.now, input(id));
        (Some(id), false)
    }

    fn native(&mut self, w: Which, t: u8, data: &str, l: u8) -> (Option<AttemptId>, bool) {
        let id = self.id(w);
        let cursor = String::from(self.engine.last_event_id());
        let leid = match l % 4 {
            0 => cursor.clone(),
            1 => String::new(),
            n => n.to_string(),
        };
        let input = Input::NativeEvent {
            id,
            event_type: EVENTS[usize::from(t) % EVENTS.len()],
            data,
            last_event_id: &leid,
        };
        self.engine.handle(self.now, input);
        (None, leid == cursor)
    }
}

fn error(k: u8) -> TransportError {
    [
        TransportError::Network,
        TransportError::NetworkOrCors,
        TransportError::Aborted,
        TransportError::Timeout,
        TransportError::ServerRefused,
        TransportError::NativeReconnecting,
    ][usize::from(k) % 6]
}

fn messages(msgs: &[(Option<u8>, u8)]) -> Vec<Option<IncomingMessage>> {
    msgs.iter()
        .map(|(i, t)| {
            Some(IncomingMessage {
                id: i.map(|i| (i % 5).to_string()),
                event: Some(EVENTS[usize::from(*t) % EVENTS.len()].into()),
                data: "d".into(),
            })
        })
        .collect()
}

fn caps(c: u8) -> Capabilities {
    Capabilities {
        event_source: c & 1 != 0,
        fetch_streaming: c & 2 != 0,
        abort_controller: c & 4 != 0,
    }
}

fn head(s: u8, t: u8, h: &[(u8, HeaderValue)]) -> ResponseHead {
    let mut head = ResponseHead::new(STATUSES[usize::from(s) % STATUSES.len()]);
    head.content_type = TYPES[usize::from(t) % TYPES.len()].map(String::from);
    for (n, v) in h.iter().take(8) {
        let v = match v {
            HeaderValue::Known(i) => VALUES[usize::from(*i) % VALUES.len()],
            HeaderValue::Raw(s) => s,
        };
        head = head.with_header(HEADERS[usize::from(*n) % HEADERS.len()], v);
    }
    head
}

fn bytes(parts: &[Part]) -> Vec<u8> {
    let mut body = Vec::new();
    for p in parts.iter().take(16) {
        match p {
            Part::Known(i) => {
                body.extend_from_slice(STREAM_PARTS[usize::from(*i) % STREAM_PARTS.len()])
            }
            Part::Raw(b) => body.extend_from_slice(b),
        }
    }
    body
}
