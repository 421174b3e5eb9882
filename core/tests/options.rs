//! `tidings_core::options`: `subscribe()`'s options read one slot at a time,
//! each refusal kind with its exact name and text, the reading order, and
//! random input that never panics.

use proptest::prelude::*;
use tidings_core::engine::{Protocol, TransportKind};
use tidings_core::options::slots::TABLE;
use tidings_core::options::{Built, Given, Parsed, Reader, Refusal, Slot};
use tidings_core::persist::Scope;
use tidings_core::policy::backoff::Strategy as BackoffStrategy;
use tidings_core::policy::interval::IntervalMode;

const ALL: Built = Built {
    cross_tab: true,
    durable_streams: true,
    persist: true,
    post_streams: true,
    debug: true,
};

fn text(s: &str) -> Given {
    Given::Text(s.into())
}

fn list(names: &[&str]) -> Given {
    Given::List(names.iter().map(|n| Some(n.to_string())).collect())
}

/// The options `given` (slot path → value; every other slot absent) read
/// with `built`: what they make, or the first refusal and the slots read.
fn read_with(built: Built, given: &[(&str, Given)]) -> (Result<Parsed, Refusal>, Vec<Slot>) {
    let mut reader = Reader::new("https://h/s", built);
    let mut read = Vec::new();
    while let Some(slot) = reader.ask() {
        read.push(slot);
        let g = given
            .iter()
            .find(|(p, _)| *p == slot.path())
            .map_or(Given::Absent, |(_, g)| g.clone());
        if let Err(r) = reader.feed(&g) {
            return (Err(r), read);
        }
    }
    (Ok(reader.finish()), read)
}

fn ok(r: Result<Parsed, Refusal>) -> Parsed {
    match r {
        Ok(p) => p,
        Err(r) => panic!("refused: {r:?}"),
    }
}

fn err(r: Result<Parsed, Refusal>) -> Refusal {
    match r {
        Ok(_) => panic!("not refused"),
        Err(r) => r,
    }
}

fn some<T>(v: Option<T>) -> T {
    match v {
        Some(v) => v,
        None => panic!("none"),
    }
}

fn read(given: &[(&str, Given)]) -> Result<Parsed, Refusal> {
    read_with(ALL, given).0
}

/// The refusal of `given`, as `(name, expected, got)`.
fn refused(given: &[(&str, Given)]) -> (&'static str, String, Option<String>) {
    let r = err(read(given));
    (r.name, r.expected.text(), r.got)
}

fn refused_by(built: Built, given: &[(&str, Given)]) -> (&'static str, String) {
    let r = err(read_with(built, given).0);
    (r.name, r.expected.text())
}

#[test]
fn no_options_are_the_defaults() {
    let p = ok(read(&[]));
    let d = tidings_core::engine::Config::new("https://h/s").sanitized();
    assert_eq!(p.config, d);
    assert_eq!(
        (p.json, p.with_credentials, p.debug, p.cross_tab),
        (false, false, false, false)
    );
    assert_eq!((p.seed, p.persist, p.lost_after_ms), (None, None, 5000));
}

#[test]
fn every_value_goes_where_its_option_says() {
    let p = ok(read(&[
        ("parse", text("json")),
        ("withCredentials", Given::Bool(true)),
        ("debug", Given::Function),
        ("crossTab", Given::Bool(true)),
        ("seed", Given::Number(42.9)),
        ("persist", text("local")),
        ("persistKey", text("k")),
        ("lostAfterMs", Given::Number(7.0)),
        ("urls", Given::Object),
        ("urls.poll", text("https://h/p")),
        ("transports", list(&["poll", "long-poll"])),
        ("events", list(&["price", "message", "price", "news"])),
        ("lastEventIdParam", text("last_event_id")),
        ("maxMessageBytes", Given::Number(4096.0)),
        ("headers", Given::Function),
        ("url", Given::Function),
        ("heartbeatEvent", text("ping")),
        ("pauseWhenHidden", Given::Object),
        ("pauseWhenHidden.afterMs", Given::Number(2500.0)),
        ("backoff.strategy", text("none")),
        ("backoff.baseMs", Given::Number(1.0)),
        ("backoff.maxMs", Given::Number(2.0)),
        ("backoff.floorMs", Given::Number(30.0)),
        ("backoff.healthyAfterMs", Given::Number(4.0)),
        ("backoff.maxAttempts", Given::Number(5.0)),
        ("maxRetryAfterMs", Given::Number(6.0)),
        ("breaker.failureThreshold", Given::Number(f64::INFINITY)),
        ("breaker.cooldownMs", Given::Number(8.0)),
        ("interval.mode", text("fixed")),
        ("interval.initialMs", Given::Number(20.0)),
        ("interval.minMs", Given::Number(11.0)),
        ("interval.maxMs", Given::Number(12.0)),
        ("watchdog.idleTimeoutMs", Given::Number(13.0)),
        ("watchdog.firstEventTimeoutMs", Given::Number(14.0)),
        ("longPoll.timeoutMs", Given::Number(15.0)),
        ("fallback.afterFailures", Given::Number(3.0)),
        ("fallback.rememberMs", Given::Number(17.0)),
    ]));
    assert_eq!(
        (p.json, p.with_credentials, p.debug, p.cross_tab),
        (true, true, true, true)
    );
    assert_eq!(
        (p.seed, p.persist, p.lost_after_ms),
        (Some(42), Some((Scope::Local, Some("k".into()))), 7)
    );
    let c = &p.config;
    assert_eq!(c.urls.poll.as_deref(), Some("https://h/p"));
    assert_eq!(c.transports, [TransportKind::Poll, TransportKind::LongPoll]);
    assert_eq!(c.events, ["price", "news"]);
    assert_eq!(c.last_event_id_param, "last_event_id");
    assert_eq!(
        (
            c.sse_limits.max_line_bytes,
            c.sse_limits.max_event_data_bytes
        ),
        (4096, 4096)
    );
    assert_eq!((c.has_custom_headers, c.url_function), (true, true));
    assert_eq!(
        (c.heartbeat_event.as_str(), c.pause_when_hidden),
        ("ping", Some(2500))
    );
    let b = &c.backoff;
    assert_eq!(b.strategy, BackoffStrategy::None);
    assert_eq!(
        (
            b.base_ms,
            b.max_ms,
            b.floor_ms,
            b.healthy_after_ms,
            b.max_attempts
        ),
        (1, 2, 30, 4, Some(5))
    );
    assert_eq!(
        (
            c.max_retry_after_ms,
            c.breaker.failure_threshold,
            c.breaker.cooldown_ms
        ),
        (6, u32::MAX, 8)
    );
    let i = &c.interval;
    assert_eq!(
        (i.mode, i.initial_ms, i.min_ms, i.max_ms),
        (IntervalMode::Fixed, 20, 11, 12)
    );
    assert_eq!(
        (
            c.watchdog.idle_timeout_ms,
            c.watchdog.first_event_timeout_ms
        ),
        (13, 14)
    );
    assert_eq!(
        (
            c.long_poll.timeout_ms,
            c.fallback.after_failures,
            c.fallback.remember_ms
        ),
        (15, 3, 17)
    );
}

#[test]
fn the_floors_and_defaults_of_sanitized_apply() {
    let p = ok(read(&[
        ("interval.minMs", Given::Number(0.0)),
        ("backoff.floorMs", Given::Number(0.0)),
        ("maxMessageBytes", Given::Number(0.0)),
        ("pauseWhenHidden", Given::Bool(false)),
        ("backoff.maxAttempts", Given::Number(f64::INFINITY)),
    ]));
    let c = &p.config;
    assert_eq!((c.interval.min_ms, c.backoff.floor_ms), (10, 10));
    assert_eq!(c.sse_limits.max_line_bytes, 1_048_576);
    assert_eq!((c.pause_when_hidden, c.backoff.max_attempts), (None, None));
}

#[test]
fn each_kind_of_value_is_refused_with_its_name_and_text() {
    let ms = "a non-negative number of milliseconds".to_string();
    let cases: Vec<(&str, Given, &str, String)> = vec![
        ("backoff.baseMs", text("500"), "backoff.baseMs", ms.clone()),
        (
            "lostAfterMs",
            Given::Number(-1.0),
            "lostAfterMs",
            ms.clone(),
        ),
        (
            "watchdog.idleTimeoutMs",
            Given::Number(f64::NAN),
            "watchdog.idleTimeoutMs",
            ms.clone(),
        ),
        (
            "longPoll.timeoutMs",
            Given::Number(f64::INFINITY),
            "longPoll.timeoutMs",
            ms,
        ),
        (
            "backoff.maxAttempts",
            Given::Number(-1.0),
            "backoff.maxAttempts",
            "a non-negative number or Infinity".into(),
        ),
        (
            "withCredentials",
            text("yes"),
            "withCredentials",
            "a boolean".into(),
        ),
        ("debug", text("yes"), "debug", "a boolean".into()),
        (
            "seed",
            Given::Number(f64::NAN),
            "seed",
            "a finite number".into(),
        ),
        (
            "parse",
            text("xml"),
            "parse",
            "one of \"text\", \"json\"".into(),
        ),
        (
            "interval.mode",
            text("linear"),
            "interval.mode",
            "one of \"exponential\", \"aimd\", \"rate-window\", \"fixed\"".into(),
        ),
        ("backoff", Given::Number(1.0), "backoff", "an object".into()),
        ("breaker", Given::Function, "breaker", "an object".into()),
        ("urls.poll", Given::Number(5.0), "urls", "a string".into()),
        (
            "lastEventId",
            text("a\nb"),
            "lastEventId",
            "a string without U+0000, CR or LF".into(),
        ),
        (
            "lastEventIdParam",
            text(""),
            "lastEventIdParam",
            "a non-empty string".into(),
        ),
        (
            "maxMessageBytes",
            Given::Bool(true),
            "maxMessageBytes",
            "a non-negative number of bytes".into(),
        ),
        ("url", text("https://h/x"), "url", "a function".into()),
        (
            "pauseWhenHidden",
            Given::Number(1.0),
            "pauseWhenHidden",
            "a boolean or an object".into(),
        ),
        (
            "persistKey",
            text("k"),
            "persistKey",
            "a non-empty string, with persist".into(),
        ),
        (
            "offset",
            text("5"),
            "offset",
            "none without protocol \"durable-streams\"".into(),
        ),
        (
            "live",
            text("sse"),
            "live",
            "none without protocol \"durable-streams\"".into(),
        ),
        (
            "protocol",
            text("nchan"),
            "protocol",
            "one of \"default\", \"durable-streams\"".into(),
        ),
        (
            "resume",
            text("again"),
            "resume",
            "one of \"replay\"".into(),
        ),
        ("end", text("[DONE]"), "end", "an object".into()),
        ("method", Given::Number(1.0), "method", "a string".into()),
    ];
    for (path, given, name, expected) in cases {
        assert_eq!(refused(&[(path, given)]), (name, expected, None), "{path}");
    }
}

#[test]
fn the_names_lists_are_refused_whole() {
    let transports = "a non-empty array of \"eventsource\", \"fetch-sse\", \"long-poll\", \"poll\"";
    for given in [
        list(&[]),
        list(&["long_poll"]),
        text("poll"),
        Given::List(vec![None]),
    ] {
        assert_eq!(
            refused(&[("transports", given)]),
            ("transports", transports.into(), None)
        );
    }
    let events = "an array of non-empty names other than \"open\", \"error\", \"statechange\", \
                  \"transportchange\", \"reset\", \"uptodate\", \"statuschange\"";
    for given in [
        list(&["error"]),
        list(&[""]),
        Given::List(vec![None]),
        text("price"),
    ] {
        assert_eq!(
            refused(&[("events", given)]),
            ("events", events.into(), None)
        );
    }
    assert_eq!(
        ok(read(&[("events", list(&[]))])).config.events,
        Vec::<String>::new()
    );
}

#[test]
fn a_heartbeat_event_that_could_not_be_told_apart_is_refused() {
    let expected =
        "a name not in events, other than \"message\", \"open\", \"error\", \"statechange\", \
                    \"transportchange\", \"reset\", \"uptodate\", \"statuschange\"";
    for given in [
        vec![("heartbeatEvent", text("message"))],
        vec![("heartbeatEvent", text("error"))],
        vec![
            ("events", list(&["price"])),
            ("heartbeatEvent", text("price")),
        ],
    ] {
        assert_eq!(refused(&given), ("heartbeatEvent", expected.into(), None));
    }
    assert_eq!(
        refused(&[("heartbeatEvent", Given::Number(5.0))]).1,
        "a string"
    );
    assert_eq!(
        ok(read(&[("heartbeatEvent", text(""))]))
            .config
            .heartbeat_event,
        ""
    );
}

#[test]
fn durable_streams_offsets_are_checked_after_live() {
    let p = ok(read(&[
        ("protocol", text("durable-streams")),
        ("offset", text("now")),
        ("live", text("sse")),
    ]));
    assert_eq!(
        (p.config.protocol, p.config.last_event_id.as_str()),
        (Protocol::DurableStreams, "now")
    );
    assert!(p.config.sse_live);
    // The cursor refused is what `lastEventId` gave when `offset` is absent: `got` names it.
    let got = refused(&[
        ("lastEventId", text("a b")),
        ("protocol", text("durable-streams")),
    ]);
    assert_eq!(
        got,
        (
            "offset",
            "\"-1\", \"now\" or a valid offset".into(),
            Some("a b".into())
        )
    );
}

#[test]
fn an_option_this_build_lacks_is_refused_naming_the_feature() {
    let none = Built::default();
    let says =
        |f: &str| format!("none in this build; the \"tidings\" entry has it (feature \"{f}\")");
    assert_eq!(
        refused_by(none, &[("crossTab", Given::Bool(true))]),
        ("crossTab", says("cross-tab"))
    );
    assert_eq!(
        refused_by(none, &[("debug", Given::Function)]),
        ("debug", says("debug"))
    );
    assert_eq!(
        refused_by(none, &[("protocol", text("durable-streams"))]),
        ("protocol", says("durable-streams"))
    );
    assert_eq!(
        refused_by(none, &[("offset", Given::Number(1.0))]),
        ("offset", says("durable-streams"))
    );
    assert_eq!(
        refused_by(none, &[("body", text("x"))]),
        ("body", says("post-streams"))
    );
    assert_eq!(
        refused_by(none, &[("end", Given::Object)]),
        ("end", says("post-streams"))
    );
    let r = err(read_with(none, &[("persist", text("session"))]).0);
    assert_eq!(
        (r.name, r.expected.text(), r.got),
        ("persist", says("persist"), Some("session".into()))
    );
    // Off, they are no refusal: `false`, the default protocol.
    let off = [
        ("crossTab", Given::Bool(false)),
        ("debug", Given::Bool(false)),
        ("protocol", text("default")),
    ];
    assert!(read_with(none, &off).0.is_ok());
    // `live` is not read without Durable Streams (it does nothing there).
    let (r, slots) = read_with(none, &[("live", text("sse"))]);
    assert!(r.is_ok() && !slots.contains(&Slot::Live));
}

#[test]
fn the_app_own_request_makes_start_rules() {
    let p = ok(read(&[
        ("method", text("POST")),
        ("body", text("{}")),
        ("resume", Given::Function),
    ]));
    let start = some(p.config.start);
    let r = some(start.request.as_ref());
    assert_eq!((r.method.as_str(), r.body), ("POST", true));
    assert_eq!(r.resume, tidings_core::engine::start::Resume::Request);
    let p = ok(read(&[
        ("end", Given::Object),
        ("end.data", text("[DONE]")),
    ]));
    let start = some(p.config.start);
    assert_eq!(
        (start.request.is_none(), start.end.data.as_deref()),
        (true, Some("[DONE]"))
    );
}

#[test]
fn the_first_refusal_stops_the_reading() {
    let given = [
        ("parse", text("xml")),
        ("seed", text("x")),
        ("backoff.baseMs", Given::Number(-1.0)),
    ];
    let (r, read) = read_with(ALL, &given);
    assert_eq!(err(r).name, "parse");
    assert_eq!(read, [Slot::Parse]);
    let (r, read) = read_with(ALL, &given[1..]);
    assert_eq!(err(r).name, "seed");
    assert_eq!(read.last(), Some(&Slot::Seed));
    assert_eq!(read.len(), 5);
}

#[test]
fn the_table_names_each_slot_once_in_order() {
    for (i, (slot, path)) in TABLE.iter().enumerate() {
        assert_eq!(*slot as usize, i);
        assert_eq!(slot.path(), *path);
        assert_eq!(slot.in_group(), path.contains('.'));
        assert!(path.ends_with(slot.key()));
    }
    assert_eq!(Slot::BackoffBaseMs.key(), "baseMs");
    assert_eq!(Slot::at(TABLE.len()), None);
}

fn any_given() -> impl Strategy<Value = Given> {
    prop_oneof![
        Just(Given::Absent),
        any::<bool>().prop_map(Given::Bool),
        prop_oneof![any::<f64>(), Just(f64::INFINITY), Just(-0.0), 0.0..1e7]
            .prop_map(Given::Number),
        "[a-z\\-\" \n]{0,12}".prop_map(Given::Text),
        prop::collection::vec(prop::option::of("[a-z\\-]{0,10}"), 0..5).prop_map(Given::List),
        Just(Given::Function),
        Just(Given::Object),
        Just(Given::Other),
    ]
}

fn any_built() -> impl Strategy<Value = Built> {
    any::<[bool; 5]>().prop_map(|b| Built {
        cross_tab: b[0],
        durable_streams: b[1],
        persist: b[2],
        post_streams: b[3],
        debug: b[4],
    })
}

proptest! {
    /// Any values for any slots, in any build: a `Parsed` or one refusal,
    /// never a panic; a refusal ends the reading at the slot it names.
    #[test]
    fn random_options_never_panic(built in any_built(), values in prop::collection::vec(any_given(), 57)) {
        let mut reader = Reader::new("https://h/s", built);
        let mut last = None;
        while let Some(slot) = reader.ask() {
            last = Some(slot);
            if let Err(r) = reader.feed(&values[slot as usize]) {
                prop_assert!(!r.expected.text().is_empty());
                let names_slot = r.name == slot.path() || r.name == "urls" || r.name == "offset" || r.name == "persist";
                prop_assert!(names_slot, "{} for {:?}", r.name, slot);
                return Ok(());
            }
        }
        prop_assert_eq!(last, Some(Slot::FallbackRememberMs));
        let p = reader.finish();
        prop_assert!(p.config.backoff.floor_ms >= 10 && p.config.interval.min_ms >= 10);
    }
}
