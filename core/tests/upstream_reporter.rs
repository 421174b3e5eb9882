//! The reporter machine (docs/upstream.md) on virtual time with a seeded RNG: the
//! startup spread, the pace, a failing reporter never faster than a healthy
//! one, supersede and keep-all, server hints, hidden/offline, flush, stop,
//! and a property test over random input sequences.

use proptest::prelude::*;
use tidings_core::engine::{ErrorCode, Reason, ResponseHead, State, TransportError};
use tidings_core::time::{MonoMs, Now};
use tidings_core::upstream::{
    HiddenPolicy, IdempotencyKey, Outcome, ReportAction, ReportConfig, ReportInput, ReportOutcome,
    Reporter,
};

/// Wall time at mono 0: Tue, 14 Nov 2023 22:13:20 GMT.
const WALL0: i64 = 1_700_000_000_000;
const SEED: u64 = 42;

/// One reporter on virtual time; every action logged with its time.
struct Sim {
    r: Reporter,
    now: u64,
    log: Vec<(u64, ReportAction)>,
    wait: Option<MonoMs>,
    /// The attempt in flight: (report, attempt, key header value).
    live: Option<(u64, u32, String)>,
    /// The report being collected.
    collecting: Option<u64>,
}

fn key(report: u64) -> IdempotencyKey {
    IdempotencyKey::new(&format!("key-{report}")).unwrap_or_else(|e| panic!("{e:?}"))
}

fn ok() -> ResponseHead {
    ResponseHead::new(204)
}

impl Sim {
    fn new(config: ReportConfig) -> Sim {
        Sim::seeded(config, SEED)
    }

    fn seeded(config: ReportConfig, seed: u64) -> Sim {
        let mut s = Sim {
            r: Reporter::new(config, seed),
            now: 0,
            log: Vec::new(),
            wait: None,
            live: None,
            collecting: None,
        };
        s.r.handle_start(s.t());
        s.drain();
        s
    }

    fn t(&self) -> Now {
        Now::at(self.now, WALL0 + self.now as i64)
    }

    fn drain(&mut self) -> Vec<ReportAction> {
        let mut out = Vec::new();
        for _ in 0..100 {
            match self.r.poll() {
                ReportAction::Wait { until } => {
                    self.wait = until;
                    return out;
                }
                a => {
                    match &a {
                        ReportAction::Issue { report, issue } => {
                            assert!(self.live.is_none(), "two in flight: {a:?}");
                            let value = issue.headers[0].1.clone();
                            self.live = Some((*report, issue.attempt, value));
                        }
                        ReportAction::Abort { .. } => self.live = None,
                        ReportAction::Collect { report } => self.collecting = Some(*report),
                        _ => {}
                    }
                    self.log.push((self.now, a.clone()));
                    out.push(a);
                }
            }
        }
        panic!("no Wait after 100 actions: {out:?}");
    }

    /// Jump to the armed timer and fire it.
    fn fire(&mut self) -> Vec<ReportAction> {
        let Some(at) = self.wait else {
            panic!("no timer armed at {}", self.now)
        };
        self.now = self.now.max(at.0);
        self.r.handle_timer(self.t());
        self.drain()
    }

    /// Fire timers until the reporter asks for a body.
    fn until_collect(&mut self) -> u64 {
        for _ in 0..20 {
            if let Some(report) = self.collecting {
                return report;
            }
            self.fire();
        }
        panic!("no Collect: {:?}", self.log)
    }

    /// Answer the pending collection with a body (`true`) or nothing.
    fn collect(&mut self, body: bool) -> Vec<ReportAction> {
        let Some(report) = self.collecting.take() else {
            panic!("nothing to collect")
        };
        let k = body.then(|| key(report));
        self.r.handle_collected(self.t(), report, k);
        self.drain()
    }

    fn respond(&mut self, after_ms: u64, head: ResponseHead) -> Vec<ReportAction> {
        self.respond_hint(after_ms, head, None)
    }

    fn respond_hint(
        &mut self,
        after: u64,
        head: ResponseHead,
        hint: Option<u64>,
    ) -> Vec<ReportAction> {
        let Some((report, attempt, _)) = self.live.take() else {
            panic!("nothing in flight at {}", self.now)
        };
        self.now += after;
        self.r
            .handle_response(self.t(), report, attempt, &head, hint);
        self.drain()
    }

    fn fail(&mut self, after_ms: u64) -> Vec<ReportAction> {
        let Some((report, attempt, _)) = self.live.take() else {
            panic!("nothing in flight at {}", self.now)
        };
        self.now += after_ms;
        self.r
            .handle_error(self.t(), report, attempt, TransportError::Network);
        self.drain()
    }

    /// One whole report: next tick, a body, the answer `head` 50 ms later.
    fn report(&mut self, head: ResponseHead) -> u64 {
        self.until_collect();
        let at = self.now;
        self.collect(true);
        self.respond(50, head);
        at
    }

    /// (time, report, attempt, key) of every Issue.
    fn issues(&self) -> Vec<(u64, u64, u32, String)> {
        self.log
            .iter()
            .filter_map(|(t, a)| match a {
                ReportAction::Issue { report, issue } => {
                    Some((*t, *report, issue.attempt, issue.headers[0].1.clone()))
                }
                _ => None,
            })
            .collect()
    }

    fn collects(&self) -> Vec<u64> {
        self.log
            .iter()
            .filter(|(_, a)| matches!(a, ReportAction::Collect { .. }))
            .map(|(t, _)| *t)
            .collect()
    }

    fn settled(&self) -> Vec<(u64, ReportOutcome)> {
        self.log
            .iter()
            .filter_map(|(_, a)| match a {
                ReportAction::Settled { report, outcome } => Some((*report, *outcome)),
                _ => None,
            })
            .collect()
    }

    fn states(&self) -> Vec<(State, Reason, Option<u64>)> {
        self.log
            .iter()
            .filter_map(|(_, a)| match a {
                ReportAction::State {
                    state,
                    reason,
                    delay_ms,
                } => Some((*state, *reason, *delay_ms)),
                _ => None,
            })
            .collect()
    }
}

fn gaps(times: &[u64]) -> Vec<u64> {
    times.windows(2).map(|w| w[1] - w[0]).collect()
}

fn keep_all() -> ReportConfig {
    ReportConfig {
        keep_all: true,
        ..ReportConfig::default()
    }
}

/// The first report goes `U[0, 2w]` after start, `w` = half the interval by
/// default: a fleet's first reports cover one whole interval.
#[test]
fn startup_jitter_spreads_the_first_report_over_one_interval() {
    let s = Sim::new(ReportConfig::default());
    assert_eq!(s.wait, Some(MonoMs(7416)));
    assert_eq!(s.states(), [(State::Waiting, Reason::Start, Some(7416))]);
    let firsts: Vec<u64> = (0..1000)
        .map(|seed| {
            Sim::seeded(ReportConfig::default(), seed)
                .wait
                .map_or(u64::MAX, |w| w.0)
        })
        .collect();
    assert!(firsts.iter().all(|&t| t <= 10_000), "{firsts:?}");
    // Every tenth of the interval gets 100 ± 40 of 1000 first reports.
    for tenth in 0..10 {
        let n = firsts.iter().filter(|&&t| t / 1000 == tenth).count();
        assert!((60..=140).contains(&n), "tenth {tenth}: {n}");
    }
    // A window of 2 s: `U[0, 4 s]`; 0: at once.
    let s = Sim::new(ReportConfig {
        startup_jitter_ms: Some(2000),
        ..ReportConfig::default()
    });
    assert_eq!(s.wait, Some(MonoMs(2967)));
    let s = Sim::new(ReportConfig {
        startup_jitter_ms: Some(0),
        ..ReportConfig::default()
    });
    assert_eq!(s.collects(), [0]);
}

/// Healthy: one report per interval ± 10 %, each with its own key, one
/// attempt each.
#[test]
fn a_healthy_reporter_reports_every_interval_with_a_fresh_key() {
    let mut s = Sim::new(ReportConfig::default());
    let t: Vec<u64> = (0..6).map(|_| s.report(ok())).collect();
    assert_eq!(t, [7416, 16736, 26426, 37166, 47766, 58006]);
    assert!(gaps(&t).iter().all(|g| (9000..=11_000).contains(g)));
    let keys: Vec<String> = s.issues().into_iter().map(|i| i.3).collect();
    assert_eq!(keys[0], "\"key-1\"");
    assert_eq!(keys[5], "\"key-6\"");
    assert_eq!(
        s.states(),
        [
            (State::Waiting, Reason::Start, Some(7416)),
            (State::Connecting, Reason::Start, None),
            (State::Open, Reason::Start, None),
        ]
    );
    let st = s.r.stats();
    assert_eq!(
        (st.reports, st.requests, st.delivered, st.retries),
        (6, 6, 6, 0)
    );
    assert_eq!(st.interval_ms, 10_000);
}

/// A reporter whose every request fails: the first failure keeps its slot
/// (the next report one interval ± 10 % after the failed one, exactly where
/// a healthy reporter would send it), then the gaps grow (floor = the
/// interval, full jitter over a growing step): never faster than healthy.
#[test]
fn a_failing_reporter_never_reports_faster_than_a_healthy_one() {
    let mut s = Sim::new(ReportConfig::default());
    for _ in 0..8 {
        s.until_collect();
        s.collect(true);
        s.fail(1);
    }
    let t: Vec<u64> = s.issues().iter().map(|i| i.0).collect();
    // The healthy reporter of the same seed: 9320, 9690, … (first gap equal).
    // From the 5th failure in a row the circuit breaker holds each request
    // for its cool-down, U[15 s, 45 s] (before it: 15 322, 17 929, 40 636).
    assert_eq!(
        gaps(&t),
        [9320, 10_870, 10_681, 11_973, 21_104, 35_670, 33_596]
    );
    assert!(gaps(&t).iter().all(|&g| g >= 9000));
    assert_eq!(
        s.log
            .iter()
            .find(|(_, a)| matches!(a, ReportAction::Error { .. })),
        Some(&(
            7417,
            ReportAction::Error {
                code: ErrorCode::NetworkOrCors,
                status: None,
                retry_in_ms: Some(9319),
                fatal: false
            }
        ))
    );
    // A long outage: after 20 more failures the gaps reach tens of seconds.
    for _ in 0..20 {
        s.until_collect();
        s.collect(true);
        s.fail(1);
    }
    let t: Vec<u64> = s.issues().iter().map(|i| i.0).collect();
    let late = gaps(&t[t.len() - 11..]);
    let mean = late.iter().sum::<u64>() / 10;
    assert!(mean > 25_000, "{late:?}");
    assert!(late.iter().all(|&g| g <= 71_001), "{late:?}");
    // One success resets the count: the next failure keeps its slot again.
    s.until_collect();
    s.collect(true);
    s.respond(50, ok());
    let before = s.issues().len();
    s.until_collect();
    s.collect(true);
    s.fail(1);
    s.until_collect();
    let slot = s.now - s.issues()[before].0;
    assert!((9000..=11_000).contains(&slot), "{slot}");
}

/// Supersede (default): the fresh body replaces the report waiting for its
/// retry; that report's key is never sent again.
#[test]
fn a_newer_report_supersedes_a_pending_retry() {
    let mut s = Sim::new(ReportConfig::default());
    s.until_collect();
    s.collect(true);
    s.respond(50, ResponseHead::new(503));
    let r2 = s.until_collect();
    // Its own slot, one interval ± 10 % after the failed report.
    assert_eq!((r2, s.now), (2, 16_736));
    s.collect(true);
    s.respond(50, ok());
    let issues = s.issues();
    assert_eq!(
        issues
            .iter()
            .map(|i| (i.1, i.2, i.3.as_str()))
            .collect::<Vec<_>>(),
        [(1, 1, "\"key-1\""), (2, 1, "\"key-2\"")]
    );
    assert_eq!(
        s.settled(),
        [
            (1, ReportOutcome::Superseded),
            (
                2,
                ReportOutcome::Delivered {
                    status: 204,
                    attempts: 1
                }
            )
        ]
    );
    assert_eq!(s.r.stats().superseded, 1);
}

/// Supersede mode, nothing new to report at the retry's turn: the waiting
/// report goes again with ITS key (the server replays or applies it once).
#[test]
fn nothing_new_sends_the_waiting_report_again_with_its_key() {
    let mut s = Sim::new(ReportConfig::default());
    s.until_collect();
    s.collect(true);
    s.fail(50);
    s.until_collect();
    assert_eq!(s.now, 16_736);
    s.collect(false);
    // The retry itself keeps the Sender's floor: one interval after the
    // failure (10 000 + U[0, 500] ms).
    s.fire();
    let issues = s.issues();
    assert_eq!(
        issues
            .iter()
            .map(|i| (i.0, i.1, i.2, i.3.as_str()))
            .collect::<Vec<_>>(),
        [(7416, 1, 1, "\"key-1\""), (17_466, 1, 2, "\"key-1\"")]
    );
    s.respond(50, ok());
    assert_eq!(
        s.settled(),
        [(
            1,
            ReportOutcome::Delivered {
                status: 204,
                attempts: 2
            }
        )]
    );
    let st = s.r.stats();
    assert_eq!((st.skipped, st.retries, st.delivered), (1, 1, 1));
}

/// `keep_all`: later bodies queue while the head is retried with its key;
/// after the head is delivered the queue drains one at a time,
/// `min + U[0, interval − min]` apart.
#[test]
fn keep_all_delivers_every_report_in_order() {
    let mut s = Sim::new(keep_all());
    s.until_collect();
    s.collect(true);
    s.fail(50);
    // The retry waits an interval; meanwhile the next tick collects.
    s.until_collect();
    s.collect(true);
    assert_eq!(s.issues().len(), 1);
    s.fire();
    let i = s.issues();
    assert_eq!(
        (i[1].0, i[1].1, i[1].2, i[1].3.as_str()),
        (17_466, 1, 2, "\"key-1\"")
    );
    s.respond(50, ok());
    s.fire();
    s.respond(50, ok());
    let i: Vec<(u64, u64, u32)> = s.issues().iter().map(|i| (i.0, i.1, i.2)).collect();
    // Report 2 goes 1342 ms after report 1's answer at 17 516: in
    // [min, interval] = [1 s, 10 s].
    assert_eq!(i, [(7416, 1, 1), (17_466, 1, 2), (18_858, 2, 1)]);
    assert_eq!(s.settled().iter().map(|s| s.0).collect::<Vec<_>>(), [1, 2]);
}

/// Server hints (`X-Poll-Interval`, `_polling.next_interval_ms`) set the
/// interval within `[min, max]`: a server can slow reporters down, never
/// make them hammer.
#[test]
fn server_interval_hints_are_obeyed_within_the_bounds() {
    let mut s = Sim::new(ReportConfig::default());
    s.until_collect();
    s.collect(true);
    s.respond(50, ok().with_header("X-Poll-Interval", "30"));
    assert_eq!(s.r.stats().interval_ms, 30_000);
    let t1 = s.now;
    s.until_collect();
    // 30 s ± 10 % after the tick at 7416.
    assert_eq!((t1, s.now), (7466, 7416 + 27_960));
    s.collect(true);
    s.respond_hint(50, ok(), Some(60_000));
    assert_eq!(s.r.stats().interval_ms, 60_000);
    s.until_collect();
    s.collect(true);
    s.respond_hint(50, ok().with_header("X-Poll-Interval", "0.01"), None);
    assert_eq!(s.r.stats().interval_ms, 1000);
    s.until_collect();
    s.collect(true);
    s.respond(50, ok().with_header("X-Poll-Interval", "86400"));
    assert_eq!(s.r.stats().interval_ms, 300_000);
    assert_eq!(
        s.states().last(),
        Some(&(State::Open, Reason::ServerHint, None)),
        "the state does not flap on a hint"
    );
}

/// 503 with `Retry-After: 120`: the next request is not before 120 s, in
/// both modes; the `error` event says when.
#[test]
fn retry_after_holds_the_next_report_back() {
    for keep in [false, true] {
        let mut s = Sim::new(ReportConfig {
            keep_all: keep,
            ..ReportConfig::default()
        });
        s.until_collect();
        s.collect(true);
        s.respond(50, ResponseHead::new(503).with_header("Retry-After", "120"));
        let failed_at = s.now;
        let err = s.log.iter().rev().find_map(|(_, a)| match a {
            ReportAction::Error { retry_in_ms, .. } => *retry_in_ms,
            _ => None,
        });
        let delay = err.unwrap_or(0);
        assert!((120_000..=121_000).contains(&delay), "{delay}");
        assert!(s
            .states()
            .contains(&(State::Waiting, Reason::RetryAfter, Some(delay))));
        // Tick and flush cannot bring it forward.
        for _ in 0..30 {
            if s.issues().len() > 1 {
                break;
            }
            if let Some(r) = s.collecting {
                let _ = r;
                s.collect(true);
            } else {
                s.r.handle_flush(s.t());
                s.drain();
                if s.issues().len() == 1 {
                    s.fire();
                }
            }
        }
        let second = s.issues()[1].0;
        assert_eq!(second, failed_at + delay, "keep_all {keep}");
    }
}

/// Hidden (default `Stop`): nothing is collected; visible again: the missed
/// report `U[0, 250)` ms later. `Every`: a slower pace while hidden.
#[test]
fn hidden_stops_or_slows_the_reporter() {
    let mut s = Sim::new(ReportConfig::default());
    s.report(ok());
    s.r.handle_visibility(s.t(), false);
    s.drain();
    assert_eq!(s.wait, None);
    assert_eq!(
        s.states().last(),
        Some(&(State::Paused, Reason::Hidden, None))
    );
    s.now += 600_000;
    s.r.handle_visibility(s.t(), true);
    s.drain();
    assert_eq!(
        s.states().last(),
        Some(&(State::Open, Reason::Visible, None))
    );
    let r = s.until_collect();
    assert_eq!((r, s.now - 607_466), (2, 86));
    assert_eq!(s.collects().len(), 2);

    let mut s = Sim::new(ReportConfig {
        hidden: HiddenPolicy::Every {
            interval_ms: 60_000,
        },
        ..ReportConfig::default()
    });
    s.report(ok());
    s.r.handle_visibility(s.t(), false);
    s.drain();
    let t: Vec<u64> = (0..4).map(|_| s.report(ok())).collect();
    assert_eq!(gaps(&t), [58_140, 64_440, 63_600]);
    assert!(gaps(&t).iter().all(|g| (54_000..=66_000).contains(g)));
    assert_eq!(s.r.stats().interval_ms, 60_000);
}

/// Offline: nothing collected nor sent; online: the missed report within
/// `[0, 250)` ms. A report waiting for its retry waits for `online` too.
#[test]
fn offline_sends_nothing() {
    let mut s = Sim::new(ReportConfig::default());
    s.report(ok());
    s.r.handle_online(s.t(), false);
    s.drain();
    assert_eq!(s.wait, None);
    assert_eq!(
        s.states().last(),
        Some(&(State::Paused, Reason::Offline, None))
    );
    s.now += 100_000;
    s.r.handle_online(s.t(), true);
    s.drain();
    s.until_collect();
    assert_eq!(s.now - 107_466, 86);

    // keep_all: the head's retry waits for online.
    let mut s = Sim::new(keep_all());
    s.until_collect();
    s.collect(true);
    s.fail(50);
    s.r.handle_online(s.t(), false);
    s.drain();
    assert_eq!(s.wait, None);
    s.now += 50_000;
    s.r.handle_online(s.t(), true);
    s.drain();
    while s.issues().len() < 2 {
        s.fire();
        if s.collecting.is_some() {
            s.collect(true);
        }
    }
    let i = s.issues();
    assert_eq!(i.len(), 2);
    assert!((57_466..57_716).contains(&i[1].0), "{i:?}");
    assert_eq!(i[1].3, "\"key-1\"");
}

/// `flush()`: the next report at once, but never within `interval.min_ms`
/// of the last request, and a report in flight is answered first.
#[test]
fn flush_reports_now_within_the_pace() {
    let mut s = Sim::new(ReportConfig::default());
    s.report(ok());
    s.r.handle_flush(s.t());
    s.drain();
    // The last request went at 7416: not before 8416.
    s.until_collect();
    assert_eq!(s.now, 8416);
    s.collect(true);
    // In flight: a flush waits for the answer.
    s.r.handle_flush(s.t());
    s.drain();
    assert_eq!(s.collecting, None);
    s.now += 3000;
    s.respond(0, ok());
    s.until_collect();
    assert_eq!(s.now, 11_416);
    let st = s.r.stats();
    assert_eq!((st.reports, st.delivered), (2, 2));
}

/// A report whose answer takes longer than the interval is not aborted for
/// the next one: that one is collected when the answer came.
#[test]
fn a_slow_answer_is_not_superseded() {
    let mut s = Sim::new(ReportConfig::default());
    s.until_collect();
    s.collect(true);
    // The tick at +9320 passes while the report is in flight.
    assert_eq!(s.wait, Some(MonoMs(7416 + 30_000)));
    s.respond(15_000, ok());
    let r = s.until_collect();
    assert_eq!((r, s.now), (2, 22_416));
    assert!(!s
        .log
        .iter()
        .any(|(_, a)| matches!(a, ReportAction::Abort { .. })));
}

/// A permanent answer stops the reporter with a fatal error; nothing follows.
#[test]
fn a_permanent_answer_stops_the_reporter() {
    let mut s = Sim::new(ReportConfig::default());
    s.until_collect();
    s.collect(true);
    s.respond(50, ResponseHead::new(404));
    assert_eq!(s.r.state(), State::Closed);
    assert!(s.log.iter().any(|(_, a)| *a
        == ReportAction::Error {
            code: ErrorCode::HttpStatus,
            status: Some(404),
            retry_in_ms: None,
            fatal: true
        }));
    assert_eq!(
        s.states().last(),
        Some(&(State::Closed, Reason::PermanentError, None))
    );
    assert_eq!(s.wait, None);
    s.r.handle_flush(s.t());
    assert_eq!(s.drain(), []);
    assert!(matches!(
        s.settled()[..],
        [(
            1,
            ReportOutcome::Failed(Outcome::Err {
                status: Some(404),
                ..
            })
        )]
    ));
}

/// `stop()`: the request in flight is aborted, every report settles
/// `Stopped`, and nothing follows.
#[test]
fn stop_aborts_and_settles_everything() {
    let mut s = Sim::new(keep_all());
    s.until_collect();
    s.collect(true);
    s.fail(50);
    s.until_collect();
    s.collect(true);
    s.fire();
    assert!(s.live.is_some());
    s.r.handle_stop(s.t());
    let out = s.drain();
    assert_eq!(
        out,
        [
            ReportAction::Abort {
                report: 1,
                attempt: 2
            },
            ReportAction::Settled {
                report: 1,
                outcome: ReportOutcome::Stopped
            },
            ReportAction::Settled {
                report: 2,
                outcome: ReportOutcome::Stopped
            },
            ReportAction::State {
                state: State::Closed,
                reason: Reason::ClosedByUser,
                delay_ms: None
            },
        ]
    );
    assert_eq!(s.wait, None);
    s.now += 1_000_000;
    s.r.handle_timer(s.t());
    assert_eq!(s.drain(), []);
}

/// `keep_all` keeps at most `max_queued` reports, dropping the oldest.
#[test]
fn keep_all_queue_is_bounded() {
    let mut s = Sim::new(ReportConfig {
        max_queued: 2,
        ..keep_all()
    });
    s.until_collect();
    s.collect(true);
    s.respond(50, ResponseHead::new(503).with_header("Retry-After", "300"));
    for _ in 0..4 {
        s.until_collect();
        s.collect(true);
    }
    assert_eq!(
        s.settled(),
        [(2, ReportOutcome::Dropped), (3, ReportOutcome::Dropped)]
    );
    assert_eq!(s.issues().len(), 1);
}

#[derive(Clone, Debug)]
enum Op {
    Advance(u64),
    Timer,
    Collect(bool),
    Respond(u16, bool),
    Error,
    Visible(bool),
    Online(bool),
    Flush,
    Stop,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        40 => (0u64..40_000).prop_map(Op::Advance),
        60 => Just(Op::Timer),
        40 => any::<bool>().prop_map(Op::Collect),
        40 => (prop_oneof![Just(200u16), Just(204), Just(503), Just(429), Just(500), Just(400)], any::<bool>())
            .prop_map(|(s, h)| Op::Respond(s, h)),
        20 => Just(Op::Error),
        10 => any::<bool>().prop_map(Op::Visible),
        10 => any::<bool>().prop_map(Op::Online),
        10 => Just(Op::Flush),
        1 => Just(Op::Stop),
    ]
}

proptest! {
    /// Any input sequence: no panic, at most one request in flight (the Sim
    /// asserts it), no request while offline, every key used by one report
    /// only, and no two requests closer than `min_ms / 2` (the keep-all
    /// queue's least gap).
    #[test]
    fn any_input_keeps_the_rules(keep in any::<bool>(), seed in any::<u64>(), ops in proptest::collection::vec(op(), 0..200)) {
        let mut s = Sim::seeded(ReportConfig { keep_all: keep, ..ReportConfig::default() }, seed);
        let mut online = true;
        for op in ops {
            let before = s.issues().len();
            match op {
                Op::Advance(ms) => s.now += ms,
                Op::Timer => { if s.wait.is_some() { s.fire(); } }
                Op::Collect(body) => { if s.collecting.is_some() { s.collect(body); } }
                Op::Respond(status, hint) => {
                    if s.live.is_some() {
                        let mut h = ResponseHead::new(status);
                        if hint { h = h.with_header("Retry-After", "2").with_header("X-Poll-Interval", "0"); }
                        s.respond(10, h);
                    }
                }
                Op::Error => { if s.live.is_some() { s.fail(10); } }
                Op::Visible(v) => { s.r.handle_visibility(s.t(), v); s.drain(); }
                Op::Online(o) => { online = o; s.r.handle_online(s.t(), o); s.drain(); }
                Op::Flush => { s.r.handle_flush(s.t()); s.drain(); }
                Op::Stop => { s.r.handle_stop(s.t()); s.drain(); }
            }
            if !online {
                prop_assert_eq!(s.issues().len(), before, "a request while offline");
            }
        }
        let issues = s.issues();
        for w in issues.windows(2) {
            prop_assert!(w[1].0 - w[0].0 >= 500, "{:?}", w);
        }
        for a in &issues {
            for b in &issues {
                prop_assert!((a.1 == b.1) == (a.3 == b.3), "{:?} {:?}", a, b);
            }
        }
    }
}

/// A server asking for a retry sooner than the interval (`Retry-After: 2`)
/// does not make a reporter faster than a healthy one: the next report
/// still waits for its slot (the Sender's floor is the interval).
#[test]
fn a_short_retry_after_never_beats_the_interval() {
    for keep in [false, true] {
        let mut s = Sim::new(ReportConfig {
            keep_all: keep,
            ..ReportConfig::default()
        });
        s.until_collect();
        s.collect(true);
        s.respond(50, ResponseHead::new(503).with_header("Retry-After", "2"));
        while s.issues().len() < 2 {
            s.fire();
            if s.collecting.is_some() {
                s.collect(true);
            }
        }
        let gap = s.issues()[1].0 - s.issues()[0].0;
        assert!(gap >= 9000, "keep_all {keep}: {gap}");
    }
}

/// Adaptive modes: "nothing to report" is an unchanged answer (slower), a
/// body a changed one (faster), within `[min, max]`.
#[test]
fn adaptive_interval_follows_what_the_task_has() {
    let mut s = Sim::new(ReportConfig {
        interval: tidings_core::policy::interval::IntervalConfig {
            mode: tidings_core::policy::interval::IntervalMode::Exponential,
            initial_ms: 10_000,
            min_ms: 1000,
            max_ms: 60_000,
        },
        ..ReportConfig::default()
    });
    let mut seen = Vec::new();
    for _ in 0..4 {
        s.until_collect();
        s.collect(false);
        seen.push(s.r.stats().interval_ms);
    }
    for _ in 0..3 {
        s.until_collect();
        s.collect(true);
        s.respond(50, ok());
        seen.push(s.r.stats().interval_ms);
    }
    assert_eq!(seen, [20_000, 40_000, 60_000, 60_000, 30_000, 15_000, 7500]);
    assert_eq!(s.r.stats().skipped, 4);
}

/// `keep_all`: a queued report's `deadline_ms` runs from its collection (the
/// report's "call", as for an `ordered` send queued behind another of its
/// URL, `Sender::handle_queued`), not from when its turn comes: a report
/// that waited out its deadline behind a head held offline is dropped
/// (`Failed`) and never sent.
#[test]
fn keep_all_deadline_runs_from_collection() {
    let mut config = keep_all();
    config.send.deadline_ms = Some(30_000);
    let mut s = Sim::new(config);
    s.until_collect();
    s.collect(true);
    s.fail(50);
    s.until_collect();
    let collected = s.now;
    s.collect(true);
    s.r.handle_online(s.t(), false);
    s.drain();
    // The head's own deadline (from its collection at 7416) passes offline.
    s.fire();
    assert_eq!(s.now, 37_416);
    s.now = collected + 40_000;
    s.r.handle_online(s.t(), true);
    s.drain();
    for _ in 0..3 {
        if s.wait.is_some() {
            s.fire();
        }
        if s.collecting.is_some() {
            s.collect(false);
        }
    }
    let reports: Vec<u64> = s.issues().iter().map(|i| i.1).collect();
    assert!(
        !reports.contains(&2),
        "report 2 sent past its deadline: {:?}",
        s.issues()
    );
    let settled = s.settled();
    assert!(
        matches!(
            settled.iter().find(|r| r.0 == 2),
            Some((2, ReportOutcome::Failed(_)))
        ),
        "{settled:?}"
    );
}

/// The reporter's circuit breaker (the connection engine's `Breaker`, same
/// defaults: 5 failures in a row, cool-down `U[15 s, 45 s]`, never shorter
/// than the backoff): after the 5th failed attempt no request before the
/// cool-down ends, then one probe (`breaker-probe`); a failed probe opens
/// it again, a delivered one closes it.
#[test]
fn the_breaker_opens_after_five_failures_then_lets_one_probe_through() {
    let mut s = Sim::new(ReportConfig::default());
    for _ in 0..5 {
        s.until_collect();
        s.collect(true);
        s.fail(1);
    }
    let opened_at = s.now;
    let last_error = s.log.iter().rev().find_map(|(_, a)| match a {
        ReportAction::Error { retry_in_ms, .. } => Some(*retry_in_ms),
        _ => None,
    });
    assert_eq!(last_error, Some(Some(COOL_DOWN_1)));
    assert_eq!(
        s.states().last(),
        Some(&(State::Waiting, Reason::BreakerOpen, Some(COOL_DOWN_1)))
    );
    // Nothing before the cool-down ends; then the probe, reason breaker-probe.
    s.until_collect();
    s.collect(true);
    let probe = s.issues().last().cloned().unwrap_or_default();
    assert_eq!(probe.0 - opened_at, COOL_DOWN_1);
    assert_eq!(
        s.states().last(),
        Some(&(State::Connecting, Reason::BreakerProbe, None))
    );
    // The probe fails: open again at once (one failure, not five).
    s.fail(1);
    let reopened_at = s.now;
    assert_eq!(
        s.states().last(),
        Some(&(State::Waiting, Reason::BreakerOpen, Some(COOL_DOWN_2)))
    );
    s.until_collect();
    s.collect(true);
    assert_eq!(
        s.issues().last().map(|i| i.0 - reopened_at),
        Some(COOL_DOWN_2)
    );
    // Delivered: closed; the next failure keeps the reporter's own slot.
    s.respond(50, ok());
    assert_eq!(s.states().last().map(|x| x.0), Some(State::Open));
    for _ in 0..4 {
        s.until_collect();
        s.collect(true);
        s.fail(1);
        assert_ne!(s.states().last().map(|x| x.1), Some(Reason::BreakerOpen));
    }
    s.until_collect();
    s.collect(true);
    s.fail(1);
    assert_eq!(s.states().last().map(|x| x.1), Some(Reason::BreakerOpen));
    for cool_down in [COOL_DOWN_1, COOL_DOWN_2] {
        assert!((15_000..=45_000).contains(&cool_down), "{cool_down}");
    }
}

/// The cool-downs of the seed (`U[15 000, 45 000]` ms).
const COOL_DOWN_1: u64 = 21_103;
const COOL_DOWN_2: u64 = 35_669;

/// A server's wait (`Retry-After`) is the server pacing its own load: such
/// answers never open the breaker, as for subscriptions.
#[test]
fn server_paced_failures_never_open_the_breaker() {
    let mut s = Sim::new(ReportConfig::default());
    for _ in 0..7 {
        s.until_collect();
        s.collect(true);
        s.respond(10, ResponseHead::new(503).with_header("Retry-After", "2"));
    }
    assert!(!s
        .states()
        .iter()
        .any(|x| x.1 == Reason::BreakerOpen || x.1 == Reason::BreakerProbe));
}

/// With `keep_all` the breaker holds the head's own retries back too.
#[test]
fn the_breaker_holds_keep_all_retries_back() {
    let mut s = Sim::new(keep_all());
    s.until_collect();
    s.collect(true);
    for _ in 0..5 {
        while s.live.is_none() {
            s.fire();
            if s.collecting.is_some() {
                s.collect(false);
            }
        }
        s.fail(1);
    }
    let opened_at = s.now;
    let Some(&(_, Reason::BreakerOpen, Some(wait))) = s.states().last() else {
        panic!("{:?}", s.states())
    };
    assert!((30_000..=45_000).contains(&wait), "{wait}");
    while s.live.is_none() {
        s.fire();
        if s.collecting.is_some() {
            s.collect(false);
        }
    }
    let retry = s.issues().last().cloned().unwrap_or_default();
    assert_eq!((retry.1, retry.2), (1, 6), "the head's 6th attempt");
    assert_eq!(retry.0 - opened_at, wait);
}

/// The clock guard, through `handle`: a start reported with a monotonic
/// time before an earlier fact's happens at the latest time seen, so the
/// first report's spread runs from there (7416 ms after it, as in
/// `startup_jitter_spreads_the_first_report_over_one_interval`).
#[test]
fn a_time_going_backwards_is_taken_as_the_latest_seen() {
    let mut r = Reporter::new(ReportConfig::default(), SEED);
    r.handle(Now::at(20_000, WALL0), ReportInput::Timer);
    assert_eq!(r.poll(), ReportAction::Wait { until: None });
    r.handle(Now::at(0, WALL0), ReportInput::Start);
    let state = ReportAction::State {
        state: State::Waiting,
        reason: Reason::Start,
        delay_ms: Some(7416),
    };
    assert_eq!(r.poll(), state);
    let until = Some(MonoMs(27_416));
    assert_eq!(r.poll(), ReportAction::Wait { until });
    r.handle(Now::at(5_000, WALL0), ReportInput::Timer);
    assert_eq!(r.poll(), ReportAction::Wait { until });
}

/// The lifecycle, through `handle`: after `stop` no fact does anything (a
/// start, a collected body, a flush, a timer, a second stop).
#[test]
fn every_fact_after_stop_is_ignored() {
    let mut s = Sim::new(ReportConfig::default());
    let report = s.until_collect();
    s.r.handle(s.t(), ReportInput::Stop);
    let closed = ReportAction::State {
        state: State::Closed,
        reason: Reason::ClosedByUser,
        delay_ms: None,
    };
    assert_eq!(s.drain(), [closed]);
    for input in [
        ReportInput::Start,
        ReportInput::Collected(report, Some(key(report))),
        ReportInput::Flush,
        ReportInput::Timer,
        ReportInput::Stop,
    ] {
        s.now += 1000;
        s.r.handle(s.t(), input);
        assert_eq!((s.drain(), s.wait), (vec![], None));
    }
    assert_eq!(s.r.state(), State::Closed);
}

/// Hidden while a report is in flight: the report finishes, and its answer
/// must not say `open` — the reporter stays paused until visible, where it
/// says `open` again. (The server applied the report before its answer
/// reached the page, so the page went hidden between the two.)
#[test]
fn an_answer_that_arrives_while_hidden_keeps_the_reporter_paused() {
    let mut s = Sim::new(ReportConfig::default());
    s.report(ok());
    s.until_collect();
    s.collect(true);
    assert!(s.live.is_some(), "{:?}", s.log);
    s.now += 10;
    s.r.handle_visibility(s.t(), false);
    s.drain();
    assert_eq!(s.r.state(), State::Paused);
    s.respond(40, ok());
    assert_eq!(s.r.state(), State::Paused, "{:?}", s.states());
    assert_eq!(s.wait, None);
    assert_eq!(s.r.stats().delivered, 2);
    s.now += 5_000;
    s.r.handle_visibility(s.t(), true);
    s.drain();
    assert_eq!(s.r.state(), State::Open);
    assert_eq!(
        s.states().last(),
        Some(&(State::Open, Reason::Visible, None))
    );
}

/// Hidden while a report is in flight, and the report fails: the state stays
/// paused (no `waiting` while nothing may be sent); visible tells the wait.
#[test]
fn a_failure_that_arrives_while_hidden_keeps_the_reporter_paused() {
    let mut s = Sim::new(ReportConfig::default());
    s.report(ok());
    s.until_collect();
    s.collect(true);
    s.now += 10;
    s.r.handle_visibility(s.t(), false);
    s.drain();
    s.fail(40);
    assert_eq!(s.r.state(), State::Paused, "{:?}", s.states());
    assert_eq!(s.r.stats().transient_failures, 1);
    s.now += 5_000;
    s.r.handle_visibility(s.t(), true);
    s.drain();
    assert_ne!(s.r.state(), State::Paused);
    assert_ne!(
        s.r.state(),
        State::Open,
        "a failed report is owed: {:?}",
        s.states()
    );
}
