//! The engine against nchan's conventions (tests/nchan/FACTS.md, observed
//! with nginx 1.22.1 + nchan 1.3.6): long-poll and interval-poll messages
//! named by `Last-Modified` + a bare-digit `Etag`, the id `<seconds>:<tag>`,
//! and `410 Gone` on a routine nginx stop or reload.

#[path = "engine_support.rs"]
mod support;

use support::*;
use tidings_core::engine::{
    Action, Config, ErrorCode, Reason, ResponseHead, State, TransportKind, ACCEPT_LONG_POLL,
};

/// 2026-11-29 20:04:13 / :14 GMT, as nchan sent them.
const LM13: &str = "Sun, 29 Nov 2026 20:04:13 GMT";
const LM14: &str = "Sun, 29 Nov 2026 20:04:14 GMT";
const T13: &str = "1795982653";
const T14: &str = "1795982654";

fn nchan_config(transport: TransportKind) -> Config {
    let mut c = Config::new("http://nchan.test/sub/lp/ch");
    c.transports = vec![transport];
    c.cross_origin = true.into();
    c.last_event_id_param = "last_event_id".into();
    c.backoff.floor_ms = 1000;
    c
}

/// One nchan message answer: publisher's content type, Last-Modified + Etag.
fn message_head(lm: &str, tag: &str) -> ResponseHead {
    ResponseHead::new(200)
        .with_content_type("application/x-www-form-urlencoded")
        .with_header("last-modified", lm)
        .with_header("etag", tag)
}

/// nchan's 410 to a held long-poll on stop/reload: no body, the cursor's tag.
fn gone(tag: &str) -> ResponseHead {
    ResponseHead::new(410).with_header("etag", tag)
}

fn ids(sim: &Sim) -> Vec<(String, String)> {
    sim.delivered()
        .into_iter()
        .map(|m| (m.id, m.data))
        .collect()
}

/// Messages `T13:0`, `T14:0` (the tag repeats in a new second), `T14:1`: all
/// three delivered with nchan's ids; the cursor follows them and is sent
/// instead of the validators that name it (`last_event_id`, no
/// `If-None-Match` / `If-Modified-Since`: a CORS-simple request, no
/// preflight); a replay of an id is dropped.
#[test]
fn long_poll_ids_are_nchan_ids_and_a_repeated_tag_is_news() {
    let mut sim = Sim::new(nchan_config(TransportKind::LongPoll), 1);
    let mut o = the_open(&sim.start());
    assert_eq!(o.url, "http://nchan.test/sub/lp/ch");
    for (lm, tag, body, t) in [
        (LM13, "0", "m1", T13),
        (LM14, "0", "m2", T14),
        (LM14, "1", "m3", T14),
    ] {
        sim.head(o.id, message_head(lm, tag));
        sim.resource(o.id, body);
        o = sim.must_open(200);
        assert_eq!(
            o.url,
            format!("http://nchan.test/sub/lp/ch?last_event_id={t}%3A{tag}")
        );
        assert_eq!(o.headers, [("Accept".into(), ACCEPT_LONG_POLL.into())]);
    }
    let t14_1 = format!("{T14}:1");
    assert_eq!(sim.engine.last_event_id(), t14_1);
    // The same message again (a server that ignored the validators).
    sim.head(o.id, message_head(LM14, "1"));
    sim.resource(o.id, "m3");
    assert_eq!(
        ids(&sim),
        [
            (format!("{T13}:0"), "m1".to_string()),
            (format!("{T14}:0"), "m2".to_string()),
            (t14_1, "m3".to_string()),
        ]
    );
    assert!(errors(&sim.log.iter().map(|(_, a)| a.clone()).collect::<Vec<_>>()).is_empty());
}

/// Resubscribing with a stored nchan id: the first request carries it in
/// `last_event_id` and no validators (nchan answers the message after it).
#[test]
fn resume_from_a_stored_nchan_id() {
    for transport in [TransportKind::LongPoll, TransportKind::Poll] {
        let mut config = nchan_config(transport);
        config.last_event_id = format!("{T14}:1");
        let mut sim = Sim::new(config, 2);
        let o = the_open(&sim.start());
        assert_eq!(
            o.url,
            format!("http://nchan.test/sub/lp/ch?last_event_id={T14}%3A1")
        );
        assert_eq!(header(&o, "If-None-Match"), None);
    }
}

/// nginx stopped or reloaded while the long-poll was held: 410 after an
/// earlier answer is retried under backoff (error `http-status` 410, not
/// fatal), from the same cursor; the breaker counts it like a 5xx.
#[test]
fn long_poll_410_after_an_answer_retries_under_backoff() {
    let mut sim = Sim::new(nchan_config(TransportKind::LongPoll), 3);
    let o = the_open(&sim.start());
    sim.head(o.id, message_head(LM13, "0"));
    sim.resource(o.id, "m1");
    let o = sim.must_open(200);
    sim.run_for(50);
    let acts = sim.head(o.id, gone("0"));
    let retry = match errors(&acts).as_slice() {
        [Action::Error {
            code: ErrorCode::HttpStatus,
            status: Some(410),
            retry_in_ms: Some(ms),
            fatal: false,
            id: None,
        }] => *ms,
        other => panic!("{other:?}"),
    };
    // Full jitter on top of the 1000 ms floor, first step (base 500).
    assert!((1000..1500).contains(&retry), "{retry}");
    assert_eq!(
        states(&acts),
        [(State::Waiting, Reason::Backoff, Some(retry))]
    );
    let t = sim.now.mono.0;
    let next = sim.must_open(retry + 1);
    assert_eq!(sim.last_open_at - t, retry);
    assert_eq!(
        next.url,
        format!("http://nchan.test/sub/lp/ch?last_event_id={T13}%3A0")
    );
    assert_eq!(sim.engine.state(), State::Connecting);
}

/// The first request of a quiet channel (nchan holds forever by default)
/// ended by a restart: held ≥ `backoff.floorMs`, so also transient.
#[test]
fn long_poll_410_ending_a_first_hold_is_transient() {
    let mut sim = Sim::new(nchan_config(TransportKind::LongPoll), 4);
    let o = the_open(&sim.start());
    sim.run_for(20_000);
    let acts = sim.head(o.id, gone("0"));
    assert!(matches!(
        errors(&acts).as_slice(),
        [Action::Error {
            status: Some(410),
            fatal: false,
            ..
        }]
    ));
    sim.must_open(2000);
}

/// The endpoint itself is gone: a first request answered 410 at once stops.
#[test]
fn a_first_410_answered_at_once_is_permanent() {
    for transport in [TransportKind::LongPoll, TransportKind::Poll] {
        let mut sim = Sim::new(nchan_config(transport), 5);
        let o = the_open(&sim.start());
        sim.run_for(30);
        let acts = sim.head(o.id, ResponseHead::new(410));
        assert_eq!(
            errors(&acts),
            [Action::Error {
                code: ErrorCode::HttpStatus,
                status: Some(410),
                retry_in_ms: None,
                fatal: true,
                id: None,
            }],
            "{transport:?}"
        );
        assert_eq!(sim.engine.state(), State::Closed);
    }
}

/// Streams keep 410 permanent even after they worked (nchan never answers a
/// stream with 410: it sends `:410: 410 Gone` in the body and ends it).
#[test]
fn a_410_stream_head_stays_permanent() {
    let mut sim = Sim::new(nchan_config(TransportKind::FetchSse), 6);
    let o = the_open(&sim.start());
    sim.stream(
        o.id,
        b": hi\n\nid: 1795982653:0\ndata: m1\n\n:410: 410 Gone\n\n",
    );
    sim.end(o.id);
    let o = sim.must_open(5000);
    assert_eq!(
        o.url,
        format!("http://nchan.test/sub/lp/ch?last_event_id={T13}%3A0")
    );
    let acts = sim.head(o.id, ResponseHead::new(410));
    assert!(matches!(
        errors(&acts).as_slice(),
        [Action::Error {
            status: Some(410),
            fatal: true,
            ..
        }]
    ));
}

/// Interval poll against nchan: a 304 at the tip echoes the validators of
/// the cursor and changes nothing; a 410 after an answer is retried no
/// sooner than the current interval.
#[test]
fn poll_304_then_410_is_retried_no_faster_than_the_interval() {
    let mut config = nchan_config(TransportKind::Poll);
    config.interval.initial_ms = 2000;
    config.interval.min_ms = 1000;
    let mut sim = Sim::new(config, 7);
    let o = the_open(&sim.start());
    sim.head(o.id, message_head(LM13, "0"));
    sim.resource(o.id, "m1");
    let o = sim.must_open(5000);
    sim.head(
        o.id,
        ResponseHead::new(304)
            .with_header("last-modified", LM13)
            .with_header("etag", "0"),
    );
    let o = sim.must_open(5000);
    assert_eq!(
        o.url,
        format!("http://nchan.test/sub/lp/ch?last_event_id={T13}%3A0")
    );
    assert_eq!(header(&o, "If-None-Match"), None);
    assert_eq!(sim.engine.stats().not_modified, 1);
    let acts = sim.head(o.id, gone("0"));
    let retry = match errors(&acts).as_slice() {
        [Action::Error {
            status: Some(410),
            retry_in_ms: Some(ms),
            fatal: false,
            ..
        }] => *ms,
        other => panic!("{other:?}"),
    };
    assert!(retry >= sim.engine.stats().current_interval_ms, "{retry}");
    assert_eq!(sim.engine.last_event_id(), format!("{T13}:0"));
}
