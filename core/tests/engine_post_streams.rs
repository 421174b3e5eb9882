//! Streams started by the app's own request (`method`, `body`, `resume`)
//! and ended by an in-band marker (`end`): `tidings_core::engine::start`.
//! An LLM-like answer: a POST whose event stream is cut mid-body, resumed
//! by replay or by the app's resume request, ended by `data: [DONE]`.

#[path = "engine_support.rs"]
mod support;

use std::sync::Arc;
use support::*;

use tidings_core::engine::start::{check, EndRule, RequestStart, Resume, Start, StartRules};
use tidings_core::engine::{Action, Config, Reason, State, TransportError, TransportKind};
use tidings_core::keys::{share_key, PageOptions};

fn post(resume: Resume) -> Config {
    with(
        Config::new("/answer"),
        request("POST", true, resume),
        EndRule::default(),
    )
}

fn request(method: &str, body: bool, resume: Resume) -> Option<RequestStart> {
    Some(RequestStart {
        method: method.into(),
        body,
        resume,
    })
}

/// `c` with these rules, sanitized.
fn with(mut c: Config, request: Option<RequestStart>, end: EndRule) -> Config {
    c.start = Some(Arc::new(StartRules { request, end }));
    c.sanitized()
}

fn done() -> EndRule {
    EndRule {
        event: None,
        data: Some("[DONE]".into()),
    }
}

#[test]
fn a_request_start_goes_over_fetch_sse_then_long_poll_only() {
    let c = post(Resume::Replay);
    assert_eq!(check(&c), Ok(()));
    let (mut sim, first) = Sim::started(c, 1);
    assert_eq!(first.transport, TransportKind::FetchSse);
    assert_eq!(first.start, Start::Request);
    let mut seen = vec![first.transport];
    let mut id = first.id;
    // Opens that fail move down the list; never to eventsource or poll.
    for _ in 0..12 {
        sim.error(id, TransportError::NetworkOrCors);
        let o = sim.must_open(600_000);
        seen.push(o.transport);
        id = o.id;
    }
    assert!(seen.contains(&TransportKind::LongPoll), "{seen:?}");
    assert!(
        seen.iter()
            .all(|t| matches!(t, TransportKind::FetchSse | TransportKind::LongPoll)),
        "{seen:?}"
    );
}

#[test]
fn check_refuses_what_fetch_or_the_transports_cannot_send() {
    let mut c = post(Resume::Replay);
    c.transports = vec![TransportKind::EventSource, TransportKind::Poll];
    assert_eq!(check(&c).map_err(|e| e.0), Err("transports"));
    c.transports = vec![TransportKind::EventSource, TransportKind::LongPoll];
    assert_eq!(check(&c), Ok(()));
    for (method, body, refused) in [
        ("CONNECT", false, Some("method")),
        ("trace", false, Some("method")),
        ("PO ST", true, Some("method")),
        ("", false, Some("method")),
        ("GET", true, Some("body")),
        ("head", true, Some("body")),
        ("post", true, None),
        ("GET", false, None),
        ("QUERY", true, None),
    ] {
        c = with(c, request(method, body, Resume::Replay), EndRule::default());
        assert_eq!(check(&c).err().map(|e| e.0), refused, "{method} {body}");
    }
    assert_eq!(check(&Config::new("/s").sanitized()), Ok(()));
}

/// `resume: "replay"`: every attempt sends the app's request again; after
/// the cut at id 300 it carries `Last-Event-ID: 300`.
#[test]
fn replay_sends_the_request_again_with_the_cursor() {
    let (mut sim, first) = Sim::started(post(Resume::Replay), 3);
    assert_eq!(header(&first, "Last-Event-ID"), None);
    // Cut before any id: the same request, still without a cursor.
    sim.error(first.id, TransportError::NetworkOrCors);
    let second = sim.must_open(60_000);
    assert_eq!(
        (second.start, header(&second, "Last-Event-ID")),
        (Start::Request, None)
    );
    sim.stream(
        second.id,
        b"id: 299\ndata: t299\n\nid: 300\ndata: t300\n\ndata: t3",
    );
    sim.error(second.id, TransportError::NetworkOrCors);
    let third = sim.must_open(60_000);
    assert_eq!(third.start, Start::Request);
    assert_eq!(header(&third, "Last-Event-ID"), Some("300"));
    assert_eq!(
        data(&sim.log.iter().map(|l| l.1.clone()).collect::<Vec<_>>()),
        ["t299", "t300"]
    );
}

/// `resume` as a function: the app's request until there is a cursor, then
/// the resume request built from it (the cursor travels as usual too).
#[test]
fn a_resume_function_is_asked_once_there_is_a_cursor() {
    let (mut sim, first) = Sim::started(post(Resume::Request), 5);
    assert_eq!(first.start, Start::Request);
    sim.error(first.id, TransportError::NetworkOrCors);
    let second = sim.must_open(60_000);
    assert_eq!(second.start, Start::Request);
    sim.stream(second.id, b"id: 600\ndata: t600\n\n");
    sim.end(second.id);
    let third = sim.must_open(60_000);
    assert_eq!(third.start, Start::Resume);
    assert_eq!(sim.engine.last_event_id(), "600");
    assert_eq!(header(&third, "Last-Event-ID"), Some("600"));
    // A plain subscription always sends a GET.
    let (_, plain) = Sim::started(fetch_sse_config(), 5);
    assert_eq!(plain.start, Start::Get);
}

/// `end: { data: "[DONE]" }`: the marker is not delivered, nothing after it
/// in the same chunk either; the request is aborted and the connection
/// closes cleanly, with no request for ten minutes.
#[test]
fn the_end_marker_closes_with_no_further_request() {
    let c = with(
        Config::new("/answer"),
        request("POST", true, Resume::Replay),
        done(),
    );
    let (mut sim, first) = Sim::started(c, 7);
    let out = sim.stream(
        first.id,
        b"id: 1\ndata: a\n\nid: 2\ndata: [DONE]\n\nid: 3\ndata: late\n\n",
    );
    assert_eq!(data(&out), ["a"]);
    assert!(out.contains(&Action::Abort(first.id)), "{out:#?}");
    assert_eq!(
        states(&out).last().copied(),
        Some((State::Closed, Reason::StreamClosed, None))
    );
    assert!(errors(&out).is_empty(), "{out:#?}");
    sim.end(first.id);
    sim.run_for(600_000);
    assert_eq!(sim.opens().len(), 1);
    assert_eq!(
        data(&sim.log.iter().map(|l| l.1.clone()).collect::<Vec<_>>()),
        ["a"]
    );
}

/// An end rule by event type, on a long-poll JSON answer and on a plain
/// GET: the messages before it are delivered, none after.
#[test]
fn an_end_event_closes_a_long_poll_answer() {
    let mut c = Config::new("/s");
    c.transports = vec![TransportKind::LongPoll];
    let end = EndRule {
        event: Some("done".into()),
        data: None,
    };
    let (mut sim, first) = Sim::started(with(c, None, end), 9);
    assert_eq!(first.start, Start::Get);
    sim.head(first.id, json_head(200));
    let out = sim.messages(
        first.id,
        vec![
            msg(Some("1"), None, "a"),
            msg(Some("2"), Some("done"), ""),
            msg(Some("3"), None, "b"),
        ],
        None,
    );
    assert_eq!(data(&out), ["a"]);
    assert_eq!(
        states(&out).last().copied(),
        Some((State::Closed, Reason::StreamClosed, None))
    );
    sim.run_for(600_000);
    assert_eq!(sim.opens().len(), 1);
}

#[test]
fn an_end_rule_matches_its_type_and_data_and_an_empty_one_nothing() {
    let both = EndRule {
        event: Some("done".into()),
        data: Some("[DONE]".into()),
    };
    assert!(both.matches("done", "[DONE]"));
    assert!(!both.matches("message", "[DONE]"));
    assert!(!both.matches("done", "[DONE] "));
    assert!(done().matches("message", "[DONE]"));
    assert!(!EndRule::default().matches("message", ""));
}

/// The app's request is never shared (its body cannot be compared); an end
/// rule splits the key, and a key without one stays what it was.
#[test]
fn a_request_start_is_never_shared_and_an_end_rule_splits_the_key() {
    let page = PageOptions::default();
    assert_eq!(share_key(&post(Resume::Replay), &page), None);
    let plain = Config::new("/s").sanitized();
    let ended = with(plain.clone(), None, done());
    let (a, b) = (share_key(&plain, &page), share_key(&ended, &page));
    assert!(a.is_some() && b.is_some() && a != b, "{a:?} {b:?}");
}

/// A silent POST stream with a long-poll endpoint gets no news probe: the
/// probe would send the app's request (which starts work) a second time.
#[test]
fn a_silent_request_started_stream_gets_no_news_probe() {
    let mut c = post(Resume::Replay);
    c.urls.long_poll = Some("/long-poll".into());
    let (mut sim, first) = Sim::started(c, 1);
    assert_eq!(first.transport, TransportKind::FetchSse);
    sim.run_for(50);
    sim.opened(first.id);
    sim.run_for(10_000);
    let beside: Vec<_> = sim.opens().into_iter().filter(|(_, o)| o.beside).collect();
    assert!(beside.is_empty(), "{beside:?}");
}

/// A silent GET stream with an end rule gets its news probe, whose answer is
/// delivered as it comes: the marker there closes the connection at once
/// (4,000 ms), the stream is aborted with the probe's request, nothing is
/// delivered after it and no request follows.
#[test]
fn the_end_marker_in_the_news_probes_answer_closes_the_connection() {
    let mut c = Config::new("/s");
    c.urls.long_poll = Some("/long-poll".into());
    let c = with(c, None, done());
    let (mut sim, first) = Sim::started(c, 1);
    sim.run_for(50);
    sim.opened(first.id);
    let p = sim.must_open(10_000);
    assert_eq!((sim.last_open_at, p.beside), (3_000, true));
    sim.run_until(4_000);
    sim.head(p.id, json_head(200));
    let out = sim.messages(
        p.id,
        vec![msg(Some("1"), None, "a"), msg(Some("2"), None, "[DONE]")],
        None,
    );
    assert_eq!(data(&out), ["a"]);
    assert!(out.contains(&Action::Abort(p.id)), "{out:#?}");
    assert!(out.contains(&Action::Abort(first.id)), "{out:#?}");
    assert_eq!(
        states(&out).last().copied(),
        Some((State::Closed, Reason::StreamClosed, None))
    );
    sim.run_for(600_000);
    assert_eq!(sim.opens().len(), 2);
    assert_eq!(sim.engine.live_attempt(), None);
}
