//! The reporter fleet of the herd benchmark (docs/herd.md): 100 000 real
//! [`Reporter`] machines on virtual time, a report every 10 s, a 5 s outage
//! (connections refused), then a server with capacity 1.5× the steady rate
//! (over capacity: 503, no `Retry-After`), next to a naive reporter:
//! `loop { send, retrying at once on failure until it succeeds; sleep 10 s }`.
//! Every answer (refused, 503, 204) arrives one round trip after the request.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{compact, RTT_MS, WALL0};
use tidings_core::engine::{ResponseHead, TransportError};
use tidings_core::rng::Rng;
use tidings_core::time::Now;
use tidings_core::upstream::{IdempotencyKey, ReportAction, ReportConfig, Reporter};

/// The report interval, ms.
const INTERVAL_MS: u64 = 10_000;
/// Outage length, ms.
const OUTAGE_MS: u64 = 5_000;
/// The steady window starts here (every reporter is running), ms.
const STEADY_FROM_MS: u64 = 30_000;
/// The outage starts here, ms.
const OUTAGE_AT_MS: u64 = 100_000;
/// The run ends here, ms.
const END_MS: u64 = 190_000;
/// The recovery window for "requests per reporter": from the outage start
/// to this long after its end, ms (the goal's 30 s).
const RECOVERY_MS: u64 = 30_000;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Model {
    Tidings,
    /// tidings with `keep_all` (every report delivered).
    KeepAll,
    Naive,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Verdict {
    Refused,
    Busy,
    Ok,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Kind {
    /// A timer (tidings: the reporter's `Wait`; naive: the end of its sleep).
    Timer,
    /// An answer to (report, attempt).
    Answer(Verdict),
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
struct Ev {
    t: u64,
    c: u32,
    kind: Kind,
    /// The timer deadline, or the report number.
    a: u64,
    /// The attempt.
    b: u32,
}

struct Client {
    reporter: Option<Reporter>,
    timer_at: u64,
    /// A report failed during the outage and none was delivered since.
    owed: bool,
}

struct Server {
    attempts: Vec<u32>,
    accepted: Vec<u32>,
    capacity: Option<u32>,
}

impl Server {
    fn decide(&mut self, t: u64) -> Verdict {
        let s = (t / 1000) as usize;
        if s >= self.attempts.len() {
            return Verdict::Ok;
        }
        self.attempts[s] += 1;
        if (OUTAGE_AT_MS..OUTAGE_AT_MS + OUTAGE_MS).contains(&t) {
            return Verdict::Refused;
        }
        if self.capacity.is_some_and(|cap| self.accepted[s] >= cap) {
            return Verdict::Busy;
        }
        self.accepted[s] += 1;
        Verdict::Ok
    }
}

struct Sim {
    model: Model,
    queue: BinaryHeap<Reverse<Ev>>,
    clients: Vec<Client>,
    server: Server,
    key: IdempotencyKey,
    ok: ResponseHead,
    busy: ResponseHead,
    owed: usize,
    /// When 99 % of the reporters that failed in the outage delivered again.
    redelivered_99: Option<u64>,
    failed_in_outage: usize,
}

/// The figures of one run.
pub struct Outcome {
    pub steady: f64,
    pub steady_max: u32,
    pub peak: u32,
    pub back_ms: Option<u64>,
    pub per_reporter: f64,
    pub redelivered_99_ms: Option<u64>,
    pub per_second: Vec<u32>,
}

impl Sim {
    fn push(&mut self, t: u64, c: u32, kind: Kind, a: u64, b: u32) {
        self.queue.push(Reverse(Ev { t, c, kind, a, b }));
    }

    fn answered(&mut self, t: u64, c: u32, v: Verdict) {
        let in_outage = (OUTAGE_AT_MS..OUTAGE_AT_MS + OUTAGE_MS + RTT_MS).contains(&t);
        let cl = &mut self.clients[c as usize];
        if v != Verdict::Ok && in_outage && !cl.owed {
            cl.owed = true;
            self.owed += 1;
            self.failed_in_outage += 1;
        } else if v == Verdict::Ok && cl.owed {
            cl.owed = false;
            self.owed -= 1;
            let done = self.failed_in_outage - self.owed;
            if self.redelivered_99.is_none()
                && t > OUTAGE_AT_MS + OUTAGE_MS
                && done * 100 >= self.failed_in_outage * 99
            {
                self.redelivered_99 = Some(t - OUTAGE_AT_MS - OUTAGE_MS);
            }
        }
    }

    /// Feed one fact to reporter `c`, then carry out its actions.
    fn feed(&mut self, t: u64, c: u32, f: impl FnOnce(&mut Reporter, Now)) {
        let now = Now::at(t, WALL0 + t as i64);
        let Some(r) = self.clients[c as usize].reporter.as_mut() else {
            return;
        };
        f(r, now);
        let mut sends = Vec::new();
        let until = loop {
            match r.poll() {
                ReportAction::Collect { report } => {
                    r.handle_collected(now, report, Some(self.key.clone()));
                }
                ReportAction::Issue { report, issue } => sends.push((report, issue.attempt)),
                ReportAction::Wait { until } => break until,
                _ => {}
            }
        };
        for (report, attempt) in sends {
            let v = self.server.decide(t);
            self.push(t + RTT_MS, c, Kind::Answer(v), report, attempt);
        }
        if let Some(u) = until {
            let cl = &mut self.clients[c as usize];
            if cl.timer_at != u.0 {
                cl.timer_at = u.0;
                self.push(u.0, c, Kind::Timer, u.0, 0);
            }
        }
    }

    fn handle(&mut self, ev: Ev) {
        match (self.model, ev.kind) {
            (Model::Tidings | Model::KeepAll, Kind::Timer) => {
                if self.clients[ev.c as usize].timer_at == ev.a {
                    self.clients[ev.c as usize].timer_at = u64::MAX;
                    self.feed(ev.t, ev.c, |r, now| r.handle_timer(now));
                }
            }
            (Model::Tidings | Model::KeepAll, Kind::Answer(v)) => {
                self.answered(ev.t, ev.c, v);
                let (ok, busy) = (&self.ok, &self.busy);
                let head = if v == Verdict::Ok {
                    ok.clone()
                } else {
                    busy.clone()
                };
                self.feed(ev.t, ev.c, |r, now| match v {
                    Verdict::Refused => r.handle_error(now, ev.a, ev.b, TransportError::Network),
                    _ => r.handle_response(now, ev.a, ev.b, &head, None),
                });
            }
            (Model::Naive, Kind::Timer) => {
                let v = self.server.decide(ev.t);
                self.push(ev.t + RTT_MS, ev.c, Kind::Answer(v), 0, 0);
            }
            (Model::Naive, Kind::Answer(v)) => {
                self.answered(ev.t, ev.c, v);
                let next = if v == Verdict::Ok {
                    ev.t + INTERVAL_MS
                } else {
                    ev.t
                };
                self.push(next, ev.c, Kind::Timer, 0, 0);
            }
        }
    }
}

/// Run one fleet of `n` reporters.
pub fn run(model: Model, n: usize, seed: u64) -> Outcome {
    let secs = (END_MS / 1000 + 2) as usize;
    let key = IdempotencyKey::new("00000000-0000-4000-8000-000000000000")
        .unwrap_or_else(|e| panic!("{e:?}"));
    let mut sim = Sim {
        model,
        queue: BinaryHeap::with_capacity(n * 2),
        clients: Vec::with_capacity(n),
        server: Server {
            attempts: vec![0; secs],
            accepted: vec![0; secs],
            capacity: None,
        },
        key,
        ok: ResponseHead::new(204),
        busy: ResponseHead::new(503),
        owed: 0,
        redelivered_99: None,
        failed_in_outage: 0,
    };
    let mut rng = Rng::new(seed);
    for c in 0..n {
        // Pages load uniformly over one interval.
        let load = rng.below(INTERVAL_MS);
        let config = ReportConfig {
            keep_all: model == Model::KeepAll,
            ..ReportConfig::default()
        };
        let reporter = (model != Model::Naive)
            .then(|| Reporter::new(config, seed ^ (c as u64).wrapping_mul(0x9E37_79B9)));
        sim.clients.push(Client {
            reporter,
            timer_at: u64::MAX,
            owed: false,
        });
        sim.push(load, c as u32, Kind::Timer, u64::MAX, 1);
    }
    let mut capacity_set = false;
    while let Some(Reverse(ev)) = sim.queue.pop() {
        if ev.t > END_MS {
            break;
        }
        if !capacity_set && ev.t >= OUTAGE_AT_MS {
            capacity_set = true;
            let (steady, _) = steady_of(&sim.server.attempts);
            sim.server.capacity = Some((1.5 * steady).ceil() as u32);
        }
        if model != Model::Naive && ev.a == u64::MAX && ev.b == 1 {
            // The page loads: start.
            sim.feed(ev.t, ev.c, |r, now| r.handle_start(now));
            continue;
        }
        sim.handle(ev);
    }
    figures(&sim, n)
}

/// Steady average and maximum of the 1 s rates in the steady window.
fn steady_of(attempts: &[u32]) -> (f64, u32) {
    let w = &attempts[(STEADY_FROM_MS / 1000) as usize..(OUTAGE_AT_MS / 1000) as usize];
    let sum: u32 = w.iter().sum();
    (
        f64::from(sum) / w.len() as f64,
        w.iter().copied().max().unwrap_or(0),
    )
}

fn figures(sim: &Sim, n: usize) -> Outcome {
    let a = &sim.server.attempts;
    let (steady, steady_max) = steady_of(a);
    let steady_min = a[(STEADY_FROM_MS / 1000) as usize..(OUTAGE_AT_MS / 1000) as usize]
        .iter()
        .copied()
        .min()
        .unwrap_or(0);
    let from = (OUTAGE_AT_MS / 1000) as usize;
    let back_from = ((OUTAGE_AT_MS + OUTAGE_MS) / 1000) as usize;
    let last = (END_MS / 1000) as usize;
    let peak = a[from..last].iter().copied().max().unwrap_or(0);
    // Back to steady: from this second on, every 1 s rate within
    // [0.95 × steady min, 1.05 × steady max].
    let in_range = |x: u32| {
        f64::from(x) <= 1.05 * f64::from(steady_max) && f64::from(x) >= 0.95 * f64::from(steady_min)
    };
    let mut back = None;
    for s in (back_from..last).rev() {
        if !in_range(a[s]) {
            break;
        }
        back = Some((s - back_from) as u64 * 1000);
    }
    let window = from..((OUTAGE_AT_MS + OUTAGE_MS + RECOVERY_MS) / 1000) as usize;
    let per_reporter = f64::from(a[window].iter().sum::<u32>()) / n as f64;
    Outcome {
        steady,
        steady_max,
        peak,
        back_ms: back,
        per_reporter,
        redelivered_99_ms: sim.redelivered_99,
        per_second: a[from..(from + 45).min(last)].to_vec(),
    }
}

/// Print the reporter fleet: tidings and the naive reporter.
pub fn print(n: usize) {
    println!(
        "\nReporter fleet: {n} reporters, a report every {} s (pages load over one interval), \
         {} s of refused connections at t = {} s, then capacity 1.5x the steady rate (over \
         capacity: 503, no Retry-After); every answer after {RTT_MS} ms",
        INTERVAL_MS / 1000,
        OUTAGE_MS / 1000,
        OUTAGE_AT_MS / 1000
    );
    let healthy = (OUTAGE_MS + RECOVERY_MS) as f64 / INTERVAL_MS as f64;
    for (model, name) in [
        (Model::Tidings, "tidings"),
        (Model::KeepAll, "keepAll"),
        (Model::Naive, "naive"),
    ] {
        let r = run(model, n, 11);
        println!(
            "  {name:<9} steady {:.0}/s (1 s max {}/s)  peak {}/s = {:.2} x the steady max  \
             back to steady {:<7} requests/reporter from the outage to +{} s after it {:.1} \
             (healthy {healthy:.1})  99 % of the reporters whose report failed delivered again {}",
            r.steady,
            r.steady_max,
            r.peak,
            f64::from(r.peak) / f64::from(r.steady_max.max(1)),
            super::secs(r.back_ms),
            RECOVERY_MS / 1000,
            r.per_reporter,
            super::secs(r.redelivered_99_ms),
        );
        let ps: Vec<String> = r
            .per_second
            .iter()
            .map(|&x| compact(f64::from(x)))
            .collect();
        println!("      per second from the outage: {}", ps.join(" "));
    }
}
