//! A virtual-time driver for engine tests: feeds facts at exact times, fires
//! the engine's single timer exactly when its `Wait` says, and records every
//! action with the time it was emitted. Shared by the `engine_*` tests
//! through `#[path]`; it has no tests of its own.
#![allow(dead_code)]

use tidings_core::engine::{
    Action, AttemptId, Capabilities, Config, Engine, IncomingMessage, Message, OpenRequest, Reason,
    ResponseHead, State, TransportError, TransportKind,
};
use tidings_core::time::{MonoMs, Now};

/// Wall time at mono 0: Tue, 14 Nov 2023 22:13:20 GMT.
pub const WALL0: i64 = 1_700_000_000_000;

/// One engine on virtual time.
pub struct Sim {
    pub engine: Engine,
    pub now: Now,
    /// Every action with the monotonic time it was emitted at.
    pub log: Vec<(u64, Action)>,
    /// The engine's armed timer.
    pub wait: Option<MonoMs>,
    /// The highest attempt id handed out by `next_open` or given to an input.
    pub touched: u64,
    /// When the Open returned by the last `next_open` was emitted.
    pub last_open_at: u64,
}

impl Sim {
    pub fn new(config: Config, seed: u64) -> Sim {
        Sim {
            engine: Engine::new(config, seed),
            now: Now::at(0, WALL0),
            log: Vec::new(),
            wait: None,
            touched: 0,
            last_open_at: 0,
        }
    }

    /// Start with every capability.
    pub fn start(&mut self) -> Vec<Action> {
        self.start_with(Capabilities::ALL)
    }

    pub fn start_with(&mut self, caps: Capabilities) -> Vec<Action> {
        self.engine.handle_start(self.now, caps);
        let out = self.drain();
        if let Some(o) = opens(&out).last() {
            self.touched = self.touched.max(o.id.0);
        }
        out
    }

    /// Drain until `Wait`; remember the timer.
    pub fn drain(&mut self) -> Vec<Action> {
        let mut out = Vec::new();
        for _ in 0..10_000 {
            match self.engine.poll() {
                Action::Wait { until } => {
                    if let Some(u) = until {
                        assert!(u >= self.now.mono, "Wait {u:?} before now {:?}", self.now);
                    }
                    self.wait = until;
                    break;
                }
                a => out.push(a),
            }
        }
        for a in &out {
            self.log.push((self.now.mono.0, a.clone()));
        }
        out
    }

    /// Move time to `t` (monotonic ms; wall moves by the same amount), firing
    /// the timer at each deadline on the way. Returns every action.
    pub fn run_until(&mut self, t: u64) -> Vec<Action> {
        let mut out = Vec::new();
        while let Some(w) = self.wait {
            if w.0 > t {
                break;
            }
            let step = w.0.saturating_sub(self.now.mono.0);
            self.now = self.now.plus_ms(step);
            self.engine.handle_timer(self.now);
            out.extend(self.drain());
        }
        let step = t.saturating_sub(self.now.mono.0);
        self.now = self.now.plus_ms(step);
        out
    }

    /// `run_until(now + ms)`.
    pub fn run_for(&mut self, ms: u64) -> Vec<Action> {
        let t = self.now.mono.0 + ms;
        self.run_until(t)
    }

    /// The first `Open` whose id is above every id handed out by `start` or
    /// `next_open` or given to an input, running time forward at most `limit`
    /// ms to find it.
    pub fn next_open(&mut self, limit: u64) -> Option<OpenRequest> {
        let end = self.now.mono.0 + limit;
        loop {
            let touched = self.touched;
            if let Some((t, o)) = self.opens().into_iter().find(|(_, o)| o.id.0 > touched) {
                self.touched = o.id.0;
                self.last_open_at = t;
                return Some(o);
            }
            match self.wait {
                Some(w) if w.0 <= end => {
                    self.run_until(w.0);
                }
                _ => {
                    self.run_until(end);
                    return None;
                }
            }
        }
    }

    pub fn head(&mut self, id: AttemptId, head: ResponseHead) -> Vec<Action> {
        self.touched = self.touched.max(id.0);
        self.engine.handle_response_head(self.now, id, &head);
        self.drain()
    }

    pub fn opened(&mut self, id: AttemptId) -> Vec<Action> {
        self.touched = self.touched.max(id.0);
        self.engine.handle_opened(self.now, id);
        self.drain()
    }

    pub fn bytes(&mut self, id: AttemptId, b: &[u8]) -> Vec<Action> {
        self.touched = self.touched.max(id.0);
        self.engine.handle_bytes(self.now, id, b);
        self.drain()
    }

    pub fn native(&mut self, id: AttemptId, event: &str, data: &str, leid: &str) -> Vec<Action> {
        self.touched = self.touched.max(id.0);
        self.engine
            .handle_native_event(self.now, id, event, data, leid);
        self.drain()
    }

    pub fn messages(
        &mut self,
        id: AttemptId,
        msgs: Vec<IncomingMessage>,
        hint: Option<u64>,
    ) -> Vec<Action> {
        self.touched = self.touched.max(id.0);
        let msgs = msgs.into_iter().map(Some).collect();
        self.engine.handle_messages(self.now, id, msgs, hint);
        self.drain()
    }

    pub fn resource(&mut self, id: AttemptId, body: &str) -> Vec<Action> {
        self.touched = self.touched.max(id.0);
        self.engine
            .handle_body_resource(self.now, id, body.to_string());
        self.drain()
    }

    pub fn error(&mut self, id: AttemptId, e: TransportError) -> Vec<Action> {
        self.touched = self.touched.max(id.0);
        self.engine.handle_transport_error(self.now, id, e);
        self.drain()
    }

    pub fn probe(&mut self, id: AttemptId, head: Option<ResponseHead>) -> Vec<Action> {
        self.touched = self.touched.max(id.0);
        self.engine.handle_native_probe(self.now, id, head.as_ref());
        self.drain()
    }

    pub fn headers_failed(&mut self, id: AttemptId) -> Vec<Action> {
        self.touched = self.touched.max(id.0);
        self.engine.handle_headers_failed(self.now, id);
        self.drain()
    }

    pub fn end(&mut self, id: AttemptId) -> Vec<Action> {
        self.touched = self.touched.max(id.0);
        self.engine.handle_stream_end(self.now, id);
        self.drain()
    }

    pub fn visibility(&mut self, hidden: bool) -> Vec<Action> {
        self.engine.handle_visibility(self.now, hidden);
        self.drain()
    }

    pub fn online(&mut self, online: bool) -> Vec<Action> {
        self.engine.handle_online(self.now, online);
        self.drain()
    }

    pub fn frozen(&mut self, frozen: bool) -> Vec<Action> {
        self.engine.handle_frozen(self.now, frozen);
        self.drain()
    }

    /// A fetch-sse stream answer: 200 text/event-stream head then `body`.
    pub fn stream(&mut self, id: AttemptId, body: &[u8]) -> Vec<Action> {
        let mut out = self.head(id, ResponseHead::event_stream());
        out.extend(self.bytes(id, body));
        out
    }

    /// Every `Open` in the log, with its time.
    pub fn opens(&self) -> Vec<(u64, OpenRequest)> {
        self.log
            .iter()
            .filter_map(|(t, a)| match a {
                Action::Open(o) => Some((*t, o.clone())),
                _ => None,
            })
            .collect()
    }

    /// Every delivered message in the log.
    pub fn delivered(&self) -> Vec<Message> {
        self.log
            .iter()
            .filter_map(|(_, a)| match a {
                Action::Deliver(m) => Some((**m).clone()),
                _ => None,
            })
            .collect()
    }

    /// Every action of the log matching `f`, with its time.
    pub fn find<T>(&self, f: impl Fn(&Action) -> Option<T>) -> Vec<(u64, T)> {
        self.log
            .iter()
            .filter_map(|(t, a)| f(a).map(|x| (*t, x)))
            .collect()
    }
}

/// The messages delivered, in order.
pub fn delivered(actions: &[Action]) -> Vec<Message> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Deliver(m) => Some((**m).clone()),
            _ => None,
        })
        .collect()
}

/// The cursor of each `uptodate` told.
pub fn up_to_date(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::UpToDate { last_event_id } => Some(last_event_id.clone()),
            _ => None,
        })
        .collect()
}

pub fn opens(actions: &[Action]) -> Vec<OpenRequest> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Open(o) => Some(o.clone()),
            _ => None,
        })
        .collect()
}

pub fn the_open(actions: &[Action]) -> OpenRequest {
    let o = opens(actions);
    assert_eq!(o.len(), 1, "expected exactly one Open in {actions:#?}");
    o[0].clone()
}

pub fn header<'a>(o: &'a OpenRequest, name: &str) -> Option<&'a str> {
    o.headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

pub fn states(actions: &[Action]) -> Vec<(State, Reason, Option<u64>)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::State {
                state,
                reason,
                delay_ms,
            } => Some((*state, *reason, *delay_ms)),
            _ => None,
        })
        .collect()
}

pub fn errors(actions: &[Action]) -> Vec<Action> {
    actions
        .iter()
        .filter(|a| matches!(a, Action::Error { .. }))
        .cloned()
        .collect()
}

pub fn data(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Deliver(m) => Some(m.data.clone()),
            _ => None,
        })
        .collect()
}

/// A config preferring `fetch-sse` (then long-poll, poll).
pub fn fetch_sse_config() -> Config {
    let mut c = Config::new("/stream");
    c.transports = vec![
        TransportKind::FetchSse,
        TransportKind::LongPoll,
        TransportKind::Poll,
    ];
    c
}

/// A config with exact gaps equal to the server's `retry:` (BC-05..08, BC-10
/// S2: "run with both jitter terms and the d/2 term disabled").
pub fn exact_retry_config(transport: TransportKind) -> Config {
    let mut c = Config::new("/stream");
    c.transports = vec![transport];
    c.backoff.floor_ms = 0;
    c.backoff.base_ms = 0;
    c.backoff.strategy = tidings_core::policy::backoff::Strategy::None;
    c
}

pub fn msg(id: Option<&str>, event: Option<&str>, data: &str) -> IncomingMessage {
    IncomingMessage {
        id: id.map(String::from),
        event: event.map(String::from),
        data: data.to_string(),
    }
}

/// A head with `status` and `Content-Type: text/event-stream`.
pub fn es_head(status: u16) -> tidings_core::engine::ResponseHead {
    tidings_core::engine::ResponseHead::new(status).with_content_type("text/event-stream")
}

impl Sim {
    /// `next_open`, which must find one.
    pub fn must_open(&mut self, limit: u64) -> OpenRequest {
        match self.next_open(limit) {
            Some(o) => o,
            None => panic!("no Open within {limit} ms; log: {:#?}", self.log),
        }
    }
}

/// The times of every `Abort` recorded so far.
pub fn aborts(sim: &Sim) -> Vec<u64> {
    sim.find(|a| matches!(a, Action::Abort(_)).then_some(()))
        .into_iter()
        .map(|(t, _)| t)
        .collect()
}

/// The `waiting` states among `actions`: (reason, delay ms; 0 when absent).
pub fn waiting(actions: &[Action]) -> Vec<(Reason, u64)> {
    states(actions)
        .into_iter()
        .filter(|s| s.0 == State::Waiting)
        .map(|s| (s.1, s.2.unwrap_or(0)))
        .collect()
}

impl Sim {
    /// A new engine of `config` and `seed`, started: it and its first `Open`.
    pub fn started(config: Config, seed: u64) -> (Sim, OpenRequest) {
        let mut sim = Sim::new(config, seed);
        let o = the_open(&sim.start());
        (sim, o)
    }
}

/// A head with `status` and `Content-Type: application/json`.
pub fn json_head(status: u16) -> ResponseHead {
    ResponseHead::new(status).with_content_type("application/json")
}
