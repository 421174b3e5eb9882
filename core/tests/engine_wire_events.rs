//! Wire-level rules that every transport shares:
//! - rule 1: a server event named like one of the subscription's own events
//!   (`open`, `error`, `statechange`, `transportchange`) is data, never a
//!   lifecycle signal: not delivered, reported as `Action::Ignored` (the
//!   debug log), the stream stays open; `reset` keeps its protocol meaning;
//! - rule 5: a repeat is the same id with the same content (type and data):
//!   ids reissued after a server restart with new data are new events, true
//!   replays are dropped, also across a transport switch.

#[path = "engine_support.rs"]
mod support;

use support::*;
use tidings_core::engine::{
    Action, Config, ResponseHead, TransportError, TransportKind, MAX_FILTERED_TOLD,
};

/// The `Ignored` actions of reserved names as (event, id).
fn ignored(actions: &[Action]) -> Vec<(String, String)> {
    told(actions, false)
}

/// The `Ignored` actions with `filtered` as (event, id).
fn told(actions: &[Action], filtered: bool) -> Vec<(String, String)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Ignored {
                event,
                id,
                filtered: f,
            } if *f == filtered => Some((event.clone(), id.clone())),
            _ => None,
        })
        .collect()
}

/// Nothing but deliveries, `Ignored` and a request transport's `open` state:
/// no error, abort, reconnect, other state, reset.
fn only_data(actions: &[Action]) {
    for a in actions {
        assert!(
            matches!(
                a,
                Action::Deliver(_)
                    | Action::Ignored { .. }
                    | Action::State {
                        state: tidings_core::engine::State::Open,
                        ..
                    }
            ),
            "unexpected {a:?} in {actions:#?}"
        );
    }
}

/// A config for `transport` that lists `error` in `events`: the JS options
/// refuse it, the Rust `Config` does not, and even then the server's
/// `event: error` must not become a message.
fn config(transport: TransportKind) -> Config {
    let mut c = Config::new("/stream");
    c.transports = vec![transport];
    c.events = vec!["error".into(), "price".into()];
    c
}

const OWN: [&str; 4] = ["error", "open", "statechange", "transportchange"];

fn want_ignored() -> Vec<(String, String)> {
    OWN.iter()
        .enumerate()
        .map(|(i, e)| (String::from(*e), (i + 1).to_string()))
        .collect()
}

/// The same stream body on `fetch-sse` and on `long-poll` / `poll` bodies.
const BODY: &[u8] = b"id: 1\nevent: error\ndata: {\"message\":\"boom\"}\n\n\
id: 2\nevent: open\ndata: x\n\nid: 3\nevent: statechange\ndata: x\n\n\
id: 4\nevent: transportchange\ndata: x\n\nid: 5\ndata: after\n\n\
event: price\ndata: 7\n\n";

#[test]
fn own_event_names_from_the_server_are_dropped_on_sse_bodies() {
    for transport in [
        TransportKind::FetchSse,
        TransportKind::LongPoll,
        TransportKind::Poll,
    ] {
        let mut sim = Sim::new(config(transport), 1);
        let o = the_open(&sim.start());
        let head = match transport {
            TransportKind::FetchSse => sim.head(o.id, ResponseHead::event_stream()),
            _ => sim.head(o.id, es_head(200)),
        };
        assert!(errors(&head).is_empty(), "{transport:?}");
        let acts = sim.bytes(o.id, BODY);
        only_data(&acts);
        assert_eq!(ignored(&acts), want_ignored(), "{transport:?}");
        assert_eq!(data(&acts), ["after", "7"], "{transport:?}");
        assert_eq!(sim.engine.last_event_id(), "5", "{transport:?}");
        assert_eq!(sim.engine.live_attempt(), Some(o.id), "{transport:?}");
    }
}

#[test]
fn own_event_names_from_the_server_are_dropped_on_eventsource() {
    let mut sim = Sim::new(config(TransportKind::EventSource), 2);
    let o = the_open(&sim.start());
    sim.opened(o.id);
    let mut acts = Vec::new();
    for (i, e) in OWN.iter().enumerate() {
        acts.extend(sim.native(o.id, e, "{\"message\":\"boom\"}", &(i + 1).to_string()));
    }
    acts.extend(sim.native(o.id, "message", "after", "5"));
    only_data(&acts);
    assert_eq!(ignored(&acts), want_ignored());
    assert_eq!(data(&acts), ["after"]);
    assert_eq!(sim.engine.last_event_id(), "5");
    // Still the same stream, an hour later with heartbeats: never reconnected.
    for _ in 0..80 {
        sim.run_for(40_000);
        sim.native(o.id, "heartbeat", "", "5");
    }
    assert_eq!(sim.opens().len(), 1);
    assert_eq!(sim.engine.live_attempt(), Some(o.id));
}

#[test]
fn own_event_names_from_the_server_are_dropped_in_json_messages() {
    let mut sim = Sim::new(config(TransportKind::LongPoll), 3);
    let o = the_open(&sim.start());
    sim.head(
        o.id,
        ResponseHead::new(200).with_content_type("application/json"),
    );
    let mut msgs: Vec<_> = want_ignored()
        .iter()
        .map(|(e, id)| msg(Some(id), Some(e), "x"))
        .collect();
    msgs.push(msg(Some("5"), None, "after"));
    let acts = sim.messages(o.id, msgs, None);
    assert_eq!(ignored(&acts), want_ignored());
    assert_eq!(data(&acts), ["after"]);
    assert!(errors(&acts).is_empty());
    assert_eq!(sim.engine.last_event_id(), "5");
}

/// An event whose type is not in `events` is dropped; the first of each
/// type is told (`Ignored` with `filtered`, the debug log's one word about
/// it), on every transport and across reconnects; its repeats, and types
/// past the first `MAX_FILTERED_TOLD`, are not.
#[test]
fn a_type_not_in_events_is_told_once_per_type() {
    let mut sim = Sim::new(config(TransportKind::FetchSse), 6);
    let o = the_open(&sim.start());
    sim.head(o.id, ResponseHead::event_stream());
    let acts = sim.bytes(
        o.id,
        b"id: 1\nevent: chat\ndata: a\n\nid: 2\nevent: chat\ndata: b\n\n\
event: typing\ndata: c\n\nid: 3\nevent: price\ndata: 7\n\nevent: chat\ndata: d\n\n",
    );
    only_data(&acts);
    let want = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(e, i)| (e.to_string(), i.to_string()))
            .collect()
    };
    assert_eq!(told(&acts, true), want(&[("chat", "1"), ("typing", "")]));
    assert_eq!(data(&acts), ["7"]);
    assert_eq!(sim.engine.last_event_id(), "3");
    sim.end(o.id);
    let o = sim.must_open(10_000);
    let acts = sim.stream(o.id, b"id: 4\nevent: chat\ndata: e\n\n");
    assert_eq!(told(&acts, true), []);
    // A server naming every event differently: the first 16 types only.
    let mut body = Vec::new();
    for i in 0..40 {
        body.extend_from_slice(format!("event: t{i}\ndata: x\n\n").as_bytes());
    }
    let acts = sim.bytes(o.id, &body);
    let names: Vec<String> = told(&acts, true).into_iter().map(|(e, _)| e).collect();
    let first: Vec<String> = (0..14).map(|i| format!("t{i}")).collect();
    assert_eq!(MAX_FILTERED_TOLD, 16);
    assert_eq!(names, first, "16 in all with chat and typing");
}

/// `reset` keeps its meaning: the server's way to say "refetch" (and it
/// clears dedupe), not an ignored event.
#[test]
fn reset_from_the_server_is_still_a_reset() {
    let mut sim = Sim::new(fetch_sse_config(), 4);
    let o = the_open(&sim.start());
    let acts = sim.stream(o.id, b"event: reset\ndata: {}\n\n");
    assert!(ignored(&acts).is_empty());
    assert_eq!(
        acts.iter()
            .filter(|a| matches!(a, Action::Reset { .. }))
            .count(),
        1
    );
}

/// A server that lost its state restarts its ids at 1 (n8n PR #33558): the
/// new 1, 2, 3 carry new data and are delivered; a replay of them is not.
#[test]
fn reissued_ids_with_new_data_are_delivered() {
    let mut sim = Sim::new(fetch_sse_config(), 5);
    let o = the_open(&sim.start());
    sim.stream(
        o.id,
        b"id: 1\ndata: a\n\nid: 2\ndata: b\n\nid: 3\ndata: c\n\n",
    );
    sim.end(o.id);
    // Restarted: the cursor 3 means nothing to it; it sends what it has now.
    let o = sim.must_open(10_000);
    assert_eq!(header(&o, "Last-Event-ID"), Some("3"));
    sim.stream(
        o.id,
        b"id: 1\ndata: x\n\nid: 2\ndata: y\n\nid: 3\ndata: z\n\nid: 2\ndata: y\n\n",
    );
    sim.end(o.id);
    // A resume that rounds down replays the new 3 exactly: dropped.
    let o = sim.must_open(10_000);
    sim.stream(
        o.id,
        b"id: 3\ndata: z\n\nid: 4\nevent: message\ndata: w\n\n",
    );
    let got: Vec<_> = sim
        .delivered()
        .into_iter()
        .map(|m| (m.id, m.data))
        .collect();
    let want = [
        ("1", "a"),
        ("2", "b"),
        ("3", "c"),
        ("1", "x"),
        ("2", "y"),
        ("3", "z"),
        ("4", "w"),
    ];
    assert_eq!(got.len(), want.len(), "{got:?}");
    for ((i, d), (wi, wd)) in got.iter().zip(want) {
        assert_eq!((i.as_str(), d.as_str()), (wi, wd));
    }
    assert_eq!(sim.engine.stats().duplicates_dropped, 2);
}

/// The same id with another event type is another event.
#[test]
fn same_id_same_data_other_type_is_new() {
    let mut c = fetch_sse_config();
    c.events = vec!["price".into()];
    let mut sim = Sim::new(c, 6);
    let o = the_open(&sim.start());
    let acts = sim.stream(o.id, b"id: 1\ndata: 9\n\nid: 1\nevent: price\ndata: 9\n\n");
    assert_eq!(data(&acts), ["9", "9"]);
    assert_eq!(sim.engine.stats().duplicates_dropped, 0);
}

/// A replay across a switch eventsource → fetch-sse (and on to a long-poll
/// JSON body) is still dropped: the content hash is the same whichever
/// transport decoded the event (multi-line data included: the browser joins
/// `data:` lines with LF as our parser does).
#[test]
fn replays_across_a_transport_switch_are_dropped() {
    let mut c = Config::new("/stream");
    c.transports = vec![
        TransportKind::EventSource,
        TransportKind::FetchSse,
        TransportKind::LongPoll,
    ];
    c.events = vec!["price".into()];
    let mut sim = Sim::new(c, 7);
    let o = the_open(&sim.start());
    sim.opened(o.id);
    sim.native(o.id, "message", "l1\nl2", "1");
    sim.native(o.id, "price", "{\"p\":2}", "2");
    sim.native(o.id, "message", "c", "3");
    sim.error(o.id, TransportError::Network);
    // The resume moves the subscription off `eventsource` (`resume-by-header`).
    let o = sim.must_open(100_000);
    assert_eq!(o.transport, TransportKind::FetchSse);
    assert_eq!(header(&o, "Last-Event-ID"), Some("3"));
    // The server resumes from an older cursor: 1..3 again, then 4.
    let acts = sim.stream(
        o.id,
        b"id: 1\ndata: l1\ndata: l2\n\nid: 2\nevent: price\ndata: {\"p\":2}\n\n\
id: 3\ndata: c\n\nid: 4\ndata: d\n\n",
    );
    assert_eq!(data(&acts), ["d"]);
    assert_eq!(sim.engine.stats().duplicates_dropped, 3);
}

/// And fetch-sse → long-poll JSON: the same rule on a decoded JSON body.
#[test]
fn replays_from_sse_to_json_are_dropped() {
    let mut sim = Sim::new(fetch_sse_config(), 8);
    let o = the_open(&sim.start());
    sim.stream(o.id, b"id: 41\ndata: a\ndata: b\n\n");
    sim.end(o.id);
    for _ in 0..2 {
        let o = sim.must_open(100_000);
        sim.head(o.id, ResponseHead::event_stream());
        sim.run_for(15_000);
    }
    let lp = sim.must_open(100_000);
    assert_eq!(lp.transport, TransportKind::LongPoll);
    sim.head(
        lp.id,
        ResponseHead::new(200).with_content_type("application/json"),
    );
    let acts = sim.messages(
        lp.id,
        vec![msg(Some("41"), None, "a\nb"), msg(Some("42"), None, "c")],
        None,
    );
    assert_eq!(data(&acts), ["c"]);
    assert_eq!(sim.engine.stats().duplicates_dropped, 1);
}

/// A JSON message id holding U+0000, CR or LF is no cursor: an SSE `id:`
/// line with NUL is ignored (WHATWG HTML §9.2.6) and CR/LF end the line, so
/// no event stream can carry one, and a `Last-Event-ID` header or query that
/// held it would make the browser refuse every later request (the
/// subscription dead behind endless `network-or-cors`). The message is
/// delivered without an own id; the cursor and the next request keep the
/// last usable id.
#[test]
fn json_ids_that_no_header_can_carry_are_ignored() {
    let mut sim = Sim::new(config(TransportKind::LongPoll), 5);
    let o = the_open(&sim.start());
    sim.head(
        o.id,
        ResponseHead::new(200).with_content_type("application/json"),
    );
    let msgs = vec![
        msg(Some("1"), None, "one"),
        msg(Some("a\u{0}b"), None, "nul"),
        msg(Some("c\nd"), None, "lf"),
        msg(Some("e\rf"), None, "cr"),
    ];
    let acts = sim.messages(o.id, msgs, None);
    assert_eq!(data(&acts), ["one", "nul", "lf", "cr"]);
    let ids: Vec<String> = acts
        .iter()
        .filter_map(|a| match a {
            Action::Deliver(m) => Some(m.id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["1", "", "", ""]);
    assert_eq!(sim.engine.last_event_id(), "1");
    let next = sim.must_open(5_000);
    assert_eq!(header(&next, "Last-Event-ID"), Some("1"));
}

/// The cursor rule the app's starting `lastEventId` is checked with too:
/// only U+0000, CR and LF make an id unusable; anything else an `id:` line
/// can carry (a tab, a space, non-ASCII, the empty id) is a cursor.
#[test]
fn usable_event_id_refuses_exactly_nul_cr_lf() {
    use tidings_core::engine::is_usable_event_id;
    for ok in ["", "42", "a b", "\t", "é…", "\u{7f}", "\u{2028}"] {
        assert!(is_usable_event_id(ok), "{ok:?}");
    }
    for bad in ["\u{0}", "a\rb", "a\nb", "\r\n", "x\u{0}"] {
        assert!(!is_usable_event_id(bad), "{bad:?}");
    }
}
