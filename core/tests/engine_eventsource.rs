//! The `eventsource` transport's liveness and resume rules, on virtual time:
//! - a silent native stream with no other usable transport
//!   is kept open at the first-event deadline (noted once), not recycled;
//! - an `error` in readyState CONNECTING after `open` is the
//!   end of the stream (as `fetch-sse`'s clean end), not `network-or-cors`;
//! - a server that ignores the cursor in the query and
//!   replays from its start is recognised (`resume-ignored`, once), the
//!   connection moves to a transport that sends `Last-Event-ID`, and the
//!   cursor never moves back to a replayed id.

#[path = "engine_support.rs"]
mod support;

use support::*;
use tidings_core::engine::{
    Action, Capabilities, Config, CrossOrigin, ErrorCode, Note, Reason, ResetReason, ResponseHead,
    State, TransportError, TransportKind,
};

fn native_only() -> Config {
    let mut c = Config::new("/stream");
    c.transports = vec![TransportKind::EventSource];
    c.watchdog.first_event_timeout_ms = 1000;
    c.watchdog.idle_timeout_ms = 3000;
    c
}

fn notes(sim: &Sim) -> Vec<(u64, Note)> {
    sim.find(|a| match a {
        Action::Note(n) => Some(*n),
        _ => None,
    })
}

fn error_codes(sim: &Sim) -> Vec<(u64, ErrorCode, Option<u64>)> {
    sim.find(|a| match a {
        Action::Error {
            code, retry_in_ms, ..
        } => Some((*code, *retry_in_ms)),
        _ => None,
    })
    .into_iter()
    .map(|(t, (c, r))| (t, c, r))
    .collect()
}

fn changes(sim: &Sim) -> Vec<(TransportKind, Option<TransportKind>, Reason)> {
    sim.find(|a| match a {
        Action::TransportChanged {
            transport,
            previous,
            reason,
        } => Some((*transport, *previous, *reason)),
        _ => None,
    })
    .into_iter()
    .map(|(_, c)| c)
    .collect()
}

// ----- 13.6 ------------------------------------------------------------------

/// Only `eventsource` usable: a comment-only stream stays open past 10 ×
/// `firstEventTimeoutMs` (1 request, no abort, no error), the debug log gets
/// one note at open + 1000 ms; once an event arrives the idle watchdog runs
/// (abort at event + 3000 ms, `stalled`); the next silent stream is kept
/// again without a second note.
#[test]
fn silent_native_stream_with_nowhere_to_go_is_kept() {
    let mut sim = Sim::new(native_only(), 61);
    let o = the_open(&sim.start());
    sim.run_for(40);
    sim.opened(o.id);
    sim.run_for(10_000);
    assert_eq!((sim.opens().len(), aborts(&sim)), (1, vec![]));
    assert_eq!(
        notes(&sim),
        [(0, Note::CursorInQueryOnly), (1040, Note::SilentStreamKept)]
    );
    assert_eq!(error_codes(&sim), []);
    assert_eq!(sim.engine.state(), State::Open);
    assert_eq!(sim.wait, None);
    // An event: the idle watchdog starts.
    sim.native(o.id, "message", "a", "1");
    sim.run_for(3500);
    assert_eq!(aborts(&sim), [13_040]);
    assert_eq!(
        error_codes(&sim),
        [(13_040, ErrorCode::Timeout, Some(1042))]
    );
    let o = sim.must_open(10_000);
    assert_eq!(o.url, "/stream?lastEventId=1");
    sim.opened(o.id);
    sim.run_for(20_000);
    assert_eq!((sim.opens().len(), aborts(&sim).len()), (2, 1));
    assert_eq!(notes(&sim).len(), 2);
}

/// The same silence where `fetch-sse` is usable is still evidence: aborted
/// at `firstEventTimeoutMs` (`buffered-stream`), no note. And where the
/// browser lacks streaming fetch and `long-poll`/`poll` are not wanted,
/// `eventsource` is alone again: kept.
#[test]
fn silent_native_stream_moves_where_another_transport_is_usable() {
    let mut c = native_only();
    c.transports = vec![TransportKind::EventSource, TransportKind::FetchSse];
    let mut sim = Sim::new(c.clone(), 62);
    let o = the_open(&sim.start());
    sim.opened(o.id);
    sim.run_for(1500);
    assert_eq!(aborts(&sim), [1000]);
    assert_eq!(notes(&sim), []);
    assert_eq!(error_codes(&sim)[0].1, ErrorCode::Timeout);

    let caps = Capabilities {
        fetch_streaming: false,
        ..Capabilities::ALL
    };
    let mut sim = Sim::new(c, 62);
    let o = the_open(&sim.start_with(caps));
    sim.opened(o.id);
    sim.run_for(5000);
    assert_eq!(
        (aborts(&sim), notes(&sim)),
        (
            vec![],
            vec![(0, Note::CursorInQueryOnly), (1000, Note::SilentStreamKept)]
        )
    );
}

// ----- 24.4 ------------------------------------------------------------------

/// A native stream that delivered 2 events and ended (readyState
/// CONNECTING): no error, the same reconnect as `fetch-sse`'s clean end
/// (same seed, same delay), with the cursor.
#[test]
fn native_reconnecting_after_open_is_the_end_of_the_stream() {
    let mut es = Sim::new(native_only(), 44);
    let o = the_open(&es.start());
    es.opened(o.id);
    es.native(o.id, "message", "a", "1");
    es.native(o.id, "message", "b", "2");
    es.run_for(200);
    let acts = es.error(o.id, TransportError::NativeReconnecting);
    assert_eq!(errors(&acts), []);
    let waiting = states(&acts);
    let next = es.must_open(10_000);
    assert_eq!(next.url, "/stream?lastEventId=2");

    let mut c = native_only();
    c.transports = vec![TransportKind::FetchSse];
    let mut fs = Sim::new(c, 44);
    let o = the_open(&fs.start());
    fs.stream(o.id, b"id: 1\ndata: a\n\nid: 2\ndata: b\n\n");
    fs.run_for(200);
    let acts = fs.end(o.id);
    assert_eq!(errors(&acts), []);
    assert_eq!(states(&acts), waiting);
    assert_eq!(fs.must_open(10_000).id, next.id);
    assert_eq!(fs.last_open_at, es.last_open_at);

    // What the adapter reported before: a network error after open.
    let mut old = Sim::new(native_only(), 44);
    let o = the_open(&old.start());
    old.opened(o.id);
    let acts = old.error(o.id, TransportError::Network);
    assert_eq!(errors(&acts).len(), 1);
}

/// Before `open`, readyState CONNECTING is an open that failed, as before
/// (`network-or-cors`, `open-failed` evidence: 2 of them skip the streams).
#[test]
fn native_reconnecting_before_open_is_a_failed_open() {
    let mut sim = Sim::new(Config::new("/stream"), 45);
    let o = the_open(&sim.start());
    let acts = sim.error(o.id, TransportError::NativeReconnecting);
    assert!(matches!(
        errors(&acts)[..],
        [Action::Error {
            code: ErrorCode::NetworkOrCors,
            fatal: false,
            ..
        }]
    ));
    let o = sim.must_open(10_000);
    sim.error(o.id, TransportError::NativeReconnecting);
    let o = sim.must_open(10_000);
    assert_eq!(o.transport, TransportKind::LongPoll);
}

// ----- 24.3 ------------------------------------------------------------------

/// Issue 30: history 1..4 on eventsource, a clean end. The resume does not
/// go out on a new native `EventSource` as `?lastEventId=4` (a server that
/// reads only `Last-Event-ID` would go on from "now"): it moves to
/// `fetch-sse` (same-origin: no preflight) with `Last-Event-ID: 4` AND
/// `?lastEventId=4` (a query-only server resumes as before), reason
/// `resume-by-header`; later resumes stay there, and nothing is reported.
#[test]
fn a_resume_moves_eventsource_to_a_transport_that_sends_the_header() {
    let mut sim = Sim::new(Config::new("/stream"), 243);
    let o = the_open(&sim.start());
    assert_eq!(
        (o.transport, o.url.as_str()),
        (TransportKind::EventSource, "/stream")
    );
    sim.opened(o.id);
    for (i, d) in ["a", "b", "c", "d"].iter().enumerate() {
        sim.native(o.id, "message", d, &(i + 1).to_string());
    }
    sim.error(o.id, TransportError::NativeReconnecting);
    let o = sim.must_open(10_000);
    assert_eq!(
        (o.transport, o.url.as_str(), header(&o, "Last-Event-ID")),
        (TransportKind::FetchSse, "/stream?lastEventId=4", Some("4"))
    );
    assert_eq!(
        changes(&sim)[1..],
        [(
            TransportKind::FetchSse,
            Some(TransportKind::EventSource),
            Reason::ResumeByHeader
        )]
    );
    sim.stream(o.id, b"id: 5\ndata: e\n\n");
    sim.end(o.id);
    let o = sim.must_open(10_000);
    assert_eq!(
        (o.transport, o.url.as_str(), header(&o, "Last-Event-ID")),
        (TransportKind::FetchSse, "/stream?lastEventId=5", Some("5"))
    );
    assert_eq!(
        (changes(&sim).len(), error_codes(&sim), notes(&sim)),
        (2, vec![], vec![])
    );
}

/// A cursor at start (a `persist` restore, a crossTab hand-over, the
/// `lastEventId` option) is a resume too: the first request already goes
/// with the header. Cross-origin no transport can send it without a
/// preflight: `eventsource` keeps the query, and the debug log says so at
/// start (`cursor-in-query-only`), once.
#[test]
fn a_cursor_at_start_goes_by_header_where_one_can() {
    let mut c = Config::new("/stream");
    c.last_event_id = "s0".into();
    let mut sim = Sim::new(c.clone(), 1);
    let o = the_open(&sim.start());
    assert_eq!(
        (o.transport, o.url.as_str(), header(&o, "Last-Event-ID")),
        (
            TransportKind::FetchSse,
            "/stream?lastEventId=s0",
            Some("s0")
        )
    );
    assert_eq!(notes(&sim), []);
    c.cross_origin = CrossOrigin::ALL;
    let mut sim = Sim::new(c, 1);
    let o = the_open(&sim.start());
    assert_eq!(
        (o.transport, o.url.as_str(), o.headers.len()),
        (TransportKind::EventSource, "/stream?lastEventId=s0", 0)
    );
    sim.opened(o.id);
    sim.native(o.id, "message", "a", "1");
    sim.error(o.id, TransportError::NativeReconnecting);
    let o = sim.must_open(10_000);
    assert_eq!(
        (o.transport, o.url.as_str()),
        (TransportKind::EventSource, "/stream?lastEventId=1")
    );
    assert_eq!(
        (notes(&sim), changes(&sim).len()),
        (vec![(0, Note::CursorInQueryOnly)], 1)
    );
}

/// A cursor that is not visible ASCII never travels as `Last-Event-ID`
/// (`request::by_header`), so a resume with one gains nothing from
/// `fetch-sse`: `eventsource` keeps it in the query, at start and after a
/// reconnect, with no transport change. The next visible ASCII id moves the
/// resume to the header as usual.
#[test]
fn a_cursor_not_visible_ascii_stays_on_eventsource() {
    let mut c = Config::new("/stream");
    c.last_event_id = "\u{2026}".into();
    let mut sim = Sim::new(c, 1);
    let o = the_open(&sim.start());
    assert_eq!(
        (o.transport, o.url.as_str(), o.headers.len()),
        (
            TransportKind::EventSource,
            "/stream?lastEventId=%E2%80%A6",
            0
        )
    );
    sim.opened(o.id);
    sim.native(o.id, "message", "a", "a b");
    sim.error(o.id, TransportError::NativeReconnecting);
    let o = sim.must_open(10_000);
    assert_eq!(
        (o.transport, o.url.as_str(), o.headers.len()),
        (TransportKind::EventSource, "/stream?lastEventId=a%20b", 0)
    );
    assert_eq!((notes(&sim), changes(&sim).len()), (vec![], 1));
    sim.opened(o.id);
    sim.native(o.id, "message", "b", "7");
    sim.error(o.id, TransportError::NativeReconnecting);
    let o = sim.must_open(10_000);
    assert_eq!(
        (o.transport, o.url.as_str(), header(&o, "Last-Event-ID")),
        (TransportKind::FetchSse, "/stream?lastEventId=7", Some("7"))
    );
    assert_eq!(changes(&sim)[1].2, Reason::ResumeByHeader);
}

/// A replay recognised while the cursor is not visible ASCII: that cursor
/// travels in the query on every transport (`request::by_header`), so a move
/// to `fetch-sse` would meet the same server reading the same query. The
/// error has no `retryInMs`, the stream stays on `eventsource` (no abort, no
/// switch), and the replayed ids are dropped.
#[test]
fn a_replay_of_a_cursor_not_visible_ascii_stays_on_eventsource() {
    let mut c = Config::new("/stream");
    c.watchdog.first_event_timeout_ms = 1000;
    let mut sim = Sim::new(c, 9);
    let o = the_open(&sim.start());
    sim.opened(o.id);
    for (d, i) in [("a", "x 1"), ("b", "x 2"), ("c", "x 3")] {
        sim.native(o.id, "message", d, i);
    }
    sim.error(o.id, TransportError::NativeReconnecting);
    let o = sim.must_open(10_000);
    assert_eq!(
        (o.transport, o.url.as_str()),
        (TransportKind::EventSource, "/stream?lastEventId=x%203")
    );
    sim.opened(o.id);
    sim.native(o.id, "message", "a", "x 1");
    sim.native(o.id, "message", "b", "x 2");
    let t = sim.now.mono.0;
    sim.native(o.id, "message", "c", "x 3");
    assert_eq!(error_codes(&sim), [(t, ErrorCode::ResumeIgnored, None)]);
    assert_eq!((aborts(&sim), changes(&sim).len()), (vec![], 1));
    sim.native(o.id, "message", "d", "x 4");
    assert_eq!(sim.engine.last_event_id(), "x 4");
    assert_eq!(
        sim.delivered()
            .iter()
            .map(|m| m.data.as_str())
            .collect::<Vec<_>>(),
        ["a", "b", "c", "d"]
    );
}

/// A server that resumes from a cursor it rounds down (replays the newest
/// ids, 4 and 5, then 6) is not flagged; the cursor stays 5 during the
/// overlap. A replay out of the remembered order is not flagged either.
#[test]
fn early_resume_is_not_a_replay_from_the_start() {
    let mut sim = Sim::new(native_only(), 7);
    let o = the_open(&sim.start());
    sim.opened(o.id);
    for i in 1..=5 {
        sim.native(o.id, "message", "x", &i.to_string());
    }
    sim.error(o.id, TransportError::NativeReconnecting);
    let o = sim.must_open(10_000);
    sim.opened(o.id);
    sim.native(o.id, "message", "x", "4");
    sim.native(o.id, "message", "x", "5");
    assert_eq!(sim.engine.last_event_id(), "5");
    sim.native(o.id, "message", "y", "6");
    assert_eq!(sim.engine.last_event_id(), "6");
    sim.error(o.id, TransportError::NativeReconnecting);
    let o = sim.must_open(10_000);
    sim.opened(o.id);
    for i in [2, 1, 3, 4] {
        sim.native(o.id, "message", "x", &i.to_string());
    }
    assert_eq!((error_codes(&sim), changes(&sim).len()), (vec![], 1));
    assert_eq!(sim.engine.last_event_id(), "6");
}

/// A short history replayed whole (2 ids) is recognised too; with only
/// `eventsource` usable the error has no `retryInMs` and the stream stays
/// (no abort, no switch): the new event after the replay is delivered, and
/// a second replay is not reported again.
#[test]
fn whole_short_replay_with_nowhere_to_go_reports_and_stays() {
    let mut sim = Sim::new(native_only(), 9);
    let o = the_open(&sim.start());
    sim.opened(o.id);
    sim.native(o.id, "message", "a", "1");
    sim.native(o.id, "message", "b", "2");
    sim.error(o.id, TransportError::NativeReconnecting);
    let o = sim.must_open(10_000);
    sim.opened(o.id);
    sim.native(o.id, "message", "a", "1");
    let t = sim.now.mono.0;
    sim.native(o.id, "message", "b", "2");
    assert_eq!(error_codes(&sim), [(t, ErrorCode::ResumeIgnored, None)]);
    assert_eq!((aborts(&sim), changes(&sim).len()), (vec![], 1));
    sim.native(o.id, "message", "c", "3");
    assert_eq!(sim.engine.last_event_id(), "3");
    sim.error(o.id, TransportError::NativeReconnecting);
    let o = sim.must_open(10_000);
    sim.opened(o.id);
    for (d, i) in [("a", "1"), ("b", "2"), ("c", "3")] {
        sim.native(o.id, "message", d, i);
    }
    assert_eq!(error_codes(&sim).len(), 1);
    assert_eq!(
        sim.delivered()
            .iter()
            .map(|m| m.data.as_str())
            .collect::<Vec<_>>(),
        ["a", "b", "c"]
    );
}

/// The parser path (`fetch-sse` cross-origin: the cursor in the query too,
/// and no transport sends the header): the replay in one chunk is
/// recognised, the cursor stays, and a new event in the same chunk after the
/// replay moves it on.
#[test]
fn replay_in_a_fetch_sse_chunk_keeps_the_cursor() {
    let mut c = fetch_sse_config();
    c.cross_origin = CrossOrigin::ALL;
    let mut sim = Sim::new(c, 3);
    let o = the_open(&sim.start());
    sim.stream(
        o.id,
        b"id: 1\ndata: a\n\nid: 2\ndata: b\n\nid: 3\ndata: c\n\n",
    );
    sim.end(o.id);
    let o = sim.must_open(10_000);
    assert_eq!(o.url, "/stream?lastEventId=3");
    sim.head(o.id, ResponseHead::event_stream());
    sim.bytes(o.id, b"id: 1\ndata: a\n\nid: 2\ndata: b\n\n");
    assert_eq!(sim.engine.last_event_id(), "3");
    assert_eq!(error_codes(&sim), []);
    let t = sim.now.mono.0;
    sim.bytes(o.id, b"id: 3\ndata: c\n\nid: 4\ndata: d\n\n");
    assert_eq!(error_codes(&sim), [(t, ErrorCode::ResumeIgnored, None)]);
    assert_eq!(sim.engine.last_event_id(), "4");
    sim.end(o.id);
    let o = sim.must_open(10_000);
    assert_eq!(o.url, "/stream?lastEventId=4");
}

// ----- a resume the server did not honour ------------------------------------

fn resets(sim: &Sim) -> Vec<(String, ResetReason)> {
    // Each reset with the id of the message delivered just before it.
    let mut last = String::new();
    let mut out = Vec::new();
    for (_, a) in &sim.log {
        match a {
            Action::Deliver(m) => last.clone_from(&m.id),
            Action::Reset { reason } => out.push((last.clone(), *reason)),
            _ => {}
        }
    }
    out
}

/// The user's trace: ids 27, 28, 29 over `eventsource` (only it usable: the
/// cursor can go only in the query), the server ends the stream, ignores
/// `?lastEventId=29` and goes on from "now" with 32, 33: both delivered, and
/// one `reset` (`gap`) right after 32. A server that honours it (30 first)
/// gets none; nor does a jump within one stream.
#[test]
fn ids_that_jump_after_a_resume_raise_a_gap_reset() {
    let run = |after: &[&str]| {
        let mut sim = Sim::new(native_only(), 30);
        let o = the_open(&sim.start());
        sim.opened(o.id);
        for id in ["27", "28", "29"] {
            sim.native(o.id, "message", "x", id);
        }
        sim.error(o.id, TransportError::NativeReconnecting);
        let o = sim.must_open(10_000);
        assert_eq!(o.url, "/stream?lastEventId=29");
        sim.opened(o.id);
        for id in after {
            sim.native(o.id, "message", "y", id);
        }
        (sim.delivered().len(), resets(&sim))
    };
    assert_eq!(
        run(&["32", "33"]),
        (5, vec![("32".into(), ResetReason::Gap)])
    );
    assert_eq!(run(&["30", "31"]), (5, vec![]));
    assert_eq!(run(&["30", "40", "41"]), (6, vec![]));
}

/// After a reload (`persist`: the cursor is all the engine has) the next id
/// decides: 40 then 41 is a consecutive numbering that skipped 30..39 (the
/// `reset` comes after 41); 40 then 45 is a server whose ids leave holes by
/// design: nothing. Events left out by the `events` filter count as ids.
#[test]
fn without_history_the_id_after_the_jump_decides() {
    let run = |after: &[(&str, &str)]| {
        let mut c = native_only();
        c.last_event_id = "29".into();
        let mut sim = Sim::new(c, 31);
        let o = the_open(&sim.start());
        assert_eq!(o.url, "/stream?lastEventId=29");
        sim.opened(o.id);
        for (event, id) in after {
            sim.native(o.id, event, "y", id);
        }
        resets(&sim)
    };
    assert_eq!(
        run(&[("message", "40"), ("message", "41")]),
        [("41".into(), ResetReason::Gap)]
    );
    assert_eq!(
        run(&[("message", "40"), ("chat", "41")]),
        [("40".into(), ResetReason::Gap)]
    );
    assert_eq!(run(&[("message", "40"), ("message", "45")]), []);
}

/// Ids 27, 28, 29 on `eventsource`, the stream ends, and the resume from 29
/// opens: the second attempt, open.
fn resumed_after_27_to_29(config: Config, seed: u64) -> (Sim, tidings_core::engine::OpenRequest) {
    let mut sim = Sim::new(config, seed);
    let o = the_open(&sim.start());
    sim.opened(o.id);
    for id in ["27", "28", "29"] {
        sim.native(o.id, "message", "x", id);
    }
    sim.error(o.id, TransportError::NativeReconnecting);
    let o = sim.must_open(10_000);
    assert_eq!(o.url, "/stream?lastEventId=29");
    sim.opened(o.id);
    (sim, o)
}

/// A resume the server honoured whose first event (30) is too large: it is
/// skipped (reported as such), and 31 after it is no jump. The same on a
/// `fetch-sse` body, where the parser skips it.
#[test]
fn a_skipped_event_after_a_resume_is_no_gap() {
    let mut c = native_only();
    c.sse_limits.max_event_data_bytes = 8;
    let (mut sim, o) = resumed_after_27_to_29(c, 30);
    sim.native(o.id, "message", "far too large for the limit", "30");
    sim.native(o.id, "message", "y", "31");
    assert_eq!(error_codes(&sim)[0].1, ErrorCode::TooLarge);
    assert_eq!((sim.delivered().len(), resets(&sim)), (4, vec![]));

    let mut c = fetch_sse_config();
    c.sse_limits.max_event_data_bytes = 8;
    let mut sim = Sim::new(c, 30);
    let o = the_open(&sim.start());
    sim.stream(
        o.id,
        b"id: 27\ndata: x\n\nid: 28\ndata: x\n\nid: 29\ndata: x\n\n",
    );
    sim.end(o.id);
    let o = sim.must_open(10_000);
    assert_eq!(header(&o, "Last-Event-ID"), Some("29"));
    sim.stream(
        o.id,
        b"id: 30\ndata: far too large for the limit\n\nid: 31\ndata: y\n\n",
    );
    assert_eq!(error_codes(&sim)[0].1, ErrorCode::TooLarge);
    assert_eq!((sim.delivered().len(), resets(&sim)), (4, vec![]));
}

/// A server that cannot resume says so with a `reset` event and goes on
/// from "now": the app hears one `reset` (`server`), not a second one
/// (`gap`) for the jump the server already announced.
#[test]
fn a_server_reset_after_a_resume_is_not_reported_again_as_a_gap() {
    let (mut sim, o) = resumed_after_27_to_29(native_only(), 30);
    sim.native(o.id, "reset", "", "29");
    sim.native(o.id, "message", "y", "40");
    sim.native(o.id, "message", "y", "41");
    assert_eq!(resets(&sim), [("29".into(), ResetReason::Server)]);
}

/// A numbering that showed a hole within one stream (10, 14) leaves holes
/// by design: a later jump after a resume (15 → 20) is the server's own
/// numbering, never a `gap`, even though its last two ids were consecutive.
#[test]
fn a_numbering_with_holes_in_a_stream_is_never_accused() {
    let mut sim = Sim::new(native_only(), 30);
    let o = the_open(&sim.start());
    sim.opened(o.id);
    for id in ["10", "14", "15"] {
        sim.native(o.id, "message", "x", id);
    }
    sim.error(o.id, TransportError::NativeReconnecting);
    let o = sim.must_open(10_000);
    assert_eq!(o.url, "/stream?lastEventId=15");
    sim.opened(o.id);
    sim.native(o.id, "message", "y", "20");
    sim.native(o.id, "message", "y", "21");
    assert_eq!((sim.delivered().len(), resets(&sim)), (5, vec![]));
}

/// A downgrade to `long-poll` remembered from an earlier load (default
/// list, a cursor): when it expires, the failback probe goes where a resume
/// can go, `fetch-sse` (it sends `Last-Event-ID`), not to `eventsource` and
/// straight back to `long-poll` in the same attempt.
#[test]
fn a_failback_probe_with_a_cursor_skips_eventsource() {
    let mut c = Config::new("/stream");
    c.last_event_id = "5".into();
    c.downgrade = Some((
        TransportKind::LongPoll,
        tidings_core::time::WallMs(WALL0 + 60_000),
    ));
    let mut sim = Sim::new(c, 1);
    let mut o = the_open(&sim.start());
    assert_eq!(o.transport, TransportKind::LongPoll);
    while o.transport == TransportKind::LongPoll && sim.now.mono.0 < 200_000 {
        sim.run_for(30_000);
        sim.head(o.id, ResponseHead::new(204));
        o = sim.must_open(1000);
    }
    assert_eq!(
        (o.transport, header(&o, "Last-Event-ID")),
        (TransportKind::FetchSse, Some("5"))
    );
    assert_eq!(
        changes(&sim),
        [
            (TransportKind::LongPoll, None, Reason::Start),
            (
                TransportKind::FetchSse,
                Some(TransportKind::LongPoll),
                Reason::FailbackProbe
            )
        ]
    );
}

/// `long-poll` against a server whose ids leave holes by design (a room of
/// a chat whose messages share one counter) and that honours the cursor:
/// one message per answer, 100, 101, then 107. Each request after an answer
/// goes on with the numbering, it is no resume after a break: no `gap`. A
/// request after a failure is one, and is judged.
#[test]
fn long_poll_answers_in_a_row_are_one_numbering() {
    let mut c = Config::new("/lp");
    c.transports = vec![TransportKind::LongPoll];
    let mut sim = Sim::new(c, 30);
    let mut o = the_open(&sim.start());
    for id in ["100", "101", "107", "108"] {
        sim.head(o.id, json_head(200));
        sim.messages(o.id, vec![msg(Some(id), None, "x")], None);
        o = sim.must_open(10_000);
        assert_eq!(header(&o, "Last-Event-ID"), Some(id));
    }
    assert_eq!((sim.delivered().len(), resets(&sim)), (4, vec![]));

    // A fresh numbering without holes, a failed request, then a jump.
    let mut c = Config::new("/lp");
    c.transports = vec![TransportKind::LongPoll];
    let mut sim = Sim::new(c, 30);
    let mut o = the_open(&sim.start());
    for id in ["1", "2"] {
        sim.head(o.id, json_head(200));
        sim.messages(o.id, vec![msg(Some(id), None, "x")], None);
        o = sim.must_open(10_000);
    }
    sim.head(o.id, ResponseHead::new(503));
    let o = sim.must_open(60_000);
    assert_eq!(header(&o, "Last-Event-ID"), Some("2"));
    sim.head(o.id, json_head(200));
    sim.messages(o.id, vec![msg(Some("9"), None, "x")], None);
    assert_eq!(resets(&sim), [("9".into(), ResetReason::Gap)]);
}

/// A server that repeats the last id on its heartbeat events (new data each
/// time): the heartbeat that opens the resumed stream repeats the cursor and
/// says nothing about the numbering; the jump after it (29 → 32) is still
/// a `gap`, and a repeated id within a stream is no hole.
#[test]
fn a_heartbeat_repeating_the_cursor_leaves_the_judgement_to_the_next_id() {
    let mut sim = Sim::new(native_only(), 30);
    let o = the_open(&sim.start());
    sim.opened(o.id);
    for (event, id) in [("message", "27"), ("heartbeat", "27"), ("message", "28")] {
        sim.native(o.id, event, id, id);
    }
    sim.native(o.id, "message", "x", "29");
    sim.error(o.id, TransportError::NativeReconnecting);
    let o = sim.must_open(10_000);
    sim.opened(o.id);
    sim.native(o.id, "heartbeat", "t1", "29");
    sim.native(o.id, "message", "y", "32");
    assert_eq!(resets(&sim), [("32".into(), ResetReason::Gap)]);
}

/// A `reset` event replayed with the id it came with (a resume the server
/// rounded down, a second transport overlapping) is not the server's news:
/// no second `reset`, and the duplicate check it cleared the first time
/// stays, so the messages after it are not delivered twice.
#[test]
fn a_replayed_server_reset_is_not_raised_again() {
    let (mut sim, o) = resumed_after_27_to_29(native_only(), 31);
    sim.native(o.id, "reset", "", "30");
    sim.native(o.id, "message", "y", "1");
    sim.native(o.id, "reset", "", "30");
    sim.native(o.id, "message", "y", "1");
    assert_eq!(resets(&sim), [("29".into(), ResetReason::Server)]);
    assert_eq!(sim.delivered().len(), 4);
}

/// A server that ignores the resume replays its history from the start;
/// with more events than dedupe remembers, the oldest remembered id is no
/// longer the server's first. Dedupe keeps the first ids it saw too, so the
/// replay is still recognised after its first `REPLAY_RUN` events.
#[test]
fn a_replay_of_a_history_longer_than_dedupe_remembers_is_recognised() {
    let mut c = native_only();
    c.dedupe_capacity = 4;
    let mut sim = Sim::new(c, 33);
    let o = the_open(&sim.start());
    sim.opened(o.id);
    for i in 1..=10 {
        sim.native(o.id, "message", "x", &i.to_string());
    }
    sim.error(o.id, TransportError::NativeReconnecting);
    let o = sim.must_open(10_000);
    sim.opened(o.id);
    for i in 1..=2 {
        sim.native(o.id, "message", "x", &i.to_string());
    }
    assert_eq!(error_codes(&sim), []);
    let t = sim.now.mono.0;
    sim.native(o.id, "message", "x", "3");
    assert_eq!(error_codes(&sim), [(t, ErrorCode::ResumeIgnored, None)]);
    assert_eq!(sim.delivered().len(), 10);
}
