//! Rules where features of the engine meet: a kept silent stream's health (`quiet`), the cursor
//! around replayed events (`replay`), replays of events the app never gets
//! (`decode`), and which attempts the replay watch covers (`replay`).
#[path = "engine_support.rs"]
mod support;

use support::*;
use tidings_core::engine::{Action, Config, ErrorCode, TransportError, TransportKind};

fn gave_up(sim: &Sim) -> Vec<(u64, ())> {
    sim.find(|a| match a {
        Action::Error {
            code: ErrorCode::GaveUp,
            ..
        } => Some(()),
        _ => None,
    })
}

/// Rule (`quiet`): a silent `eventsource` stream kept past the first-event
/// deadline (no other transport usable) that the server closes after at
/// least `backoff.healthyAfterMs` ended healthy: the close does not grow the
/// backoff step nor count toward `backoff.maxAttempts` (before: gave up after
/// 3 hour-long streams with `maxAttempts` 3).
#[test]
fn kept_silent_stream_that_ends_is_not_a_failure() {
    let mut c = Config::new("/stream");
    c.transports = vec![TransportKind::EventSource];
    c.backoff.max_attempts = Some(3);
    let mut sim = Sim::new(c, 7);
    let mut o = the_open(&sim.start());
    let mut streams = 0;
    for _ in 0..4 {
        sim.run_for(40);
        sim.opened(o.id);
        sim.run_for(3_600_000); // kept past the 45 s deadline, server pings with comments
        sim.error(o.id, TransportError::NativeReconnecting);
        streams += 1;
        match sim.next_open(120_000) {
            Some(n) => o = n,
            None => break,
        }
    }
    assert_eq!(streams, 4);
    assert!(
        gave_up(&sim).is_empty(),
        "gave up after quiet healthy streams"
    );
}

/// Rule (`replay::BatchCursor`): once an event is dropped as a replay, an
/// id-less event after it in the same chunk takes the cursor kept before the
/// replay (not the replayed id), so the cursor, and the delivered message's
/// `lastEventId`, are the same whatever the chunk boundaries.
#[test]
fn replayed_id_followed_by_idless_event_keeps_cursor() {
    let run = |split: bool| {
        let mut sim = Sim::new(fetch_sse_config(), 3);
        let o = the_open(&sim.start());
        sim.stream(o.id, b"id: 1\ndata: a\n\nid: 2\ndata: b\n\n");
        assert_eq!(sim.engine.last_event_id(), "2");
        sim.end(o.id);
        let o = sim.must_open(120_000);
        // Resumes one early (rounded-down cursor), then a new id-less event.
        if split {
            sim.stream(o.id, b"id: 1\ndata: a\n\n");
            sim.bytes(o.id, b"data: c\n\n");
        } else {
            sim.stream(o.id, b"id: 1\ndata: a\n\ndata: c\n\n");
        }
        let c: Vec<String> = sim
            .delivered()
            .into_iter()
            .filter(|m| m.data == "c")
            .map(|m| m.last_event_id)
            .collect();
        (String::from(sim.engine.last_event_id()), c)
    };
    let two = (String::from("2"), vec![String::from("2")]);
    assert_eq!(run(true), two);
    assert_eq!(run(false), two, "cursor moved back to the replayed id");
}

/// Rule (`decode::offer_unwanted`): an event left out by the `events` filter
/// goes through dedupe without being delivered: its replay keeps the cursor
/// (before: it moved back to the replayed id).
#[test]
fn filtered_replay_keeps_cursor() {
    let mut c = fetch_sse_config();
    c.events = vec![String::from("price")];
    let mut sim = Sim::new(c, 5);
    let o = the_open(&sim.start());
    let history = b"id: 1\nevent: news\ndata: n\n\nid: 2\nevent: price\ndata: p\n\n";
    sim.stream(o.id, history);
    assert_eq!(sim.engine.last_event_id(), "2");
    sim.end(o.id);
    let o = sim.must_open(120_000);
    sim.stream(o.id, history); // server ignores Last-Event-ID: 2, replays all
    assert_eq!(
        sim.engine.last_event_id(),
        "2",
        "cursor moved back to a replayed id"
    );
}

/// Rule (`retry::made_progress`, "never a duplicate"): a replayed event left
/// out by the filter is not the server's news, so streams that only replay
/// end unhealthy and `backoff.maxAttempts` (3: the reconnect after the
/// healthy first stream is attempt 1) gives up at the end of the second
/// (before: each counted as progress, k reset, never gave up).
#[test]
fn filtered_replay_is_not_progress() {
    let mut c = fetch_sse_config();
    c.events = vec![String::from("price")];
    c.backoff.max_attempts = Some(3);
    let mut sim = Sim::new(c, 5);
    let mut o = the_open(&sim.start());
    let history = b"id: 1\nevent: news\ndata: n\n\nid: 2\nevent: price\ndata: p\n\n";
    let mut streams = 0;
    for _ in 0..5 {
        sim.stream(o.id, history);
        sim.end(o.id);
        streams += 1;
        match sim.next_open(600_000) {
            Some(n) => o = n,
            None => break,
        }
    }
    assert_eq!(streams, 3, "the first stream and two pure replays");
    assert_eq!(gave_up(&sim).len(), 1);
}

/// Rule (`decode::offer_unwanted`): a server event with a reserved name is
/// reported as `Ignored` once; its replay is a duplicate (not reported again)
/// and keeps the cursor.
#[test]
fn reserved_name_replay_is_reported_once() {
    let mut sim = Sim::new(fetch_sse_config(), 11);
    let o = the_open(&sim.start());
    let history = b"id: 1\nevent: error\ndata: x\n\nid: 2\ndata: b\n\n";
    sim.stream(o.id, history);
    sim.end(o.id);
    let o = sim.must_open(120_000);
    sim.stream(o.id, b"id: 1\nevent: error\ndata: x\n\n");
    let ignored = sim.find(|a| match a {
        Action::Ignored { event, id, .. } => Some((event.clone(), id.clone())),
        _ => None,
    });
    assert_eq!(ignored.len(), 1, "{ignored:?}");
    assert_eq!(ignored[0].1, (String::from("error"), String::from("1")));
    assert_eq!(sim.engine.last_event_id(), "2");
}

/// Rule (`replay::watch_replay`): only an attempt that sent the cursor in the
/// query is watched for an ignored resume. A same-origin `poll` sends
/// `Last-Event-ID`; an endpoint answering its recent list every time is not
/// `resume-ignored` and keeps `poll` (before: the error and a move away
/// after the second answer).
#[test]
fn poll_recent_list_is_not_resume_ignored() {
    let mut c = Config::new("/feed");
    c.transports = vec![TransportKind::Poll, TransportKind::FetchSse];
    let mut sim = Sim::new(c, 9);
    let mut o = the_open(&sim.start());
    for _ in 0..2 {
        let head =
            tidings_core::engine::ResponseHead::new(200).with_content_type("application/json");
        sim.head(o.id, head);
        let list = vec![
            msg(Some("1"), None, "a"),
            msg(Some("2"), None, "b"),
            msg(Some("3"), None, "c"),
        ];
        sim.messages(o.id, list, None);
        o = sim.must_open(300_000);
    }
    let ri = sim.find(|a| match a {
        Action::Error {
            code: ErrorCode::ResumeIgnored,
            ..
        } => Some(()),
        _ => None,
    });
    assert!(ri.is_empty(), "poll answer taken for resume-ignored");
    assert_eq!(sim.engine.transport(), Some(TransportKind::Poll));
    assert_eq!(sim.delivered().len(), 3);
}

/// Rule (`decode::offer_unwanted`, on `eventsource`): a native event left
/// out by the filter that repeats one already seen (same id, type and data)
/// keeps the cursor, like a repeated delivered event.
#[test]
fn native_filtered_replay_keeps_cursor() {
    let mut c = Config::new("/stream");
    c.transports = vec![TransportKind::EventSource];
    c.events = vec![String::from("price")];
    let mut sim = Sim::new(c, 13);
    let o = the_open(&sim.start());
    sim.opened(o.id);
    sim.native(o.id, "news", "n", "1");
    sim.native(o.id, "price", "p", "2");
    assert_eq!(sim.engine.last_event_id(), "2");
    sim.error(o.id, TransportError::NativeReconnecting);
    let o = sim.must_open(120_000);
    sim.opened(o.id);
    sim.native(o.id, "news", "n", "1");
    assert_eq!(
        sim.engine.last_event_id(),
        "2",
        "cursor moved back to a replayed id"
    );
}
