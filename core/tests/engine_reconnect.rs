//! `reconnect()` (issue 22 item 2) on virtual time: which waits it ends, which
//! it never shortens, and what it revives (`engine::reconnect`).
#[path = "engine_support.rs"]
mod support;

use support::*;
use tidings_core::engine::{
    Action, Config, ErrorCode, OpenRequest, Reason, ResponseHead, State, TransportError,
};

impl Sim {
    fn reconnect(&mut self, online: bool) -> Vec<Action> {
        self.engine.handle_reconnect(self.now, online);
        self.drain()
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
    let acts = sim.reconnect(true);
    let o = reconnected(&acts);
    assert_eq!(sim.now.mono.0, 200);
    assert!(errors(&acts).is_empty());
    assert_eq!(sim.engine.live_attempt(), Some(o.id));
}

/// While open or connecting it is a no-op: no abort, no second request.
#[test]
fn is_a_no_op_while_open_or_connecting() {
    let (mut sim, o) = Sim::started(fetch_sse_config(), 1);
    assert!(sim.reconnect(true).is_empty(), "connecting");
    sim.head(o.id, es_head(200));
    assert_eq!(sim.engine.state(), State::Open);
    assert!(sim.reconnect(true).is_empty(), "open");
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
    let acts = sim.reconnect(true);
    assert!(acts.is_empty(), "{acts:#?}");
    let next = sim.must_open(120_000);
    assert_eq!(sim.last_open_at, delay);
    assert!(sim.last_open_at >= 30_000);
    assert_ne!(next.id, o.id);
}

/// An open breaker's cool-down is never shortened either.
#[test]
fn never_shortens_an_open_breaker() {
    let mut c = one_transport(None);
    c.breaker.failure_threshold = 2;
    let (mut sim, o) = Sim::started(c, 5);
    sim.error(o.id, TransportError::NetworkOrCors);
    let o = sim.must_open(60_000);
    let acts = sim.error(o.id, TransportError::NetworkOrCors);
    let [(Reason::BreakerOpen, cooldown)] = waiting(&acts)[..] else {
        panic!("{acts:#?}")
    };
    let opened_at = sim.now.mono.0;
    sim.run_for(100);
    assert!(sim.reconnect(true).is_empty());
    sim.must_open(120_000);
    assert_eq!(sim.last_open_at, opened_at + cooldown);
    assert!(cooldown >= 30_000, "{cooldown}");
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
    assert!(sim.reconnect(false).is_empty());
    sim.run_for(60_000);
    assert_eq!(sim.opens().len(), 1);
    reconnected(&sim.reconnect(true));

    let mut sim = open_sim();
    sim.visibility(true);
    sim.run_for(10);
    assert_eq!(sim.engine.state(), State::Paused);
    assert!(sim.reconnect(true).is_empty());
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
    let o = reconnected(&sim.reconnect(true));
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
    assert!(sim.reconnect(true).is_empty());
    assert_eq!(sim.engine.state(), State::Closed);
}

/// Gave up while the browser is offline: `reconnect()` while it still says
/// offline leaves it closed (and revivable); once online it revives.
#[test]
fn gave_up_and_offline_waits_for_online() {
    let mut sim = gave_up_after_one_failure(4);
    sim.online(false);
    assert!(sim.reconnect(false).is_empty());
    assert_eq!(sim.engine.state(), State::Closed);
    reconnected(&sim.reconnect(true));
}

/// Closed by the app after it gave up: not revived.
#[test]
fn close_after_gave_up_is_final() {
    let mut sim = gave_up_after_one_failure(9);
    sim.engine.handle_close(sim.now);
    sim.drain();
    assert!(sim.reconnect(true).is_empty());
}

/// The floor between honoured reconnects: pressed every 100 ms while every
/// attempt fails at once, one attempt per `backoff.floorMs` (1000 ms) at
/// most, and the breaker (5 failures) ends it.
#[test]
fn a_floor_between_user_reconnects() {
    let (mut sim, _) = waiting_after_a_failure(11);
    let mut user_opens = Vec::new();
    for _ in 0..100 {
        sim.run_for(100);
        sim.reconnect(true);
        if let Some(o) = sim.engine.live_attempt() {
            if o.0 > sim.touched {
                sim.touched = o.0;
                user_opens.push(sim.now.mono.0);
                sim.error(o, TransportError::NetworkOrCors);
            }
        }
    }
    // 10 s of presses: the first at 100 ms, then one per 1000 ms at most,
    // until the 5th failure opened the breaker.
    assert_eq!(user_opens, [100, 1100, 2100, 3100]);
    assert_eq!(sim.engine.state(), State::Waiting);
    let breaker = sim.find(|a| match a {
        Action::State {
            reason: Reason::BreakerOpen,
            ..
        } => Some(()),
        _ => None,
    });
    assert_eq!(breaker.len(), 1);
}
