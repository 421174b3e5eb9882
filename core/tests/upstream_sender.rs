//! The upstream sender (docs/upstream.md) on virtual time with a seeded RNG: exact
//! retry delays per transient class, the server's waits, permanent answers,
//! offline/online, abort, the deadline, `max_attempts`, the key on every
//! attempt, and a property test over random input sequences.

use proptest::prelude::*;
use tidings_core::engine::{ErrorCode, ResponseHead, TransportError};
use tidings_core::time::{MonoMs, Now};
use tidings_core::upstream::{
    is_forbidden_request_header, is_replayed, IdempotencyKey, Issue, Ordered, Outcome, SendAction,
    SendConfig, SendInput, Sender,
};

/// Wall time at mono 0: Tue, 14 Nov 2023 22:13:20 GMT.
const WALL0: i64 = 1_700_000_000_000;
const SEED: u64 = 42;
const KEY: &str = "8e03978e-40d5-43e8-bc93-6894a57f9324";

/// One sender on virtual time; every action logged with its time.
struct Sim {
    s: Sender,
    now: u64,
    log: Vec<(u64, SendAction)>,
    wait: Option<MonoMs>,
}

impl Sim {
    fn new(config: SendConfig) -> Sim {
        let key = IdempotencyKey::new(KEY).unwrap_or_else(|e| panic!("{e:?}"));
        Sim {
            s: Sender::new(config, &key, SEED),
            now: 0,
            log: Vec::new(),
            wait: None,
        }
    }

    fn t(&self) -> Now {
        Now::at(self.now, WALL0 + self.now as i64)
    }

    fn drain(&mut self) -> Vec<SendAction> {
        let mut out = Vec::new();
        for _ in 0..100 {
            match self.s.poll() {
                SendAction::Wait { until } => {
                    self.wait = until;
                    return out;
                }
                a => {
                    self.log.push((self.now, a.clone()));
                    out.push(a);
                }
            }
        }
        panic!("no Wait after 100 actions: {out:?}");
    }

    fn start(&mut self) -> Vec<SendAction> {
        self.s.handle_start(self.t());
        self.drain()
    }

    fn respond(&mut self, after_ms: u64, head: ResponseHead) -> Vec<SendAction> {
        self.now += after_ms;
        let attempt = self.s.attempts();
        self.s.handle_response(self.t(), attempt, &head);
        self.drain()
    }

    fn error(&mut self, after_ms: u64, e: TransportError) -> Vec<SendAction> {
        self.now += after_ms;
        let attempt = self.s.attempts();
        self.s.handle_error(self.t(), attempt, e);
        self.drain()
    }

    /// Jump to the armed timer and fire it.
    fn fire(&mut self) -> Vec<SendAction> {
        let Some(at) = self.wait else {
            panic!("no timer armed at {}", self.now)
        };
        self.now = self.now.max(at.0);
        self.s.handle_timer(self.t());
        self.drain()
    }

    fn online(&mut self, at: u64, online: bool) -> Vec<SendAction> {
        self.now = at;
        self.s.handle_online(self.t(), online);
        self.drain()
    }

    /// The times of every `Issue`.
    fn issue_times(&self) -> Vec<u64> {
        self.log
            .iter()
            .filter(|(_, a)| matches!(a, SendAction::Issue(_)))
            .map(|(t, _)| *t)
            .collect()
    }

    fn settles(&self) -> Vec<Outcome> {
        self.log
            .iter()
            .filter_map(|(_, a)| match a {
                SendAction::Settle(o) => Some(*o),
                _ => None,
            })
            .collect()
    }
}

fn issued(actions: &[SendAction]) -> Vec<&Issue> {
    actions
        .iter()
        .filter_map(|a| match a {
            SendAction::Issue(i) => Some(i),
            _ => None,
        })
        .collect()
}

fn head(status: u16) -> ResponseHead {
    ResponseHead::new(status)
}

fn no_deadline_no_timeout() -> SendConfig {
    SendConfig {
        timeout_ms: 0,
        ..SendConfig::default()
    }
}

/// Gaps between the ends of failed attempts and the next `Issue`.
fn retry_gaps(fail: impl Fn(&mut Sim) -> Vec<SendAction>, n: usize) -> Vec<u64> {
    let mut sim = Sim::new(no_deadline_no_timeout());
    assert_eq!(issued(&sim.start()).len(), 1);
    let mut gaps = Vec::new();
    for _ in 0..n {
        fail(&mut sim);
        let failed_at = sim.now;
        let out = sim.fire();
        assert_eq!(issued(&out).len(), 1, "{out:?}");
        gaps.push(sim.now - failed_at);
    }
    gaps
}

/// Every transient class is retried after the engine's full-jitter backoff:
/// floor 1000 + U[0, 500 · 2^k] with seed 42 (the same sequence as
/// `policy::backoff`'s `full_jitter_exact_with_seed`), 429 with the step
/// doubled.
#[test]
fn each_transient_class_retried_with_exact_full_jitter_delays() {
    let plain = [1371, 1160, 1557, 2377];
    for status in [500, 502, 503, 504, 408, 425] {
        let gaps = retry_gaps(|s| s.respond(20, head(status)), 4);
        assert_eq!(gaps, plain, "status {status}");
    }
    for e in [
        TransportError::Network,
        TransportError::NetworkOrCors,
        TransportError::Timeout,
        TransportError::Aborted,
    ] {
        assert_eq!(retry_gaps(|s| s.error(20, e), 4), plain, "{e:?}");
    }
    // 429 without a hint: base 500 · 2 · 2^k.
    assert_eq!(
        retry_gaps(|s| s.respond(20, head(429)), 4),
        [1742, 1319, 2114, 3753]
    );
}

/// 409 is retried only while the server says the key's first request is
/// still in flight, by a `Retry-After` (draft-ietf-httpapi-idempotency-key-
/// header §2.7): after that wait, as asked. Any other 409 (a rate-limit
/// reset alone does not count: some servers send one on every answer) is a
/// conflict no retry cures: settled `conflict` at once.
#[test]
fn conflict_is_retried_only_with_retry_after() {
    let mut sim = Sim::new(no_deadline_no_timeout());
    sim.start();
    sim.respond(10, head(409).with_header("Retry-After", "2"));
    assert_eq!(sim.wait, Some(MonoMs(10 + 2000 + 149)));
    assert_eq!(issued(&sim.fire()).len(), 1);
    let out = sim.respond(10, head(409));
    let conflict = |attempts| Outcome::Err {
        code: ErrorCode::Conflict,
        status: Some(409),
        attempts,
    };
    assert_eq!(out, [SendAction::Settle(conflict(2))]);
    assert_eq!(sim.wait, None);
    let mut sim = Sim::new(no_deadline_no_timeout());
    sim.start();
    let out = sim.respond(10, head(409).with_header("RateLimit-Reset", "5"));
    assert_eq!(out, [SendAction::Settle(conflict(1))]);
    assert_eq!(ErrorCode::Conflict.as_str(), "conflict");
}

/// A Durable Stream closed to appends answers 409 with `Stream-Closed: true`
/// (PROTOCOL.md §5.2): `stream-closed` at once, not retried even with a
/// `Retry-After` (a closed stream stays closed); the flag's grammar is
/// `Idempotent-Replayed`'s (`TRUE`, padded). Without it, `conflict`.
#[test]
fn conflict_on_a_closed_stream_is_stream_closed() {
    let settled = |h: ResponseHead| {
        let mut sim = Sim::new(no_deadline_no_timeout());
        sim.start();
        sim.respond(10, h)
    };
    let closed = |attempts| Outcome::Err {
        code: ErrorCode::StreamClosed,
        status: Some(409),
        attempts,
    };
    for v in ["true", " TRUE "] {
        let out = settled(head(409).with_header("Stream-Closed", v));
        assert_eq!(out, [SendAction::Settle(closed(1))], "{v:?}");
    }
    let out = settled(
        head(409)
            .with_header("Stream-Closed", "true")
            .with_header("Retry-After", "2"),
    );
    assert_eq!(out, [SendAction::Settle(closed(1))]);
    let out = settled(head(409).with_header("Stream-Closed", "false"));
    assert!(matches!(
        out.as_slice(),
        [SendAction::Settle(Outcome::Err {
            code: ErrorCode::Conflict,
            ..
        })]
    ));
    assert_eq!(ErrorCode::StreamClosed.as_str(), "stream-closed");
    assert_eq!(
        ErrorCode::from_name("stream-closed"),
        Some(ErrorCode::StreamClosed)
    );
}

/// The machine's own per-attempt timeout: abort, count a failure, retry.
#[test]
fn attempt_timeout_aborts_and_retries() {
    let mut sim = Sim::new(SendConfig {
        timeout_ms: 2000,
        ..SendConfig::default()
    });
    sim.start();
    assert_eq!(sim.wait, Some(MonoMs(2000)));
    let out = sim.fire();
    assert_eq!(out, [SendAction::Abort { attempt: 1 }]);
    assert_eq!(sim.wait, Some(MonoMs(2000 + 1371)));
    let out = sim.fire();
    assert_eq!(issued(&out)[0].attempt, 2);
    // A late answer of the aborted attempt 1 is ignored.
    sim.s.handle_response(sim.t(), 1, &head(200));
    assert_eq!(sim.drain(), []);
    assert_eq!(sim.wait, Some(MonoMs(3371 + 2000)));
}

/// `Retry-After: 3` → 3000 ms as asked + U[0, 300] herd spread; not plus the
/// exponential term.
#[test]
fn retry_after_seconds_as_asked_plus_bounded_spread() {
    let mut sim = Sim::new(no_deadline_no_timeout());
    sim.start();
    sim.respond(10, head(503).with_header("Retry-After", "3"));
    assert_eq!(sim.wait, Some(MonoMs(10 + 3000 + 223)));
    sim.fire();
    // A 429 with RateLimit-Reset: 20 s + U[0, 1000].
    sim.respond(10, head(429).with_header("RateLimit-Reset", "20"));
    assert_eq!(sim.issue_times(), [0, 3233]);
    assert_eq!(sim.wait, Some(MonoMs(3243 + 20_000 + 160)));
    // Clamped to max_retry_after_ms (300 s) + at most 1 s.
    sim.fire();
    sim.respond(10, head(503).with_header("Retry-After", "86400"));
    let gap = sim.wait.map(|w| w.0 - sim.now);
    assert_eq!(gap, Some(300_000 + 278));
}

/// An HTTP-date `Retry-After` is measured against the response's `Date`
/// (the client clock is an hour fast here): 120 s + U[0, 1000].
#[test]
fn retry_after_http_date_against_date_header() {
    let mut sim = Sim::new(no_deadline_no_timeout());
    sim.start();
    sim.now = 10;
    let h = head(503)
        .with_header("Date", "Tue, 14 Nov 2023 22:13:20 GMT")
        .with_header("Retry-After", "Tue, 14 Nov 2023 22:15:20 GMT");
    let fast = Now::at(sim.now, WALL0 + 3_600_000);
    sim.s.handle_response(fast, 1, &h);
    sim.drain();
    assert_eq!(sim.wait, Some(MonoMs(10 + 120_000 + 742)));
    // A date already past: no extra wait, the backoff floor still holds.
    sim.fire();
    let past = head(503).with_header("Retry-After", "Tue, 14 Nov 2023 22:00:00 GMT");
    sim.respond(10, past);
    let gap = sim.wait.map(|w| w.0 - sim.now);
    assert_eq!(gap, Some(1000 + 16));
}

/// 422 (key reused with another payload), 400, 404, 401 settle at once.
#[test]
fn permanent_answers_settle_at_once() {
    for (status, code) in [
        (422, ErrorCode::HttpStatus),
        (400, ErrorCode::HttpStatus),
        (404, ErrorCode::HttpStatus),
        (401, ErrorCode::Auth),
        (403, ErrorCode::Auth),
        (0, ErrorCode::HttpStatus),
        (600, ErrorCode::HttpStatus),
    ] {
        let mut sim = Sim::new(SendConfig::default());
        sim.start();
        let out = sim.respond(30, head(status).with_header("Retry-After", "1"));
        let want = Outcome::Err {
            code,
            status: Some(status),
            attempts: 1,
        };
        assert_eq!(out, [SendAction::Settle(want)], "{status}");
        assert_eq!(sim.wait, None);
    }
}

/// 2xx and 3xx settle Ok with the attempt count.
#[test]
fn success_settles_ok() {
    let mut sim = Sim::new(SendConfig::default());
    sim.start();
    sim.respond(10, head(408));
    sim.fire();
    let out = sim.respond(10, head(201));
    let ok = Outcome::Ok {
        status: 201,
        attempts: 2,
    };
    assert_eq!(out, [SendAction::Settle(ok)]);
    let mut sim = Sim::new(SendConfig::default());
    sim.start();
    let out = sim.respond(10, head(304));
    assert!(matches!(
        out[..],
        [SendAction::Settle(Outcome::Ok { status: 304, .. })]
    ));
}

/// The same key, as an sf-string, in the configured header on every attempt.
#[test]
fn key_identical_on_every_attempt() {
    let mut sim = Sim::new(SendConfig {
        idempotency_header: "X-Idempotency-Key".into(),
        method: "PATCH".into(),
        ..no_deadline_no_timeout()
    });
    let mut issues = issued(&sim.start())
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();
    for _ in 0..3 {
        sim.error(5, TransportError::Network);
        issues.extend(issued(&sim.fire()).into_iter().cloned());
    }
    let want = vec![("X-Idempotency-Key".to_string(), format!("\"{KEY}\""))];
    assert_eq!(issues.len(), 4);
    for (n, i) in issues.iter().enumerate() {
        assert_eq!(i.attempt, n as u32 + 1);
        assert_eq!(i.method, "PATCH");
        assert_eq!(i.headers, want);
    }
}

/// Offline before start: nothing until online, then one attempt U[0, 250)
/// later. A failure while offline waits for online too.
#[test]
fn offline_waits_for_online_then_one_prompt_attempt() {
    let mut sim = Sim::new(no_deadline_no_timeout());
    sim.online(0, false);
    assert_eq!(sim.start(), []);
    assert_eq!(sim.wait, None);
    assert_eq!(sim.online(60_000, true), []);
    assert_eq!(sim.wait, Some(MonoMs(60_000 + 185)));
    assert_eq!(issued(&sim.fire()).len(), 1);
    // The attempt in flight is left to finish; it fails while offline.
    sim.online(60_100, false);
    sim.error(5, TransportError::NetworkOrCors);
    assert_eq!(sim.wait, None);
    assert_eq!(sim.online(200_000, true), []);
    sim.fire();
    assert_eq!(sim.issue_times(), [60_185, 200_000 + 69]);
}

/// Online again before a server's wait ended: the wait still holds.
#[test]
fn online_does_not_cut_a_server_wait_short() {
    let mut sim = Sim::new(no_deadline_no_timeout());
    sim.start();
    sim.respond(10, head(503).with_header("Retry-After", "30"));
    let due = sim.wait;
    sim.online(1000, false);
    assert_eq!(sim.wait, None);
    sim.online(2000, true);
    assert_eq!(sim.wait, due);
    sim.fire();
    assert_eq!(sim.issue_times(), [0, 10 + 30_000 + 742]);
}

/// Abort during a wait: settle Aborted, nothing to abort, nothing after.
#[test]
fn abort_mid_wait() {
    let mut sim = Sim::new(SendConfig::default());
    sim.start();
    sim.respond(10, head(500));
    sim.now = 500;
    sim.s.handle_abort(sim.t());
    assert_eq!(sim.drain(), [SendAction::Settle(Outcome::Aborted)]);
    assert_eq!(sim.wait, None);
    sim.now = 5000;
    sim.s.handle_timer(sim.t());
    sim.s.handle_online(sim.t(), true);
    assert_eq!(sim.drain(), []);
}

/// Abort in flight: abort that attempt, settle Aborted; its late answer and
/// every other input are ignored.
#[test]
fn abort_mid_flight() {
    let mut sim = Sim::new(SendConfig::default());
    sim.start();
    sim.now = 50;
    sim.s.handle_abort(sim.t());
    assert_eq!(
        sim.drain(),
        [
            SendAction::Abort { attempt: 1 },
            SendAction::Settle(Outcome::Aborted)
        ]
    );
    assert_eq!(sim.respond(10, head(200)), []);
    sim.s.handle_start(sim.t());
    sim.s.handle_abort(sim.t());
    assert_eq!(sim.drain(), []);
    assert_eq!(sim.settles(), [Outcome::Aborted]);
}

/// Abort before start still settles (the promise must settle).
#[test]
fn abort_before_start_settles() {
    let mut sim = Sim::new(SendConfig::default());
    sim.s.handle_abort(sim.t());
    assert_eq!(sim.drain(), [SendAction::Settle(Outcome::Aborted)]);
    assert_eq!(sim.start(), []);
}

/// The overall deadline ends a hung attempt, and settles at once when the
/// next retry could only start after it.
#[test]
fn deadline_settles_timeout() {
    let mut sim = Sim::new(SendConfig {
        deadline_ms: Some(5000),
        timeout_ms: 0,
        ..SendConfig::default()
    });
    sim.start();
    assert_eq!(sim.wait, Some(MonoMs(5000)));
    let out = sim.fire();
    let timeout = Outcome::Err {
        code: ErrorCode::Timeout,
        status: None,
        attempts: 1,
    };
    assert_eq!(
        out,
        [
            SendAction::Abort { attempt: 1 },
            SendAction::Settle(timeout)
        ]
    );
    // Retry-After 10 s with 4 s left: settle now, with the status.
    let mut sim = Sim::new(SendConfig {
        deadline_ms: Some(5000),
        ..SendConfig::default()
    });
    sim.start();
    let out = sim.respond(1000, head(503).with_header("Retry-After", "10"));
    let timeout = Outcome::Err {
        code: ErrorCode::Timeout,
        status: Some(503),
        attempts: 1,
    };
    assert_eq!(out, [SendAction::Settle(timeout)]);
    assert_eq!(sim.now, 1000);
    // Offline past the deadline: timeout at the deadline, nothing issued.
    let mut sim = Sim::new(SendConfig {
        deadline_ms: Some(5000),
        ..SendConfig::default()
    });
    sim.online(0, false);
    sim.start();
    let out = sim.fire();
    assert_eq!(sim.now, 5000);
    assert!(matches!(
        out[..],
        [SendAction::Settle(Outcome::Err {
            code: ErrorCode::Timeout,
            attempts: 0,
            ..
        })]
    ));
}

/// `max_attempts` failed attempts settle `gave-up` with the last status.
#[test]
fn max_attempts_gives_up() {
    let mut sim = Sim::new(SendConfig {
        max_attempts: 3,
        ..SendConfig::default()
    });
    sim.start();
    sim.respond(10, head(500));
    sim.fire();
    sim.error(10, TransportError::Network);
    sim.fire();
    let out = sim.respond(10, head(502));
    let gave_up = Outcome::Err {
        code: ErrorCode::GaveUp,
        status: Some(502),
        attempts: 3,
    };
    assert_eq!(out, [SendAction::Settle(gave_up)]);
    assert_eq!(sim.issue_times().len(), 3);
    // max_attempts 0 behaves like 1.
    let mut sim = Sim::new(SendConfig {
        max_attempts: 0,
        ..SendConfig::default()
    });
    sim.start();
    let out = sim.error(10, TransportError::Network);
    assert!(matches!(
        out[..],
        [SendAction::Settle(Outcome::Err {
            code: ErrorCode::GaveUp,
            status: None,
            attempts: 1
        })]
    ));
}

/// Facts about an attempt other than the live one change nothing.
#[test]
fn stale_and_unknown_attempts_ignored() {
    let mut sim = Sim::new(SendConfig::default());
    sim.start();
    for attempt in [0, 2, 99] {
        sim.s.handle_response(sim.t(), attempt, &head(200));
        sim.s
            .handle_error(sim.t(), attempt, TransportError::Network);
    }
    assert_eq!(sim.drain(), []);
    assert!(!sim.s.is_settled());
}

/// Two ordered sends: the second is issued only after the first settled.
#[test]
fn ordered_sends_one_at_a_time() {
    let mut q = Ordered::new();
    let mut a = Sim::new(SendConfig::default());
    let mut b = Sim::new(SendConfig::default());
    assert!(q.push(1));
    assert!(!q.push(2));
    a.start();
    a.respond(10, head(503));
    a.fire();
    a.respond(10, head(200));
    assert!(a.s.is_settled());
    assert_eq!(q.remove(&1), Some(&2));
    b.now = a.now;
    assert_eq!(issued(&b.start()).len(), 1);
}

/// An `ordered` send queued behind another: its deadline runs from the call
/// (`handle_queued`), not from its turn, so a head that retries for ever
/// cannot hold it past its deadline; nothing is issued, attempts 0. A send
/// whose turn comes before its deadline keeps only what is left of it.
#[test]
fn queued_send_deadline_runs_from_the_call() {
    let mut sim = Sim::new(SendConfig {
        deadline_ms: Some(5000),
        ..SendConfig::default()
    });
    sim.s.handle_queued(sim.t());
    assert_eq!(sim.drain(), []);
    assert_eq!(sim.wait, Some(MonoMs(5000)));
    let out = sim.fire();
    assert_eq!(sim.now, 5000);
    let timeout = Outcome::Err {
        code: ErrorCode::Timeout,
        status: None,
        attempts: 0,
    };
    assert_eq!(out, [SendAction::Settle(timeout)]);
    assert_eq!(sim.start(), []);
    // Its turn at 3 s: issued at once, the deadline still at 5 s.
    let mut sim = Sim::new(SendConfig {
        deadline_ms: Some(5000),
        timeout_ms: 0,
        ..SendConfig::default()
    });
    sim.s.handle_queued(sim.t());
    sim.drain();
    sim.now = 3000;
    assert_eq!(issued(&sim.start()).len(), 1);
    assert_eq!(sim.wait, Some(MonoMs(5000)));
    // No deadline: nothing armed while queued.
    let mut sim = Sim::new(SendConfig::default());
    sim.s.handle_queued(sim.t());
    assert_eq!(sim.drain(), []);
    assert_eq!(sim.wait, None);
}

/// The app's `headers` failed before attempt 2 went out: settle at once with
/// the attempts issued, no retry; a report about another attempt is ignored.
#[test]
fn headers_failure_settles_at_once() {
    let mut sim = Sim::new(SendConfig::default());
    sim.start();
    sim.respond(10, head(503));
    let out = sim.fire();
    assert_eq!(issued(&out)[0].attempt, 2);
    sim.s.handle_headers_failed(sim.t(), 1);
    assert_eq!(sim.drain(), []);
    sim.s.handle_headers_failed(sim.t(), 2);
    assert_eq!(
        sim.drain(),
        [SendAction::Settle(Outcome::HeadersFailed { attempts: 2 })]
    );
    assert_eq!(sim.wait, None);
    assert_eq!(sim.settles().len(), 1);
}

/// Random inputs drive the machine.
#[derive(Clone, Debug)]
enum Input {
    Start,
    Queued,
    Response {
        attempt: u8,
        status: u16,
        retry_after: Option<u8>,
        /// Reported with `handle_answer_too_large` (body over the cap).
        too_large: bool,
    },
    Error {
        attempt: u8,
    },
    Timer,
    Online(bool),
    Abort,
    HeadersFailed {
        attempt: u8,
    },
    Advance(u32),
}

fn input() -> impl Strategy<Value = Input> {
    let status = prop_oneof![
        Just(200u16),
        Just(204),
        Just(302),
        Just(400),
        Just(401),
        Just(408),
        Just(409),
        Just(422),
        Just(425),
        Just(429),
        Just(500),
        Just(503),
        any::<u16>(),
    ];
    prop_oneof![
        1 => Just(Input::Start),
        1 => Just(Input::Queued),
        4 => (0u8..6, status, proptest::option::of(any::<u8>()), any::<bool>())
            .prop_map(|(attempt, status, retry_after, too_large)| Input::Response { attempt, status, retry_after, too_large }),
        3 => (0u8..6).prop_map(|attempt| Input::Error { attempt }),
        4 => Just(Input::Timer),
        2 => any::<bool>().prop_map(Input::Online),
        1 => Just(Input::Abort),
        1 => (0u8..6).prop_map(|attempt| Input::HeadersFailed { attempt }),
        3 => any::<u32>().prop_map(Input::Advance),
    ]
}

/// Invariants checked on every action: at most one attempt in flight, no
/// `Issue` after `Settle`, `Wait` never in the past and never `None` while a
/// retry is pending online, exactly one `Settle` in the end.
struct Checker {
    live: Option<u32>,
    settled: bool,
    settles: u32,
    online: bool,
    started: bool,
}

impl Checker {
    fn see(&mut self, now: u64, a: &SendAction) -> Result<(), TestCaseError> {
        match a {
            SendAction::Issue(i) => {
                prop_assert!(!self.settled, "Issue after Settle");
                prop_assert!(self.live.is_none(), "two attempts in flight");
                prop_assert!(self.online, "Issue while offline");
                self.live = Some(i.attempt);
            }
            SendAction::Abort { attempt } => {
                prop_assert_eq!(self.live, Some(*attempt));
                self.live = None;
            }
            SendAction::Settle(_) => {
                self.settles += 1;
                self.settled = true;
                self.live = None;
            }
            SendAction::Wait { until } => {
                prop_assert!(until.is_none_or(|u| u.0 >= now));
                if self.settled {
                    prop_assert!(until.is_none());
                } else if self.started && self.online && self.live.is_none() {
                    // A retry is pending: a timer must be armed, or it hangs.
                    prop_assert!(until.is_some(), "no timer while a retry is pending");
                }
            }
        }
        prop_assert!(self.settles <= 1);
        Ok(())
    }
}

/// Feed one input; `false` when it is not an input (time only moves).
fn feed(s: &mut Sender, c: &mut Checker, now: &mut u64, wait: Option<MonoMs>, i: Input) -> bool {
    let t = |now: u64| Now::at(now, WALL0 + (now as i64));
    match i {
        Input::Start => {
            c.started = true;
            s.handle_start(t(*now));
        }
        Input::Queued => s.handle_queued(t(*now)),
        Input::Response {
            attempt,
            status,
            retry_after,
            too_large,
        } => {
            let mut h = head(status);
            if let Some(r) = retry_after {
                h = h.with_header("Retry-After", &r.to_string());
            }
            if c.live == Some(u32::from(attempt)) {
                c.live = None;
            }
            match too_large {
                true => s.handle_answer_too_large(t(*now), u32::from(attempt), &h),
                false => s.handle_response(t(*now), u32::from(attempt), &h),
            }
        }
        Input::Error { attempt } => {
            if c.live == Some(u32::from(attempt)) {
                c.live = None;
            }
            s.handle_error(t(*now), u32::from(attempt), TransportError::Network);
        }
        Input::Timer => {
            *now = (*now).max(wait.map_or(*now, |w| w.0));
            s.handle_timer(t(*now));
        }
        Input::Online(on) => {
            c.online = on;
            s.handle_online(t(*now), on);
        }
        Input::Abort => s.handle_abort(t(*now)),
        Input::HeadersFailed { attempt } => {
            if c.live == Some(u32::from(attempt)) {
                c.live = None;
            }
            s.handle_headers_failed(t(*now), u32::from(attempt));
        }
        Input::Advance(ms) => {
            *now += u64::from(ms);
            return false;
        }
    }
    true
}

fn drive(config: SendConfig, inputs: Vec<Input>, seed: u64) -> Result<(), TestCaseError> {
    let key = IdempotencyKey::new("k").map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
    let mut s = Sender::new(config, &key, seed);
    let mut now = 0u64;
    let mut wait: Option<MonoMs> = None;
    let mut c = Checker {
        live: None,
        settled: false,
        settles: 0,
        online: true,
        started: false,
    };
    for i in inputs.into_iter().chain([Input::Abort]) {
        if !feed(&mut s, &mut c, &mut now, wait, i) {
            continue;
        }
        let mut waited = false;
        for _ in 0..20 {
            let a = s.poll();
            c.see(now, &a)?;
            if let SendAction::Wait { until } = a {
                wait = until;
                waited = true;
                break;
            }
        }
        prop_assert!(waited, "no Wait after 20 actions");
    }
    prop_assert_eq!(c.settles, 1, "exactly one Settle");
    prop_assert!(s.is_settled());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn random_inputs_keep_the_invariants(
        inputs in proptest::collection::vec(input(), 0..60),
        seed in any::<u64>(),
        max_attempts in 0u32..8,
        timeout_ms in prop_oneof![Just(0u64), 1u64..10_000],
        deadline_ms in proptest::option::of(0u64..100_000),
    ) {
        let config = SendConfig { max_attempts, timeout_ms, deadline_ms, ..SendConfig::default() };
        drive(config, inputs, seed)?;
    }
}

/// An idempotency header the browser would drop (Fetch "forbidden
/// request-header") is refused up front; the usual names are not.
#[test]
fn forbidden_request_header_names() {
    for name in [
        "Cookie",
        "content-length",
        "HOST",
        "Sec-Idempotency-Key",
        "proxy-key",
        "Proxy-",
        "Origin",
    ] {
        assert!(is_forbidden_request_header(name), "{name}");
    }
    for name in [
        "Idempotency-Key",
        "X-Idempotency-Key",
        "Sec",
        "Proxy",
        "Cookies",
        "é-key",
    ] {
        assert!(!is_forbidden_request_header(name), "{name}");
    }
}

/// `deadline_ms: Some(0)` (docs/upstream.md: "`0` rejects at once, nothing sent"):
/// settle `timeout` at start, no `Issue`.
#[test]
fn zero_deadline_settles_at_start_without_an_attempt() {
    let mut sim = Sim::new(SendConfig {
        deadline_ms: Some(0),
        ..SendConfig::default()
    });
    let timeout = Outcome::Err {
        code: ErrorCode::Timeout,
        status: None,
        attempts: 0,
    };
    assert_eq!(sim.start(), [SendAction::Settle(timeout)]);
}

/// `Idempotent-Replayed: true` (any case, spaces around) marks a replay;
/// absent, empty, `false`, `1` or `yes` do not.
#[test]
fn replayed_header_values() {
    for v in ["true", "TRUE", " True "] {
        assert!(is_replayed(Some(v)), "{v}");
    }
    for v in [
        None,
        Some(""),
        Some("false"),
        Some("1"),
        Some("yes"),
        Some("true, true"),
    ] {
        assert!(!is_replayed(v), "{v:?}");
    }
}

/// A send's answer is read up to the core's cap (`max_answer_bytes`, carried
/// by every `Issue`: the adapter reads no more). A success whose body is
/// over it settles `too-large` with its status (the request took effect; its
/// answer is not handed over) and is never retried: the server would replay
/// the same answer. A failure status with a big body is decided by its
/// status as usual.
#[test]
fn an_answer_over_the_cap_settles_too_large_and_is_never_retried() {
    assert_eq!(SendConfig::default().max_answer_bytes, 1_048_576);
    let mut sim = Sim::new(no_deadline_no_timeout());
    let first = sim.start();
    assert_eq!(issued(&first)[0].max_answer_bytes, 1_048_576);
    sim.now += 40;
    sim.s.handle_answer_too_large(sim.t(), 1, &head(200));
    let too_large = Outcome::Err {
        code: ErrorCode::TooLarge,
        status: Some(200),
        attempts: 1,
    };
    assert_eq!(sim.drain(), vec![SendAction::Settle(too_large)]);
    assert_eq!(sim.wait, None, "nothing more: no retry");

    let mut sim = Sim::new(SendConfig {
        max_answer_bytes: 10,
        ..no_deadline_no_timeout()
    });
    assert_eq!(issued(&sim.start())[0].max_answer_bytes, 10);
    sim.now += 40;
    sim.s.handle_answer_too_large(sim.t(), 1, &head(503));
    assert_eq!(sim.drain(), vec![], "503: retried after the backoff");
    let retry = sim.fire();
    assert_eq!(issued(&retry)[0].attempt, 2);
    // Stale: an answer for attempt 1 changes nothing now.
    sim.s.handle_answer_too_large(sim.t(), 1, &head(200));
    assert_eq!(sim.drain(), vec![]);
    sim.now += 40;
    sim.s.handle_answer_too_large(sim.t(), 2, &head(400));
    let http_status = Outcome::Err {
        code: ErrorCode::HttpStatus,
        status: Some(400),
        attempts: 2,
    };
    assert_eq!(sim.drain(), vec![SendAction::Settle(http_status)]);
}

/// The clock guard, through `handle`: a fact whose monotonic time is before
/// an earlier fact's happens at the latest time seen, so a start reported
/// late runs its per-attempt timeout from there (never a deadline in the
/// past) and an early timer does nothing.
#[test]
fn a_time_going_backwards_is_taken_as_the_latest_seen() {
    let mut sim = Sim::new(SendConfig {
        deadline_ms: Some(5000),
        timeout_ms: 2000,
        ..SendConfig::default()
    });
    sim.s.handle(Now::at(10_000, WALL0), SendInput::Queued);
    assert_eq!((sim.drain(), sim.wait), (vec![], Some(MonoMs(15_000))));
    sim.s.handle(Now::at(1_000, WALL0), SendInput::Start);
    let issued = sim.drain();
    assert!(
        matches!(&issued[..], [SendAction::Issue(i)] if i.attempt == 1),
        "{issued:?}"
    );
    assert_eq!(sim.wait, Some(MonoMs(12_000)));
    sim.s.handle(Now::at(2_000, WALL0), SendInput::Timer);
    assert_eq!((sim.drain(), sim.wait), (vec![], Some(MonoMs(12_000))));
}

/// The lifecycle, through `handle`: once settled, no fact does anything
/// (a late answer, a second start, a timer, another abort).
#[test]
fn every_fact_after_settle_is_ignored() {
    let mut sim = Sim::new(SendConfig::default());
    sim.s.handle(sim.t(), SendInput::Start);
    sim.drain();
    sim.s.handle(sim.t(), SendInput::Response(1, head(200)));
    let settled = Outcome::Ok {
        status: 200,
        attempts: 1,
    };
    assert_eq!(sim.drain(), [SendAction::Settle(settled)]);
    for input in [
        SendInput::Response(1, head(500)),
        SendInput::Start,
        SendInput::Online(false),
        SendInput::Timer,
        SendInput::Abort,
    ] {
        sim.now += 1000;
        sim.s.handle(sim.t(), input);
        assert_eq!((sim.drain(), sim.wait), (vec![], None));
    }
    assert!(sim.s.is_settled());
}
