//! The request transports through the engine: conditional polls (ETag,
//! 304, an unchanged 200), the adaptive interval and its clamped hints, a
//! failing poller that never polls faster than a healthy one, network tiers,
//! long-poll with nchan-style validators, JSON bodies, raw resources, and
//! the rules every transport shares (events filter, dedupe, `reset`).

#[path = "engine_support.rs"]
mod support;

use support::*;
use tidings_core::engine::json_body;
use tidings_core::engine::{
    Action, AttemptId, BodyRead, Config, EffectiveType, ErrorCode, NetworkHint, ResetReason,
    ResponseHead, State, TransportKind,
};
use tidings_core::policy::interval::IntervalMode;
use tidings_core::testing::decoders::{Json, Key};

fn poll_config() -> Config {
    let mut c = Config::new("/resource");
    c.transports = vec![TransportKind::Poll];
    c
}

fn lp_config() -> Config {
    let mut c = Config::new("/sub");
    c.transports = vec![TransportKind::LongPoll];
    c
}

/// How one row's answer reaches the engine: the actions it gave.
type Feed = fn(&mut Sim, AttemptId) -> Vec<Action>;

fn etag_head(status: u16, etag: &str) -> ResponseHead {
    ResponseHead::new(status)
        .with_content_type("application/octet-stream")
        .with_header("etag", etag)
}

/// Polling an unchanged resource: the first answer delivers the body (id =
/// ETag), every later request is conditional, 304s slow the interval down
/// (×2 up to 5 min) and deliver nothing.
#[test]
fn poll_unchanged_resource_slows_down() {
    let (mut sim, o) = Sim::started(poll_config(), 1);
    assert_eq!(o.headers, []);
    sim.head(o.id, etag_head(200, "W/\"v1\""));
    sim.resource(o.id, "hello");
    let m = &sim.delivered()[0];
    assert_eq!(
        (m.id.as_str(), m.data.as_str(), m.event.as_str()),
        ("W/\"v1\"", "hello", "message")
    );
    let mut times = vec![];
    for _ in 0..10 {
        let o = sim.must_open(400_000);
        times.push(sim.last_open_at);
        assert_eq!(header(&o, "If-None-Match"), Some("W/\"v1\""));
        sim.head(o.id, ResponseHead::new(304));
    }
    let gaps: Vec<u64> = std::iter::once(times[0])
        .chain(times.windows(2).map(|w| w[1] - w[0]))
        .collect();
    assert_eq!(
        gaps,
        [2500, 5000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000]
    );
    let stats = sim.engine.stats();
    assert_eq!((stats.requests, stats.not_modified), (11, 10));
    assert_eq!(stats.current_interval_ms, 300_000);
    assert_eq!(sim.delivered().len(), 1);
    let all: Vec<Action> = sim.log.iter().map(|(_, a)| a.clone()).collect();
    assert_eq!(states(&all).last().map(|s| s.0), Some(State::Open));
}

/// A server that ignores the conditional request and sends the same weak
/// ETag again: "unchanged", nothing delivered, the interval slows.
#[test]
fn poll_unchanged_200_delivers_nothing() {
    let (mut sim, o) = Sim::started(poll_config(), 2);
    sim.head(o.id, etag_head(200, "\"v1\""));
    sim.resource(o.id, "a");
    let o = sim.must_open(10_000);
    sim.head(o.id, etag_head(200, "W/\"v1\""));
    sim.resource(o.id, "a");
    assert_eq!(sim.delivered().len(), 1);
    assert_eq!(sim.engine.stats().not_modified, 1);
    assert_eq!(sim.engine.stats().current_interval_ms, 5000);
    // A change speeds up again.
    let o = sim.must_open(10_000);
    sim.head(o.id, etag_head(200, "\"v2\""));
    sim.resource(o.id, "b");
    assert_eq!(sim.engine.stats().current_interval_ms, 2500);
    assert_eq!(
        data(&sim.log.iter().map(|(_, a)| a.clone()).collect::<Vec<_>>()),
        ["a", "b"]
    );
}

/// Server hints are clamped into [minMs, maxMs]: `X-Poll-Interval` (seconds)
/// and JSON `_polling.next_interval_ms`; an SSE `retry:` in a poll body is a
/// floor.
#[test]
fn poll_hints_are_clamped() {
    let (mut sim, o) = Sim::started(poll_config(), 3);
    sim.head(
        o.id,
        etag_head(304, "\"x\"").with_header("x-poll-interval", "60"),
    );
    assert_eq!(sim.engine.stats().current_interval_ms, 60_000);
    let o = sim.must_open(100_000);
    assert_eq!(sim.last_open_at, 60_000);
    sim.head(
        o.id,
        ResponseHead::new(304).with_header("x-poll-interval", "0.1"),
    );
    assert_eq!(sim.engine.stats().current_interval_ms, 1000);
    let o = sim.must_open(100_000);
    sim.head(o.id, json_head(200));
    sim.messages(o.id, vec![msg(Some("1"), None, "{}")], Some(86_400_000));
    assert_eq!(sim.engine.stats().current_interval_ms, 300_000);
    let o = sim.must_open(400_000);
    sim.head(
        o.id,
        ResponseHead::new(200).with_content_type("text/event-stream"),
    );
    sim.bytes(o.id, b"retry: 20000\nid: 2\ndata: y\n\n");
    sim.end(o.id);
    // Changed answer halves 300 s → 150 s; the retry floor is below it.
    assert_eq!(sim.engine.stats().current_interval_ms, 150_000);
    assert_eq!(sim.engine.last_event_id(), "2");
}

/// A failing poller never polls faster than a healthy one: its retry delay
/// is the current interval plus the backoff jitter.
#[test]
fn failing_poller_keeps_its_interval_as_floor() {
    let (mut sim, o) = Sim::started(poll_config(), 4);
    sim.head(
        o.id,
        ResponseHead::new(304).with_header("x-poll-interval", "60"),
    );
    let mut o = sim.must_open(100_000);
    let mut delays = vec![];
    for _ in 0..4 {
        let acts = sim.head(o.id, ResponseHead::new(502));
        delays.push(states(&acts)[0].2.unwrap_or(0));
        o = sim.must_open(400_000);
    }
    assert!(delays.iter().all(|&d| d >= 60_000), "{delays:?}");
    assert_eq!(delays, [60_216, 60_893, 61_719, 61_967]);
}

/// Network tiers stretch the interval (RTT 120 ms: ×3), within bounds. The
/// browser's estimate counts only until the engine measured its own `poll`
/// requests: here the 304 takes 120 ms, so ×3 stays; `saveData`
/// always gives the maximum.
#[test]
fn network_hint_stretches_the_interval() {
    let (mut sim, o) = Sim::started(poll_config(), 5);
    sim.engine.handle_network_hint(
        sim.now,
        NetworkHint {
            rtt_ms: Some(120),
            ..NetworkHint::default()
        },
    );
    sim.drain();
    assert_eq!(sim.engine.stats().current_interval_ms, 15_000);
    sim.run_for(120);
    sim.head(o.id, ResponseHead::new(304));
    assert_eq!(sim.engine.stats().current_interval_ms, 30_000);
    sim.engine.handle_network_hint(
        sim.now,
        NetworkHint {
            save_data: true,
            ..NetworkHint::default()
        },
    );
    assert_eq!(sim.engine.stats().current_interval_ms, 300_000);
}

/// `make bench`: Chromium reports `rtt` 100 ms, `effectiveType`
/// "4g", even on loopback, which would stretch a 1 s poll to 3 s. The engine's
/// own measured request time (a 200 in 2 ms) lowers the tier's RTT: ×1.
/// A slow answer never raises it above the report (a loaded machine or
/// server is not a slow network): reported 600 ms (×6), one answer in 20 ms
/// gives ×1 until 4 answers in a row took 300 ms (the smallest of the last 4
/// counts), then ×6 again.
#[test]
fn measured_request_times_decide_the_network_tier() {
    let mut c = poll_config();
    c.interval.initial_ms = 1000;
    let (mut sim, mut o) = Sim::started(c, 8);
    sim.engine.handle_network_hint(
        sim.now,
        NetworkHint {
            rtt_ms: Some(100),
            effective_type: Some(EffectiveType::FourG),
            ..NetworkHint::default()
        },
    );
    sim.drain();
    let mut at = vec![];
    for n in 0..3 {
        sim.run_for(2);
        let head = ResponseHead::new(200)
            .with_content_type("text/plain")
            .with_header("etag", &format!("\"{n}\""));
        sim.head(o.id, head);
        sim.resource(o.id, "changed");
        o = sim.must_open(60_000);
        at.push(sim.last_open_at);
    }
    // Every answer changed: the interval stays at minMs 1 s, not 3 s.
    assert_eq!(at, [1002, 2004, 3006]);
    assert_eq!(sim.engine.stats().current_interval_ms, 1000);

    let mut c = poll_config();
    c.interval.initial_ms = 1000;
    let (mut sim, mut o) = Sim::started(c, 8);
    sim.engine.handle_network_hint(
        sim.now,
        NetworkHint {
            rtt_ms: Some(600),
            ..NetworkHint::default()
        },
    );
    sim.drain();
    assert_eq!(sim.engine.stats().current_interval_ms, 6000);
    let mut intervals = vec![];
    for n in 0..5 {
        sim.run_for(if n == 0 { 20 } else { 300 });
        let head = ResponseHead::new(200)
            .with_content_type("text/plain")
            .with_header("etag", &format!("\"{n}\""));
        sim.head(o.id, head);
        sim.resource(o.id, "changed");
        intervals.push(sim.engine.stats().current_interval_ms);
        o = sim.must_open(60_000);
    }
    assert_eq!(intervals, [1000, 1000, 1000, 1000, 6000]);
}

/// Long-poll against an nchan-style server: one message per response with
/// `Last-Modified` + `Etag`, taken back as `If-Modified-Since` +
/// `If-None-Match`; the message id is nchan's `<seconds>:<tag>` and becomes
/// the cursor, sent instead of those validators (nchan's `last_event_id`,
/// cross-origin: query; a CORS-simple request). Messages re-request at once;
/// an empty hold ends with 304.
#[test]
fn long_poll_nchan_validators() {
    let mut config = lp_config();
    config.cross_origin = true.into();
    config.last_event_id_param = "last_event_id".into();
    let (mut sim, o) = Sim::started(config, 6);
    // The engine holds the long-poll deadline itself (no adapter timeout).
    assert_eq!(sim.wait.map(|w| w.0), Some(sim.now.mono.0 + 35_000));
    assert_eq!(o.url, "/sub");
    let lm = "Tue, 14 Nov 2023 22:13:20 GMT";
    sim.head(
        o.id,
        ResponseHead::new(200)
            .with_content_type("text/plain")
            .with_header("last-modified", lm)
            .with_header("etag", "0"),
    );
    sim.resource(o.id, "first");
    let o = sim.must_open(1000);
    assert!(sim.last_open_at <= 100);
    assert_eq!(o.url, "/sub?last_event_id=1700000000%3A0");
    assert_eq!(header(&o, "If-None-Match"), None);
    assert_eq!(header(&o, "If-Modified-Since"), None);
    sim.run_for(30_000);
    sim.head(o.id, ResponseHead::new(304));
    let o = sim.must_open(1000);
    assert_eq!(o.url, "/sub?last_event_id=1700000000%3A0");
    assert_eq!(o.headers.len(), 1);
    let delivered: Vec<(String, String)> = sim
        .delivered()
        .into_iter()
        .map(|m| (m.id, m.data))
        .collect();
    assert_eq!(
        delivered,
        [("1700000000:0".to_string(), "first".to_string())]
    );
    assert_eq!(sim.engine.last_event_id(), "1700000000:0");
}

/// Long-poll JSON bodies: the cursor moves with each message's id and
/// travels as `Last-Event-ID` (same-origin); replayed ids are dropped.
#[test]
fn long_poll_json_messages_and_dedupe() {
    let (mut sim, o) = Sim::started(lp_config(), 7);
    sim.head(
        o.id,
        ResponseHead::new(200).with_content_type("application/json; charset=utf-8"),
    );
    sim.messages(
        o.id,
        vec![msg(Some("1"), None, "a"), msg(Some("2"), None, "b")],
        None,
    );
    let o = sim.must_open(1000);
    assert_eq!(header(&o, "Last-Event-ID"), Some("2"));
    sim.head(o.id, json_head(200));
    sim.messages(
        o.id,
        vec![
            msg(Some("2"), None, "b"),
            msg(Some("3"), None, "c"),
            msg(None, None, "no id"),
        ],
        None,
    );
    assert_eq!(
        data(&sim.log.iter().map(|(_, a)| a.clone()).collect::<Vec<_>>()),
        ["a", "b", "c", "no id"]
    );
    assert_eq!(sim.engine.stats().duplicates_dropped, 1);
    assert_eq!(sim.engine.last_event_id(), "3");
}

/// A JSON body entry that is not an object (`null`, a number, a string) is
/// no message: each is a non-fatal `parse` error, and the entries around it
/// are still delivered.
#[test]
fn a_json_entry_that_is_not_an_object_is_no_message_but_a_parse_error() {
    use tidings_core::engine::{decode_json_text, ErrorCode};
    use tidings_core::testing::decoders::{Json, Key};
    let m = |id: &str| {
        Json::Obj(vec![
            (Key::Known(3), Json::Str(id.into())),
            (Key::Known(5), Json::Str(format!("data {id}"))),
        ])
    };
    let body = Json::Arr(vec![
        m("1"),
        Json::Null,
        Json::Num(5.0),
        Json::Str("s".into()),
        m("2"),
    ]);
    let text = body.body_text(false);
    let Some((msgs, _)) = decode_json_text(&text, &body.parsed()) else {
        panic!("{text} is a list")
    };
    let (mut sim, o) = Sim::started(lp_config(), 7);
    sim.head(o.id, json_head(200));
    sim.engine.handle_messages(sim.now, o.id, msgs, None);
    let log = sim.drain();
    assert_eq!(data(&log), ["data 1", "data 2"]);
    let parse = |a: &Action| {
        matches!(
            a,
            Action::Error {
                code: ErrorCode::Parse,
                fatal: false,
                ..
            }
        )
    };
    assert_eq!(errors(&log).iter().filter(|a| parse(a)).count(), 3);
    assert_eq!(errors(&log).len(), 3);
    assert_eq!(sim.engine.last_event_id(), "2");
}

/// A number id past 2^53 keeps its digits in an envelope body too: the
/// entries of the last `messages` key are read from the text (the value, a
/// double, has lost them), unless a key is written with escapes (it could
/// be that last `messages`): then from the value.
#[test]
fn a_number_id_past_2_53_in_an_envelope_is_its_source_text() {
    use tidings_core::engine::{decode_json_text, IncomingMessage};
    let (id, data) = (Key::Known(3), Key::Known(5));
    let entry = |n: f64| {
        Json::Obj(vec![
            (id.clone(), Json::Num(n)),
            (data.clone(), Json::Str("x".into())),
        ])
    };
    // `JSON.parse` keeps the last `messages`; the first is not the list.
    let value = Json::Obj(vec![
        (Key::Known(0), Json::Arr(vec![entry(1.0)])),
        (Key::Known(1), Json::Null),
        (Key::Known(0), Json::Arr(vec![entry(9007199254740992.0)])),
    ]);
    let msg = |id: &str| {
        Some(IncomingMessage {
            id: Some(id.into()),
            event: None,
            data: "x".into(),
        })
    };
    let text = r#" { "messages" : [{"id":1,"data":"y"}], "_polling":null,
        "messages": [ {"id":9007199254740993,"data":"x"} ] } "#;
    let got = decode_json_text(text, &value);
    assert_eq!(got, Some((vec![msg("9007199254740993")], None)));
    let escaped = r#"{"messages":[{"id":1}],"m\u0065ssages":[{"id":9007199254740993,"data":"x"}]}"#;
    let got = decode_json_text(escaped, &value);
    assert_eq!(got, Some((vec![msg("9007199254740992")], None)));
}

/// The `events` filter and `reset` are the same on every transport: named
/// events not listed are dropped, `heartbeat` is never delivered, `reset`
/// becomes an `Action::Reset` (and clears dedupe).
#[test]
fn events_filter_heartbeat_and_reset_on_every_transport() {
    const BODY: &[u8] = b"event: price\ndata: 1\n\nevent: other\ndata: 2\n\nevent: heartbeat\ndata:\n\nid: 5\nevent: reset\ndata: gone\n\nid: 5\ndata: again\n\n";
    use TransportKind::*;
    // (the transport, its list, how the body reaches the engine)
    let rows: [(&str, &[TransportKind], Feed); 4] = [
        ("fetch-sse", &[FetchSse, LongPoll, Poll], |sim, id| {
            sim.stream(id, BODY)
        }),
        (
            "long-poll with an event-stream body",
            &[LongPoll],
            |sim, id| {
                let mut acts = sim.head(id, ResponseHead::event_stream());
                acts.extend(sim.bytes(id, BODY));
                acts
            },
        ),
        ("poll with JSON", &[Poll], |sim, id| {
            sim.head(id, json_head(200));
            let events = [
                msg(None, Some("price"), "1"),
                msg(None, Some("other"), "2"),
                msg(None, Some("heartbeat"), ""),
                msg(Some("5"), Some("reset"), "gone"),
                msg(Some("5"), None, "again"),
            ];
            sim.messages(id, events.to_vec(), None)
        }),
        // Natively, "again" repeats the cursor "5": no own id, delivered.
        ("native EventSource", &[EventSource], |sim, id| {
            sim.opened(id);
            let mut acts = vec![];
            for (ev, d, lei) in [
                ("price", "1", ""),
                ("other", "2", ""),
                ("heartbeat", "", ""),
                ("reset", "gone", "5"),
                ("message", "again", "5"),
            ] {
                acts.extend(sim.native(id, ev, d, lei));
            }
            acts
        }),
    ];
    for (name, transports, feed) in rows {
        let mut config = fetch_sse_config();
        config.events = vec!["price".into()];
        config.transports = transports.to_vec();
        let (mut sim, o) = Sim::started(config, 8);
        let acts = feed(&mut sim, o.id);
        assert_eq!(data(&acts), ["1", "again"], "{name}");
        let resets: Vec<_> = acts
            .iter()
            .filter(|a| matches!(a, Action::Reset { .. }))
            .collect();
        let server = Action::Reset {
            reason: ResetReason::Server,
        };
        assert_eq!(resets, [&server], "{name}");
    }
}

/// Cross-origin long-poll with a cursor sends only the cursor (query), no
/// validators: they would cost a CORS preflight per request (the cursor
/// changes the URL) and a server allowing only `Access-Control-Allow-Origin:
/// *` refuses them. Same-origin long-poll keeps them; so does cross-origin
/// poll (a 304 is its point), and a cross-origin long-poll of a raw resource
/// (no cursor: the validators are its cursor).
#[test]
fn cross_origin_long_poll_sends_only_the_cursor() {
    let lm = "Tue, 14 Nov 2023 22:13:20 GMT";
    let sse_head = || {
        ResponseHead::event_stream()
            .with_header("etag", "\"3\"")
            .with_header("last-modified", lm)
    };
    let run = |transport: TransportKind, cross: bool| {
        let mut c = Config::new("/sub");
        c.transports = vec![transport];
        c.cross_origin = cross.into();
        let (mut sim, o) = Sim::started(c, 2);
        sim.head(o.id, sse_head());
        sim.bytes(o.id, b"id: 3\ndata: x\n\n");
        sim.end(o.id);
        let o = sim.must_open(60_000);
        let mut h: Vec<(String, String)> = o.headers.clone();
        h.sort();
        (o.url, h)
    };
    let f = |n: &str, v: &str| (n.to_string(), v.to_string());
    let accept = f(
        "Accept",
        "text/event-stream, application/json;q=0.9, */*;q=0.8",
    );
    assert_eq!(
        run(TransportKind::LongPoll, true),
        ("/sub?lastEventId=3".to_string(), vec![accept.clone()])
    );
    assert_eq!(
        run(TransportKind::LongPoll, false),
        (
            "/sub".to_string(),
            vec![
                accept.clone(),
                f("Cache-Control", "max-age=0"),
                f("If-Modified-Since", lm),
                f("If-None-Match", "\"3\""),
                f("Last-Event-ID", "3")
            ]
        )
    );
    assert_eq!(
        run(TransportKind::Poll, true),
        (
            "/sub?lastEventId=3".to_string(),
            vec![
                f("Cache-Control", "max-age=0"),
                f("If-Modified-Since", lm),
                f("If-None-Match", "\"3\"")
            ]
        )
    );
    // A raw resource has no cursor: its validators stay, cross-origin too.
    let mut c = lp_config();
    c.cross_origin = true.into();
    let (mut sim, o) = Sim::started(c, 2);
    sim.head(o.id, etag_head(200, "\"v1\""));
    sim.resource(o.id, "body");
    let o = sim.must_open(60_000);
    assert_eq!(
        (o.url.as_str(), header(&o, "If-None-Match")),
        ("/sub", Some("\"v1\""))
    );
}

/// The network tier stretches only the adaptive modes: `interval.mode:
/// "fixed"` polls at its interval on a medium network (RTT 100 ms), and a
/// server's `X-Poll-Interval` is waited as is (clamped); the next answer
/// without a hint is the client's own interval again, stretched ×3.
#[test]
fn network_tier_leaves_fixed_and_server_hints_alone() {
    let medium = NetworkHint {
        rtt_ms: Some(100),
        ..NetworkHint::default()
    };
    let mut c = poll_config();
    c.interval.mode = IntervalMode::Fixed;
    c.interval.initial_ms = 1000;
    let (mut sim, mut o) = Sim::started(c, 7);
    sim.engine.handle_network_hint(sim.now, medium);
    sim.drain();
    let mut at = vec![];
    for _ in 0..3 {
        sim.run_for(10);
        sim.head(o.id, ResponseHead::new(304));
        o = sim.must_open(60_000);
        at.push(sim.last_open_at);
    }
    assert_eq!(at, [1010, 2020, 3030]);
    assert_eq!(sim.engine.stats().current_interval_ms, 1000);

    // Each answer takes 100 ms: the measured tier is medium as well.
    let (mut sim, mut o) = Sim::started(poll_config(), 7);
    sim.engine.handle_network_hint(sim.now, medium);
    sim.drain();
    let mut at = vec![];
    for hint in [Some("1"), Some("0.2"), None] {
        sim.run_for(100);
        let mut head = ResponseHead::new(304);
        if let Some(h) = hint {
            head = head.with_header("x-poll-interval", h);
        }
        sim.head(o.id, head);
        o = sim.must_open(60_000);
        at.push(sim.last_open_at);
    }
    // 1 s as hinted; 0.2 s clamped to minMs 1 s; then 1 s ×2 (unchanged) ×3.
    assert_eq!(at, [1100, 2200, 8300]);
}

/// On the request transports the first answer opens the subscription before
/// it delivers: `State(open)` precedes the answer's `Deliver`s (an event-stream
/// body, a JSON body, a raw resource), so a message listener never sees
/// `connecting`.
#[test]
fn request_transports_open_before_the_first_delivery() {
    fn order(acts: &[Action]) -> Vec<&'static str> {
        acts.iter()
            .filter_map(|a| match a {
                Action::State {
                    state: State::Open, ..
                } => Some("open"),
                Action::Deliver(_) => Some("deliver"),
                _ => None,
            })
            .collect()
    }
    /// A raw resource answered with ETag `etag`.
    fn resource(sim: &mut Sim, id: AttemptId, etag: &str, body: &str) -> Vec<Action> {
        let mut acts = sim.head(id, etag_head(200, etag));
        acts.extend(sim.resource(id, body));
        acts
    }
    /// (what is answered, the config, how, the order it must give)
    type Row = (&'static str, fn() -> Config, Feed, &'static [&'static str]);
    let rows: [Row; 4] = [
        (
            "long-poll, text/event-stream body in two chunks",
            lp_config,
            |sim, id| {
                let mut acts = sim.head(id, ResponseHead::event_stream());
                acts.extend(sim.bytes(id, b"id: 1\ndata: a\n\nid: 2\n"));
                acts.extend(sim.bytes(id, b"data: b\n\n"));
                acts.extend(sim.end(id));
                acts
            },
            &["open", "deliver", "deliver"],
        ),
        (
            "long-poll, JSON",
            lp_config,
            |sim, id| {
                let mut acts = sim.head(id, json_head(200));
                acts.extend(sim.messages(id, vec![msg(Some("1"), None, "a")], None));
                acts
            },
            &["open", "deliver"],
        ),
        (
            "poll, a raw resource",
            poll_config,
            |sim, id| resource(sim, id, "\"v1\"", "body"),
            &["open", "deliver"],
        ),
        // Later answers deliver in `open`, no second `open`.
        (
            "poll, the answer after that",
            poll_config,
            |sim, id| {
                resource(sim, id, "\"v1\"", "body");
                let o = sim.must_open(60_000);
                resource(sim, o.id, "\"v2\"", "body2")
            },
            &["deliver"],
        ),
    ];
    for (name, config, feed, expected) in rows {
        let (mut sim, o) = Sim::started(config(), 1);
        assert_eq!(order(&feed(&mut sim, o.id)), expected, "{name}");
    }
}

/// A long-poll answer with one event, `held_ms` after its request: the delay
/// before the next request.
fn long_poll_news_after(seed: u64, held_ms: u64) -> u64 {
    let (mut sim, o) = Sim::started(lp_config(), seed);
    sim.run_for(held_ms);
    sim.head(o.id, ResponseHead::event_stream());
    sim.bytes(o.id, b"id: 1\ndata: x\n\n");
    let answered = sim.now.mono.0;
    sim.end(o.id);
    sim.must_open(200);
    sim.last_open_at - answered
}

/// Chosen with `make bench-herd`'s broadcast (docs/herd.md): after a long-poll
/// answer with news the next request waits `U[0, min(held / 10, 100)]` ms,
/// `held` = the time the request waited. A 30 s hold ended by a publish (the
/// request a broadcast synchronises with a whole fleet) spreads over 100 ms;
/// a busy feed (10 ms holds) over 1 ms; a backlog answered at once
/// not at all. (With `U[0, 100]` after every answer, `make bench`'s
/// long-poll p50 is 35 ms for events 10 ms apart.) "No news" keeps its
/// pacing and `U[0, 100]`.
#[test]
fn long_poll_spread_after_news_is_a_tenth_of_the_hold() {
    for (held, max) in [(30_000u64, 100u64), (500, 50), (10, 1), (0, 0)] {
        let delays: Vec<u64> = (0..60).map(|s| long_poll_news_after(s, held)).collect();
        assert!(delays.iter().all(|d| *d <= max), "held {held}: {delays:?}");
        let widest = delays.iter().max().copied().unwrap_or(0);
        assert!(widest * 10 >= max * 9, "held {held}: {delays:?}");
    }
    assert_eq!(long_poll_news_after(3, 30_000), 11);
    assert_eq!(long_poll_news_after(3, 500), 5);

    // A backlog of 20 answers, each answered at once: 20 requests in the
    // same millisecond (it cost 20 × U[0, 100] ms).
    let (mut sim, mut o) = Sim::started(lp_config(), 3);
    for n in 1..=20 {
        sim.head(o.id, ResponseHead::event_stream());
        sim.bytes(o.id, format!("id: {n}\ndata: x\n\n").as_bytes());
        sim.end(o.id);
        o = sim.must_open(0);
        assert_eq!(header(&o, "Last-Event-ID"), Some(n.to_string().as_str()));
    }
    assert_eq!(sim.now.mono.0, 0);

    // "No news" after a 30 s hold: U[0, 100] as before.
    let (mut sim, o) = Sim::started(lp_config(), 3);
    sim.run_for(30_000);
    sim.head(o.id, ResponseHead::new(204));
    sim.must_open(200);
    assert_eq!(sim.last_open_at, 30_000 + 11);
}

/// A long-poll answer with news: its head and first bytes `first_ms` after
/// the request, its last byte `read_ms` later. The delay before the next
/// request.
fn long_poll_read_after(seed: u64, first_ms: u64, read_ms: u64) -> u64 {
    let (mut sim, o) = Sim::started(lp_config(), seed);
    sim.run_for(first_ms);
    sim.head(o.id, ResponseHead::event_stream());
    sim.bytes(o.id, b"id: 1\ndata: x\n\n");
    sim.run_for(read_ms);
    sim.bytes(o.id, b"id: 2\ndata: y\n\n");
    let answered = sim.now.mono.0;
    sim.end(o.id);
    sim.must_open(200);
    sim.last_open_at - answered
}

/// The hold the spread is a tenth of ends at the answer's first body byte:
/// a backlog answer that takes 40 ms to arrive and parse (1,000 events) was
/// not held, and the next request goes out at once for every seed (the last
/// byte's time gave `U[0, 4]`); a server that sends its head at once and
/// holds the body 30 s before its first byte still spreads over 100 ms.
#[test]
fn long_poll_spread_counts_the_hold_to_the_first_byte() {
    let read: Vec<u64> = (0..60).map(|s| long_poll_read_after(s, 1, 40)).collect();
    assert_eq!(read, vec![0; 60]);
    let held: Vec<u64> = (0..60)
        .map(|s| long_poll_read_after(s, 30_000, 40))
        .collect();
    assert!(held.iter().all(|d| *d <= 100), "{held:?}");
    assert!(held.iter().max().is_some_and(|m| *m >= 90), "{held:?}");
    assert_eq!(long_poll_read_after(3, 30_000, 40), 11);

    // Head at once, the body's first byte after a 30 s hold.
    let (mut sim, o) = Sim::started(lp_config(), 3);
    sim.head(o.id, ResponseHead::event_stream());
    sim.run_for(30_000);
    sim.bytes(o.id, b"id: 1\ndata: x\n\n");
    sim.end(o.id);
    sim.must_open(200);
    assert_eq!(sim.last_open_at, 30_000 + 11);
}

/// How the adapter reads a body is the engine's answer to its head, by the
/// one media-type rule: on `long-poll` and `poll`, `text/event-stream`
/// (any case, with parameters) in chunks, JSON (`+json` too) whole as JSON,
/// anything else (`text/event-streamx` included) whole as text. Chunks before
/// a head, after a head that ended the attempt (a 304), for a stale attempt,
/// and on `fetch-sse`.
#[test]
fn body_read_is_the_heads_verdict() {
    let read = |config: Config, ct: Option<&str>, status: u16| {
        let (mut sim, o) = Sim::started(config, 3);
        assert_eq!(
            sim.engine.body_read(o.id),
            BodyRead::Chunks,
            "before the head"
        );
        let mut head = ResponseHead::new(status);
        if let Some(ct) = ct {
            head = head.with_content_type(ct);
        }
        sim.head(o.id, head);
        assert_eq!(
            sim.engine.body_read(AttemptId(o.id.0 + 1)),
            BodyRead::Chunks
        );
        sim.engine.body_read(o.id)
    };
    for config in [lp_config, poll_config] {
        let r = |ct, status| read(config(), ct, status);
        let stream = Some("Text/Event-Stream; charset=utf-8");
        assert_eq!(r(stream, 200), BodyRead::Chunks);
        assert_eq!(r(Some("application/json"), 200), BodyRead::Json);
        assert_eq!(r(Some("application/problem+json"), 200), BodyRead::Json);
        assert_eq!(r(Some("text/event-streamx"), 200), BodyRead::Text);
        assert_eq!(r(Some("text/plain"), 200), BodyRead::Text);
        assert_eq!(r(None, 200), BodyRead::Text);
        assert_eq!(r(Some("application/json"), 304), BodyRead::Chunks);
    }
    let sse = read(fetch_sse_config(), Some("text/event-stream"), 200);
    assert_eq!(sse, BodyRead::Chunks);
}

/// A JSON body's fact is the core's (`json_body`): an array of messages or an
/// envelope is delivered message by message; JSON of neither shape is one raw
/// resource, its whole text the data; text `JSON.parse` refused is no message
/// (`a_json_body_cut_short_is_a_retried_parse_failure_never_a_message`).
#[test]
fn json_body_of_neither_shape_is_a_raw_resource() {
    let deliver = |text: &str, value: Option<Json>| {
        let (mut sim, o) = Sim::started(lp_config(), 3);
        sim.head(o.id, json_head(200));
        let input = json_body(o.id, text.to_string(), value.as_ref());
        sim.engine.handle(sim.now, input);
        data(&sim.drain())
    };
    let obj = |k: &str, v: Json| Json::Obj(vec![(Key::Raw(k.into()), v)]);
    let one = obj("data", Json::Str("a".into()));
    let array = r#"[{"data":"a"}]"#;
    assert_eq!(deliver(array, Some(Json::Arr(vec![one.clone()]))), ["a"]);
    let envelope = r#"{"messages":[{"data":"a"}]}"#;
    let value = obj("messages", Json::Arr(vec![one]));
    assert_eq!(deliver(envelope, Some(value)), ["a"]);
    let neither = r#"{"x":1}"#;
    assert_eq!(deliver(neither, Some(obj("x", Json::Num(1.0)))), [neither]);
    assert_eq!(deliver("7", Some(Json::Num(7.0))), ["7"]);
    assert_eq!(deliver("{oops", None), Vec::<String>::new());
}

/// WebKitGTK reports a chunked body cut by a connection reset as a normal
/// end, so a long-poll or poll answer can arrive truncated (seen on the
/// engines suite: `[{"id":"1","data":"m1"},{"id":"2","da`). A body that says
/// it is JSON and does not parse is a failed attempt: a non-fatal `parse`
/// error, the cursor unmoved, retried with backoff; never a message.
#[test]
fn a_json_body_cut_short_is_a_retried_parse_failure_never_a_message() {
    for (transport, head) in [
        (TransportKind::LongPoll, json_head(200)),
        (TransportKind::Poll, json_head(200)),
    ] {
        let mut c = Config::new("/lp");
        c.transports = vec![transport];
        let (mut sim, o) = Sim::started(c, 3);
        sim.head(o.id, head);
        let cut = r#"[{"id":"1","data":"m1"},{"id":"2","da"#;
        sim.engine
            .handle(sim.now, json_body::<Json>(o.id, cut.to_string(), None));
        let out = sim.drain();
        assert_eq!(data(&out), Vec::<String>::new(), "{transport:?}");
        let errs = errors(&out);
        assert!(
            matches!(
                errs.as_slice(),
                [Action::Error {
                    code: ErrorCode::Parse,
                    fatal: false,
                    ..
                }]
            ),
            "{transport:?}: {out:#?}"
        );
        assert_eq!(sim.engine.last_event_id(), "");
        let next = sim.must_open(120_000);
        assert_eq!(next.transport, transport);
        assert!(
            sim.last_open_at >= 1000,
            "{transport:?}: retried at {}",
            sim.last_open_at
        );
        // An empty answer (which `JSON.parse` refuses too) is no news, no error.
        sim.head(next.id, json_head(200));
        let empty = json_body::<Json>(next.id, " \r\n".into(), None);
        sim.engine.handle(sim.now, empty);
        let out = sim.drain();
        assert_eq!(errors(&out), [], "{transport:?}: {out:#?}");
    }
}
