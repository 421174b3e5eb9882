//! Issue 24, rules 1 and 2, through the engine with tidings' defaults: the
//! servers people run (sse-starlette, axum `KeepAlive`, better-sse) ping every
//! 10–15 s and may end every stream after a few events (serverless time
//! limits). A quiet healthy server is one stream; a stream that delivered new
//! events and ended cleanly reconnects after the floor, however often.

#[path = "engine_support.rs"]
mod support;

use support::*;
use tidings_core::engine::{Action, Config, Reason, State, TransportError, TransportKind};

fn only(transport: TransportKind) -> Config {
    let mut c = Config::new("/stream");
    c.transports = vec![transport];
    c
}

/// Rule 1: sse-starlette / axum with nothing to say: no byte before the first
/// `: ping`, which comes 15 s after the head and 10 ms late (the server's
/// timer started when it began the body). Two minutes: one request, no error,
/// no abort. (The old 15 s first-event deadline aborted at 15 050 ms, 10 ms
/// before the ping: the "reconnects about every 16 s".)
#[test]
fn rule1_quiet_server_pinging_every_15_s_is_one_stream() {
    let mut sim = Sim::new(fetch_sse_config(), 24);
    let o = the_open(&sim.start());
    sim.run_for(50);
    sim.head(o.id, es_head(200));
    for _ in 0..8 {
        sim.run_for(15_010);
        sim.bytes(o.id, b": ping\r\n\r\n");
    }
    assert_eq!(sim.opens().len(), 1);
    assert_eq!(aborts(&sim), Vec::<u64>::new());
    assert_eq!(
        errors(&sim.log.iter().map(|(_, a)| a.clone()).collect::<Vec<_>>()).len(),
        0
    );
    assert_eq!(sim.engine.state(), State::Open);
}

/// Rule 1: any byte means "not buffered". A single comment 44 s after the head
/// (one second before the deadline) and then silence: the stream is not
/// taken for a buffering proxy; it is aborted as `stalled` one idle timeout
/// (45 s) after that byte, at 89 050 ms.
#[test]
fn rule1_a_late_first_byte_is_liveness_not_buffering() {
    let mut sim = Sim::new(fetch_sse_config(), 24);
    let o = the_open(&sim.start());
    sim.run_for(50);
    sim.head(o.id, es_head(200));
    sim.run_for(44_000);
    sim.bytes(o.id, b":\n\n");
    sim.run_for(60_000);
    assert_eq!(aborts(&sim), [89_050]);
    let waiting = sim.find(|a| match a {
        Action::State {
            state: State::Waiting,
            reason,
            ..
        } => Some(*reason),
        _ => None,
    });
    assert_eq!(waiting.first().map(|w| w.1), Some(Reason::Stalled));
    let buffered = sim.find(|a| match a {
        Action::TransportChanged { reason, .. } if *reason == Reason::BufferedStream => Some(()),
        _ => None,
    });
    assert!(buffered.is_empty(), "{buffered:?}");
}

/// Rule 1 on `eventsource` (comments are invisible): an open stream with no
/// event is given the full 45 s before it counts as buffered (with
/// `fetch-sse` to move to: alone, the stream is kept: `engine_eventsource.rs`).
#[test]
fn rule1_eventsource_first_event_deadline_is_45_s() {
    let mut c = Config::new("/stream");
    c.transports = vec![TransportKind::EventSource, TransportKind::FetchSse];
    let mut sim = Sim::new(c, 24);
    let o = the_open(&sim.start());
    sim.run_for(50);
    sim.opened(o.id);
    sim.run_for(44_999);
    assert_eq!(aborts(&sim), Vec::<u64>::new());
    sim.run_for(1);
    assert_eq!(aborts(&sim), [45_050]);
}

/// One stream of a server that ends every stream after two events (ids
/// `2i+1`, `2i+2`), 300 ms after the head; `retry:` first when given.
fn two_events_then_end(sim: &mut Sim, i: u64, retry: Option<u64>, native: bool) {
    let o = sim.must_open(600_000);
    sim.run_for(20);
    let (a, b) = ((2 * i + 1).to_string(), (2 * i + 2).to_string());
    if native {
        sim.opened(o.id);
        sim.native(o.id, "message", "x", &a);
        sim.native(o.id, "message", "y", &b);
    } else {
        let mut body = retry.map(|r| format!("retry: {r}\n\n")).unwrap_or_default();
        body.push_str(&format!("id: {a}\ndata: x\n\nid: {b}\ndata: y\n\n"));
        sim.stream(o.id, body.as_bytes());
    }
    sim.run_for(280);
    sim.end(o.id);
}

/// The waits of every `waiting` state, in order.
fn waits(sim: &Sim) -> Vec<u64> {
    sim.find(|a| match a {
        Action::State {
            state: State::Waiting,
            delay_ms: Some(d),
            ..
        } => Some(*d),
        _ => None,
    })
    .into_iter()
    .map(|(_, d)| d)
    .collect()
}

/// A server ending `n` streams cleanly after two events each
/// (two_events_then_end, seed 24): the sim and its waits, which must number
/// `n` and each lie in `floor_ms + U[0, floor_ms)` (rule 2: never growing).
#[track_caller]
fn rule2_waits(
    config: Config,
    n: u64,
    retry: Option<u64>,
    native: bool,
    floor_ms: u64,
) -> (Sim, Vec<u64>) {
    let mut sim = Sim::new(config, 24);
    sim.start();
    sim.touched = 0;
    for i in 0..n {
        two_events_then_end(&mut sim, i, retry, native);
    }
    let w = waits(&sim);
    assert_eq!(w.len(), n as usize);
    let healthy = floor_ms..2 * floor_ms;
    assert!(w.iter().all(|d| healthy.contains(d)), "{w:?}");
    (sim, w)
}

/// Rule 2 on `fetch-sse`: twelve streams of two events each, every one ended
/// cleanly by the server after 300 ms. Every wait is the floor plus the
/// healthy spread, `1000 + U[0, 1000)`: it never grows (counted as failures, the
/// waits would grow as 2^k and the eighth would be past 30 s). Every event once.
#[test]
fn rule2_short_streams_with_events_reconnect_after_the_floor() {
    let (sim, w) = rule2_waits(fetch_sse_config(), 12, None, false, 1000);
    assert_eq!(
        w,
        [1646, 1565, 1504, 1794, 1933, 1171, 1589, 1600, 1041, 1470, 1273, 1476]
    );
    let ids: Vec<String> = sim.delivered().into_iter().map(|m| m.id).collect();
    let want: Vec<String> = (1..=24).map(|n: u32| n.to_string()).collect();
    assert_eq!(ids, want);
    assert!(errors(&sim.log.iter().map(|(_, a)| a.clone()).collect::<Vec<_>>()).is_empty());
}

/// Rule 2 with the server's `retry: 2000` (better-sse's default): every wait
/// is `2000 + U[0, 2000)`.
#[test]
fn rule2_server_retry_is_the_floor() {
    rule2_waits(fetch_sse_config(), 10, Some(2000), false, 2000);
}

/// Rule 2 does not depend on the transport: native `EventSource` events and a
/// clean end (the adapter's `handle_stream_end`) give the same floor waits.
#[test]
fn rule2_same_rule_on_eventsource() {
    rule2_waits(only(TransportKind::EventSource), 8, None, true, 1000);
}

/// What stays a failure (the count grows, BC-11): a stream that ends by a
/// network error after its events; one whose events were all repeats (a
/// server that replays from its start and hangs up). What counts as progress:
/// new events left out by the `events` filter (the server's news all the
/// same). Each case: five streams; the fifth wait shows whether `k` grew
/// (`floor + U[0, 500·2^4)`) or not.
#[test]
fn rule2_what_counts_as_progress() {
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Case {
        ErrorEnd,
        Replay,
        Filtered,
    }
    for case in [Case::ErrorEnd, Case::Replay, Case::Filtered] {
        let mut sim = Sim::new(fetch_sse_config(), 7);
        sim.start();
        sim.touched = 0;
        for i in 0..5u64 {
            let o = sim.must_open(600_000);
            sim.run_for(20);
            let body = match case {
                Case::ErrorEnd => format!("id: {}\ndata: x\n\n", i + 1),
                Case::Replay => "id: 1\ndata: x\n\n".to_string(),
                Case::Filtered => format!("id: {}\nevent: trade\ndata: x\n\n", i + 1),
            };
            sim.stream(o.id, body.as_bytes());
            sim.run_for(280);
            if case == Case::ErrorEnd {
                sim.error(o.id, TransportError::Network);
            } else {
                sim.end(o.id);
            }
        }
        let w = waits(&sim);
        assert_eq!(w.len(), 5, "{case:?}");
        let healthy = w.iter().all(|&d| (1000..2000).contains(&d));
        assert_eq!(healthy, case == Case::Filtered, "{case:?}: {w:?}");
    }
}

/// A clean end of a native `EventSource` keeps the cursor its events set (the
/// SSE parser never saw them; taking its stale id reset the cursor to "").
#[test]
fn eventsource_clean_end_keeps_the_cursor() {
    let mut sim = Sim::new(only(TransportKind::EventSource), 24);
    sim.start();
    sim.touched = 0;
    two_events_then_end(&mut sim, 0, None, true);
    assert_eq!(sim.engine.last_event_id(), "2");
    let o = sim.must_open(10_000);
    assert!(o.url.contains("lastEventId=2"), "{}", o.url);
}

/// Rule 1's price, with every default (seed 24): what detecting a buffering
/// proxy costs now that the first-event deadline is 45 s. A proxy that holds
/// only the first stream: the second `fetch-sse` request goes out at
/// 46 384 ms. A proxy that holds every stream, default transport list: two
/// silent `eventsource` opens move to `fetch-sse` (which sees comments), two
/// silent `fetch-sse` opens move to `long-poll`, whose first request goes out
/// at 187 499 ms (4 × 45 s + the waits; with the old 15 s deadline: 67 499 ms).
/// With a long-poll endpoint of its own, the news probe: 5 000 ms.
#[test]
fn rule1_cost_of_detecting_a_buffering_proxy() {
    // Only the first stream is held.
    let mut sim = Sim::new(fetch_sse_config(), 24);
    let o = the_open(&sim.start());
    sim.run_for(50);
    sim.head(o.id, es_head(200));
    let second = sim.must_open(120_000);
    assert_eq!(second.transport, TransportKind::FetchSse);
    assert_eq!(sim.last_open_at, 46_384);

    // Every stream is held; the default preference list.
    for (first_event_ms, want) in [(45_000, 187_499), (15_000, 67_499)] {
        let mut c = Config::new("/stream");
        c.watchdog.first_event_timeout_ms = first_event_ms;
        let mut sim = Sim::new(c, 24);
        let mut o = the_open(&sim.start());
        while o.transport.is_streaming() {
            sim.run_for(50);
            if o.transport == TransportKind::EventSource {
                sim.opened(o.id);
            } else {
                sim.head(o.id, es_head(200));
            }
            o = sim.must_open(300_000);
        }
        assert_eq!(o.transport, TransportKind::LongPoll);
        assert_eq!(sim.opens().len(), 5, "{first_event_ms}");
        assert_eq!(sim.last_open_at, want, "{first_event_ms}");
    }
    // With a long-poll endpoint of its own, the news probe (3 s after the
    // first request) finds the proxy: the server's next event answers it at
    // 4,000 ms, and the first message reaches the app at 5,000 ms, when the
    // connection moves to `long-poll`.
    let mut c = Config::new("/stream");
    c.urls.long_poll = Some("/long-poll".into());
    let (mut sim, o) = Sim::started(c, 24);
    sim.run_for(50);
    sim.opened(o.id);
    let p = sim.must_open(10_000);
    assert_eq!(
        (sim.last_open_at, p.transport),
        (3_000, TransportKind::LongPoll)
    );
    sim.run_until(4_000);
    sim.head(p.id, es_head(200));
    sim.bytes(p.id, b"id: 1\ndata: tick\n\n");
    sim.end(p.id);
    sim.run_until(6_000);
    let first = sim.find(|a| match a {
        Action::Deliver(m) => Some(m.data.clone()),
        _ => None,
    });
    assert_eq!(first, [(5_000, "tick".to_string())]);
    let next = sim.opens().pop().map(|(at, o)| (at, o.transport));
    assert_eq!(next, Some((5_000, TransportKind::LongPoll)));
}
