//! The news probe (`engine/news_probe.rs`) on virtual time: a silent stream
//! gets one plain long-poll beside it 3 s after its request went out, whose
//! answer is handled as it comes and delivered at the verdict; news the
//! stream still lacks 1 s later moves the connection to `long-poll`; a probe
//! that holds or answers empty leaves the stream with no first-event
//! deadline.

#[path = "engine_support.rs"]
mod support;

use support::*;
use tidings_core::engine::{
    Action, BodyRead, Config, OpenRequest, Reason, ResponseHead, TransportError, TransportKind,
    ACCEPT_LONG_POLL,
};

/// The default transport list, with a long-poll endpoint of its own.
fn with_long_poll(c: Config) -> Config {
    let mut c = c;
    c.urls.long_poll = Some("/long-poll".into());
    c
}

/// The `Open`s that ran beside the live request (the probes).
fn probes(sim: &Sim) -> Vec<(u64, OpenRequest)> {
    sim.opens().into_iter().filter(|(_, o)| o.beside).collect()
}

/// Every `Open` that replaced the live request.
fn attempts(sim: &Sim) -> Vec<(u64, OpenRequest)> {
    sim.opens().into_iter().filter(|(_, o)| !o.beside).collect()
}

/// The transport changes: (time, to, reason).
fn changes(sim: &Sim) -> Vec<(u64, (TransportKind, Reason))> {
    sim.find(|a| match a {
        Action::TransportChanged {
            transport,
            previous: Some(_),
            reason,
            ..
        } => Some((*transport, *reason)),
        _ => None,
    })
}

/// A proxy that holds every stream: the native stream opens and shows
/// nothing; at 3,000 ms the probe goes to the long-poll endpoint with the
/// cursor; the server's next event answers it at 4,000 ms (handled as any
/// long-poll answer, its delivery held); at 5,000 ms the stream still shows
/// nothing: it is aborted, the connection is on `long-poll`
/// (`buffered-stream`), the event is delivered and the next long-poll goes
/// out at once with its id.
#[test]
fn a_held_stream_moves_to_long_poll_with_the_probes_answer() {
    let (mut sim, o) = Sim::started(with_long_poll(Config::new("/sse")), 24);
    assert_eq!(o.transport, TransportKind::EventSource);
    sim.run_for(50);
    sim.opened(o.id);
    let p = sim.must_open(10_000);
    assert_eq!((sim.last_open_at, p.beside), (3_000, true));
    assert_eq!(p.transport, TransportKind::LongPoll);
    assert_eq!(p.url, "/long-poll");
    assert_eq!(header(&p, "Accept"), Some(ACCEPT_LONG_POLL));
    sim.run_until(4_000);
    sim.head(p.id, es_head(200));
    // An event-stream answer, read as any long-poll's.
    assert_eq!(sim.engine.body_read(p.id), BodyRead::Chunks);
    sim.bytes(p.id, b"id: 8\ndata: tick\n\n");
    sim.end(p.id);
    assert_eq!(sim.engine.live_attempt(), Some(o.id));
    assert!(sim.delivered().is_empty());
    let next = sim.must_open(10_000);
    assert_eq!(next.transport, TransportKind::LongPoll);
    assert!(!next.beside);
    assert_eq!(header(&next, "Last-Event-ID"), Some("8"));
    let delivered = sim.find(|a| match a {
        Action::Deliver(m) => Some((m.id.clone(), m.data.clone())),
        _ => None,
    });
    assert_eq!(delivered, [(5_000, ("8".into(), "tick".into()))]);
    assert_eq!(
        changes(&sim),
        [(5_000, (TransportKind::LongPoll, Reason::BufferedStream))]
    );
    let aborted = sim.find(|a| match a {
        Action::Abort(id) => Some(id.0),
        _ => None,
    });
    assert_eq!(aborted, [(5_000, o.id.0)]);
    assert_eq!(sim.last_open_at, 5_000);
    assert!(errors(&sim.log.iter().map(|(_, a)| a.clone()).collect::<Vec<_>>()).is_empty());
    // Remembered as any downgrade.
    assert_eq!(
        sim.engine.downgrade().map(|d| d.0),
        Some(TransportKind::LongPoll)
    );
}

/// The probe's JSON answer arrives first and the stream brings the same
/// event 600 ms later: the stream is not held back, it stays, and the event
/// is delivered once (the stream's copy is a duplicate).
#[test]
fn a_stream_that_brings_the_news_within_the_grace_stays() {
    let c = with_long_poll(fetch_sse_config());
    let (mut sim, o) = Sim::started(c, 24);
    sim.run_for(50);
    sim.head(o.id, es_head(200));
    let p = sim.must_open(10_000);
    assert_eq!(sim.last_open_at, 3_000);
    sim.run_until(20_000);
    sim.head(p.id, json_head(200));
    assert_eq!(sim.engine.body_read(p.id), BodyRead::Json);
    sim.messages(p.id, vec![msg(Some("1"), None, "a")], None);
    sim.run_for(600);
    sim.bytes(o.id, b"id: 1\ndata: a\n\n");
    sim.run_until(40_000);
    // The probe's copy, held, is the one delivered, when the stream shows
    // its own (dropped by dedupe).
    let delivered = sim.find(|a| match a {
        Action::Deliver(m) => Some(m.data.clone()),
        _ => None,
    });
    assert_eq!(delivered, [(20_600, "a".to_string())]);
    assert_eq!(attempts(&sim).len(), 1);
    assert_eq!(probes(&sim).len(), 1);
    assert!(changes(&sim).is_empty());
}

/// A quiet server that pings every 15 s for 5 minutes (comments: invisible
/// to a native stream, bytes to `fetch-sse`): on each stream transport, 0
/// reconnects and one probe. On `eventsource` the probe holds until the
/// long-poll timeout (aborted at 38,000 ms) and the stream has no
/// first-event deadline after it; on `fetch-sse` the first ping at 15,050 ms
/// aborts it.
#[test]
fn a_quiet_server_pinging_every_15_s_keeps_its_stream() {
    for transport in [TransportKind::EventSource, TransportKind::FetchSse] {
        let mut c = with_long_poll(Config::new("/sse"));
        c.transports = vec![transport, TransportKind::LongPoll, TransportKind::Poll];
        let (mut sim, o) = Sim::started(c, 24);
        sim.run_for(50);
        if transport == TransportKind::EventSource {
            sim.opened(o.id);
        } else {
            sim.head(o.id, es_head(200));
        }
        let mut t = 50;
        while t + 15_000 <= 300_000 {
            t += 15_000;
            sim.run_until(t);
            if transport == TransportKind::FetchSse {
                sim.bytes(o.id, b": ping\n\n");
            }
        }
        sim.run_until(300_000);
        assert_eq!(attempts(&sim).len(), 1, "{transport:?}");
        assert_eq!(probes(&sim).len(), 1, "{transport:?}");
        let p = probes(&sim)[0].1.id;
        let probe_aborted = sim.find(|a| matches!(a, Action::Abort(id) if *id == p).then_some(()));
        let want = if transport == TransportKind::EventSource {
            38_000
        } else {
            15_050
        };
        assert_eq!(probe_aborted, [(want, ())], "{transport:?}");
        assert_eq!(aborts(&sim).len(), 1, "{transport:?}");
        assert_eq!(sim.engine.stats().reconnects, 0, "{transport:?}");
    }
}

/// The probe answers "no news" (204 after a 30 s hold, or an empty JSON
/// array): quiet, the stream stays past the 45 s first-event deadline.
#[test]
fn an_empty_answer_is_a_quiet_server() {
    for empty_json in [false, true] {
        let (mut sim, o) = Sim::started(with_long_poll(Config::new("/sse")), 24);
        sim.run_for(50);
        sim.opened(o.id);
        let p = sim.must_open(10_000);
        sim.run_until(33_000);
        if empty_json {
            sim.head(p.id, json_head(200));
            sim.messages(p.id, Vec::new(), None);
        } else {
            sim.head(p.id, ResponseHead::new(204));
        }
        sim.run_until(200_000);
        assert_eq!(attempts(&sim).len(), 1, "{empty_json}");
        assert_eq!(aborts(&sim), [33_000], "{empty_json}");
    }
}

/// A probe with no verdict (a 503, a network failure) changes nothing: the
/// stream keeps its first-event deadline, which ends it at 45,050 ms (the
/// first strike: the next attempt is native again).
#[test]
fn a_probe_without_a_verdict_leaves_the_first_event_deadline() {
    for refused in [false, true] {
        let (mut sim, o) = Sim::started(with_long_poll(Config::new("/sse")), 24);
        sim.run_for(50);
        sim.opened(o.id);
        let p = sim.must_open(10_000);
        sim.run_for(100);
        if refused {
            sim.error(p.id, TransportError::Network);
        } else {
            sim.head(p.id, ResponseHead::new(503));
        }
        let next = sim.must_open(100_000);
        assert_eq!(next.transport, TransportKind::EventSource, "{refused}");
        assert_eq!(
            (sim.last_open_at, aborts(&sim)),
            (46_384, vec![3_100, 45_050])
        );
        // The next stream gets its own probe, 3 s after its request.
        let p2 = sim.must_open(10_000);
        assert_eq!((sim.last_open_at, p2.beside), (49_384, true), "{refused}");
    }
}

/// No probe once a stream has shown something, and none without a long-poll
/// endpoint of its own (one URL: the first-event deadline alone).
#[test]
fn no_probe_after_a_byte_or_without_a_long_poll_endpoint() {
    let (mut sim, o) = Sim::started(with_long_poll(fetch_sse_config()), 24);
    sim.run_for(50);
    sim.stream(o.id, b": hi\n\n");
    sim.run_until(40_000);
    assert!(probes(&sim).is_empty());

    let (mut sim, o) = Sim::started(Config::new("/sse"), 24);
    sim.run_for(50);
    sim.opened(o.id);
    sim.run_until(40_000);
    assert!(probes(&sim).is_empty());
    assert_eq!(attempts(&sim).len(), 1);
}

/// The stream ends while the probe is out (or its page is hidden): the
/// probe is aborted with it, and its late answer is ignored.
#[test]
fn the_probe_ends_with_its_stream() {
    let (mut sim, o) = Sim::started(with_long_poll(fetch_sse_config()), 24);
    sim.run_for(50);
    sim.head(o.id, es_head(200));
    let p = sim.must_open(10_000);
    sim.run_until(5_000);
    sim.error(o.id, TransportError::Network);
    assert_eq!(aborts(&sim), [5_000]);
    sim.head(p.id, json_head(200));
    sim.messages(p.id, vec![msg(Some("1"), None, "late")], None);
    sim.run_for(2_000);
    assert!(sim.delivered().is_empty());
    assert!(changes(&sim).is_empty());
}

/// A JSON answer to the probe of a held `fetch-sse` stream resuming from
/// id 7: the probe carries the cursor, its message is delivered once at the
/// verdict (1 s after the answer), and the next long-poll resumes after it
/// at once.
#[test]
fn a_json_answer_is_the_first_long_poll_answer() {
    let mut c = with_long_poll(fetch_sse_config());
    c.last_event_id = "7".into();
    let (mut sim, o) = Sim::started(c, 24);
    sim.run_for(50);
    sim.head(o.id, es_head(200));
    let p = sim.must_open(10_000);
    assert_eq!(header(&p, "Last-Event-ID"), Some("7"));
    sim.run_until(7_000);
    sim.head(p.id, json_head(200));
    sim.messages(p.id, vec![msg(Some("8"), None, "x")], None);
    sim.end(p.id);
    let next = sim.must_open(10_000);
    assert_eq!(header(&next, "Last-Event-ID"), Some("8"));
    let delivered = sim.find(|a| match a {
        Action::Deliver(m) => Some(m.id.clone()),
        _ => None,
    });
    assert_eq!(delivered, [(8_000, "8".to_string())]);
    assert_eq!(sim.last_open_at, 8_000);
    assert_eq!(
        changes(&sim),
        [(8_000, (TransportKind::LongPoll, Reason::BufferedStream))]
    );
}

/// The probe's event-stream answer and a `fetch-sse` stream share the
/// engine's parser: the stream's first byte arriving in the middle of the
/// probe's answer starts from a clean parser, so its event is read whole
/// (and the probe ends: the stream has shown something).
#[test]
fn a_streams_first_byte_in_the_middle_of_the_probes_answer_is_read_clean() {
    let (mut sim, o) = Sim::started(with_long_poll(fetch_sse_config()), 24);
    sim.run_for(50);
    sim.head(o.id, es_head(200));
    let p = sim.must_open(10_000);
    sim.run_until(4_000);
    sim.head(p.id, es_head(200));
    sim.bytes(p.id, b"id: 1\ndata: par");
    sim.run_for(10);
    sim.bytes(o.id, b"id: 1\ndata: whole\n\n");
    sim.run_until(10_000);
    let delivered = sim.find(|a| match a {
        Action::Deliver(m) => Some((m.id.clone(), m.data.clone())),
        _ => None,
    });
    assert_eq!(delivered, [(4_010, ("1".into(), "whole".into()))]);
    assert_eq!(aborts(&sim), [4_010]);
    assert!(changes(&sim).is_empty());
}
