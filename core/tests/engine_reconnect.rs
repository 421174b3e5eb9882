//! `reconnect()` (docs/reconnects.md) on virtual time: which waits it ends, which
//! it never shortens, and what it revives (`engine::reconnect`).
#[path = "engine_support.rs"]
mod support;

use support::*;
use tidings_core::engine::{
    Action, Config, ErrorCode, Note, OpenRequest, Reason, ReconnectAnswer, ResponseHead, State,
    TransportError,
};

impl Sim {
    /// `reconnect()`: its answer, which the debug log's one note says too,
    /// and the other actions.
    fn reconnect(&mut self, online: bool) -> (ReconnectAnswer, Vec<Action>) {
        let answer = self.engine.handle_reconnect(self.now, online);
        let (notes, acts): (Vec<Action>, Vec<Action>) = self
            .drain()
            .into_iter()
            .partition(|a| matches!(a, Action::Note(_)));
        assert_eq!(notes, [Action::Note(Note::Reconnect(answer))]);
        (answer, acts)
    }

    /// `reconnect()` that changes nothing: its answer.
    fn reconnect_idle(&mut self, online: bool) -> ReconnectAnswer {
        let (answer, acts) = self.reconnect(online);
        assert!(acts.is_empty(), "{answer:?}: {acts:#?}");
        answer
    }
}

/// A `fetch-sse` connection whose first open failed: waiting on the backoff.
fn waiting_after_a_failure(seed: u64) -> (Sim, u64) {
    let (mut sim, o) = Sim::started(fetch_sse_config(), seed);
    let acts = sim.error(o.id, TransportError::NetworkOrCors);
    let [(Reason::Backoff, delay)] = waiting(&acts)[..] else {
        panic!("{acts:#?}")
    };
    (sim, delay)
}

/// `fetch-sse` only (no fallback transport), giving up after `max_attempts`
/// failures when given.
fn one_transport(max_attempts: Option<u32>) -> Config {
    let mut c = fetch_sse_config();
    c.transports.truncate(1);
    c.backoff.max_attempts = max_attempts;
    c
}

/// One transport that gives up after its first failure: closed, `gave-up`.
fn gave_up_after_one_failure(seed: u64) -> Sim {
    let (mut sim, o) = Sim::started(one_transport(Some(1)), seed);
    sim.error(o.id, TransportError::NetworkOrCors);
    assert_eq!(sim.engine.state(), State::Closed);
    sim
}

/// `acts` are what an honoured `reconnect()` does: `connecting`, reason
/// `reconnect`, and exactly one new request (returned).
fn reconnected(acts: &[Action]) -> OpenRequest {
    assert_eq!(
        states(acts),
        [(State::Connecting, Reason::Reconnect, None)],
        "{acts:#?}"
    );
    the_open(acts)
}

/// A client backoff wait ends at once (reason `reconnect`); the failure that
/// led to it still counts, the reconnect itself is no failure.
#[test]
fn ends_a_backoff_wait_at_once() {
    let (mut sim, delay) = waiting_after_a_failure(7);
    assert!(delay >= 1000, "{delay}");
    sim.run_for(200);
    let (answer, acts) = sim.reconnect(true);
    assert_eq!(answer, ReconnectAnswer::Now);
    let o = reconnected(&acts);
    assert_eq!(sim.now.mono.0, 200);
    assert!(errors(&acts).is_empty());
    assert_eq!(sim.engine.live_attempt(), Some(o.id));
}

/// While open or connecting it is a no-op: no abort, no second request.
#[test]
fn is_a_no_op_while_open_or_connecting() {
    let (mut sim, o) = Sim::started(fetch_sse_config(), 1);
    assert_eq!(sim.reconnect_idle(true), ReconnectAnswer::Connecting);
    sim.head(o.id, es_head(200));
    assert_eq!(sim.engine.state(), State::Open);
    assert_eq!(sim.reconnect_idle(true), ReconnectAnswer::AlreadyOpen);
    assert!(aborts(&sim).is_empty());
    assert_eq!(sim.opens().len(), 1);
}

/// A 503 with `Retry-After: 30` is never shortened: `reconnect()` 1 s into
/// the wait changes nothing, and the next request goes when the server said.
#[test]
fn never_shortens_retry_after() {
    let (mut sim, o) = Sim::started(fetch_sse_config(), 3);
    let acts = sim.head(
        o.id,
        ResponseHead::new(503).with_header("Retry-After", "30"),
    );
    let [(Reason::RetryAfter, delay)] = waiting(&acts)[..] else {
        panic!("{acts:#?}")
    };
    sim.run_for(1000);
    assert_eq!(sim.reconnect_idle(true), ReconnectAnswer::RetryAfter);
    let next = sim.must_open(120_000);
    assert_eq!(sim.last_open_at, delay);
    assert!(sim.last_open_at >= 30_000);
    assert_ne!(next.id, o.id);
}

/// A 429 with `RateLimit-Reset: 20`: the rate-limit wait stays too, and
/// `reconnect()` says so.
#[test]
fn never_shortens_a_rate_limit_reset() {
    let (mut sim, o) = Sim::started(fetch_sse_config(), 3);
    let acts = sim.head(
        o.id,
        ResponseHead::new(429).with_header("RateLimit-Reset", "20"),
    );
    let [(Reason::RateLimit, delay)] = waiting(&acts)[..] else {
        panic!("{acts:#?}")
    };
    sim.run_for(1000);
    assert_eq!(sim.reconnect_idle(true), ReconnectAnswer::RateLimit);
    sim.must_open(120_000);
    assert_eq!(sim.last_open_at, delay);
    assert!(sim.last_open_at >= 20_000);
}

/// `fetch-sse` only, the breaker opening after 2 failures: the first
/// failure, then the retry's, which opens it. Returns the sim, the
/// cool-down (ms) and when it opened.
fn breaker_open(seed: u64) -> (Sim, u64, u64) {
    let mut c = one_transport(None);
    c.breaker.failure_threshold = 2;
    let (mut sim, o) = Sim::started(c, seed);
    sim.error(o.id, TransportError::NetworkOrCors);
    let o = sim.must_open(60_000);
    let acts = sim.error(o.id, TransportError::NetworkOrCors);
    let [(Reason::BreakerOpen, cooldown)] = waiting(&acts)[..] else {
        panic!("{acts:#?}")
    };
    (sim, cooldown, o.id.0)
}

/// During an open breaker's cool-down `reconnect()` sends the breaker's one
/// half-open probe at once (reason `breaker-probe`); its success closes the
/// breaker (seed 5: the breaker opened at 1193 ms for 21 981 ms).
#[test]
fn an_open_breaker_sends_its_probe_now() {
    let (mut sim, cooldown, _) = breaker_open(5);
    assert_eq!((sim.now.mono.0, cooldown), (1193, 21_981));
    sim.run_until(14_000);
    let (answer, acts) = sim.reconnect(true);
    assert_eq!(answer, ReconnectAnswer::BreakerProbe);
    assert_eq!(
        states(&acts),
        [(State::Connecting, Reason::BreakerProbe, None)]
    );
    let probe = the_open(&acts);
    assert_eq!(sim.now.mono.0, 14_000);
    // The probe succeeds (open, an event): the breaker closed, so a drop
    // now is a plain backoff wait, not a new cool-down.
    let acts = sim.head(probe.id, es_head(200));
    assert_eq!(states(&acts), [(State::Open, Reason::BreakerProbe, None)]);
    assert_eq!(data(&sim.bytes(probe.id, b"data: back\n\n")), ["back"]);
    let acts = sim.error(probe.id, TransportError::NetworkOrCors);
    assert_eq!(waiting(&acts), [(Reason::Backoff, 1198)]);
    assert_eq!(sim.opens().len(), 3);
}

/// The early probe fails: the breaker opens again for a full new cool-down
/// (seed 5: 20 638 ms, from the probe's failure), as a failed probe at the
/// cool-down's end would; pressed again at once, the next probe waits for
/// the floor (1000 ms after the first press): `too-soon`.
#[test]
fn a_failed_early_probe_opens_the_breaker_again() {
    let (mut sim, _, _) = breaker_open(5);
    sim.run_until(14_000);
    let (answer, acts) = sim.reconnect(true);
    assert_eq!(answer, ReconnectAnswer::BreakerProbe);
    let probe = the_open(&acts);
    sim.run_for(50);
    let acts = sim.error(probe.id, TransportError::NetworkOrCors);
    assert_eq!(waiting(&acts), [(Reason::BreakerOpen, 20_638)]);
    sim.run_for(50);
    let (answer, acts) = sim.reconnect(true);
    assert_eq!(answer, ReconnectAnswer::TooSoon);
    assert_eq!(
        states(&acts),
        [(State::Waiting, Reason::Reconnect, Some(900))]
    );
    let next = sim.must_open(60_000);
    assert_eq!(sim.last_open_at, 15_000);
    assert_ne!(next.id, probe.id);
    assert_eq!(sim.opens().len(), 4);
}

/// Paused for offline: resumes only when the browser says online now (its
/// `online` event may never come); hidden stays paused.
#[test]
fn offline_resumes_only_when_online() {
    let open_sim = || {
        let (mut sim, o) = Sim::started(fetch_sse_config(), 2);
        sim.head(o.id, es_head(200));
        sim
    };
    let mut sim = open_sim();
    sim.online(false);
    assert_eq!(sim.engine.state(), State::Paused);
    assert_eq!(sim.reconnect_idle(false), ReconnectAnswer::Offline);
    sim.run_for(60_000);
    assert_eq!(sim.opens().len(), 1);
    let (answer, acts) = sim.reconnect(true);
    assert_eq!(answer, ReconnectAnswer::Now);
    reconnected(&acts);

    let mut sim = open_sim();
    sim.visibility(true);
    sim.run_for(10);
    assert_eq!(sim.engine.state(), State::Paused);
    assert_eq!(sim.reconnect_idle(true), ReconnectAnswer::Hidden);
    sim.run_for(60_000);
    assert_eq!(sim.opens().len(), 1);
}

/// `gave-up` (maxAttempts) ends in state `closed`, reason `gave-up`, and is
/// revived with the backoff count reset; a permanent error is not.
#[test]
fn revives_gave_up_not_a_permanent_error() {
    let (mut sim, o) = Sim::started(one_transport(Some(2)), 9);
    sim.error(o.id, TransportError::NetworkOrCors);
    let o = sim.must_open(60_000);
    let acts = sim.error(o.id, TransportError::NetworkOrCors);
    assert!(matches!(
        errors(&acts)[..],
        [Action::Error {
            code: ErrorCode::GaveUp,
            fatal: true,
            ..
        }]
    ));
    assert_eq!(states(&acts), [(State::Closed, Reason::GaveUp, None)]);
    sim.run_for(5000);
    let (answer, acts) = sim.reconnect(true);
    assert_eq!(answer, ReconnectAnswer::Now);
    let o = reconnected(&acts);
    // Counted from zero again: one failure is a plain backoff wait.
    let acts = sim.error(o.id, TransportError::NetworkOrCors);
    assert_eq!(waiting(&acts).len(), 1, "{acts:#?}");
    assert!(errors(&acts)
        .iter()
        .all(|e| !matches!(e, Action::Error { fatal: true, .. })));

    let (mut sim, o) = Sim::started(fetch_sse_config(), 9);
    let acts = sim.head(o.id, ResponseHead::new(404));
    assert_eq!(
        states(&acts),
        [(State::Closed, Reason::PermanentError, None)]
    );
    sim.run_for(1000);
    assert_eq!(sim.reconnect_idle(true), ReconnectAnswer::Closed);
    assert_eq!(sim.engine.state(), State::Closed);
}

/// Gave up while the browser is offline: `reconnect()` while it still says
/// offline leaves it closed (and revivable); once online it revives.
#[test]
fn gave_up_and_offline_waits_for_online() {
    let mut sim = gave_up_after_one_failure(4);
    sim.online(false);
    assert_eq!(sim.reconnect_idle(false), ReconnectAnswer::Offline);
    assert_eq!(sim.engine.state(), State::Closed);
    let (answer, acts) = sim.reconnect(true);
    assert_eq!(answer, ReconnectAnswer::Now);
    reconnected(&acts);
}

/// Closed by the app after it gave up: not revived.
#[test]
fn close_after_gave_up_is_final() {
    let mut sim = gave_up_after_one_failure(9);
    sim.engine.handle_close(sim.now);
    sim.drain();
    assert_eq!(sim.reconnect_idle(true), ReconnectAnswer::Closed);
}

/// The floor between honoured reconnects: pressed every 100 ms while every
/// attempt fails at once, one attempt per `backoff.floorMs` (1000 ms) at
/// most. The 5th failure opens the breaker; from then on each press within
/// the floor moves its probe to the floor's end (`too-soon`), each probe
/// fails and opens the breaker again: still one request per floor, never
/// more.
#[test]
fn a_floor_between_user_reconnects() {
    // One transport: the floor stays `backoff.floorMs` (on `poll` the
    // polling interval raises it).
    let (mut sim, o) = Sim::started(one_transport(None), 11);
    sim.error(o.id, TransportError::NetworkOrCors);
    let mut user_opens = Vec::new();
    let mut answers = Vec::new();
    for _ in 0..100 {
        sim.run_for(100);
        let (answer, _) = sim.reconnect(true);
        if answers.last() != Some(&answer) {
            answers.push(answer);
        }
        if let Some(o) = sim.engine.live_attempt() {
            if o.0 > sim.touched {
                sim.touched = o.0;
                user_opens.push(sim.now.mono.0);
                sim.error(o, TransportError::NetworkOrCors);
            }
        }
    }
    // 10 s of presses: the first at 100 ms, then one per 1000 ms.
    let every_floor: Vec<u64> = (0..10).map(|i| 100 + i * 1000).collect();
    assert_eq!(user_opens, every_floor);
    assert_eq!(sim.opens().len(), 11);
    assert_eq!(sim.engine.state(), State::Waiting);
    let breaker = sim.find(|a| match a {
        Action::State {
            reason: Reason::BreakerOpen,
            ..
        } => Some(()),
        _ => None,
    });
    // Opened by the 5th failure (at 3100 ms), then by each failed probe.
    assert_eq!(breaker.len(), 7);
    // Changes of the answer: `now` once; then, within each floor,
    // `too-soon`, and `connecting` when pressed as its attempt starts.
    let mut expected = vec![ReconnectAnswer::Now];
    for _ in 0..9 {
        expected.extend([ReconnectAnswer::TooSoon, ReconnectAnswer::Connecting]);
    }
    expected.push(ReconnectAnswer::TooSoon);
    assert_eq!(answers, expected);
}

/// The JS names, the return values apps compare against (`js/index.d.ts`).
#[test]
fn answer_names() {
    use ReconnectAnswer::*;
    let all = [
        Now,
        BreakerProbe,
        TooSoon,
        RetryAfter,
        RateLimit,
        AlreadyOpen,
        Connecting,
        Hidden,
        Offline,
        Closed,
        Leader,
    ];
    let names: Vec<&str> = all.iter().map(|a| a.as_str()).collect();
    assert_eq!(
        names,
        [
            "now",
            "breaker-probe",
            "too-soon",
            "retry-after",
            "rate-limit",
            "already-open",
            "connecting",
            "hidden",
            "offline",
            "closed",
            "leader"
        ]
    );
    assert_eq!(
        Note::Reconnect(BreakerProbe).as_str(),
        "reconnect: breaker-probe"
    );
}
