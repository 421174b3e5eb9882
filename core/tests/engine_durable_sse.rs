//! The Durable Streams profile's SSE mode (`Live::Sse`, JS `live:
//! "sse"`; PROTOCOL.md §5.8) on virtual time: catch-up reads first, then
//! `live=sse` on `fetch-sse`; `data` events gathered until the `control`
//! event that places them; base64 data; closure; a malformed control event;
//! the server's periodic close taken as normal. Bodies as
//! `@durable-streams/server` 0.3.7 writes them.

#[path = "engine_support.rs"]
mod support;

use support::*;
use tidings_core::engine::{
    Action, AttemptId, Config, ErrorCode, Live, OpenRequest, Protocol, Reason, ResponseHead, State,
    TransportError, TransportKind,
};

const BASE: &str = "http://ds.test/v1/stream/s";

fn sse_config(start: &str) -> Config {
    let mut c = Config::new(BASE);
    c.protocol = Protocol::DurableStreams;
    c.live = Live::Sse;
    c.last_event_id = start.into();
    c
}

/// A catch-up 200 of `ct` at `next`, up to date, with `body`, read whole.
fn catch_up(sim: &mut Sim, id: AttemptId, ct: &str, next: &str, body: &[u8]) -> Vec<Action> {
    let head = ResponseHead::new(200)
        .with_content_type(ct)
        .with_header("stream-next-offset", next)
        .with_header("stream-up-to-date", "true");
    let mut out = sim.head(id, head);
    if ct == "application/json" {
        let els = if body.is_empty() {
            vec![]
        } else {
            vec![String::from_utf8_lossy(body).into_owned()]
        };
        sim.engine.handle_json_chunk(sim.now, id, Some(els));
        out.extend(sim.drain());
    } else {
        out.extend(sim.bytes(id, body));
        out.extend(sim.end(id));
    }
    out
}

/// A control event's block.
fn control(json: &str) -> String {
    format!("event: control\ndata: {json}\n\n")
}

/// A `data` event's block (one `data:` line per line of `text`).
fn data_event(text: &str) -> String {
    let lines: String = text.split('\n').map(|l| format!("data: {l}\n")).collect();
    format!("event: data\n{lines}\n")
}

/// Caught up on a text stream at `0_5` (one catch-up read): the first SSE
/// request, its head answered.
fn live_text(seed: u64, ct: &str) -> (Sim, OpenRequest) {
    let (mut sim, o) = Sim::started(sse_config("-1"), seed);
    catch_up(&mut sim, o.id, ct, "0_5", b"");
    let o = sim.must_open(200);
    (sim, o)
}

/// Each payload, sent as one data event with its own control event
/// (`1_0`, `1_1`, …), is a non-fatal `parse` error: nothing delivered, the
/// cursor moved past it.
fn each_payload_skipped(sim: &mut Sim, id: AttemptId, payloads: &[&str]) {
    for (i, bad) in payloads.iter().enumerate() {
        let next = format!("1_{i}");
        let out = sim.bytes(
            id,
            (data_event(bad) + &control(&format!(r#"{{"streamNextOffset":"{next}"}}"#))).as_bytes(),
        );
        assert!(delivered(&out).is_empty(), "{bad}");
        assert_eq!(parse_errors(&out), [(None, false)], "{bad}");
        assert_eq!(sim.engine.last_event_id(), next);
    }
}

fn parse_errors(actions: &[Action]) -> Vec<(Option<u64>, bool)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Error {
                code: ErrorCode::Parse,
                retry_in_ms,
                fatal,
                ..
            } => Some((*retry_in_ms, *fatal)),
            _ => None,
        })
        .collect()
}

/// Every request is on `fetch-sse`: a catch-up read (no `live`) until a
/// response says `Stream-Up-To-Date`, then `live=sse` with the offset. A data
/// event waits for its control event: delivered with the control's
/// `streamNextOffset` as its `lastEventId`, the cursor moved there, and
/// `streamCursor` echoed as `cursor` on the next request. `uptodate` is told
/// once, by the catch-up read; keep-alive controls tell nothing.
#[test]
fn catch_up_then_live_sse_with_the_cursor_echoed() {
    let (mut sim, o) = Sim::started(sse_config(""), 3);
    assert_eq!(o.transport, TransportKind::FetchSse);
    assert_eq!(o.url, format!("{BASE}?offset=-1"));
    assert!(o.headers.is_empty(), "{:?}", o.headers);
    let out = catch_up(&mut sim, o.id, "text/plain", "0_5", b"hello");
    assert_eq!(data(&out), ["hello"]);
    assert_eq!(up_to_date(&out), ["0_5"]);
    let o = sim.must_open(200);
    assert_eq!(o.transport, TransportKind::FetchSse);
    assert_eq!(o.url, format!("{BASE}?live=sse&offset=0_5"));

    sim.head(o.id, ResponseHead::event_stream());
    let body = data_event("wor")
        + &data_event("ld")
        + &control(r#"{"streamNextOffset":"0_9","streamCursor":"c1","upToDate":true}"#);
    // The data alone is not delivered: it has no offset yet.
    let split = body.len() - 20;
    let out = sim.bytes(o.id, &body.as_bytes()[..split]);
    assert!(delivered(&out).is_empty());
    let out = sim.bytes(o.id, &body.as_bytes()[split..]);
    let m = delivered(&out);
    assert_eq!(m.len(), 1);
    assert_eq!(
        (m[0].data.as_str(), m[0].last_event_id.as_str()),
        ("world", "0_9")
    );
    assert!(!m[0].binary);
    assert!(up_to_date(&out).is_empty(), "told once");
    assert_eq!(sim.engine.last_event_id(), "0_9");
    assert_eq!(sim.engine.state(), State::Open);
    // Keep-alive controls: nothing to tell.
    sim.run_for(30_000);
    let out = sim.bytes(
        o.id,
        control(r#"{"streamNextOffset":"0_9","streamCursor":"c2","upToDate":true}"#).as_bytes(),
    );
    assert!(out.is_empty(), "{out:?}");
    // The server's close: at once from the cursor, the last cursor echoed.
    sim.run_for(30_000);
    let end = sim.now.mono.0;
    let out = sim.end(o.id);
    assert!(errors(&out).is_empty(), "{out:?}");
    let o = sim.must_open(200);
    assert_eq!(o.url, format!("{BASE}?cursor=c2&live=sse&offset=0_9"));
    assert!(sim.last_open_at - end <= 100, "{}", sim.last_open_at - end);
    assert_eq!(sim.engine.transport(), Some(TransportKind::FetchSse));
}

/// `stream-sse-data-encoding: base64`: the data lines of an event are
/// joined, every line break removed, and the text decoded (RFC 4648); one
/// binary message per control event. An empty payload is no message; text
/// that is not base64 (a length not a multiple of 4, a character outside the
/// alphabet, data after `=`) is a non-fatal `parse` error: skipped at its
/// control event, the cursor moves past it.
#[test]
fn base64_data_across_lines() {
    let (mut sim, o) = live_text(1, "application/octet-stream");
    let head = ResponseHead::event_stream().with_header("Stream-SSE-Data-Encoding", "BASE64");
    sim.head(o.id, head);
    // CRLF line ends, the text split across lines.
    let body =
        "event: data\r\ndata: AQID\r\ndata: BAUG\r\ndata: Bw==\r\n\r\nevent: data\r\ndata:\r\n\r\n";
    let out = sim.bytes(
        o.id,
        (body.to_string() + &control(r#"{"streamNextOffset":"0_6","streamCursor":"1"}"#))
            .as_bytes(),
    );
    let m = delivered(&out);
    assert_eq!(m.len(), 1);
    assert!(m[0].binary);
    assert_eq!(m[0].data, "\u{1}\u{2}\u{3}\u{4}\u{5}\u{6}\u{7}");
    assert_eq!(m[0].last_event_id, "0_6");
    // Every byte value survives.
    let out = sim.bytes(
        o.id,
        (data_event("/+8A") + &control(r#"{"streamNextOffset":"0_7"}"#)).as_bytes(),
    );
    assert_eq!(delivered(&out)[0].data, "\u{ff}\u{ef}\u{0}");
    // An empty payload: no message, the cursor moves.
    let out = sim.bytes(
        o.id,
        (data_event("") + &control(r#"{"streamNextOffset":"0_8"}"#)).as_bytes(),
    );
    assert!(delivered(&out).is_empty());
    assert_eq!(sim.engine.last_event_id(), "0_8");
    each_payload_skipped(&mut sim, o.id, &["AQI", "AQ=D", "A*ID", "AQ==AQID", "A==="]);
    assert!(
        sim.engine.live_attempt() == Some(o.id),
        "the stream goes on"
    );
}

/// JSON mode: the stream's content type comes from the catch-up read (an SSE
/// response says `text/event-stream`). A data event is a JSON array, which
/// may span several `data:` lines; each element is one message (its JSON
/// text), and several data events before one control are one batch: every
/// message but the last carries the cursor before it, the last the control's
/// offset. A data event that is not an array is a `parse` error, skipped.
#[test]
fn json_arrays_across_data_lines_and_events() {
    let (mut sim, o) = live_text(1, "application/json");
    assert_eq!(o.url, format!("{BASE}?live=sse&offset=0_5"));
    sim.head(o.id, ResponseHead::event_stream());
    let body = data_event("[\n{\"k\":\"v\"},\n{\"k\":\"w\"}\n]")
        + &data_event("[ 3 ]")
        + &control(r#"{"streamNextOffset":"0_9","streamCursor":"c"}"#);
    let m = delivered(&sim.bytes(o.id, body.as_bytes()));
    let got: Vec<(&str, &str)> = m
        .iter()
        .map(|m| (m.data.as_str(), m.last_event_id.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (r#"{"k":"v"}"#, "0_5"),
            (r#"{"k":"w"}"#, "0_5"),
            ("3", "0_9")
        ]
    );
    let out = sim.bytes(
        o.id,
        (data_event("[]") + &control(r#"{"streamNextOffset":"0_a"}"#)).as_bytes(),
    );
    assert!(delivered(&out).is_empty() && errors(&out).is_empty());
    each_payload_skipped(&mut sim, o.id, &["{\"k\":1}", "[1,]", "[1", "[1] x", "[,]"]);
}

/// `streamClosed: true`: the data before it is delivered, then state
/// `closed` (`stream-closed`), the request aborted, no error, and no request
/// ever after.
#[test]
fn a_closed_control_ends_the_stream() {
    let (mut sim, o) = live_text(1, "text/plain");
    sim.head(o.id, ResponseHead::event_stream());
    let body = data_event("last")
        + &control(r#"{"streamNextOffset":"0_7","streamClosed":true}"#)
        + &data_event("never")
        + &control(r#"{"streamNextOffset":"0_8"}"#);
    let out = sim.bytes(o.id, body.as_bytes());
    assert_eq!(data(&out), ["last"]);
    assert!(errors(&out).is_empty(), "{out:?}");
    assert!(out.contains(&Action::Abort(o.id)));
    assert_eq!(states(&out), [(State::Closed, Reason::StreamClosed, None)]);
    assert_eq!(sim.engine.last_event_id(), "0_7");
    assert!(sim.end(o.id).is_empty());
    assert!(sim.next_open(600_000).is_none());
}

/// A control event that is not a JSON object, has no `streamNextOffset`, or
/// one that is no offset: a `parse` failure under backoff. The request is
/// aborted, the data before it dropped (never delivered without its offset),
/// and the next request reads again from the last committed offset.
#[test]
fn a_malformed_control_event_fails_the_request() {
    for bad in [
        "{invalid json here",
        "",
        "[]",
        r#"{"streamCursor":"1"}"#,
        r#"{"streamNextOffset":7}"#,
        r#"{"streamNextOffset":"a/b"}"#,
        r#"{"streamNextOffset":"-1"}"#,
    ] {
        let (mut sim, o) = live_text(1, "text/plain");
        sim.head(o.id, ResponseHead::event_stream());
        // What follows in the same bytes belongs to the failed request.
        let body = data_event("lost")
            + &control(bad)
            + &data_event("after")
            + &control(r#"{"streamNextOffset":"0_9"}"#);
        let out = sim.bytes(o.id, body.as_bytes());
        assert!(delivered(&out).is_empty(), "{bad}");
        assert!(out.contains(&Action::Abort(o.id)), "{bad}");
        let e = parse_errors(&out);
        assert_eq!(e.len(), 1, "{bad}: {out:?}");
        assert!(
            !e[0].1 && e[0].0.is_some_and(|ms| ms >= 1000),
            "{bad}: {e:?}"
        );
        assert_eq!(sim.engine.last_event_id(), "0_5");
        let o = sim.must_open(2_000);
        assert_eq!(o.url, format!("{BASE}?live=sse&offset=0_5"), "{bad}");
        let out = sim.stream(
            o.id,
            (data_event("lost") + &control(r#"{"streamNextOffset":"0_6"}"#)).as_bytes(),
        );
        assert_eq!(data(&out), ["lost"], "{bad}");
    }
}

/// The server's periodic close (§5.8: about every 60 s) after a control
/// event is a success: the next request at once (within the 100 ms spread),
/// no backoff growth over ten cycles, the state stays `open`. A body that
/// ends before any control event is a failure: backoff (at least the 1 s
/// floor), so a server that closes at once makes no tight loop.
#[test]
fn the_periodic_close_is_normal_and_a_bare_close_backs_off() {
    let (mut sim, mut o) = live_text(9, "text/plain");
    let from = sim.log.len();
    let mut gaps = Vec::new();
    for i in 0..10 {
        sim.head(o.id, ResponseHead::event_stream());
        let next = format!("1_{i}");
        let body = data_event(&format!("m{i}"))
            + &control(&format!(
                r#"{{"streamNextOffset":"{next}","streamCursor":"{i}","upToDate":true}}"#
            ));
        assert_eq!(data(&sim.bytes(o.id, body.as_bytes())), [format!("m{i}")]);
        // The server's keep-alive control every 30 s (its long-poll timeout).
        sim.run_for(30_000);
        let keep_alive =
            format!(r#"{{"streamNextOffset":"{next}","streamCursor":"{i}","upToDate":true}}"#);
        assert!(sim.bytes(o.id, control(&keep_alive).as_bytes()).is_empty());
        sim.run_for(30_000);
        let end = sim.now.mono.0;
        let out = sim.end(o.id);
        assert!(
            errors(&out).is_empty() && waiting(&out).is_empty(),
            "{out:?}"
        );
        o = sim.must_open(1_000);
        gaps.push(sim.last_open_at - end);
        assert_eq!(o.url, format!("{BASE}?cursor={i}&live=sse&offset={next}"));
    }
    assert_eq!(gaps, [75, 26, 79, 26, 11, 65, 99, 22, 79, 59]);
    let told: Vec<Action> = sim.log[from..].iter().map(|(_, a)| a.clone()).collect();
    assert!(
        states(&told).iter().all(|s| s.0 == State::Open),
        "{:?}",
        states(&told)
    );
    // Open, then closed with nothing: backoff, growing.
    let mut delays = Vec::new();
    for _ in 0..3 {
        sim.head(o.id, ResponseHead::event_stream());
        let out = sim.end(o.id);
        let w = waiting(&out);
        assert_eq!(w.len(), 1, "{out:?}");
        delays.push(w[0].1);
        o = sim.must_open(70_000);
        assert_eq!(o.url, format!("{BASE}?cursor=9&live=sse&offset=1_9"));
    }
    assert!(delays.iter().all(|d| *d >= 1000), "{delays:?}");
    // floor 1 s + full jitter of 500 ms · 2^k: k = 0, 1, 2.
    assert_eq!(delays, [1107, 1986, 1480]);
}

/// Data after the last control event when the body ends is dropped and read
/// again by the next request, delivered once.
#[test]
fn data_after_the_last_control_is_read_again_once() {
    let (mut sim, o) = live_text(1, "text/plain");
    sim.head(o.id, ResponseHead::event_stream());
    let body = data_event("a")
        + &control(r#"{"streamNextOffset":"0_6","streamCursor":"1","upToDate":true}"#)
        + &data_event("b");
    assert_eq!(data(&sim.bytes(o.id, body.as_bytes())), ["a"]);
    let out = sim.end(o.id);
    assert!(delivered(&out).is_empty());
    // A body shorter than `backoff.floorMs` (1 s): paced to it.
    let o = sim.must_open(1_100);
    assert_eq!(sim.last_open_at, 1_075);
    assert_eq!(o.url, format!("{BASE}?cursor=1&live=sse&offset=0_6"));
    let out = sim.stream(
        o.id,
        (data_event("b") + &control(r#"{"streamNextOffset":"0_7"}"#)).as_bytes(),
    );
    assert_eq!(data(&out), ["b"]);
    assert_eq!(
        sim.delivered()
            .iter()
            .map(|m| m.data.as_str())
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
}

/// Any other event type, a comment, a `retry:` line and an `id:` line are
/// skipped: only control events move the cursor. A control event that
/// repeats the cursor delivers nothing (counted as a repeat when it had data).
#[test]
fn unknown_events_and_ids_are_skipped() {
    let (mut sim, o) = live_text(1, "text/plain");
    sim.head(o.id, ResponseHead::event_stream());
    let body = String::from("event: unknown-future-type\ndata: {\"some\":\"x\"}\n\n: comment\nid: 99\ndata: plain message\n\n")
        + &data_event("real")
        + &control(r#"{"streamNextOffset":"0_6"}"#);
    let out = sim.bytes(o.id, body.as_bytes());
    assert_eq!(data(&out), ["real"]);
    assert!(errors(&out).is_empty(), "{out:?}");
    assert_eq!(sim.engine.last_event_id(), "0_6");
    let out = sim.bytes(
        o.id,
        (data_event("old") + &control(r#"{"streamNextOffset":"0_6"}"#)).as_bytes(),
    );
    assert!(delivered(&out).is_empty());
    assert_eq!(sim.engine.stats().duplicates_dropped, 1);
}

/// The live request answered with something other than an event stream (a
/// server without SSE mode): a `parse` failure under backoff, not delivered.
/// A network error mid-stream backs off and resumes from the committed offset.
#[test]
fn a_live_answer_that_is_no_event_stream_fails() {
    let (mut sim, o) = live_text(1, "text/plain");
    let out = sim.head(
        o.id,
        ResponseHead::new(200)
            .with_content_type("text/plain")
            .with_header("stream-next-offset", "0_9"),
    );
    assert!(out.contains(&Action::Abort(o.id)));
    assert_eq!(parse_errors(&out).len(), 1, "{out:?}");
    let o = sim.must_open(2_000);
    assert_eq!(o.url, format!("{BASE}?live=sse&offset=0_5"));
    sim.head(o.id, ResponseHead::event_stream());
    sim.bytes(o.id, data_event("x").as_bytes());
    let out = sim.error(o.id, TransportError::NetworkOrCors);
    assert!(delivered(&out).is_empty());
    assert_eq!(waiting(&out).len(), 1, "{out:?}");
    let o = sim.must_open(2_000);
    assert_eq!(o.url, format!("{BASE}?live=sse&offset=0_5"));
}

/// A catch-up read on `fetch-sse` whose body comes slowly is watched as a
/// stream's body is (silent past `watchdog.idleMs`, 45 s), not by the
/// first-event deadline (45 s from the request) of a stream that never
/// answered.
#[test]
fn a_slow_catch_up_body_is_watched_for_silence() {
    let (mut sim, o) = Sim::started(sse_config("-1"), 1);
    let head = ResponseHead::new(200)
        .with_content_type("text/plain")
        .with_header("stream-next-offset", "0_9");
    sim.head(o.id, head);
    for part in [&b"a"[..], b"b", b"c", b"d", b"e", b"f"] {
        assert!(errors(&sim.run_for(10_000)).is_empty());
        sim.bytes(o.id, part);
    }
    assert_eq!(data(&sim.end(o.id)), ["abcdef"]);
    let o = sim.must_open(200);
    sim.head(
        o.id,
        ResponseHead::new(200)
            .with_content_type("text/plain")
            .with_header("stream-next-offset", "0_9"),
    );
    let out = sim.run_for(45_000);
    assert_eq!(errors(&out).len(), 1, "{out:?}");
    assert!(out.contains(&Action::Abort(o.id)));
}

/// A binary stream's data is base64 even when the head does not say so (a
/// cross-origin server that does not expose `stream-sse-data-encoding`): the
/// catch-up read's content type said binary.
#[test]
fn a_binary_stream_is_base64_without_the_header() {
    let (mut sim, o) = live_text(1, "application/octet-stream");
    let body = data_event("AAEC") + &control(r#"{"streamNextOffset":"0_6"}"#);
    let m = delivered(&sim.stream(o.id, body.as_bytes()));
    assert_eq!((m[0].data.as_str(), m[0].binary), ("\u{0}\u{1}\u{2}", true));
}
