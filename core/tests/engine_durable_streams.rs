//! The Durable Streams profile (`Protocol::DurableStreams`, engine::durable)
//! on virtual time: where the cursor (offset) is read and written, catch-up
//! then live long-poll, exactly once by position, body kinds, closure, 410.
//! Headers and statuses as PROTOCOL.md §5.6/§5.7 specify them and as
//! `@durable-streams/server` 0.3.7 sends them.

#[path = "engine_support.rs"]
mod support;

use support::*;
use tidings_core::engine::{
    Action, AttemptId, BodyRead, Config, CrossOrigin, Engine, ErrorCode, Live, Protocol, Reason,
    ResetReason, ResponseHead, State, TransportError, TransportKind,
};

fn ds_config(start: &str) -> Config {
    let mut c = Config::new("http://ds.test/v1/stream/s");
    c.protocol = Protocol::DurableStreams;
    c.last_event_id = start.into();
    c
}

const BASE: &str = "http://ds.test/v1/stream/s";

/// A 200 chunk head: content type, next offset, and the `Stream-*` flags.
fn chunk(ct: &str, next: &str, up_to_date: bool) -> ResponseHead {
    let mut h = ResponseHead::new(200)
        .with_content_type(ct)
        .with_header("stream-next-offset", next);
    if up_to_date {
        h = h.with_header("stream-up-to-date", "true");
    }
    h
}

/// A long-poll 204 at `next` with `cursor`.
fn no_news(next: &str, cursor: &str) -> ResponseHead {
    ResponseHead::new(204)
        .with_header("stream-next-offset", next)
        .with_header("stream-up-to-date", "true")
        .with_header("stream-cursor", cursor)
}

/// A text chunk: head, bytes, end.
fn text_chunk(sim: &mut Sim, id: AttemptId, next: &str, up: bool, body: &[u8]) -> Vec<Action> {
    let mut out = sim.head(id, chunk("text/plain", next, up));
    out.extend(sim.bytes(id, body));
    out.extend(sim.end(id));
    out
}

fn json_chunk(sim: &mut Sim, id: AttemptId, next: &str, up: bool, els: &[&str]) -> Vec<Action> {
    let mut out = sim.head(id, chunk("application/json", next, up));
    let els = els.iter().map(|e| e.to_string()).collect();
    sim.engine.handle_json_chunk(sim.now, id, Some(els));
    out.extend(sim.drain());
    out
}

/// Catch-up from `-1` in two chunks (the first without `Stream-Up-To-Date`),
/// then live: `live=long-poll` once up to date, `cursor` echoing
/// `Stream-Cursor`, keys in lexicographic order, no request header, each
/// next request within the herd spread of the answer (at most
/// 10 % of the time the request took, so a catch-up answered in 20 ms goes
/// on within 2 ms; `U[0, 100]` would give 39 ms here).
#[test]
fn catch_up_in_chunks_then_live_long_poll() {
    let mut sim = Sim::new(ds_config(""), 7);
    let o = the_open(&sim.start());
    assert_eq!(o.transport, TransportKind::LongPoll);
    assert_eq!(o.url, format!("{BASE}?offset=-1"));
    assert!(o.headers.is_empty(), "{:?}", o.headers);
    assert_eq!(sim.engine.last_event_id(), "-1");

    sim.run_for(20);
    let out = text_chunk(&mut sim, o.id, "0_5", false, b"hello");
    let m = delivered(&out);
    assert_eq!(m.len(), 1);
    assert_eq!((m[0].data.as_str(), m[0].id.as_str()), ("hello", ""));
    assert_eq!(m[0].last_event_id, "0_5");
    assert!(!m[0].binary);
    assert!(up_to_date(&out).is_empty());
    assert_eq!(sim.engine.last_event_id(), "0_5");
    let o = sim.must_open(100);
    assert_eq!(o.url, format!("{BASE}?offset=0_5"), "still catching up");
    assert_eq!(sim.last_open_at, 20 + 1);

    let out = text_chunk(&mut sim, o.id, "0_9", true, b"more");
    assert_eq!(data(&out), ["more"]);
    assert_eq!(up_to_date(&out), ["0_9"]);
    let o = sim.must_open(100);
    assert_eq!(o.url, format!("{BASE}?live=long-poll&offset=0_9"));

    // A hold that ends empty: same offset, the server's cursor echoed.
    sim.run_for(30_000);
    let out = sim.head(o.id, no_news("0_9", "1000"));
    assert!(delivered(&out).is_empty() && up_to_date(&out).is_empty());
    assert!(errors(&out).is_empty());
    let o = sim.must_open(100);
    assert_eq!(
        o.url,
        format!("{BASE}?cursor=1000&live=long-poll&offset=0_9")
    );
    assert_eq!(sim.engine.state(), State::Open);
}

/// The app's own query keys are kept in their order, ours follow in
/// lexicographic order (§10.1), and any `offset`, `live` or `cursor` of its
/// own is replaced.
#[test]
fn app_query_keys_are_kept_and_ours_follow() {
    let mut c = ds_config("now");
    c.url = "/s?token=a&offset=9&b=1&live=sse".into();
    let mut sim = Sim::new(c, 1);
    assert_eq!(the_open(&sim.start()).url, "/s?token=a&b=1&offset=now");
}

/// `now` starts with a catch-up read (PROTOCOL.md: a 200 with an empty body
/// at the tail, `Stream-Up-To-Date: true`), so the app hears `uptodate`
/// first, with the tail as its cursor; then it goes live from the tail, and
/// a live 204's `Stream-Next-Offset` is adopted. A JSON stream's `[]` is the
/// same.
#[test]
fn now_is_up_to_date_first_then_live_from_the_tail() {
    let mut sim = Sim::new(ds_config("now"), 1);
    let o = the_open(&sim.start());
    assert_eq!(o.url, format!("{BASE}?offset=now"));
    let out = text_chunk(&mut sim, o.id, "0_7", true, b"");
    assert!(delivered(&out).is_empty());
    assert_eq!(up_to_date(&out), ["0_7"]);
    let o = sim.must_open(100);
    assert_eq!(o.url, format!("{BASE}?live=long-poll&offset=0_7"));
    sim.run_for(30_000);
    let out = sim.head(o.id, no_news("0_9", "3"));
    assert!(up_to_date(&out).is_empty(), "told once");
    assert_eq!(sim.engine.last_event_id(), "0_9");
    let o = sim.must_open(100);
    assert_eq!(o.url, format!("{BASE}?cursor=3&live=long-poll&offset=0_9"));

    let mut sim = Sim::new(ds_config("now"), 1);
    let o = the_open(&sim.start());
    let out = json_chunk(&mut sim, o.id, "0_4", true, &[]);
    assert!(delivered(&out).is_empty());
    assert_eq!(up_to_date(&out), ["0_4"]);
}

/// JSON mode (§9.1): one message per array element, its JSON text. Each
/// message but the last carries the cursor before the chunk (a resume from it
/// re-reads the chunk, never skips), the last the chunk's next offset. A
/// chunk whose next offset is not past the cursor is a repeat: dropped and
/// counted, the cursor stays.
#[test]
fn json_batches_and_repeats_dropped_by_position() {
    let mut sim = Sim::new(ds_config("0_2"), 3);
    let o = the_open(&sim.start());
    assert_eq!(o.url, format!("{BASE}?offset=0_2"));
    let out = json_chunk(&mut sim, o.id, "0_4", true, &[r#"{"n":1}"#, "[2]", "3"]);
    let m = delivered(&out);
    let got: Vec<(&str, &str)> = m
        .iter()
        .map(|m| (m.data.as_str(), m.last_event_id.as_str()))
        .collect();
    assert_eq!(got, [(r#"{"n":1}"#, "0_2"), ("[2]", "0_2"), ("3", "0_4")]);
    // A repeat came back at once: paced by `backoff.floorMs` (a server
    // replaying in a loop is not hammered).
    for (next, dropped) in [("0_4", 1), ("0_3", 2)] {
        let o = sim.must_open(1_100);
        let out = json_chunk(&mut sim, o.id, next, true, &["old"]);
        assert!(delivered(&out).is_empty(), "{next}");
        assert_eq!(sim.engine.stats().duplicates_dropped, dropped);
        assert_eq!(sim.engine.last_event_id(), "0_4");
    }
    // An empty array at the tail is no repeat.
    let o = sim.must_open(1_100);
    json_chunk(&mut sim, o.id, "0_4", true, &[]);
    assert_eq!(sim.engine.stats().duplicates_dropped, 2);
    // Not an array: a parse error, not fatal; the cursor moves past it.
    let o = sim.must_open(1_100);
    sim.head(o.id, chunk("application/json", "0_5", true));
    sim.engine.handle_json_chunk(sim.now, o.id, None);
    let out = sim.drain();
    assert_eq!(
        errors(&out),
        [Action::Error {
            code: ErrorCode::Parse,
            status: None,
            retry_in_ms: None,
            fatal: false,
            id: None,
        }]
    );
    assert_eq!(sim.engine.last_event_id(), "0_5");
    assert!(sim.next_open(100).is_some());
}

/// One streaming UTF-8 decoder per connection: "é" (C3 A9) split across two
/// chunks arrives whole with the second; invalid UTF-8 is a `parse` error.
#[test]
fn text_decoder_carries_a_split_character() {
    let mut sim = Sim::new(ds_config(""), 1);
    let o = the_open(&sim.start());
    let out = text_chunk(&mut sim, o.id, "0_2", false, b"a\xC3");
    assert_eq!(data(&out), ["a"]);
    // A repeat of the first chunk in between is dropped undecoded: the
    // carried byte stays for the chunk that follows the cursor.
    let o = sim.must_open(100);
    let out = text_chunk(&mut sim, o.id, "0_2", false, b"a\xC3");
    assert!(delivered(&out).is_empty());
    assert_eq!(sim.engine.stats().duplicates_dropped, 1);
    let o = sim.must_open(1_100);
    let out = text_chunk(&mut sim, o.id, "0_4", false, b"\xA9b");
    assert_eq!(data(&out), ["\u{e9}b"]);
    let o = sim.must_open(100);
    let out = text_chunk(&mut sim, o.id, "0_5", true, b"\xFF");
    assert!(delivered(&out).is_empty());
    assert_eq!(errors(&out).len(), 1);
    assert!(matches!(
        errors(&out)[0],
        Action::Error {
            code: ErrorCode::Parse,
            fatal: false,
            ..
        }
    ));
    assert_eq!(sim.engine.last_event_id(), "0_5");
}

/// Any other content type is bytes: one binary message, one char per byte.
#[test]
fn binary_chunks_are_bytes() {
    let mut sim = Sim::new(ds_config(""), 1);
    let o = the_open(&sim.start());
    sim.head(o.id, chunk("application/octet-stream", "0_3", true));
    sim.bytes(o.id, &[0, 0xFF]);
    sim.bytes(o.id, &[0x0A]);
    let m = delivered(&sim.end(o.id));
    assert_eq!(m.len(), 1);
    assert!(m[0].binary);
    assert_eq!(m[0].data, "\u{0}\u{ff}\n");
}

/// A body cut off by a network error is not delivered: the next request
/// reads the same offset again (exactly once by position).
#[test]
fn a_cut_body_is_read_again_from_the_same_offset() {
    let mut sim = Sim::new(ds_config("0_1"), 1);
    let o = the_open(&sim.start());
    sim.head(o.id, chunk("text/plain", "0_9", true));
    sim.bytes(o.id, b"partial");
    let out = sim.error(o.id, TransportError::NetworkOrCors);
    assert!(delivered(&out).is_empty());
    assert_eq!(sim.engine.last_event_id(), "0_1");
    let o = sim.must_open(60_000);
    assert_eq!(o.url, format!("{BASE}?offset=0_1"));
}

/// `Stream-Closed: true` delivers the response's data, then ends cleanly:
/// state `closed` (`stream-closed`), no error, no request ever after.
#[test]
fn stream_closed_ends_cleanly_and_sends_nothing_more() {
    let mut sim = Sim::new(ds_config(""), 1);
    let o = the_open(&sim.start());
    sim.head(
        o.id,
        chunk("text/plain", "0_3", true).with_header("stream-closed", "TRUE"),
    );
    sim.bytes(o.id, b"end");
    let out = sim.end(o.id);
    assert_eq!(data(&out), ["end"]);
    assert!(errors(&out).is_empty());
    assert_eq!(states(&out), [(State::Closed, Reason::StreamClosed, None)]);
    assert!(sim.next_open(600_000).is_none());
    // The long-poll EOF: 204 with Stream-Closed.
    let mut sim = Sim::new(ds_config("now"), 1);
    let o = the_open(&sim.start());
    let out = sim.head(
        o.id,
        no_news("0_3", "1").with_header("stream-closed", "true"),
    );
    assert_eq!(states(&out), [(State::Closed, Reason::StreamClosed, None)]);
    assert_eq!(sim.engine.last_event_id(), "0_3");
    assert!(sim.next_open(600_000).is_none());
    // Any value but `true` is absent (§4.1).
    let mut sim = Sim::new(ds_config("now"), 1);
    let o = the_open(&sim.start());
    sim.head(
        o.id,
        no_news("0_3", "1").with_header("stream-closed", "yes"),
    );
    assert!(sim.next_open(2_000).is_some());
}

/// `live: false` (`Live::Off`): catch-up reads until
/// `Stream-Up-To-Date`, then `uptodate` and state `closed` (`up-to-date`),
/// no live request ever; from `now` that is the first answer (a 200 or the
/// long-poll's 204); a closed stream still says `stream-closed`.
#[test]
fn live_false_reads_to_the_tail_then_ends() {
    let once = |start: &str| {
        let mut c = ds_config(start);
        c.live = Live::Off;
        Sim::new(c, 3)
    };
    let mut sim = once("");
    let o = the_open(&sim.start());
    let out = text_chunk(&mut sim, o.id, "0_5", false, b"hello");
    assert_eq!(data(&out), ["hello"]);
    assert!(states(&out).iter().all(|s| s.0 != State::Closed));
    let o = sim.must_open(100);
    assert_eq!(o.url, format!("{BASE}?offset=0_5"), "still catching up");
    let out = text_chunk(&mut sim, o.id, "0_9", true, b"more");
    assert_eq!(data(&out), ["more"]);
    assert_eq!(up_to_date(&out), ["0_9"]);
    assert_eq!(states(&out), [(State::Closed, Reason::UpToDate, None)]);
    assert!(errors(&out).is_empty());
    assert!(sim.next_open(600_000).is_none(), "no live request");
    assert_eq!(sim.engine.last_event_id(), "0_9");

    let mut sim = once("now");
    let o = the_open(&sim.start());
    let out = sim.head(o.id, no_news("0_7", "1"));
    assert_eq!(up_to_date(&out), ["0_7"]);
    assert_eq!(states(&out), [(State::Closed, Reason::UpToDate, None)]);
    assert!(sim.next_open(600_000).is_none());

    let mut sim = once("");
    let o = the_open(&sim.start());
    sim.head(
        o.id,
        chunk("text/plain", "0_3", true).with_header("stream-closed", "true"),
    );
    sim.bytes(o.id, b"end");
    let out = sim.end(o.id);
    assert_eq!(states(&out), [(State::Closed, Reason::StreamClosed, None)]);
    assert_eq!(Reason::UpToDate.as_str(), "up-to-date");
}

/// 410 Gone: `reset` (`gone`) and one restart from the configured start (a
/// catch-up from `-1` within 100 ms); a 410 again before any 200/204 is
/// fatal; after a 200 a later 410 resets again. nchan's 410 rule does not
/// apply here.
#[test]
fn gone_resets_once_then_is_fatal() {
    let mut sim = Sim::new(ds_config("0_8"), 1);
    let o = the_open(&sim.start());
    sim.run_for(50);
    let out = sim.head(o.id, ResponseHead::new(410));
    assert!(out.contains(&Action::Reset {
        reason: ResetReason::Gone
    }));
    assert!(errors(&out).is_empty());
    assert_eq!(sim.engine.last_event_id(), "-1");
    let o = sim.must_open(100);
    assert_eq!(o.url, format!("{BASE}?offset=-1"));
    text_chunk(&mut sim, o.id, "0_2", true, b"x");
    let o = sim.must_open(100);
    let out = sim.head(o.id, ResponseHead::new(410));
    assert_eq!(
        out.iter()
            .filter(|a| matches!(a, Action::Reset { .. }))
            .count(),
        1
    );
    let o = sim.must_open(100);
    assert_eq!(o.url, format!("{BASE}?offset=-1"), "catch-up again");
    let out = sim.head(o.id, ResponseHead::new(410));
    assert_eq!(
        errors(&out),
        [Action::Error {
            code: ErrorCode::HttpStatus,
            status: Some(410),
            retry_in_ms: None,
            fatal: true,
            id: None,
        }]
    );
    assert_eq!(sim.engine.state(), State::Closed);
    // From `now`, the restart is from `now` (a catch-up again).
    let mut sim = Sim::new(ds_config("now"), 1);
    let o = the_open(&sim.start());
    sim.head(o.id, ResponseHead::new(410));
    let o = sim.must_open(100);
    assert_eq!(o.url, format!("{BASE}?offset=now"));
}

/// 404 stops; 429 with `Retry-After` waits as the engine's rules say.
#[test]
fn not_found_is_fatal_and_retry_after_is_obeyed() {
    let mut sim = Sim::new(ds_config(""), 1);
    let o = the_open(&sim.start());
    let out = sim.head(o.id, ResponseHead::new(404));
    assert!(matches!(
        errors(&out)[..],
        [Action::Error {
            code: ErrorCode::HttpStatus,
            status: Some(404),
            fatal: true,
            ..
        }]
    ));
    let mut sim = Sim::new(ds_config(""), 1);
    let o = the_open(&sim.start());
    let out = sim.head(o.id, ResponseHead::new(429).with_header("retry-after", "3"));
    assert_eq!(waiting(&out), [(Reason::RetryAfter, 3_170)]);
    let o = sim.must_open(4_000);
    assert_eq!(o.url, format!("{BASE}?offset=-1"));
}

/// A 200 whose `Stream-Next-Offset` is missing, too long, a sentinel or holds
/// a reserved character cannot be placed: not delivered, a `parse` failure
/// under backoff, the cursor unchanged.
#[test]
fn unusable_next_offsets_are_refused() {
    let long = "0".repeat(257);
    for next in [
        None,
        Some(long.as_str()),
        Some("-1"),
        Some("now"),
        Some("a/b"),
    ] {
        let mut sim = Sim::new(ds_config("0_1"), 1);
        let o = the_open(&sim.start());
        let mut h = ResponseHead::new(200).with_content_type("text/plain");
        if let Some(n) = next {
            h = h.with_header("stream-next-offset", n);
        }
        let mut out = sim.head(o.id, h);
        out.extend(sim.bytes(o.id, b"x"));
        out.extend(sim.end(o.id));
        assert!(delivered(&out).is_empty(), "{next:?}");
        assert!(
            matches!(
                errors(&out)[..],
                [Action::Error {
                    code: ErrorCode::Parse,
                    status: Some(200),
                    fatal: false,
                    ..
                }]
            ),
            "{next:?}: {out:?}"
        );
        assert_eq!(sim.engine.last_event_id(), "0_1");
    }
    let ok = "9".repeat(256);
    let mut sim = Sim::new(ds_config("0_1"), 1);
    let o = the_open(&sim.start());
    text_chunk(&mut sim, o.id, &ok, true, b"x");
    assert_eq!(sim.engine.last_event_id(), ok);
}

/// A chunk over `maxMessageBytes` is skipped (`too-large`) and the cursor
/// moves past it; memory stays bounded.
#[test]
fn oversized_chunks_are_skipped_past() {
    let mut c = ds_config("");
    c.sse_limits.max_event_data_bytes = 4;
    let mut sim = Sim::new(c, 1);
    let o = the_open(&sim.start());
    sim.head(o.id, chunk("text/plain", "0_6", true));
    sim.bytes(o.id, b"abc");
    sim.bytes(o.id, b"def");
    let out = sim.end(o.id);
    assert!(delivered(&out).is_empty());
    assert!(out.contains(&Action::Skipped {
        id: String::new(),
        last_event_id: "0_6".into()
    }));
    assert_eq!(sim.engine.last_event_id(), "0_6");
    // A partial character carried before a skipped chunk is dropped with it.
    let o = sim.must_open(100);
    assert_eq!(
        data(&text_chunk(&mut sim, o.id, "1_0", false, b"a\xC3")),
        ["a"]
    );
    let o = sim.must_open(100);
    text_chunk(&mut sim, o.id, "1_1", false, b"toolong");
    let o = sim.must_open(100);
    assert_eq!(data(&text_chunk(&mut sim, o.id, "1_2", true, b"b")), ["b"]);
}

/// Hidden → no request at all until visible; then one request from the
/// offset reached.
#[test]
fn hidden_sends_nothing() {
    let mut sim = Sim::new(ds_config(""), 1);
    let o = the_open(&sim.start());
    text_chunk(&mut sim, o.id, "0_3", true, b"a");
    let o = sim.must_open(100);
    sim.visibility(true);
    sim.run_for(600_000);
    assert!(sim.next_open(600_000).is_none());
    sim.head(o.id, no_news("0_3", "1"));
    assert!(sim.next_open(600_000).is_none(), "an answer while paused");
    sim.visibility(false);
    let o = sim.must_open(1_000);
    assert_eq!(o.url, format!("{BASE}?live=long-poll&offset=0_3"));
}

/// The profile keeps long-poll as its only transport whatever the list.
#[test]
fn long_poll_is_the_only_transport() {
    let mut c = ds_config("");
    c.transports = vec![TransportKind::EventSource, TransportKind::Poll];
    let mut sim = Sim::new(c, 1);
    assert_eq!(the_open(&sim.start()).transport, TransportKind::LongPoll);
}

/// Offline → the held request is released and nothing goes out; online →
/// one prompt request from the offset reached (live, with the cursor).
#[test]
fn offline_sends_nothing_and_online_resumes_from_the_offset() {
    let mut sim = Sim::new(ds_config("now"), 2);
    let o = the_open(&sim.start());
    sim.run_for(30_000);
    sim.head(o.id, no_news("0_4", "9"));
    let o = sim.must_open(100);
    let out = sim.online(false);
    assert!(out.contains(&Action::Abort(o.id)));
    assert_eq!(states(&out), [(State::Paused, Reason::Offline, None)]);
    assert!(sim.next_open(600_000).is_none());
    sim.online(true);
    let o = sim.must_open(1_000);
    assert_eq!(o.url, format!("{BASE}?cursor=9&live=long-poll&offset=0_4"));
}

/// A connection handed over between tabs (crossTab) resumes from the offset
/// the old leader reached, but its configured start stays the app's: a 410
/// after the hand-over restarts from `now` when the app asked for `now` (not
/// from `-1`, which would replay the whole stream), and from `-1` otherwise.
#[test]
fn handed_over_connection_restarts_from_the_configured_start_on_410() {
    let mut sim = Sim::new(ds_config("now"), 1);
    sim.engine = Engine::resuming(ds_config("now"), 1, "0_8");
    let o = the_open(&sim.start());
    assert_eq!(
        o.url,
        format!("{BASE}?offset=0_8"),
        "catch-up from the hand-over"
    );
    assert_eq!(sim.engine.last_event_id(), "0_8");
    let out = sim.head(o.id, ResponseHead::new(410));
    assert!(out.contains(&Action::Reset {
        reason: ResetReason::Gone
    }));
    let o = sim.must_open(100);
    assert_eq!(o.url, format!("{BASE}?offset=now"));
    assert_eq!(sim.engine.last_event_id(), "now");

    let mut sim = Sim::new(ds_config(""), 1);
    sim.engine = Engine::resuming(ds_config(""), 1, "0_8");
    let o = the_open(&sim.start());
    assert_eq!(o.url, format!("{BASE}?offset=0_8"));
    sim.head(o.id, ResponseHead::new(410));
    assert_eq!(sim.must_open(100).url, format!("{BASE}?offset=-1"));
}

/// A hand-over cursor that is no offset (none seen yet, or garbage another
/// same-origin script posted on the channel) resumes from the configured
/// start.
#[test]
fn handed_over_connection_ignores_an_unusable_cursor() {
    for bad in ["", "a&b=c", "x y"] {
        let mut sim = Sim::new(ds_config("now"), 1);
        sim.engine = Engine::resuming(ds_config("now"), 1, bad);
        let o = the_open(&sim.start());
        assert_eq!(o.url, format!("{BASE}?offset=now"), "{bad:?}");
    }
}

/// How the adapter reads a Durable Streams 200 is the engine's answer to its
/// head, by the profile's body kinds: `application/json` exactly (any case,
/// with parameters) whole as a JSON array, `text/*` and everything else
/// (`+json` too: appended bytes) in chunks; a 204 ends the attempt (chunks).
#[test]
fn durable_body_read_is_the_heads_verdict() {
    let read = |head: ResponseHead| {
        let mut sim = Sim::new(ds_config("-1"), 1);
        let o = the_open(&sim.start());
        sim.head(o.id, head);
        sim.engine.body_read(o.id)
    };
    let json = chunk("Application/JSON; charset=utf-8", "5", false);
    assert_eq!(read(json), BodyRead::JsonArray);
    assert_eq!(
        read(chunk("application/ld+json", "5", false)),
        BodyRead::Chunks
    );
    assert_eq!(read(chunk("text/plain", "5", false)), BodyRead::Chunks);
    assert_eq!(read(chunk("image/png", "5", false)), BodyRead::Chunks);
    assert_eq!(read(no_news("5", "c")), BodyRead::Chunks);
}

/// The offset always travels in the query, never as `Last-Event-ID`: a
/// cross-origin stream is not noted as a cursor the query alone carries, and
/// no resume moves anywhere for a header.
#[test]
fn the_offset_in_the_query_is_not_noted_as_a_query_only_cursor() {
    let mut c = ds_config("0_5");
    c.cross_origin = CrossOrigin::ALL;
    let mut sim = Sim::new(c, 7);
    let out = sim.start();
    let notes: Vec<_> = out
        .iter()
        .filter(|a| matches!(a, Action::Note(_)))
        .collect();
    assert_eq!(notes, Vec::<&Action>::new());
    let o = the_open(&out);
    assert_eq!(o.url, format!("{BASE}?offset=0_5"));
    assert!(o.headers.is_empty(), "{:?}", o.headers);
}
