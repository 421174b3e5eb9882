//! A message larger than the limit (`Config::sse_limits`, JS
//! `maxMessageBytes`, 1 MiB by default) is skipped on every transport: one
//! `Skipped` + a `too-large` error (not fatal, nothing retried), the cursor
//! moves past it by its own id (WHATWG HTML §9.2.6 commits a block's id at its
//! blank line whether or not an event fires), and the connection goes on with
//! the next message. Before, the parser error aborted the request and the
//! engine resumed from before the message, so a server replaying from the
//! cursor sent it again, forever.

#[path = "engine_support.rs"]
mod support;

use support::*;
use tidings_core::engine::{Action, ErrorCode, Message, OpenRequest, ResponseHead, TransportKind};
use tidings_core::sse::SseLimits;

const MIB: usize = 1 << 20;

/// The `too-large` error, carrying the skipped message's own id.
fn too_large(id: &str) -> Action {
    Action::Error {
        code: ErrorCode::TooLarge,
        status: None,
        retry_in_ms: None,
        fatal: false,
        id: Some(id.into()),
    }
}

fn skipped(id: &str, last: &str) -> Action {
    Action::Skipped {
        id: id.into(),
        last_event_id: last.into(),
    }
}

fn deliver(id: &str, last: &str, data: &str) -> Action {
    Action::Deliver(Box::new(Message {
        id: id.into(),
        last_event_id: last.into(),
        event: "message".into(),
        data: data.into(),
        binary: false,
    }))
}

/// Feed `body` in 64 KiB writes; every action.
fn feed_chunked(sim: &mut Sim, id: tidings_core::engine::AttemptId, body: &[u8]) -> Vec<Action> {
    body.chunks(64 * 1024)
        .flat_map(|c| sim.bytes(id, c))
        .collect()
}

/// `id: <id>\ndata: <n × x>\n\n`.
fn big_event(id: &str, n: usize) -> Vec<u8> {
    let mut b = format!("id: {id}\ndata: ").into_bytes();
    b.resize(b.len() + n, b'x');
    b.extend_from_slice(b"\n\n");
    b
}

/// fetch-sse, default limit: a 1.5 MiB event between two small ones. The
/// stream stays open (no abort, no reconnect), the small ones arrive, the big
/// one is one `Skipped` + `too-large` carrying its id, and the cursor is past
/// it; when the stream later ends, the reconnect resumes from the last id.
#[test]
fn fetch_sse_skips_an_event_over_one_mebibyte_and_goes_on() {
    let mut sim = Sim::new(fetch_sse_config(), 7);
    let o = the_open(&sim.start());
    sim.head(o.id, ResponseHead::event_stream());
    assert_eq!(
        sim.bytes(o.id, b"id: 1\ndata: a\n\n"),
        [deliver("1", "1", "a")]
    );
    let acts = feed_chunked(&mut sim, o.id, &big_event("2", 3 * MIB / 2));
    assert_eq!(acts, [skipped("2", "2"), too_large("2")]);
    assert_eq!(sim.engine.last_event_id(), "2");
    assert_eq!(
        sim.bytes(o.id, b"id: 3\ndata: c\n\n"),
        [deliver("3", "3", "c")]
    );
    assert_eq!(sim.engine.live_attempt(), Some(o.id));
    assert!(sim
        .find(|a| matches!(a, Action::Abort(_)).then_some(()))
        .is_empty());
    assert_eq!(sim.opens().len(), 1);
    // The server ends the stream: one reconnect, from the id after the skip.
    sim.end(o.id);
    let next = sim.must_open(60_000);
    assert_eq!(header(&next, "Last-Event-ID"), Some("3"));
}

/// A `fetch-sse` stream (seed 7) whose lines and event data may be 64 bytes
/// at most, its event-stream head answered.
fn open_with_64_byte_limits() -> (Sim, OpenRequest) {
    let mut config = fetch_sse_config();
    config.sse_limits = SseLimits {
        max_line_bytes: 64,
        max_event_data_bytes: 64,
    };
    let (mut sim, o) = Sim::started(config, 7);
    sim.head(o.id, ResponseHead::event_stream());
    (sim, o)
}

/// The id may come after the data, and an event without an id is skipped
/// too (the cursor then stays where it was, as for any event without one).
#[test]
fn fetch_sse_skip_with_late_id_and_without_id() {
    let (mut sim, o) = open_with_64_byte_limits();
    let body = format!(
        "data: {x}\nid: 9\n\ndata: {y}\ndata: {y}\n\ndata: ok\n\n",
        x = "x".repeat(100),
        y = "y".repeat(40)
    );
    assert_eq!(
        sim.bytes(o.id, body.as_bytes()),
        [
            skipped("9", "9"),
            too_large("9"),
            skipped("", "9"),
            too_large(""),
            deliver("", "9", "ok")
        ]
    );
}

/// Skipped events go through the same filter and dedupe as deliveries: an
/// unwanted type or the heartbeat event is not reported (the first of an
/// unwanted type is told as any dropped one is, `Ignored` with `filtered`),
/// a replayed id once.
#[test]
fn skipped_events_follow_the_filter_and_dedupe() {
    let (mut sim, o) = open_with_64_byte_limits();
    let x = "x".repeat(100);
    let body = format!(
        "event: other\nid: 1\ndata: {x}\n\nevent: heartbeat\ndata: {x}\n\nid: 2\ndata: {x}\n\nid: 2\ndata: {x}\n\n"
    );
    assert_eq!(
        sim.bytes(o.id, body.as_bytes()),
        [
            Action::Ignored {
                event: "other".into(),
                id: "1".into(),
                filtered: true
            },
            skipped("2", "2"),
            too_large("2")
        ]
    );
}

/// A body that ends (or is aborted) inside an event being skipped reports it
/// once, without an id (it was never dispatched): BC-16 V1's endless line,
/// now read through without buffering instead of aborted.
#[test]
fn body_ending_inside_a_skipped_event_reports_it() {
    let mut sim = Sim::new(fetch_sse_config(), 16);
    let o = the_open(&sim.start());
    sim.head(o.id, ResponseHead::event_stream());
    sim.bytes(o.id, b"id: 5\ndata: ");
    let chunk = vec![b'x'; 64 * 1024];
    for _ in 0..24 {
        sim.run_for(8);
        assert!(sim.bytes(o.id, &chunk).is_empty());
    }
    assert_eq!(sim.engine.live_attempt(), Some(o.id));
    let acts = sim.end(o.id);
    assert_eq!(acts.first(), Some(&skipped("", "")));
    assert_eq!(acts.get(1), Some(&too_large("")));
    assert_eq!(errors(&acts), [too_large("")]);
    assert_eq!(sim.engine.last_event_id(), "");
}

/// long-poll with an event-stream body (the reference server's default): the
/// big event is skipped, the next one delivered, and the next request asks
/// for what follows the big event's id, so the server never replays it.
#[test]
fn long_poll_event_stream_body_over_the_limit_does_not_loop() {
    let mut config = exact_retry_config(TransportKind::LongPoll);
    config.backoff.floor_ms = 1000;
    let mut sim = Sim::new(config, 3);
    let o = the_open(&sim.start());
    sim.head(o.id, ResponseHead::event_stream());
    let mut body = big_event("1", 3 * MIB / 2);
    body.extend_from_slice(b"id: 2\ndata: b\n\n");
    let mut acts = feed_chunked(&mut sim, o.id, &body);
    acts.extend(sim.end(o.id));
    // (The next request may go out with the answer: the spread after
    // an answer that came at once is 0.)
    assert_eq!(
        acts.iter()
            .filter(|a| !matches!(a, Action::State { .. } | Action::Open(_)))
            .cloned()
            .collect::<Vec<_>>(),
        [skipped("1", "1"), too_large("1"), deliver("2", "2", "b")]
    );
    let next = sim.must_open(200);
    assert_eq!(header(&next, "Last-Event-ID"), Some("2"));
    // An answer holding only the big event moves the cursor all the same.
    sim.head(next.id, ResponseHead::event_stream());
    let acts = feed_chunked(&mut sim, next.id, &big_event("3", 3 * MIB / 2));
    assert_eq!(acts, [skipped("3", "3"), too_large("3")]);
    sim.end(next.id);
    let third = sim.must_open(200);
    assert_eq!(header(&third, "Last-Event-ID"), Some("3"));
    assert_eq!(
        errors(&sim.log.iter().map(|(_, a)| a.clone()).collect::<Vec<_>>()).len(),
        2
    );
}

/// long-poll JSON answers and native EventSource events are decoded whole by
/// the browser, so the limit applies to each message's data: the same skip.
#[test]
fn json_and_native_messages_over_the_limit_are_skipped() {
    let mut config = Sim::new(fetch_sse_config(), 1).engine.config().clone();
    config.transports = vec![TransportKind::LongPoll];
    config.sse_limits.max_event_data_bytes = 16;
    let mut sim = Sim::new(config, 3);
    let o = the_open(&sim.start());
    sim.head(
        o.id,
        ResponseHead::new(200).with_content_type("application/json"),
    );
    let big = "z".repeat(17);
    let acts = sim.messages(
        o.id,
        vec![msg(Some("1"), None, &big), msg(Some("2"), None, "small")],
        None,
    );
    assert_eq!(
        acts.iter()
            .filter(|a| !matches!(a, Action::State { .. } | Action::Open(_)))
            .cloned()
            .collect::<Vec<_>>(),
        [
            skipped("1", "1"),
            too_large("1"),
            deliver("2", "2", "small")
        ]
    );
    let next = sim.must_open(200);
    assert_eq!(header(&next, "Last-Event-ID"), Some("2"));

    let mut config = Config::new("/stream");
    config.transports = vec![TransportKind::EventSource];
    config.sse_limits.max_event_data_bytes = 16;
    let mut sim = Sim::new(config, 3);
    let o = the_open(&sim.start());
    sim.opened(o.id);
    assert_eq!(
        sim.native(o.id, "message", &big, "7"),
        [skipped("7", "7"), too_large("7")]
    );
    assert_eq!(
        sim.native(o.id, "message", "ok", "8"),
        [deliver("8", "8", "ok")]
    );
    assert_eq!(sim.engine.live_attempt(), Some(o.id));
}

use tidings_core::engine::Config;
