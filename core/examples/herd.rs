//! The herd benchmark (ARCHITECTURE.md "The engine": 100 000 real engines natively): a fleet of clients, each
//! a real [`Engine`] driven only through `handle_*` / `poll` on virtual time,
//! against a simulated server that goes through steady state, 5 s of refused
//! connections, and a recovery at 1.5× the steady request rate (requests over
//! capacity get 503 and count as failures). The same run models three
//! reference schedules (not engines): a naive fixed-1 s retry, SignalR's
//! default automatic reconnect (0, 2, 10, 30 s, then give up, no jitter) and
//! socket.io's (1 s doubling to 5 s, ±50 % randomization).
//!
//! Run: `cargo run --release -p tidings-core --example herd` (3.5 min of
//! CPU on the 2-core VM, measured while it was shared). Optional arguments: the fleet size (default
//! 100 000), then `stream`, `poll`, `reporter` or `broadcast` to run one section only.
//!
//! Printed figures, per fleet (stream, poll) and client model:
//! - per-second request rates around the outage (5 s and 60 s averages),
//! - stream fleet: the time until 99 % of the clients are back ÷ the physical
//!   limit (clients ÷ capacity), and requests per client to get back (the
//!   limit is 1); also against a server that answers overload with a
//!   `Retry-After` spread by its own queue (tidings only: the reference
//!   schedules ignore `Retry-After`),
//! - poll fleet: the peak after recovery ÷ the fleet's own steady 1 s maximum,
//! - the time until the rate stays within 10 % of steady,
//! - the reporter fleet (`herd/reporter.rs`),
//! - the long-poll broadcast (`herd/broadcast.rs`): one publish
//!   wakes every held request at once; the re-poll burst and the latency cost
//!   of the spread, per rule,
//! - the cost of polling an unchanged resource for two idle hours,
//! - engine time per handled input and memory per client at 10k, 100k and 1M.
//!
//! This is a benchmark that prints figures, not a test: nothing is asserted.

#[path = "herd/broadcast.rs"]
mod broadcast;
#[path = "herd/reporter.rs"]
mod reporter;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use tidings_core::engine::{
    Action, Capabilities, Config, Engine, ResponseHead, TransportError, TransportKind,
};
use tidings_core::rng::Rng;
use tidings_core::time::Now;

// ----- a counting allocator, for memory per client ---------------------------

struct Counting;

static ALLOCATED: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counter is only bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            ALLOCATED.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        ALLOCATED.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            ALLOCATED.fetch_add(new_size, Ordering::Relaxed);
            ALLOCATED.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The benchmark's own stopwatch. It measures how long the engine takes on
/// this machine (native only); the engine itself never reads a clock.
#[allow(clippy::disallowed_methods)]
fn stopwatch() -> Instant {
    Instant::now()
}

// ----- the scenario -----------------------------------------------------------

/// Wall clock at virtual time 0.
const WALL0: i64 = 1_700_000_000_000;
/// Network round trip for a response head, ms.
const RTT_MS: u64 = 50;
/// Server heartbeat comment interval on streams, ms.
const HEARTBEAT_MS: u64 = 20_000;
/// The polled resource changes this often, ms.
const RESOURCE_PERIOD_MS: u64 = 30_000;
/// The fixed poll interval of the reference clients, ms.
const BASELINE_POLL_MS: u64 = 30_000;
/// Outage length, ms.
const OUTAGE_MS: u64 = 5_000;
/// The outage starts here (after the steady state), ms.
const OUTAGE_AT_MS: u64 = 480_000;
/// The run ends here, ms.
const END_MS: u64 = 960_000;
/// The poll fleet is back within a minute: its run ends here, ms.
const POLL_END_MS: u64 = OUTAGE_AT_MS + 180_000;
/// The cooperative server's longest `Retry-After`, s.
const MAX_RETRY_AFTER_S: u32 = 1200;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fleet {
    /// Long-lived streams; the server ends each after 3–9 min (rotation), so
    /// the steady rate is the reconnect churn.
    Stream,
    /// Conditional polls of a resource that changes every 30 s.
    Poll,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Model {
    Tidings,
    Naive,
    SignalR,
    SocketIo,
}

impl Model {
    fn name(self) -> &'static str {
        match self {
            Model::Tidings => "tidings",
            Model::Naive => "naive 1 s",
            Model::SignalR => "SignalR",
            Model::SocketIo => "socket.io",
        }
    }

    /// Retry delay of a reference model after its k-th consecutive failure
    /// (k from 0); `None` = give up.
    fn retry_ms(self, k: u32, rng: &mut Rng) -> Option<u64> {
        match self {
            Model::Tidings => None,
            Model::Naive => Some(1000),
            Model::SignalR => [0, 2000, 10_000, 30_000].get(k as usize).copied(),
            Model::SocketIo => {
                // socket.io-client Backoff: ms = 1000 · 2^k; deviation =
                // floor(r · 0.5 · ms); ± by a digit of r; min(ms, 5000).
                let ms = 1000u64.saturating_mul(1u64 << k.min(20));
                let r = rng.below(1_000_000) as f64 / 1_000_000.0;
                let deviation = (r * 0.5 * ms as f64) as u64;
                let ms = if ((r * 10.0) as u64) & 1 == 0 {
                    ms - deviation
                } else {
                    ms + deviation
                };
                Some(ms.min(5000))
            }
        }
    }
}

struct Scenario {
    fleet: Fleet,
    model: Model,
    n: usize,
    /// Clients start uniformly over this window, ms.
    start_spread_ms: u64,
    /// The outage starts here, ms.
    outage_at: u64,
    /// The simulation ends here, ms.
    end: u64,
    seed: u64,
    /// The server answers overload with `Retry-After` from its own queue.
    cooperative: bool,
}

/// What the server does with a request arriving now.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Refused,
    /// 503, with the cooperative server's `Retry-After` in seconds (0: none).
    Busy(u32),
    Accept,
}

struct Server {
    outage: (u64, u64),
    /// Accepted requests per second after the outage (1.5 × steady).
    capacity: Option<u32>,
    attempts: Vec<u32>,
    accepted: Vec<u32>,
    /// The cooperative variant: a 503 carries `Retry-After` = the seconds
    /// until the first second whose promised returns are below capacity
    /// (the server's own queue spreads the fleet at its capacity).
    cooperative: bool,
    /// Clients told to come back in each second.
    promised: Vec<u32>,
}

impl Server {
    fn new(end: u64, outage_at: u64) -> Server {
        let secs = (end / 1000 + 2) as usize;
        Server {
            outage: (outage_at, outage_at + OUTAGE_MS),
            capacity: None,
            attempts: vec![0; secs],
            accepted: vec![0; secs],
            cooperative: false,
            promised: vec![0; secs + MAX_RETRY_AFTER_S as usize],
        }
    }

    /// The cooperative server's `Retry-After` for a client refused at `t`,
    /// seconds: the first later second with room among its promises.
    fn queue_wait_s(&mut self, t: u64, cap: u32) -> u32 {
        let s = (t / 1000) as usize;
        for wait in 1..MAX_RETRY_AFTER_S {
            let slot = s + wait as usize;
            if slot < self.promised.len() && self.promised[slot] < cap {
                self.promised[slot] += 1;
                return wait;
            }
        }
        MAX_RETRY_AFTER_S
    }

    fn decide(&mut self, t: u64) -> Verdict {
        let s = (t / 1000) as usize;
        if s < self.attempts.len() {
            self.attempts[s] += 1;
        }
        if t >= self.outage.0 && t < self.outage.1 {
            return Verdict::Refused;
        }
        if let Some(cap) = self.capacity {
            if s < self.accepted.len() && self.accepted[s] >= cap {
                let wait = if self.cooperative {
                    self.queue_wait_s(t, cap)
                } else {
                    0
                };
                return Verdict::Busy(wait);
            }
        }
        if s < self.accepted.len() {
            self.accepted[s] += 1;
        }
        Verdict::Accept
    }
}

/// Event kinds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Kind {
    Timer,
    Refused,
    Busy,
    HeadOk,
    NotModified,
    Heartbeat,
    End,
    Reset,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
struct Ev {
    t: u64,
    c: u32,
    kind: Kind,
    /// The attempt (or the timer deadline for `Timer`).
    att: u64,
    /// Resource version for poll answers.
    v: u32,
}

struct ClientState {
    engine: Option<Engine>,
    /// The live attempt (0 = none).
    cur: u64,
    timer_at: u64,
    connected: bool,
    /// Consecutive failures (reference models).
    k: u32,
    gave_up: bool,
    /// Known resource version (reference pollers).
    version: u32,
    /// Recovered after the outage (stream connected, or a successful poll).
    recovered: bool,
    /// Requests from the outage's end until recovered.
    to_back: u32,
    /// Requests during the outage.
    in_outage: u32,
}

struct Outcome {
    attempts: Vec<u32>,
    steady: f64,
    steady_max: u32,
    peak_ratio: f64,
    recovered_99_ms: Option<u64>,
    rate_settled_ms: Option<u64>,
    gave_up: usize,
    /// Server capacity after the outage, requests/s.
    capacity: u32,
    /// Requests per client from the outage's end until it was back.
    to_back: f64,
    /// Requests per client during the outage.
    in_outage: f64,
    inputs: u64,
    engine_ns: u128,
    mem_per_client: Option<usize>,
}

/// Response heads built once (the engine takes them by reference).
struct Heads {
    stream: ResponseHead,
    busy: ResponseHead,
    /// `503` with `Retry-After: i` (index 0 unused).
    busy_after: Vec<ResponseHead>,
    not_modified: ResponseHead,
    /// `200` with `ETag: "v"` for each resource version.
    versions: Vec<ResponseHead>,
}

impl Heads {
    fn new(end: u64) -> Heads {
        Heads {
            stream: ResponseHead::event_stream(),
            busy: ResponseHead::new(503),
            busy_after: (0..=MAX_RETRY_AFTER_S)
                .map(|i| ResponseHead::new(503).with_header("Retry-After", &i.to_string()))
                .collect(),
            not_modified: ResponseHead::new(304),
            versions: (0..=end / RESOURCE_PERIOD_MS)
                .map(|v| {
                    ResponseHead::new(200)
                        .with_content_type("text/plain")
                        .with_header("etag", &format!("\"{v}\""))
                })
                .collect(),
        }
    }
}

struct Sim<'a> {
    sc: &'a Scenario,
    heads: Heads,
    server: Server,
    queue: BinaryHeap<Reverse<Ev>>,
    clients: Vec<ClientState>,
    rng: Rng,
    connected: usize,
    recovered: usize,
    inputs: u64,
    engine_ns: u128,
    actions: Vec<Action>,
    next_att: u64,
}

fn config_for(fleet: Fleet) -> Config {
    match fleet {
        Fleet::Stream => {
            let mut c = Config::new("/stream");
            c.transports = vec![
                TransportKind::FetchSse,
                TransportKind::LongPoll,
                TransportKind::Poll,
            ];
            c
        }
        Fleet::Poll => {
            let mut c = Config::new("/resource");
            c.transports = vec![TransportKind::Poll];
            c
        }
    }
}

impl Sim<'_> {
    fn push(&mut self, t: u64, c: u32, kind: Kind, att: u64, v: u32) {
        self.queue.push(Reverse(Ev { t, c, kind, att, v }));
    }

    fn now(t: u64) -> Now {
        Now::at(t, WALL0 + t as i64)
    }

    fn lifetime(&mut self) -> u64 {
        180_000 + self.rng.below(360_000)
    }

    /// Feed one fact to engine `c` (timed), then act on its actions.
    fn feed(&mut self, t: u64, c: u32, f: impl FnOnce(&mut Engine, Now, &Heads)) {
        let Some(engine) = self.clients[c as usize].engine.as_mut() else {
            return;
        };
        let mut actions = std::mem::take(&mut self.actions);
        let start = stopwatch();
        f(engine, Self::now(t), &self.heads);
        loop {
            let a = engine.poll();
            let wait = matches!(a, Action::Wait { .. });
            actions.push(a);
            if wait {
                break;
            }
        }
        self.engine_ns += start.elapsed().as_nanos();
        self.inputs += 1;
        for a in actions.drain(..) {
            self.act(t, c, a);
        }
        self.actions = actions;
    }

    fn act(&mut self, t: u64, c: u32, a: Action) {
        match a {
            Action::Open(req) => {
                let id = req.id.0;
                self.clients[c as usize].cur = id;
                let known = req
                    .headers
                    .iter()
                    .find(|(n, _)| n == "If-None-Match")
                    .and_then(|(_, v)| v.trim_matches('"').parse::<u32>().ok());
                self.request(t, c, id, known);
            }
            Action::Abort(id) => {
                let cl = &mut self.clients[c as usize];
                if cl.cur == id.0 {
                    cl.cur = 0;
                    if cl.connected {
                        cl.connected = false;
                        self.connected -= 1;
                    }
                }
            }
            Action::Wait { until: Some(u) } => {
                let cl = &mut self.clients[c as usize];
                if cl.timer_at != u.0 {
                    cl.timer_at = u.0;
                    self.push(u.0, c, Kind::Timer, u.0, 0);
                }
            }
            Action::Error { fatal: true, .. } => self.clients[c as usize].gave_up = true,
            _ => {}
        }
    }

    /// A request from client `c` (attempt `att`) reaches the server at `t`.
    fn request(&mut self, t: u64, c: u32, att: u64, known: Option<u32>) {
        let cl = &mut self.clients[c as usize];
        if t >= self.server.outage.1 && !cl.recovered {
            cl.to_back += 1;
        } else if t >= self.server.outage.0 && !cl.recovered {
            cl.in_outage += 1;
        }
        match self.server.decide(t) {
            Verdict::Refused => self.push(t + 1, c, Kind::Refused, att, 0),
            Verdict::Busy(wait) => self.push(t + RTT_MS, c, Kind::Busy, att, wait),
            Verdict::Accept => match self.sc.fleet {
                Fleet::Stream => {
                    self.push(t + RTT_MS, c, Kind::HeadOk, att, 0);
                    self.push(t + RTT_MS + HEARTBEAT_MS, c, Kind::Heartbeat, att, 0);
                    let life = self.lifetime();
                    self.push(t + life, c, Kind::End, att, 0);
                }
                Fleet::Poll => {
                    let v = (t / RESOURCE_PERIOD_MS) as u32;
                    let kind = if known == Some(v) {
                        Kind::NotModified
                    } else {
                        Kind::HeadOk
                    };
                    self.push(t + RTT_MS, c, kind, att, v);
                }
            },
        }
    }

    fn mark_connected(&mut self, c: u32, t: u64) {
        let cl = &mut self.clients[c as usize];
        if !cl.connected && self.sc.fleet == Fleet::Stream {
            cl.connected = true;
            self.connected += 1;
        }
        if t >= self.server.outage.1 && !cl.recovered {
            cl.recovered = true;
            self.recovered += 1;
        }
    }

    fn mark_disconnected(&mut self, c: u32) {
        let cl = &mut self.clients[c as usize];
        if cl.connected {
            cl.connected = false;
            self.connected -= 1;
        }
    }

    fn handle(&mut self, ev: Ev) {
        let c = ev.c;
        let i = c as usize;
        if ev.kind == Kind::Timer {
            if self.clients[i].timer_at != ev.att {
                return;
            }
            self.clients[i].timer_at = u64::MAX;
            if self.sc.model == Model::Tidings {
                self.feed(ev.t, c, |e, now, _| e.handle_timer(now));
            } else {
                self.baseline_attempt(ev.t, c);
            }
            return;
        }
        if self.clients[i].cur != ev.att || ev.att == 0 {
            return; // stale
        }
        if self.sc.model == Model::Tidings {
            self.tidings_event(ev);
        } else {
            self.baseline_event(ev);
        }
    }

    fn tidings_event(&mut self, ev: Ev) {
        let (t, c) = (ev.t, ev.c);
        let id = tidings_core::engine::AttemptId(ev.att);
        match (ev.kind, self.sc.fleet) {
            (Kind::Refused, _) | (Kind::Reset, _) => {
                self.mark_disconnected(c);
                self.feed(t, c, |e, now, _| {
                    e.handle_transport_error(now, id, TransportError::Network)
                });
            }
            (Kind::Busy, _) => {
                let wait = ev.v as usize;
                self.feed(t, c, |e, now, h| {
                    let head = match wait {
                        0 => &h.busy,
                        w => h.busy_after.get(w).unwrap_or(&h.busy),
                    };
                    e.handle_response_head(now, id, head)
                });
            }
            (Kind::HeadOk, Fleet::Stream) => {
                self.mark_connected(c, t);
                self.feed(t, c, |e, now, h| {
                    e.handle_response_head(now, id, &h.stream);
                    e.handle_bytes(now, id, b"retry: 1000\n: hi\n\n");
                });
            }
            (Kind::HeadOk, Fleet::Poll) => {
                self.mark_connected(c, t);
                let v = ev.v as usize;
                self.feed(t, c, |e, now, h| {
                    if let Some(head) = h.versions.get(v) {
                        e.handle_response_head(now, id, head);
                    }
                    e.handle_body_resource(now, id, String::from("state"));
                });
            }
            (Kind::NotModified, _) => {
                self.mark_connected(c, t);
                self.feed(t, c, |e, now, h| {
                    e.handle_response_head(now, id, &h.not_modified)
                });
            }
            (Kind::Heartbeat, _) => {
                self.push(t + HEARTBEAT_MS, c, Kind::Heartbeat, ev.att, 0);
                self.feed(t, c, |e, now, _| e.handle_bytes(now, id, b": hb\n\n"));
            }
            (Kind::End, _) => {
                self.mark_disconnected(c);
                self.feed(t, c, |e, now, _| e.handle_stream_end(now, id));
            }
            (Kind::Timer, _) => {}
        }
    }

    // ----- reference models ---------------------------------------------------

    fn baseline_attempt(&mut self, t: u64, c: u32) {
        let i = c as usize;
        if self.clients[i].gave_up {
            return;
        }
        self.next_att += 1;
        let att = self.next_att;
        self.clients[i].cur = att;
        let known = Some(self.clients[i].version);
        self.request(t, c, att, known);
    }

    fn baseline_schedule(&mut self, t: u64, c: u32, delay: u64) {
        let at = t + delay;
        self.clients[c as usize].timer_at = at;
        self.push(at, c, Kind::Timer, at, 0);
    }

    fn baseline_failure(&mut self, t: u64, c: u32) {
        let i = c as usize;
        self.mark_disconnected(c);
        self.clients[i].cur = 0;
        let k = self.clients[i].k;
        self.clients[i].k += 1;
        match self.sc.model.retry_ms(k, &mut self.rng) {
            Some(d) => {
                // A failed poll retries on the schedule, then polls on.
                self.baseline_schedule(t, c, d);
            }
            None => self.clients[i].gave_up = true,
        }
    }

    fn baseline_event(&mut self, ev: Ev) {
        let (t, c, i) = (ev.t, ev.c, ev.c as usize);
        match (ev.kind, self.sc.fleet) {
            (Kind::Refused | Kind::Busy | Kind::Reset, _) => self.baseline_failure(t, c),
            (Kind::HeadOk | Kind::NotModified, Fleet::Stream) => {
                self.clients[i].k = 0;
                self.mark_connected(c, t);
            }
            (Kind::HeadOk | Kind::NotModified, Fleet::Poll) => {
                self.clients[i].k = 0;
                self.clients[i].version = ev.v;
                self.clients[i].cur = 0;
                self.mark_connected(c, t);
                self.baseline_schedule(t, c, BASELINE_POLL_MS);
            }
            (Kind::End, _) => {
                // A clean close of a healthy connection: reconnect on the
                // schedule's first step.
                self.clients[i].k = 0;
                self.baseline_failure(t, c);
            }
            (Kind::Heartbeat | Kind::Timer, _) => {}
        }
    }

    fn run(sc: &Scenario, mem_probe: bool) -> Outcome {
        let base_mem = ALLOCATED.load(Ordering::Relaxed);
        let mut sim = Sim {
            sc,
            heads: Heads::new(sc.end),
            server: Server {
                cooperative: sc.cooperative,
                ..Server::new(sc.end, sc.outage_at)
            },
            queue: BinaryHeap::with_capacity(sc.n * 4),
            clients: Vec::with_capacity(sc.n),
            rng: Rng::new(sc.seed),
            connected: 0,
            recovered: 0,
            inputs: 0,
            engine_ns: 0,
            actions: Vec::with_capacity(16),
            next_att: 0,
        };
        for c in 0..sc.n {
            let engine = (sc.model == Model::Tidings).then(|| {
                Engine::new(
                    config_for(sc.fleet),
                    sc.seed ^ (c as u64).wrapping_mul(0x9E37_79B9),
                )
            });
            sim.clients.push(ClientState {
                engine,
                cur: 0,
                timer_at: u64::MAX,
                connected: false,
                k: 0,
                gave_up: false,
                version: u32::MAX,
                recovered: false,
                to_back: 0,
                in_outage: 0,
            });
            let start = sim.rng.below(sc.start_spread_ms.max(1));
            sim.push(start, c as u32, Kind::Timer, start, 0);
            sim.clients[c].timer_at = start;
        }
        // Tidings clients start on their first "timer": handle_start.
        let mut started = vec![false; if sc.model == Model::Tidings { sc.n } else { 0 }];
        let steady_from = sc
            .outage_at
            .saturating_sub(200_000)
            .max(sc.start_spread_ms + 10_000);
        let mut recovered_99 = None;
        let mut outage_started = false;
        let mut mem_per_client = None;
        while let Some(Reverse(ev)) = sim.queue.pop() {
            if ev.t > sc.end {
                break;
            }
            if !outage_started && ev.t >= sc.outage_at {
                outage_started = true;
                if mem_probe {
                    let heap = sim.queue.capacity() * std::mem::size_of::<Reverse<Ev>>();
                    let now = ALLOCATED.load(Ordering::Relaxed);
                    mem_per_client = Some(now.saturating_sub(base_mem + heap) / sc.n);
                }
                // Steady rate and capacity.
                let from = (steady_from / 1000) as usize;
                let to = (sc.outage_at / 1000) as usize;
                let sum: u32 = sim.server.attempts[from..to].iter().sum();
                let steady = f64::from(sum) / (to - from) as f64;
                sim.server.capacity = Some((1.5 * steady).ceil().max(1.0) as u32);
                // Every open stream is reset.
                for c in 0..sc.n {
                    if sim.clients[c].connected && sc.fleet == Fleet::Stream {
                        let att = sim.clients[c].cur;
                        sim.push(sc.outage_at, c as u32, Kind::Reset, att, 0);
                    }
                }
                sim.queue.push(Reverse(ev));
                continue;
            }
            if recovered_99.is_none() && sim.recovered * 100 >= sc.n * 99 {
                recovered_99 = Some(ev.t - sim.server.outage.1);
            }
            if sc.model == Model::Tidings && ev.kind == Kind::Timer && !started[ev.c as usize] {
                started[ev.c as usize] = true;
                sim.clients[ev.c as usize].timer_at = u64::MAX;
                sim.feed(ev.t, ev.c, |e, now, _| {
                    e.handle_start(now, Capabilities::ALL)
                });
                continue;
            }
            sim.handle(ev);
        }
        let from = (steady_from / 1000) as usize;
        let to = (sc.outage_at / 1000) as usize;
        let steady =
            f64::from(sim.server.attempts[from..to].iter().sum::<u32>()) / (to - from) as f64;
        let after = (sim.server.outage.1 / 1000) as usize;
        let last = (sc.end / 1000) as usize;
        let attempts = sim.server.attempts[..last].to_vec();
        let peak = attempts[after..].iter().copied().max().unwrap_or(0);
        let steady_max = attempts[from..to].iter().copied().max().unwrap_or(0);
        // Rate settled: from the first second after which every 60 s average
        // (the poll fleet's natural cycle is 30 s) stays within 10 % above steady.
        let mut settled = None;
        for s in (after..last.saturating_sub(60)).rev() {
            let avg = f64::from(attempts[s..s + 60].iter().sum::<u32>()) / 60.0;
            if avg > 1.1 * steady {
                break;
            }
            settled = Some((s as u64 * 1000).saturating_sub(sim.server.outage.1));
        }
        let gave_up = sim.clients.iter().filter(|c| c.gave_up).count();
        Outcome {
            attempts,
            steady,
            steady_max,
            peak_ratio: f64::from(peak) / steady.max(1e-9),
            recovered_99_ms: recovered_99,
            rate_settled_ms: settled,
            gave_up,
            capacity: sim.server.capacity.unwrap_or(0),
            to_back: f64::from(sim.clients.iter().map(|c| c.to_back).sum::<u32>()) / sc.n as f64,
            in_outage: f64::from(sim.clients.iter().map(|c| c.in_outage).sum::<u32>())
                / sc.n as f64,
            inputs: sim.inputs,
            engine_ns: sim.engine_ns,
            mem_per_client,
        }
    }
}

fn avg(xs: &[u32]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        f64::from(xs.iter().sum::<u32>()) / xs.len() as f64
    }
}

fn compact(x: f64) -> String {
    if x >= 10_000.0 {
        format!("{:.0}k", x / 1000.0)
    } else if x >= 1000.0 {
        format!("{:.1}k", x / 1000.0)
    } else {
        format!("{x:.0}")
    }
}

fn secs(ms: Option<u64>) -> String {
    ms.map_or_else(
        || "never".into(),
        |m| format!("+{:.0} s", m as f64 / 1000.0),
    )
}

fn print_result(sc: &Scenario, r: &Outcome) {
    let o = (sc.outage_at / 1000) as usize;
    let a = &r.attempts;
    let five: Vec<String> = (0..34)
        .map(|i| {
            let s = o - 20 + i * 5;
            compact(avg(&a[s.min(a.len())..(s + 5).min(a.len())]))
        })
        .collect();
    let minute: Vec<String> = ((o + 150)..a.len())
        .step_by(60)
        .map(|s| compact(avg(&a[s..(s + 60).min(a.len())])))
        .collect();
    let name = if sc.cooperative {
        "tidings + server Retry-After queue"
    } else {
        sc.model.name()
    };
    match sc.fleet {
        Fleet::Stream => {
            // The physical limit: every client must reconnect, at most
            // `capacity` per second.
            let limit_s = sc.n as f64 / f64::from(r.capacity.max(1));
            let ratio = r.recovered_99_ms.map_or_else(
                || "-".into(),
                |m| format!("{:.2}", m as f64 / 1000.0 / limit_s),
            );
            println!(
                "  {name:<9} steady {:>5}/s  99 % back {:<7} = {ratio} x the limit ({} clients / \
                 {} per s = {limit_s:.0} s)  requests/client to get back {:>5.1} (limit 1; \
                 {:.1} more during the outage)  rate settled {:<7} gave up {}",
                compact(r.steady),
                secs(r.recovered_99_ms),
                sc.n,
                r.capacity,
                r.to_back,
                r.in_outage,
                secs(r.rate_settled_ms),
                r.gave_up
            );
        }
        Fleet::Poll => println!(
            "  {name:<9} steady {:>5}/s (max {:>5}/s)  peak after recovery / steady max {:>5.2} \
             (/ steady average {:>5.2})  99 % back {:<7} rate settled {:<7} requests/client to \
             get back {:>5.1}  gave up {}",
            compact(r.steady),
            compact(f64::from(r.steady_max)),
            r.peak_ratio * r.steady / f64::from(r.steady_max.max(1)),
            r.peak_ratio,
            secs(r.recovered_99_ms),
            secs(r.rate_settled_ms),
            r.to_back,
            r.gave_up
        ),
    }
    let r0 = ((sc.outage_at + OUTAGE_MS) / 1000) as usize;
    let per_second: Vec<String> = a[r0..(r0 + 15).min(a.len())]
        .iter()
        .map(|&x| compact(f64::from(x)))
        .collect();
    println!("      per second from recovery: {}", per_second.join(" "));
    println!("      5 s avgs from t-20 s: {}", five.join(" "));
    println!("      then 60 s avgs:       {}", minute.join(" "));
}

/// One tidings poller on a resource that never changes, for two hours.
fn unchanged_resource_cost() {
    let mut config = config_for(Fleet::Poll);
    config.url = "/unchanged".into();
    let mut engine = Engine::new(config, 1);
    engine.handle_start(Now::at(0, WALL0), Capabilities::ALL);
    let (mut hour1, mut hour2, mut not_modified, mut total) = (0u32, 0u32, 0u32, 0u32);
    let mut t = 0u64;
    let mut pending: Option<(u64, tidings_core::engine::AttemptId, bool)> = None;
    loop {
        match engine.poll() {
            Action::Open(req) => {
                total += 1;
                if t < 3_600_000 {
                    hour1 += 1;
                } else {
                    hour2 += 1;
                }
                let conditional = req.headers.iter().any(|(n, _)| n == "If-None-Match");
                pending = Some((t + RTT_MS, req.id, conditional));
            }
            Action::Wait { until } => {
                let next_timer = until.map_or(u64::MAX, |u| u.0);
                match pending.take() {
                    Some((at, id, conditional)) if at <= next_timer => {
                        t = at;
                        let now = Now::at(t, WALL0 + t as i64);
                        if conditional {
                            not_modified += 1;
                            engine.handle_response_head(now, id, &ResponseHead::new(304));
                        } else {
                            let head = ResponseHead::new(200)
                                .with_content_type("text/plain")
                                .with_header("etag", "\"same\"");
                            engine.handle_response_head(now, id, &head);
                            engine.handle_body_resource(now, id, "same".into());
                        }
                    }
                    p => {
                        pending = p;
                        if next_timer >= 7_200_000 {
                            break;
                        }
                        t = next_timer;
                        engine.handle_timer(Now::at(t, WALL0 + t as i64));
                    }
                }
            }
            _ => {}
        }
    }
    println!(
        "Unchanged resource, one client, two idle hours: tidings {hour1} requests in hour 1, \
         {hour2} in hour 2, {:.1} % answered 304; a naive fixed-1 s poller: 3600 and 3600, \
         0 % 304 (unconditional)",
        100.0 * f64::from(not_modified) / f64::from(total.max(1))
    );
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    // Optional second argument: `reporter` runs only the reporter fleet.
    let only = std::env::args().nth(2);
    if only.as_deref() == Some("reporter") {
        reporter::print(n);
        return;
    }
    if only.as_deref() == Some("broadcast") {
        broadcast::print(n);
        return;
    }
    let t0 = stopwatch();
    println!(
        "tidings herd benchmark: {n} clients per fleet; steady state, {} s of refused \
         connections at t = {} s (all streams reset), recovery at 1.5x the steady rate \
         (over capacity: 503), until t = {} s (poll fleet: {} s)",
        OUTAGE_MS / 1000,
        OUTAGE_AT_MS / 1000,
        END_MS / 1000,
        POLL_END_MS / 1000
    );
    println!(
        "Stream fleet: streams rotated by the server every 3-9 min, heartbeat every 20 s. \
         Poll fleet: resource changes every 30 s; reference pollers poll every 30 s."
    );
    println!("Rates are requests arriving at the server per second (refused and 503 included).");
    let mut tidings_runs = vec![];
    let fleets = match only.as_deref() {
        Some("stream") => vec![Fleet::Stream],
        Some("poll") => vec![Fleet::Poll],
        _ => vec![Fleet::Stream, Fleet::Poll],
    };
    for fleet in fleets {
        println!("\n{fleet:?} fleet");
        let cooperative = (fleet == Fleet::Stream).then_some((Model::Tidings, true));
        let runs = [
            Model::Tidings,
            Model::Naive,
            Model::SignalR,
            Model::SocketIo,
        ]
        .map(|m| (m, false));
        for (model, cooperative) in runs.into_iter().chain(cooperative) {
            let sc = Scenario {
                fleet,
                model,
                n,
                start_spread_ms: 30_000,
                outage_at: OUTAGE_AT_MS,
                end: if fleet == Fleet::Poll {
                    POLL_END_MS
                } else {
                    END_MS
                },
                seed: 7,
                cooperative,
            };
            let r = Sim::run(&sc, model == Model::Tidings && !cooperative);
            print_result(&sc, &r);
            if model == Model::Tidings && !cooperative {
                tidings_runs.push((fleet, n, r.inputs, r.engine_ns, r.mem_per_client));
            }
        }
    }
    if only.is_some() {
        return;
    }
    reporter::print(n);
    broadcast::print(n);
    println!();
    unchanged_resource_cost();

    // Engine cost at other scales (stream fleet, the costlier one).
    for (scale, spread, outage, end) in [
        (10_000usize, 30_000u64, OUTAGE_AT_MS, END_MS),
        (1_000_000, 20_000, 40_000, 60_000),
    ] {
        let sc = Scenario {
            fleet: Fleet::Stream,
            model: Model::Tidings,
            n: scale,
            start_spread_ms: spread,
            outage_at: outage,
            end,
            seed: 9,
            cooperative: false,
        };
        let r = Sim::run(&sc, true);
        tidings_runs.push((
            Fleet::Stream,
            scale,
            r.inputs,
            r.engine_ns,
            r.mem_per_client,
        ));
    }
    let overhead = {
        let s = stopwatch();
        let mut x = 0u128;
        for _ in 0..1_000_000 {
            let a = stopwatch();
            x = x.wrapping_add(a.elapsed().as_nanos());
        }
        std::hint::black_box(x);
        s.elapsed().as_nanos() as f64 / 1_000_000.0
    };
    println!(
        "\nEngine cost (size_of Engine = {} B, of the simulated client record {} B; time = \
         handle_* + draining poll, minus the {overhead:.0} ns timer overhead per input):",
        std::mem::size_of::<Engine>(),
        std::mem::size_of::<ClientState>()
    );
    tidings_runs.sort_by_key(|r| (r.1, r.0 == Fleet::Poll));
    for (fleet, scale, inputs, ns, mem) in tidings_runs {
        let span = if scale == 1_000_000 {
            String::from("60 s span, starts over 20 s, outage at 40 s")
        } else {
            let end = if fleet == Fleet::Poll {
                POLL_END_MS
            } else {
                END_MS
            };
            format!("{} s span", end / 1000)
        };
        println!(
            "  {:>9} clients, {:?} fleet, {span}: {} inputs, {:.0} ns/input, memory {} B/client \
             (client record + engine heap, at the outage)",
            scale,
            fleet,
            inputs,
            (ns as f64 / inputs.max(1) as f64 - overhead).max(0.0),
            mem.map_or_else(|| "-".into(), |m| m.to_string()),
        );
    }
    println!("\nTotal run time {:.1} s", t0.elapsed().as_secs_f64());
}
