//! Resume through the engine (cases BC-05, BC-07, BC-08 of the real-world
//! failure list, data copied here): the cursor each reconnect carries, as a
//! `Last-Event-ID` header (same-origin fetch) or a query parameter
//! (`eventsource`, cross-origin fetch), across reconnects and transport
//! switches. These cases assert a gap equal to the server's `retry:`, so they
//! run with the jitter and the step disabled (`exact_retry_config`).

#[path = "engine_support.rs"]
mod support;

use support::*;
use tidings_core::engine::{Action, AttemptId, Config, OpenRequest, TransportError, TransportKind};

fn events(sim: &Sim) -> Vec<(String, String, String, String)> {
    sim.delivered()
        .into_iter()
        .map(|m| (m.event, m.data, m.id, m.last_event_id))
        .collect()
}

fn ev(event: &str, data: &str, id: &str, leid: &str) -> (String, String, String, String) {
    (event.into(), data.into(), id.into(), leid.into())
}

/// BC-05: end of stream in the middle of an event; nothing carried over.
#[test]
fn bc05_partial_event_at_eof_and_reconnect_header() {
    for second_write in [
        &b"event: partial\nid: 9\ndata: b\n"[..],
        b"event: partial\nid: 9\ndata: b",
    ] {
        let mut sim = Sim::new(exact_retry_config(TransportKind::FetchSse), 5);
        let o1 = the_open(&sim.start());
        assert_eq!(header(&o1, "Last-Event-ID"), None);
        sim.head(o1.id, tidings_core::engine::ResponseHead::event_stream());
        sim.bytes(o1.id, b"retry: 100\nid: 8\ndata: a\n\n");
        sim.run_for(100);
        sim.bytes(o1.id, second_write);
        sim.end(o1.id);
        let t_end = sim.now.mono.0;
        let o2 = sim.must_open(10_000);
        // The gap equals retry (100 ms) exactly.
        assert_eq!(sim.last_open_at - t_end, 100);
        assert_eq!(header(&o2, "Last-Event-ID"), Some("8"));
        sim.stream(o2.id, b"data: c\n\n");
        assert_eq!(
            events(&sim),
            [ev("message", "a", "8", "8"), ev("message", "c", "", "8")]
        );
    }
}

/// BC-07: NUL ids ignored, ids persist, id-only blocks move the cursor.
#[test]
fn bc07_id_rules_through_the_engine() {
    let mut sim = Sim::new(exact_retry_config(TransportKind::FetchSse), 7);
    let o1 = the_open(&sim.start());
    sim.stream(o1.id, b"retry: 500\nid: 123\ndata: a\n\n");
    for w in [
        &b"id: bad\0id\ndata: b\n\n"[..],
        b"data: c\n\n",
        b"id: 200\n\n",
    ] {
        sim.run_for(100);
        sim.bytes(o1.id, w);
    }
    assert_eq!(sim.engine.last_event_id(), "200");
    sim.end(o1.id);
    let t_end = sim.now.mono.0;
    let o2 = sim.must_open(10_000);
    assert_eq!(sim.last_open_at - t_end, 500);
    assert_eq!(header(&o2, "Last-Event-ID"), Some("200"));
    sim.stream(o2.id, b"data: d\n\n");
    assert_eq!(
        events(&sim),
        [
            ev("message", "a", "123", "123"),
            ev("message", "b", "", "123"),
            ev("message", "c", "", "123"),
            ev("message", "d", "", "200"),
        ]
    );

    // Separate run: a NUL in the very first id.
    let mut sim = Sim::new(exact_retry_config(TransportKind::FetchSse), 7);
    let o1 = the_open(&sim.start());
    sim.stream(o1.id, b"id: x\0\ndata: hello\n\n");
    sim.end(o1.id);
    let o2 = sim.must_open(10_000);
    assert_eq!(events(&sim), [ev("message", "hello", "", "")]);
    assert_eq!(header(&o2, "Last-Event-ID"), None);
}

/// BC-08 server script: (expected cursor of the request, reply body).
const BC08: [(Option<&str>, &[u8]); 6] = [
    (Some("s0"), b"retry: 200\n"),
    (Some("s0"), b"id: 1\ndata: a\n\nid: 2\ndata: b\n\n"),
    (Some("2"), b"data: c\n\n"),
    (Some("2"), b"id\ndata: d\n\n"),
    (None, b"id: \xE2\x80\xA6\ndata: e\n\n"),
    (Some("\u{2026}"), b"data: f\n\n"),
];

fn bc08_config(transport: TransportKind) -> Config {
    let mut c = exact_retry_config(transport);
    c.last_event_id = "s0".into();
    c
}

/// BC-08 on fetch-sse (same-origin: the header) and on long-poll with an
/// event-stream body: the latest cursor on every reconnect, the seeded one
/// until an id arrives, none after a bare `id`, and U+2026 as percent-encoded
/// UTF-8 in the query (not visible ASCII: no header).
#[test]
fn bc08_latest_seeded_and_cleared_cursor_fetch_transports() {
    for transport in [TransportKind::FetchSse, TransportKind::LongPoll] {
        let mut sim = Sim::new(bc08_config(transport), 8);
        let mut open = the_open(&sim.start());
        for (i, (expect, body)) in BC08.iter().enumerate() {
            // Same-origin: the header, no query; U+2026 only in the query.
            let non_ascii = *expect == Some("\u{2026}");
            let (want_header, want_url) = match non_ascii {
                false => (*expect, "/stream"),
                true => (None, "/stream?lastEventId=%E2%80%A6"),
            };
            let sent = (header(&open, "Last-Event-ID"), open.url.as_str());
            assert_eq!(sent, (want_header, want_url), "{transport:?} req {}", i + 1);
            sim.run_for(10);
            sim.stream(open.id, body);
            if i == 5 {
                break;
            }
            sim.run_for(40);
            sim.end(open.id);
            open = sim.must_open(10_000);
        }
        let got: Vec<_> = sim
            .delivered()
            .into_iter()
            .map(|m| (m.data, m.last_event_id))
            .collect();
        let want = [
            ("a", "1"),
            ("b", "2"),
            ("c", "2"),
            ("d", ""),
            ("e", "\u{2026}"),
            ("f", "\u{2026}"),
        ];
        assert_eq!(got.len(), 6, "{transport:?}");
        for ((d, l), (wd, wl)) in got.iter().zip(want) {
            assert_eq!((d.as_str(), l.as_str()), (wd, wl), "{transport:?}");
        }
    }
}

/// A cursor that is not visible ASCII goes only in the query, never as
/// `Last-Event-ID`, on every same-origin fetch transport: a page can send a
/// header's non-ASCII bytes only by a Latin-1 string per byte, which
/// WebKitGTK encodes again as UTF-8 (U+2026 arrived as C3 A2 C2 80 C2 A6),
/// and server stacks read header bytes as Latin-1; the query is percent-
/// encoded UTF-8 everywhere. A space (trimmed from the edges of a header
/// value by `fetch`) and control characters go the same way. The next
/// visible-ASCII id goes back to the header alone.
#[test]
fn cursor_not_visible_ascii_goes_in_the_query_only() {
    let body = |id: &str| format!("id: {id}\ndata: x\n\n").into_bytes();
    for transport in [
        TransportKind::FetchSse,
        TransportKind::LongPoll,
        TransportKind::Poll,
    ] {
        let mut config = exact_retry_config(transport);
        config.last_event_id = " 5".into();
        let mut sim = Sim::new(config, 9);
        let mut o = the_open(&sim.start());
        let mut sent = vec![(o.url.clone(), header(&o, "Last-Event-ID").map(String::from))];
        for id in ["\u{2026}", "a b", "7", "x\ty", "9"] {
            sim.run_for(10);
            sim.stream(o.id, &body(id));
            sim.end(o.id);
            o = sim.must_open(10_000);
            assert_eq!(o.transport, transport);
            sent.push((o.url.clone(), header(&o, "Last-Event-ID").map(String::from)));
        }
        let q = |u: &str| (String::from(u), None);
        let h = |v: &str| (String::from("/stream"), Some(String::from(v)));
        assert_eq!(
            sent,
            [
                q("/stream?lastEventId=%205"),
                q("/stream?lastEventId=%E2%80%A6"),
                q("/stream?lastEventId=a%20b"),
                h("7"),
                q("/stream?lastEventId=x%09y"),
                h("9"),
            ],
            "{transport:?}"
        );
    }
}

/// BC-08 cross-origin fetch: the cursor travels in the query instead.
#[test]
fn bc08_cross_origin_cursor_in_query() {
    let mut config = bc08_config(TransportKind::FetchSse);
    config.cross_origin = true.into();
    config.last_event_id_param = "last_event_id".into();
    let mut sim = Sim::new(config, 8);
    let o = the_open(&sim.start());
    assert_eq!(o.url, "/stream?last_event_id=s0");
    assert_eq!(header(&o, "Last-Event-ID"), None);
    sim.stream(o.id, b"id: \xE2\x80\xA6\ndata: e\n\n");
    sim.end(o.id);
    let o = sim.must_open(10_000);
    assert_eq!(o.url, "/stream?last_event_id=%E2%80%A6");
}

/// BC-08 NATIVE: native EventSource delivers decoded events; each re-created
/// EventSource carries the cursor in the URL (`?lastEventId=`), never a
/// header. After a 503 (native `error`), the library's own reconnect puts the
/// latest id, percent-encoded, in the URL.
#[test]
fn bc08_native_eventsource_query_cursor() {
    let mut sim = Sim::new(bc08_config(TransportKind::EventSource), 8);
    let o1 = the_open(&sim.start());
    assert_eq!(o1.url, "/stream?lastEventId=s0");
    assert!(o1.headers.is_empty());
    sim.opened(o1.id);
    // Req2 content seen through the native API.
    sim.native(o1.id, "message", "a", "1");
    sim.native(o1.id, "message", "b", "2");
    sim.native(o1.id, "message", "c", "2");
    // "id\ndata: d": a bare id clears it: lastEventId "" differs from "2".
    sim.native(o1.id, "message", "d", "");
    sim.native(o1.id, "message", "e", "\u{2026}");
    sim.native(o1.id, "message", "f", "\u{2026}");
    // Req6 answered with 503: the EventSource fails (error, closed).
    sim.error(o1.id, TransportError::Network);
    let o2 = sim.must_open(10_000);
    assert_eq!(o2.url, "/stream?lastEventId=%E2%80%A6");
    let ids: Vec<_> = sim.delivered().into_iter().map(|m| m.id).collect();
    assert_eq!(ids, ["1", "2", "", "", "\u{2026}", ""]);
    assert_eq!(sim.engine.last_event_id(), "\u{2026}");
}

/// The native EventSource of `id` fails (the adapter closes it); the
/// engine's next one (within 10 s) must ask for `url`.
#[track_caller]
fn reopened_at(sim: &mut Sim, id: AttemptId, url: &str) -> OpenRequest {
    sim.error(id, TransportError::Network);
    let o = sim.must_open(10_000);
    assert_eq!(o.url, url);
    o
}

/// BC-08 NATIVE as the adapter runs it: every response on a new `EventSource`
/// (the adapter closes it on `error` and the engine re-creates it), whose
/// `lastEventId` starts empty. An id-less event first on a new instance
/// reports `""`; it must not clear the cursor, or every reconnect after an
/// id-less event would resume from nothing.
#[test]
fn bc08_native_each_reconnect_a_new_eventsource() {
    let mut sim = Sim::new(bc08_config(TransportKind::EventSource), 8);
    let o = the_open(&sim.start());
    assert_eq!(o.url, "/stream?lastEventId=s0");
    sim.opened(o.id);
    let o = reopened_at(&mut sim, o.id, "/stream?lastEventId=s0"); // "retry: 200", FIN
    sim.native(o.id, "message", "a", "1");
    sim.native(o.id, "message", "b", "2");
    let o = reopened_at(&mut sim, o.id, "/stream?lastEventId=2");
    // "data: c": no id; the new instance reports its empty lastEventId.
    sim.native(o.id, "message", "c", "");
    sim.native(o.id, "heartbeat", "", "");
    assert_eq!(sim.engine.last_event_id(), "2");
    let o = reopened_at(&mut sim, o.id, "/stream?lastEventId=2");
    // An id later on the same instance still moves the cursor, and a bare
    // `id` after it clears it.
    sim.native(o.id, "message", "d", "\u{2026}");
    sim.native(o.id, "message", "e", "");
    assert_eq!(sim.engine.last_event_id(), "");
    reopened_at(&mut sim, o.id, "/stream");
    let got: Vec<_> = sim
        .delivered()
        .into_iter()
        .map(|m| (m.data, m.id, m.last_event_id))
        .collect();
    let want = [
        ("a", "1", "1"),
        ("b", "2", "2"),
        ("c", "", "2"),
        ("d", "\u{2026}", "\u{2026}"),
        ("e", "", ""),
    ];
    assert_eq!(got.len(), want.len());
    for ((d, i, l), (wd, wi, wl)) in got.iter().zip(want) {
        assert_eq!((d.as_str(), i.as_str(), l.as_str()), (wd, wi, wl));
    }
}

/// The cursor crosses a transport switch (fetch-sse → long-poll).
#[test]
fn cursor_crosses_transport_switch() {
    let mut config = fetch_sse_config();
    config.last_event_id = "41".into();
    let mut sim = Sim::new(config, 3);
    let o = the_open(&sim.start());
    sim.stream(o.id, b"id: 42\ndata: x\n\n");
    sim.end(o.id);
    // Two failed opens (proven transports ignore open failures, so use silence).
    for _ in 0..2 {
        let o = sim.must_open(100_000);
        sim.head(o.id, tidings_core::engine::ResponseHead::event_stream());
        sim.run_for(15_000);
    }
    let lp = sim.must_open(100_000);
    assert_eq!(lp.transport, TransportKind::LongPoll);
    assert_eq!(header(&lp, "Last-Event-ID"), Some("42"));
    let changed = sim.find(|a| match a {
        Action::TransportChanged {
            transport, reason, ..
        } => Some((*transport, *reason)),
        _ => None,
    });
    assert_eq!(
        changed.last().map(|c| c.1),
        Some((
            TransportKind::LongPoll,
            tidings_core::engine::Reason::BufferedStream
        ))
    );
    let _ = AttemptId(0);
}
