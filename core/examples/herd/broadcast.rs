//! The broadcast (docs/herd.md): a fleet of long-poll clients, each request held
//! by the server until news (or until a 30 s hold ends empty with a 204).
//! One publish answers every held request in the same instant, and the
//! re-polls come back as a burst. Printed per rule: the fleet's steady request
//! rate, the burst's peak (over 10 ms and over 1 ms, in requests/s) and its
//! ratio to steady, when 99 % of the fleet had re-polled, and the latency
//! cost of the spread: a second publish 50 ms after the first reaches the
//! clients still waiting to re-poll only when they do. The same rules on a
//! busy feed (the `make bench` latency shape: an event every 10 ms) show what
//! a spread after every answer costs there.
//!
//! `tidings` is the real engine; the two other rules are modelled schedules
//! (like the reference clients of the outage runs): `U[0, 100]` ms after
//! every answer (the simpler rule the engine's replaces), and no spread after news. All
//! three keep the "no news" pacing (`max(now, start + 1 s) + U[0, 100]`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use tidings_core::engine::{
    Action, AttemptId, Capabilities, Config, Engine, ResponseHead, TransportKind,
};
use tidings_core::rng::Rng;
use tidings_core::time::Now;

const WALL0: i64 = 1_700_000_000_000;
/// The server holds a request this long, then answers 204, ms.
const HOLD_MS: u64 = 30_000;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Rule {
    Tidings,
    EveryAnswer,
    NoneAfterNews,
}

impl Rule {
    fn name(self) -> &'static str {
        match self {
            Rule::Tidings => "tidings: U[0, min(held / 10, 100)] after news",
            Rule::EveryAnswer => "U[0, 100] after every answer",
            Rule::NoneAfterNews => "no spread after news",
        }
    }
}

struct Scenario {
    rule: Rule,
    n: usize,
    one_way_ms: u64,
    start_spread_ms: u64,
    publishes: Vec<u64>,
    end_ms: u64,
    /// The server writes this many held answers per ms (`None`: all in the
    /// publish's millisecond).
    fanout_per_ms: Option<u64>,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Kind {
    Publish,
    /// A request reaches the server.
    Arrive,
    HoldEnd,
    /// An answer reaches the client (`v`: events up to this one; 0 = 204).
    Answer,
    Timer,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
struct Ev {
    t: u64,
    kind: Kind,
    c: u32,
    att: u64,
    v: u32,
}

#[derive(Default)]
struct Client {
    engine: Option<Engine>,
    att: u64,
    /// When the live request went out.
    sent: u64,
    timer_at: Option<u64>,
    /// The last event delivered (the cursor).
    known: u32,
    /// The request the server holds for this client.
    held: Option<u64>,
}

struct Sim<'a> {
    sc: &'a Scenario,
    queue: BinaryHeap<Reverse<Ev>>,
    clients: Vec<Client>,
    rng: Rng,
    /// Requests arriving at the server, per ms.
    arrivals: Vec<u32>,
    published: Vec<u64>,
    /// Delivery latency of each (event, client), ms.
    latency: Vec<Vec<u64>>,
    /// When each client's first request after the first publish arrived.
    repolled: Vec<u64>,
    next_att: u64,
}

struct Outcome {
    steady_per_s: f64,
    peak_10ms_per_s: f64,
    peak_1ms_per_s: f64,
    repolled_99_ms: u64,
    /// Delivery latency p50 / p99 of the second publish (ms), and of all.
    second: (u64, u64),
    all: (u64, u64),
}

fn pct(sorted: &[u64], p: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[((sorted.len() - 1) * p) / 100]
}

impl Sim<'_> {
    fn push(&mut self, t: u64, kind: Kind, c: u32, att: u64, v: u32) {
        self.queue.push(Reverse(Ev { t, kind, c, att, v }));
    }

    fn run(sc: &Scenario) -> Outcome {
        let mut sim = Sim {
            sc,
            queue: BinaryHeap::new(),
            clients: Vec::with_capacity(sc.n),
            rng: Rng::new(19),
            arrivals: vec![0; sc.end_ms as usize + 1],
            published: Vec::new(),
            latency: vec![Vec::new(); sc.publishes.len()],
            repolled: vec![u64::MAX; sc.n],
            next_att: 0,
        };
        for c in 0..sc.n {
            let engine = (sc.rule == Rule::Tidings).then(|| {
                let mut config = Config::new("/lp");
                config.transports = vec![TransportKind::LongPoll];
                Engine::new(config, 19 ^ (c as u64).wrapping_mul(0x9E37_79B9))
            });
            let start = sim.rng.below(sc.start_spread_ms.max(1));
            sim.clients.push(Client {
                engine,
                timer_at: Some(start),
                ..Client::default()
            });
            sim.push(start, Kind::Timer, c as u32, 0, 0);
        }
        for &p in &sc.publishes {
            sim.push(p, Kind::Publish, 0, 0, 0);
        }
        while let Some(Reverse(ev)) = sim.queue.pop() {
            if ev.t > sc.end_ms {
                break;
            }
            sim.handle(ev);
        }
        sim.outcome()
    }

    fn handle(&mut self, ev: Ev) {
        let c = ev.c as usize;
        match ev.kind {
            Kind::Publish => self.publish(ev.t),
            Kind::Arrive => self.arrive(ev),
            Kind::HoldEnd => {
                if self.clients[c].held == Some(ev.att) {
                    self.clients[c].held = None;
                    let at = ev.t + self.sc.one_way_ms;
                    self.push(at, Kind::Answer, ev.c, ev.att, 0);
                }
            }
            Kind::Answer => self.answer(ev),
            Kind::Timer => {
                if self.clients[c].timer_at != Some(ev.t) {
                    return;
                }
                self.clients[c].timer_at = None;
                self.fire(ev.t, ev.c);
            }
        }
    }

    /// The client's timer: the engine's, or the modelled next request.
    fn fire(&mut self, t: u64, c: u32) {
        let now = Now::at(t, WALL0 + t as i64);
        let cl = &mut self.clients[c as usize];
        match cl.engine.as_mut() {
            Some(e) => {
                if cl.att == 0 {
                    e.handle_start(now, Capabilities::ALL);
                } else {
                    e.handle_timer(now);
                }
                self.drain(t, c);
            }
            None => self.send(t, c, 0),
        }
    }

    /// Carry out the engine's actions.
    fn drain(&mut self, t: u64, c: u32) {
        loop {
            let Some(e) = self.clients[c as usize].engine.as_mut() else {
                return;
            };
            match e.poll() {
                Action::Open(req) => self.send(t, c, req.id.0),
                Action::Wait { until } => {
                    let until = until.map(|u| u.0);
                    let cl = &mut self.clients[c as usize];
                    if until != cl.timer_at {
                        cl.timer_at = until;
                        if let Some(u) = until {
                            self.push(u, Kind::Timer, c, 0, 0);
                        }
                    }
                    return;
                }
                _ => {}
            }
        }
    }

    /// A request goes out (`att` 0: a modelled client numbers its own).
    fn send(&mut self, t: u64, c: u32, att: u64) {
        let att = if att == 0 {
            self.next_att += 1;
            self.next_att
        } else {
            att
        };
        let cl = &mut self.clients[c as usize];
        cl.att = att;
        cl.sent = t;
        let known = cl.known;
        self.push(t + self.sc.one_way_ms, Kind::Arrive, c, att, known);
    }

    fn arrive(&mut self, ev: Ev) {
        let t = ev.t;
        if let Some(a) = self.arrivals.get_mut(t as usize) {
            *a += 1;
        }
        let c = ev.c as usize;
        let first = self.sc.publishes.first().copied().unwrap_or(u64::MAX);
        if t > first && self.repolled[c] == u64::MAX {
            self.repolled[c] = t;
        }
        let published = self.published.len() as u32;
        if ev.v < published {
            let at = t + self.sc.one_way_ms;
            self.push(at, Kind::Answer, ev.c, ev.att, published);
        } else {
            self.clients[c].held = Some(ev.att);
            self.push(t + HOLD_MS, Kind::HoldEnd, ev.c, ev.att, 0);
        }
    }

    /// Answer every held request (all in this millisecond, or at the
    /// server's fan-out rate).
    fn publish(&mut self, t: u64) {
        self.published.push(t);
        let v = self.published.len() as u32;
        let mut written = 0u64;
        for c in 0..self.clients.len() {
            let Some(att) = self.clients[c].held.take() else {
                continue;
            };
            let offset = self.sc.fanout_per_ms.map_or(0, |per_ms| written / per_ms);
            written += 1;
            let at = t + offset + self.sc.one_way_ms;
            self.push(at, Kind::Answer, c as u32, att, v);
        }
    }
}

impl Sim<'_> {
    /// An answer reaches client `c`: deliver, then the next request by the rule.
    fn answer(&mut self, ev: Ev) {
        let (t, c) = (ev.t, ev.c as usize);
        if self.clients[c].att != ev.att {
            return;
        }
        let known = self.clients[c].known;
        for e in known..ev.v {
            let at = self.published[e as usize];
            self.latency[e as usize].push(t - at);
        }
        let news = ev.v > known;
        self.clients[c].known = self.clients[c].known.max(ev.v);
        if let Some(engine) = self.clients[c].engine.as_mut() {
            let now = Now::at(t, WALL0 + t as i64);
            let id = AttemptId(ev.att);
            if news {
                engine.handle_response_head(now, id, &ResponseHead::event_stream());
                let body: String = (known + 1..=ev.v)
                    .map(|e| format!("id: {e}\ndata: x\n\n"))
                    .collect();
                engine.handle_bytes(now, id, body.as_bytes());
                engine.handle_stream_end(now, id);
            } else {
                engine.handle_response_head(now, id, &ResponseHead::new(204));
            }
            self.drain(t, ev.c);
            return;
        }
        let delay = match (self.sc.rule, news) {
            (Rule::EveryAnswer, true) => self.rng.below(101),
            (_, true) => 0,
            (_, false) => (self.clients[c].sent + 1000).saturating_sub(t) + self.rng.below(101),
        };
        if delay == 0 {
            self.send(t, ev.c, 0);
        } else {
            self.clients[c].timer_at = Some(t + delay);
            self.push(t + delay, Kind::Timer, ev.c, 0, 0);
        }
    }

    fn outcome(mut self) -> Outcome {
        let first = self.sc.publishes.first().copied().unwrap_or(0) as usize;
        let from = (self.sc.start_spread_ms as usize).min(first.saturating_sub(1000));
        let steady: u32 = self.arrivals[from..first].iter().sum();
        let steady_per_s = f64::from(steady) * 1000.0 / (first - from).max(1) as f64;
        let after = &self.arrivals[first..];
        let peak_10 = after
            .windows(10)
            .map(|w| w.iter().sum::<u32>())
            .max()
            .unwrap_or(0);
        let peak_1 = after.iter().copied().max().unwrap_or(0);
        self.repolled.sort_unstable();
        let back = pct(&self.repolled, 99).saturating_sub(first as u64);
        let mut all = Vec::new();
        for l in &mut self.latency {
            l.sort_unstable();
            all.extend_from_slice(l);
        }
        all.sort_unstable();
        let second = self
            .latency
            .get(1)
            .map_or((0, 0), |l| (pct(l, 50), pct(l, 99)));
        Outcome {
            steady_per_s,
            peak_10ms_per_s: f64::from(peak_10) * 100.0,
            peak_1ms_per_s: f64::from(peak_1) * 1000.0,
            repolled_99_ms: back,
            second,
            all: (pct(&all, 50), pct(&all, 99)),
        }
    }
}

fn rate(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.1}M/s", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1}k/s", x / 1e3)
    } else {
        format!("{x:.0}/s")
    }
}

const RULES: [Rule; 3] = [Rule::Tidings, Rule::EveryAnswer, Rule::NoneAfterNews];

/// One publish to `n` held long-polls (answers written in the same ms, or at
/// `fanout_per_ms`); then the same with a second publish 50 ms later.
fn print_broadcast(n: usize, fanout_per_ms: Option<u64>) {
    match fanout_per_ms {
        None => println!("  every held request answered in the publish's millisecond:"),
        Some(f) => println!(
            "  the server writes {} answers/s (its own fan-out):",
            f * 1000
        ),
    }
    for rule in RULES {
        let mut sc = Scenario {
            rule,
            n,
            one_way_ms: 25,
            start_spread_ms: 30_000,
            publishes: vec![65_000],
            end_ms: 70_000,
            fanout_per_ms,
        };
        let one = Sim::run(&sc);
        sc.publishes.push(65_050);
        let two = Sim::run(&sc);
        println!(
            "    {:<48} steady {:>7}  re-poll peak {:>8} over 10 ms ({:>5.0}x steady), {:>8} \
             over 1 ms ({:>6.0}x)  99 % re-polled +{:>4} ms | with a 2nd publish 50 ms later: \
             peak {:>8} over 10 ms ({:>5.0}x), its latency p50 {:>3} / p99 {:>4} ms",
            rule.name(),
            rate(one.steady_per_s),
            rate(one.peak_10ms_per_s),
            one.peak_10ms_per_s / one.steady_per_s.max(1e-9),
            rate(one.peak_1ms_per_s),
            one.peak_1ms_per_s / one.steady_per_s.max(1e-9),
            one.repolled_99_ms,
            rate(two.peak_10ms_per_s),
            two.peak_10ms_per_s / two.steady_per_s.max(1e-9),
            two.second.0,
            two.second.1,
        );
    }
}

/// The `make bench` latency shape: an event every 10 ms for 2 s.
fn print_busy_feed(n: usize) {
    println!(
        "  busy feed: {n} clients, 1 ms one way, an event every 10 ms for 2 s (make bench's \
         latency shape; the wire alone is 1 ms):"
    );
    for rule in RULES {
        let sc = Scenario {
            rule,
            n,
            one_way_ms: 1,
            start_spread_ms: 1000,
            publishes: (0..200).map(|i| 5000 + 10 * i).collect(),
            end_ms: 8000,
            fanout_per_ms: None,
        };
        let r = Sim::run(&sc);
        println!(
            "    {:<48} latency p50 {:>3} / p99 {:>3} ms",
            rule.name(),
            r.all.0,
            r.all.1
        );
    }
}

/// Print the broadcast section for a fleet of `n`.
pub fn print(n: usize) {
    println!(
        "\nBroadcast: {n} long-poll clients, requests held up to {} s (then 204), \
         25 ms one way; one publish answers every held request at once, a second follows \
         50 ms later",
        HOLD_MS / 1000
    );
    print_broadcast(n, None);
    print_broadcast(n, Some(100));
    print_busy_feed(1000.min(n));
}
