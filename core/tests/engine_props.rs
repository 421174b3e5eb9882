//! Property tests of the engine: random sequences of inputs (facts for live,
//! stale and unknown attempts, random statuses, headers and bodies, time
//! moving in steps and jumps, lifecycle flips) under random configurations
//! never panic, never yield two live attempts, never hand out a `Wait`
//! before the last input's time, never `Open` while paused by a hidden page
//! (with `pauseWhenHidden` at 0), and never act after `closed`.

use proptest::prelude::*;
use tidings_core::engine::{
    Action, AttemptId, Capabilities, Config, Engine, IncomingMessage, NetworkHint, ResponseHead,
    State, TransportError, TransportKind,
};
use tidings_core::time::Now;

#[derive(Clone, Debug)]
enum Input {
    Advance(u64),
    Jump(u64, i64),
    Timer,
    Start(u8),
    Head(u8, u16, u8, Vec<(u8, String)>),
    Opened(u8),
    Bytes(u8, Vec<u8>),
    Native(u8, u8, String, u8),
    Messages(u8, Vec<(Option<u8>, u8)>, Option<u64>),
    Resource(u8, String),
    Error(u8, u8),
    End(u8),
    Visibility(bool),
    Online(bool),
    Frozen(bool),
    Hint(Option<u64>, bool),
    Close,
}

const STATUSES: [u16; 24] = [
    200, 200, 200, 200, 200, 200, 200, 304, 304, 408, 408, 429, 500, 503, 503, 425, 502, 204, 401,
    403, 404, 205, 302, 0,
];
const TYPES: [Option<&str>; 4] = [
    Some("text/event-stream"),
    Some("application/json"),
    Some("text/plain"),
    None,
];
const HEADERS: [&str; 6] = [
    "retry-after",
    "date",
    "etag",
    "last-modified",
    "x-poll-interval",
    "x-ratelimit-reset",
];
const EVENTS: [&str; 5] = ["message", "price", "heartbeat", "reset", ""];

fn sse_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            Just(b"data: x\n\n".to_vec()),
            Just(b"id: 1\n".to_vec()),
            Just(b"id: 2\ndata: y\n\n".to_vec()),
            Just(b"id\n\n".to_vec()),
            Just(b"retry: 5\n".to_vec()),
            Just(b"retry: 99999999\n".to_vec()),
            Just(b": hb\n".to_vec()),
            Just(b"event: reset\ndata: r\n\n".to_vec()),
            Just(b"event: heartbeat\ndata:\n\n".to_vec()),
            Just(b"\r\n".to_vec()),
            prop::collection::vec(any::<u8>(), 0..16),
        ],
        0..6,
    )
    .prop_map(|parts| parts.concat())
}

fn input() -> impl Strategy<Value = Input> {
    let which = 0u8..4;
    prop_oneof![
        4 => prop_oneof![0u64..100, 0u64..20_000, 0u64..700_000].prop_map(Input::Advance),
        1 => (0u64..4_000_000, -4_000_000i64..4_000_000).prop_map(|(m, w)| Input::Jump(m, w)),
        2 => Just(Input::Timer),
        1 => (0u8..8).prop_map(Input::Start),
        4 => (which.clone(), prop_oneof![9 => 0usize..17, 1 => 0usize..STATUSES.len()], prop_oneof![3 => Just(0u8), 1 => 0u8..4], prop::collection::vec((0u8..6, "[ -~]{0,12}"), 0..3))
            .prop_map(|(w, s, t, h)| Input::Head(w, STATUSES[s], t, h)),
        1 => which.clone().prop_map(Input::Opened),
        4 => (which.clone(), sse_bytes()).prop_map(|(w, b)| Input::Bytes(w, b)),
        2 => (which.clone(), 0u8..5, "[a-z]{0,3}", 0u8..3).prop_map(|(w, e, d, l)| Input::Native(w, e, d, l)),
        2 => (which.clone(), prop::collection::vec((proptest::option::of(0u8..4), 0u8..5), 0..4), proptest::option::of(0u64..1_000_000))
            .prop_map(|(w, m, h)| Input::Messages(w, m, h)),
        1 => (which.clone(), "[a-z]{0,5}").prop_map(|(w, b)| Input::Resource(w, b)),
        3 => (which.clone(), 0u8..4).prop_map(|(w, e)| Input::Error(w, e)),
        3 => which.prop_map(Input::End),
        2 => any::<bool>().prop_map(Input::Visibility),
        1 => any::<bool>().prop_map(Input::Online),
        1 => any::<bool>().prop_map(Input::Frozen),
        1 => (proptest::option::of(0u64..3000), any::<bool>()).prop_map(|(r, s)| Input::Hint(r, s)),
        1 => prop_oneof![Just(Input::Close), Just(Input::Timer), Just(Input::Timer)],
    ]
}

fn config() -> impl Strategy<Value = Config> {
    (
        prop::collection::vec(0usize..4, 0..5),
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(45_000u64), Just(0), Just(15_000)],
        prop_oneof![Just(15_000u64), Just(0), Just(100_000)],
        prop_oneof![Just(35_000u64), Just(0)],
        0u32..3,
        proptest::option::of(0u32..12),
        prop_oneof![Just(0u64), Just(1000)],
    )
        .prop_map(
            |(ts, headers, cross, idle, first, lp, after, max_attempts, floor)| {
                let mut c = Config::new("/s?x=1");
                c.transports = ts.into_iter().map(|i| TransportKind::ALL[i]).collect();
                c.has_custom_headers = headers;
                c.cross_origin = cross.into();
                c.watchdog.idle_timeout_ms = idle;
                c.watchdog.first_event_timeout_ms = first;
                c.long_poll.timeout_ms = lp;
                c.fallback.after_failures = after;
                c.backoff.max_attempts = max_attempts;
                c.backoff.floor_ms = floor;
                c.fallback.remember_ms = 60_000;
                c.events = vec!["price".into()];
                c
            },
        )
}

struct Model {
    engine: Engine,
    now: Now,
    live: Option<(AttemptId, TransportKind)>,
    last_open: u64,
    hidden: bool,
    offline: bool,
    frozen: bool,
    started: bool,
    closed: bool,
}

impl Model {
    fn id(&self, which: u8) -> AttemptId {
        let live = self.live.map_or(self.last_open, |l| l.0 .0);
        match which {
            0 | 1 => AttemptId(live),
            2 => AttemptId(live.saturating_sub(1)),
            _ => AttemptId(live + 1),
        }
    }

    /// Drain and check every invariant; `ended` is the attempt the input
    /// itself ended, if it was live.
    fn drain(&mut self, ended: Option<AttemptId>) -> Result<(), TestCaseError> {
        if let (Some(e), Some((l, _))) = (ended, self.live) {
            if e == l {
                self.live = None;
            }
        }
        for _ in 0..1000 {
            match self.engine.poll() {
                Action::Wait { until } => {
                    if let Some(u) = until {
                        prop_assert!(u >= self.now.mono, "Wait {:?} before {:?}", u, self.now);
                    }
                    prop_assert_eq!(self.engine.live_attempt(), self.live.map(|l| l.0));
                    if self.hidden || self.offline || self.frozen {
                        prop_assert!(self.live.is_none(), "a live attempt while paused");
                    }
                    return Ok(());
                }
                Action::Abort(id) => {
                    prop_assert_eq!(
                        self.live.map(|l| l.0),
                        Some(id),
                        "abort of a non-live attempt"
                    );
                    self.live = None;
                }
                Action::Open(o) => {
                    prop_assert!(!self.closed, "Open after close");
                    prop_assert!(
                        self.live.is_none(),
                        "two live attempts: {:?} and {:?}",
                        self.live,
                        o.id
                    );
                    prop_assert!(!self.hidden, "Open while hidden");
                    prop_assert!(
                        !self.offline && !self.frozen,
                        "Open while offline or frozen"
                    );
                    prop_assert!(o.id.0 > self.last_open);
                    self.last_open = o.id.0;
                    self.live = Some((o.id, o.transport));
                }
                Action::State { state, .. } => {
                    prop_assert!(!self.closed || state == State::Closed);
                    if state == State::Closed {
                        self.closed = true;
                    }
                }
                _ => prop_assert!(!self.closed, "action after close"),
            }
        }
        prop_assert!(false, "poll never returned Wait");
        Ok(())
    }

    fn step(&mut self, input: Input) -> Result<(), TestCaseError> {
        let now = self.now;
        let mut ended = None;
        let request_live = self.live.is_some_and(|l| !l.1.is_streaming());
        match input {
            Input::Advance(ms) => {
                let target = self.now.mono.0 + ms;
                let mut guard = 0;
                while let Some(w) = self.next_wait() {
                    if w > target || guard > 200 {
                        break;
                    }
                    guard += 1;
                    let d = w - self.now.mono.0;
                    self.now = self.now.plus_ms(d);
                    self.engine.handle_timer(self.now);
                    self.drain(None)?;
                }
                let d = target - self.now.mono.0;
                self.now = self.now.plus_ms(d);
                return Ok(());
            }
            Input::Jump(m, w) => {
                self.now.mono.0 += m;
                self.now.wall.0 += w;
                self.engine.handle_timer(self.now);
            }
            Input::Timer => self.engine.handle_timer(now),
            Input::Start(c) => {
                let caps = Capabilities {
                    event_source: c & 1 != 0,
                    fetch_streaming: c & 2 != 0,
                    abort_controller: c & 4 != 0,
                };
                self.started = true;
                self.engine.handle_start(now, caps);
            }
            Input::Head(w, status, t, h) => {
                let id = self.id(w);
                let mut head = ResponseHead::new(status);
                head.content_type = TYPES[usize::from(t)].map(String::from);
                for (n, v) in h {
                    head = head.with_header(HEADERS[usize::from(n)], &v);
                }
                self.engine.handle_response_head(now, id, &head);
            }
            Input::Opened(w) => self.engine.handle_opened(now, self.id(w)),
            Input::Bytes(w, b) => self.engine.handle_bytes(now, self.id(w), &b),
            Input::Native(w, e, d, l) => {
                let leid = ["", "1", "2"][usize::from(l)];
                self.engine
                    .handle_native_event(now, self.id(w), EVENTS[usize::from(e)], &d, leid);
            }
            Input::Messages(w, msgs, hint) => {
                let id = self.id(w);
                let msgs = msgs
                    .into_iter()
                    .map(|(i, e)| IncomingMessage {
                        id: i.map(|i| i.to_string()),
                        event: Some(EVENTS[usize::from(e)].to_string()),
                        data: "d".into(),
                    })
                    .collect();
                if request_live {
                    ended = Some(id);
                }
                self.engine.handle_messages(now, id, msgs, hint);
            }
            Input::Resource(w, body) => {
                let id = self.id(w);
                if request_live {
                    ended = Some(id);
                }
                self.engine.handle_body_resource(now, id, body);
            }
            Input::Error(w, e) => {
                let id = self.id(w);
                ended = Some(id);
                let e = [
                    TransportError::Network,
                    TransportError::NetworkOrCors,
                    TransportError::Aborted,
                    TransportError::Timeout,
                ][usize::from(e)];
                self.engine.handle_transport_error(now, id, e);
            }
            Input::End(w) => {
                let id = self.id(w);
                ended = Some(id);
                self.engine.handle_stream_end(now, id);
            }
            Input::Visibility(h) => {
                self.hidden = h;
                self.engine.handle_visibility(now, h);
            }
            Input::Online(o) => {
                self.offline = !o;
                self.engine.handle_online(now, o);
            }
            Input::Frozen(f) => {
                self.frozen = f;
                self.engine.handle_frozen(now, f);
            }
            Input::Hint(rtt, save) => self.engine.handle_network_hint(
                now,
                NetworkHint {
                    rtt_ms: rtt,
                    save_data: save,
                    effective_type: None,
                },
            ),
            Input::Close => {
                self.engine.handle_close(now);
            }
        }
        self.drain(ended)
    }

    fn next_wait(&mut self) -> Option<u64> {
        match self.engine.poll() {
            Action::Wait { until } => until.map(|u| u.0),
            _ => None,
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_inputs_keep_the_invariants(
        config in config(),
        seed in any::<u64>(),
        inputs in prop::collection::vec(input(), 1..80),
    ) {
        let mut m = Model {
            engine: Engine::new(config, seed),
            now: Now::at(1000, 1_700_000_000_000),
            live: None,
            last_open: 0,
            hidden: false,
            offline: false,
            frozen: false,
            started: false,
            closed: false,
        };
        m.engine.handle_start(m.now, Capabilities::ALL);
        m.started = true;
        m.drain(None)?;
        for i in inputs {
            m.step(i)?;
        }
        // Whatever happened, a long quiet run never emits two live attempts.
        m.step(Input::Advance(3_600_000))?;
        let _ = m.started;
    }
}
