//! Issue 13, wire-level rules on virtual time, seeded:
//! - rule 2: an empty long-poll answer is "no news" (not a message, not a
//!   failure), and "no news" is paced by the start of the request;
//! - rule 3: a server-requested wait is honoured as asked, plus a bounded
//!   herd spread, not plus the exponential term, and does not open the
//!   circuit breaker;
//! - rule 7: a 409 to a request that carried a cursor is a `reset`
//!   (`cursor-invalid`) and one request without a cursor.

#[path = "engine_support.rs"]
mod support;

use support::*;
use tidings_core::engine::{
    Action, Config, ErrorCode, OpenRequest, Reason, ResetReason, ResponseHead, State, TransportKind,
};
use tidings_core::policy::backoff::Strategy;

fn long_poll_config() -> Config {
    let mut c = Config::new("/lp");
    c.transports = vec![TransportKind::LongPoll];
    c
}

fn all(sim: &Sim) -> Vec<Action> {
    sim.log.iter().map(|(_, a)| a.clone()).collect()
}

fn resets(actions: &[Action]) -> Vec<ResetReason> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Reset { reason } => Some(*reason),
            _ => None,
        })
        .collect()
}

/// The cursor an Open carries, wherever it travels (header or query).
fn cursor_of(o: &OpenRequest) -> Option<String> {
    if let Some(h) = header(o, "Last-Event-ID") {
        return Some(h.to_string());
    }
    let query = o.url.split_once('?')?.1;
    query
        .split('&')
        .find_map(|p| p.strip_prefix("lastEventId="))
        .map(String::from)
}

// ----- rule 2 ----------------------------------------------------------------

/// How a test server answers "no news" with a 200: the content type, and
/// the body as the adapter reports it.
#[derive(Clone, Copy)]
enum Empty {
    /// A raw body (`handle_body_resource`) with this content type.
    Raw(Option<&'static str>, &'static str),
    /// `text/event-stream` with no bytes, then the end.
    EventStream,
}

fn answer_empty(sim: &mut Sim, o: &OpenRequest, kind: Empty) -> Vec<Action> {
    match kind {
        Empty::Raw(ct, body) => {
            let mut head = ResponseHead::new(200);
            if let Some(ct) = ct {
                head = head.with_content_type(ct);
            }
            let mut acts = sim.head(o.id, head);
            acts.extend(sim.resource(o.id, body));
            acts
        }
        Empty::EventStream => {
            let mut acts = sim.head(o.id, es_head(200));
            acts.extend(sim.end(o.id));
            acts
        }
    }
}

/// A 200 with an empty body, with or without a content type, JSON or not,
/// SSE or not, answered at once: no message, no error, the cursor kept, and
/// the next request starts one floor (1000 ms) after the previous START plus
/// `U[0, 100]`. (Before: the raw and JSON cases delivered a message with
/// empty data, and the gaps grew with the backoff.)
#[test]
fn empty_long_poll_answer_is_no_news() {
    let kinds = [
        ("no content type", Empty::Raw(None, "")),
        ("text/plain", Empty::Raw(Some("text/plain"), "")),
        ("JSON", Empty::Raw(Some("application/json"), "")),
        (
            "JSON, a newline",
            Empty::Raw(Some("application/json"), "\n"),
        ),
        ("event stream", Empty::EventStream),
    ];
    for (name, kind) in kinds {
        let mut config = long_poll_config();
        config.last_event_id = "7".into();
        let mut sim = Sim::new(config, 61);
        let mut o = the_open(&sim.start());
        let mut starts = vec![0];
        for _ in 0..6 {
            sim.run_for(20);
            answer_empty(&mut sim, &o, kind);
            o = sim.must_open(5_000);
            starts.push(sim.last_open_at);
            assert_eq!(cursor_of(&o).as_deref(), Some("7"), "{name}");
        }
        let gaps: Vec<u64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(
            gaps.iter().all(|g| (1000..=1100).contains(g)),
            "{name}: {gaps:?}"
        );
        let log = all(&sim);
        assert!(data(&log).is_empty(), "{name}: {:?}", data(&log));
        assert!(errors(&log).is_empty(), "{name}");
        assert_eq!(sim.engine.last_event_id(), "7", "{name}");
        assert_eq!(sim.engine.state(), State::Open, "{name}");
        assert_eq!(sim.engine.stats().requests, 7, "{name}");
    }
}

/// The pace: a server that answers "no news" at once gets one request per
/// floor, never more and never slower (30 answers, the gaps stay in
/// [1000, 1100], exact numbers pinned); an answer after 600 ms waits only the
/// rest of the floor; a held answer (30 s) re-polls at once; news re-polls at
/// once. A message published meanwhile therefore arrives within one floor.
#[test]
fn no_news_is_paced_by_request_start() {
    let mut sim = Sim::new(long_poll_config(), 62);
    let mut o = the_open(&sim.start());
    let mut starts = vec![0];
    for _ in 0..30 {
        sim.run_for(20);
        sim.head(o.id, ResponseHead::new(204));
        o = sim.must_open(120_000);
        starts.push(sim.last_open_at);
    }
    let gaps: Vec<u64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().all(|g| (1000..=1100).contains(g)), "{gaps:?}");
    assert_eq!(gaps[..5], [1019, 1074, 1100, 1000, 1041]);
    assert!(errors(&all(&sim)).is_empty());
    // Answered after 600 ms: the next request 1000 ms after this one's start.
    let start = sim.last_open_at;
    sim.run_for(600);
    sim.resource(o.id, "");
    o = sim.must_open(5_000);
    let gap = sim.last_open_at - start;
    assert!((1000..=1100).contains(&gap), "{gap}");
    // Held 30 s, then an empty 200: at once.
    sim.run_for(30_000);
    sim.head(o.id, ResponseHead::new(200));
    sim.resource(o.id, "");
    let answered = sim.now.mono.0;
    o = sim.must_open(5_000);
    assert!(sim.last_open_at - answered <= 100);
    // News after 20 ms: at once too.
    sim.run_for(20);
    sim.head(
        o.id,
        ResponseHead::new(200).with_content_type("application/json"),
    );
    sim.messages(o.id, vec![msg(Some("1"), None, "news")], None);
    let answered = sim.now.mono.0;
    sim.must_open(5_000);
    assert!(sim.last_open_at - answered <= 100);
    assert_eq!(data(&all(&sim)), ["news"]);
    // "No news" is a success: no waiting state, no error, ever.
    assert!(waiting(&all(&sim)).is_empty());
}

/// The server's `retry:` raises the pace's floor: an empty event-stream
/// answer carrying `retry: 2000` paces the next request 2000 ms after this
/// one started (plus `U[0, 100]`).
#[test]
fn no_news_pace_honours_the_servers_retry() {
    let mut sim = Sim::new(long_poll_config(), 64);
    let o = the_open(&sim.start());
    sim.run_for(20);
    sim.head(o.id, es_head(200));
    sim.bytes(o.id, b"retry: 2000\n\n");
    sim.end(o.id);
    sim.must_open(5_000);
    assert!(
        (2000..=2100).contains(&sim.last_open_at),
        "{}",
        sim.last_open_at
    );
}

/// `poll` still delivers an empty resource: it is news (the resource is
/// empty now).
#[test]
fn poll_delivers_an_empty_resource() {
    let mut config = Config::new("/r");
    config.transports = vec![TransportKind::Poll];
    let mut sim = Sim::new(config, 63);
    let o = the_open(&sim.start());
    sim.head(o.id, ResponseHead::new(200).with_header("ETag", "\"e1\""));
    let acts = sim.resource(o.id, "");
    assert_eq!(data(&acts), [""]);
}

// ----- rule 3 ----------------------------------------------------------------

fn retry_after(secs: &str) -> ResponseHead {
    ResponseHead::new(503).with_header("Retry-After", secs)
}

/// `Retry-After: 3` waits 3 s plus a spread of at most 300 ms (10 %), not
/// 3 s plus the backoff (5 s were seen); 0 waits the floor (plus ≤ 100 ms).
#[test]
fn retry_after_is_honoured_as_asked() {
    for (secs, lo, hi, exact) in [
        ("3", 3000, 3300, 3245),
        ("0", 1000, 1100, 1082),
        ("45", 45_000, 46_000, 45_816),
    ] {
        let mut sim = Sim::new(fetch_sse_config(), 71);
        let o = the_open(&sim.start());
        let acts = sim.head(o.id, retry_after(secs));
        let w = waiting(&acts);
        assert_eq!(w.len(), 1);
        assert!((lo..=hi).contains(&w[0].1), "{secs}: {w:?}");
        assert_eq!(w, [(Reason::RetryAfter, exact)], "{secs}");
        sim.must_open(100_000);
        assert_eq!(sim.last_open_at, exact);
    }
}

/// Strategy `none`: exactly the server's wait.
#[test]
fn retry_after_without_jitter_is_exact() {
    let mut config = fetch_sse_config();
    config.backoff.strategy = Strategy::None;
    config.backoff.floor_ms = 100;
    config.backoff.base_ms = 100;
    let mut sim = Sim::new(config, 72);
    let o = the_open(&sim.start());
    let acts = sim.head(o.id, retry_after("1"));
    assert_eq!(waiting(&acts), [(Reason::RetryAfter, 1000)]);
}

/// Ten 503s with `Retry-After: 3` in a row: every wait is 3 s plus the
/// spread, and the breaker (threshold 5) never opens; the hinted failures
/// still count for `k`: the unhinted 500 after them backs off with k = 10
/// (step capped at 60 s), and then the breaker counts it as its first.
#[test]
fn hinted_failures_grow_k_but_never_open_the_breaker() {
    let mut config = fetch_sse_config();
    config.backoff.strategy = Strategy::EqualJitter;
    let mut sim = Sim::new(config, 73);
    let mut o = the_open(&sim.start());
    let mut delays = vec![];
    for _ in 0..10 {
        let acts = sim.head(o.id, retry_after("3"));
        delays.extend(waiting(&acts));
        o = sim.must_open(100_000);
    }
    assert!(
        delays
            .iter()
            .all(|(r, d)| *r == Reason::RetryAfter && (3000..=3300).contains(d)),
        "{delays:?}"
    );
    let acts = sim.head(o.id, ResponseHead::new(500));
    // Equal jitter with k = 10: 1000 + 30 000 + U[0, 30 000].
    let w = waiting(&acts);
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].0, Reason::Backoff);
    assert!((31_000..=61_000).contains(&w[0].1), "{w:?}");
    let reasons: Vec<Reason> = states(&all(&sim)).into_iter().map(|s| s.1).collect();
    assert!(!reasons.contains(&Reason::BreakerOpen), "{reasons:?}");
}

/// On `poll` the floor is the current interval: a `Retry-After: 1` with a
/// 5 s interval waits 5 s (plus ≤ 500 ms): a failing poller never polls
/// faster than a healthy one.
#[test]
fn retry_after_on_poll_keeps_the_interval_floor() {
    let mut config = Config::new("/r");
    config.transports = vec![TransportKind::Poll];
    let mut sim = Sim::new(config, 74);
    let o = the_open(&sim.start());
    let acts = sim.head(o.id, retry_after("1"));
    let w = waiting(&acts);
    assert_eq!(w.len(), 1);
    assert!((5000..=5500).contains(&w[0].1), "{w:?}");
}

// ----- rule 7 ----------------------------------------------------------------

fn with_cursor(transport: TransportKind, cursor: &str) -> Config {
    let mut c = Config::new("/u");
    c.transports = vec![transport];
    c.last_event_id = cursor.into();
    c
}

/// A 409 to a request with a cursor, on every transport (on `eventsource`
/// the head comes from the status probe): `reset` (`cursor-invalid`), no
/// error, the cursor forgotten, one new request without a cursor within
/// 100 ms.
#[test]
fn conflict_to_a_resume_resets_on_every_transport() {
    for transport in [
        TransportKind::EventSource,
        TransportKind::FetchSse,
        TransportKind::LongPoll,
        TransportKind::Poll,
    ] {
        let mut sim = Sim::new(with_cursor(transport, "5"), 81);
        let o = the_open(&sim.start());
        assert_eq!(cursor_of(&o).as_deref(), Some("5"), "{transport:?}");
        sim.run_for(30);
        let acts = sim.head(o.id, ResponseHead::new(409));
        assert_eq!(
            resets(&acts),
            [ResetReason::CursorInvalid],
            "{transport:?}: {acts:?}"
        );
        assert!(acts.contains(&Action::Abort(o.id)), "{transport:?}");
        assert!(errors(&acts).is_empty(), "{transport:?}");
        assert_eq!(sim.engine.last_event_id(), "", "{transport:?}");
        let answered = sim.now.mono.0;
        let next = sim.must_open(1000);
        assert!(sim.last_open_at - answered <= 100, "{transport:?}");
        assert_eq!(next.transport, transport);
        assert_eq!(cursor_of(&next), None, "{transport:?}: {next:?}");
        assert_eq!(header(&next, "If-None-Match"), None);
    }
}

/// After the reset the dedupe memory is gone: the server's replay from the
/// start delivers ids 1 and 2 again (they were delivered before the 409),
/// and the stream goes on from there.
#[test]
fn conflict_forgets_the_dedupe_memory() {
    let mut sim = Sim::new(fetch_sse_config(), 82);
    let o = the_open(&sim.start());
    sim.stream(o.id, b"id: 1\ndata: a\n\nid: 2\ndata: b\n\n");
    sim.end(o.id);
    let o = sim.must_open(60_000);
    assert_eq!(header(&o, "Last-Event-ID"), Some("2"));
    let acts = sim.head(o.id, ResponseHead::new(409));
    assert_eq!(resets(&acts), [ResetReason::CursorInvalid]);
    let o = sim.must_open(1000);
    assert_eq!(header(&o, "Last-Event-ID"), None);
    sim.stream(
        o.id,
        b"id: 1\ndata: a\n\nid: 2\ndata: b\n\nid: 3\ndata: c\n\n",
    );
    assert_eq!(data(&all(&sim)), ["a", "b", "a", "b", "c"]);
    assert_eq!(sim.engine.last_event_id(), "3");
    assert_eq!(sim.engine.state(), State::Open);
}

/// Validators are a cursor too: a 409 to a long-poll that sent
/// `If-None-Match` resets and forgets them.
#[test]
fn conflict_to_validators_forgets_them() {
    let mut sim = Sim::new(long_poll_config(), 83);
    let o = the_open(&sim.start());
    sim.head(o.id, ResponseHead::new(200).with_header("ETag", "\"v1\""));
    sim.resource(o.id, "state v1");
    let o = sim.must_open(5000);
    assert_eq!(cursor_of(&o), None);
    assert_eq!(header(&o, "If-None-Match"), Some("\"v1\""));
    let acts = sim.head(o.id, ResponseHead::new(409));
    assert_eq!(resets(&acts), [ResetReason::CursorInvalid]);
    let o = sim.must_open(1000);
    assert_eq!(header(&o, "If-None-Match"), None);
}

fn fatal_409(actions: &[Action]) -> bool {
    errors(actions)
        == [Action::Error {
            code: ErrorCode::HttpStatus,
            status: Some(409),
            retry_in_ms: None,
            fatal: true,
            id: None,
        }]
}

/// A 409 to a request without a cursor stays fatal `http-status`, and so
/// does a 409 to the restart itself.
#[test]
fn conflict_without_a_cursor_is_fatal() {
    let mut sim = Sim::new(fetch_sse_config(), 84);
    let o = the_open(&sim.start());
    let acts = sim.head(o.id, ResponseHead::new(409));
    assert!(fatal_409(&acts), "{acts:?}");
    assert!(resets(&acts).is_empty());
    assert_eq!(sim.engine.state(), State::Closed);

    let mut sim = Sim::new(with_cursor(TransportKind::LongPoll, "5"), 84);
    let o = the_open(&sim.start());
    sim.head(o.id, ResponseHead::new(409));
    let o = sim.must_open(1000);
    let acts = sim.head(o.id, ResponseHead::new(409));
    assert!(fatal_409(&acts), "{acts:?}");
    assert_eq!(resets(&all(&sim)), [ResetReason::CursorInvalid]);
}

/// A second 409 right after the restart (the cursorless request answered,
/// its cursor rejected at once) is fatal: a server that rejects every cursor
/// must not make the app refetch everything in a loop. Once a request with a
/// cursor was accepted, a later 409 resets again.
#[test]
fn second_conflict_right_after_the_restart_is_fatal() {
    let json = || ResponseHead::new(200).with_content_type("application/json");
    let mut sim = Sim::new(with_cursor(TransportKind::LongPoll, "5"), 85);
    let o = the_open(&sim.start());
    sim.head(o.id, ResponseHead::new(409));
    let o = sim.must_open(1000);
    sim.head(o.id, json());
    sim.messages(o.id, vec![msg(Some("1"), None, "a")], None);
    let o = sim.must_open(1000);
    assert_eq!(cursor_of(&o).as_deref(), Some("1"));
    let acts = sim.head(o.id, ResponseHead::new(409));
    assert!(fatal_409(&acts), "{acts:?}");

    let mut sim = Sim::new(with_cursor(TransportKind::LongPoll, "5"), 85);
    let o = the_open(&sim.start());
    sim.head(o.id, ResponseHead::new(409));
    for (id, data) in [("1", "a"), ("2", "b")] {
        let o = sim.must_open(1000);
        sim.head(o.id, json());
        sim.messages(o.id, vec![msg(Some(id), None, data)], None);
    }
    let o = sim.must_open(1000);
    assert_eq!(cursor_of(&o).as_deref(), Some("2"));
    let acts = sim.head(o.id, ResponseHead::new(409));
    assert_eq!(resets(&acts), [ResetReason::CursorInvalid]);
    assert!(errors(&acts).is_empty());
    assert_eq!(
        resets(&all(&sim)),
        [ResetReason::CursorInvalid, ResetReason::CursorInvalid]
    );
    assert_eq!(sim.engine.state(), State::Open);
}

/// 410 is not a cursor reset (nchan's 410 after a hold is transient; a
/// first 410 at once is fatal as before).
#[test]
fn gone_is_not_a_cursor_reset() {
    let mut sim = Sim::new(with_cursor(TransportKind::FetchSse, "5"), 86);
    let o = the_open(&sim.start());
    let acts = sim.head(o.id, ResponseHead::new(410));
    assert!(resets(&acts).is_empty());
    assert_eq!(sim.engine.state(), State::Closed);
}
