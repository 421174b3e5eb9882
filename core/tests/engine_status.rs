//! Statuses and content types through the engine: BC-10 (stop answers must
//! stop, not loop), BC-11 (a stream that opens and dies at once never resets
//! the backoff), and the one header refresh after a 401. Data copied from the
//! real-world failure list.

#[path = "engine_support.rs"]
mod support;

use support::*;
use tidings_core::engine::{
    Action, Config, ErrorCode, Reason, ResponseHead, State, TransportError, TransportKind,
};
use tidings_core::policy::backoff::Strategy;

fn fatal_error(code: ErrorCode, status: Option<u16>) -> Action {
    Action::Error {
        code,
        status,
        retry_in_ms: None,
        fatal: true,
        id: None,
    }
}

/// BC-10 S1, S3, S4, S5: exactly one request, no message, closed, one error
/// naming the status / content type. Then 60 s of silence.
#[test]
fn bc10_stop_answers_stop() {
    let html = || ResponseHead::new(200).with_content_type("text/html");
    let rows: Vec<(&str, ResponseHead, &[u8], ErrorCode)> = vec![
        ("S1 204", ResponseHead::new(204), b"", ErrorCode::NoContent),
        (
            "S3 no type",
            ResponseHead::new(200),
            b"data: x\n\n",
            ErrorCode::BadContentType,
        ),
        (
            "S4 html",
            html(),
            b"<html></html>",
            ErrorCode::BadContentType,
        ),
        (
            "S5 205",
            es_head(205),
            b"data: x\n\n",
            ErrorCode::HttpStatus,
        ),
        (
            "S5 299",
            es_head(299),
            b"data: x\n\n",
            ErrorCode::HttpStatus,
        ),
        (
            "S5 404",
            es_head(404),
            b"data: x\n\n",
            ErrorCode::HttpStatus,
        ),
        (
            "S5 410",
            es_head(410),
            b"data: x\n\n",
            ErrorCode::HttpStatus,
        ),
    ];
    for (name, head, body, code) in rows {
        let status = head.status;
        let mut sim = Sim::new(fetch_sse_config(), 10);
        let o = the_open(&sim.start());
        let acts = sim.head(o.id, head);
        sim.bytes(o.id, body);
        sim.end(o.id);
        sim.run_for(60_000);
        assert_eq!(sim.opens().len(), 1, "{name}");
        assert!(sim.delivered().is_empty(), "{name}");
        assert_eq!(errors(&acts), [fatal_error(code, Some(status))], "{name}");
        assert!(acts.contains(&Action::Abort(o.id)), "{name}");
        assert_eq!(
            states(&acts),
            [(State::Closed, Reason::PermanentError, None)],
            "{name}"
        );
        assert_eq!(sim.engine.state(), State::Closed);
        assert_eq!(sim.wait, None, "{name}: nothing scheduled");
    }
}

/// BC-10 S2: event, one reconnect `retry` (100 ms) later, then 204 → closed.
#[test]
fn bc10_s2_event_then_204() {
    let mut sim = Sim::new(exact_retry_config(TransportKind::FetchSse), 2);
    let o1 = the_open(&sim.start());
    sim.stream(o1.id, b"retry: 100\ndata: a\n\n");
    sim.end(o1.id);
    let t = sim.now.mono.0;
    let o2 = sim.must_open(60_000);
    assert_eq!(sim.last_open_at - t, 100);
    let acts = sim.head(o2.id, ResponseHead::new(204));
    assert_eq!(
        errors(&acts),
        [fatal_error(ErrorCode::NoContent, Some(204))]
    );
    sim.run_for(60_000);
    assert_eq!(sim.opens().len(), 2);
    assert_eq!(
        data(&sim.log.iter().map(|(_, a)| a.clone()).collect::<Vec<_>>()),
        ["a"]
    );
}

/// BC-10 S6: 503 without Retry-After backs off (tidings is the "resilient"
/// mode), reporting the delay.
#[test]
fn bc10_s6_503_backs_off() {
    let mut sim = Sim::new(fetch_sse_config(), 6);
    let o = the_open(&sim.start());
    let acts = sim.head(o.id, ResponseHead::new(503));
    assert_eq!(
        errors(&acts),
        [Action::Error {
            code: ErrorCode::HttpStatus,
            status: Some(503),
            retry_in_ms: Some(1370),
            fatal: false,
            id: None,
        }]
    );
    assert_eq!(
        states(&acts),
        [(State::Waiting, Reason::Backoff, Some(1370))]
    );
    sim.must_open(60_000);
    assert_eq!(sim.last_open_at, 1370);
}

/// BC-10 NATIVE caveat: native EventSource hides the status, so a 204 looks
/// like a network error. After `fallback.afterFailures` (2) failed opens the
/// selector moves to long-poll, which sees the status; there an immediate
/// empty answer is paced by the request start: one request per
/// `backoff.floorMs` plus `U[0, 100]`, a fixed pace, never a tight loop
/// (paced by the backoff instead, the gaps would grow: 4387, 7871,
/// 16 204, … ms, and news published meanwhile would wait that long).
#[test]
fn bc10_native_204_is_bounded() {
    let mut sim = Sim::new(tidings_core::engine::Config::new("/stream"), 10);
    let mut o = the_open(&sim.start());
    for _ in 0..2 {
        assert_eq!(o.transport, TransportKind::EventSource);
        sim.error(o.id, TransportError::Network);
        o = sim.must_open(120_000);
    }
    assert_eq!(o.transport, TransportKind::LongPoll);
    let mut times = vec![];
    for _ in 0..8 {
        sim.run_for(20);
        sim.head(o.id, ResponseHead::new(204));
        o = sim.must_open(600_000);
        times.push(sim.last_open_at);
    }
    let gaps: Vec<u64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().all(|&g| (1000..=1100).contains(&g)), "{gaps:?}");
    assert_eq!(gaps, [1085, 1086, 1095, 1079, 1079, 1098, 1029]);
}

fn bc11_config(strategy: Strategy) -> tidings_core::engine::Config {
    let mut c = fetch_sse_config();
    c.events = vec!["goaway".into()];
    c.backoff.strategy = strategy;
    c.backoff.max_attempts = Some(10);
    c
}

/// Drive BC-11 A or B for `span_ms`: each stream gets its body and is closed
/// 100 ms after the head. Returns the Open times.
fn bc11_run(sim: &mut Sim, body: &[u8], span_ms: u64) -> Vec<u64> {
    let mut o = the_open(&sim.start());
    let mut times = vec![0];
    loop {
        sim.stream(o.id, body);
        sim.run_for(100);
        sim.end(o.id);
        match sim.next_open(span_ms) {
            Some(next) if sim.last_open_at <= span_ms => {
                times.push(sim.last_open_at);
                o = next;
            }
            _ => return times,
        }
    }
}

/// BC-11 A and B with tidings' defaults (full jitter): the count never resets
/// however many events the short connections delivered; never two requests
/// less than the floor apart; few requests a minute; the tenth consecutive
/// unhealthy connection gives up.
#[test]
fn bc11_open_and_die_never_resets_backoff() {
    let a: &[u8] = b"{\"message\":\"Internal error\"}";
    let b: &[u8] = b"event: goaway\ndata: {\"reason\":\"limit\"}\n\n";
    for (name, body) in [("A", a), ("B", b)] {
        let mut sim = Sim::new(bc11_config(Strategy::FullJitter), 11);
        let times = bc11_run(&mut sim, body, 60_000);
        let gaps: Vec<u64> = times.windows(2).map(|w| w[1] - w[0] - 100).collect();
        assert!(gaps.iter().all(|&g| g >= 1000), "{name}: {gaps:?}");
        assert_eq!(times.len(), 8, "{name}: {times:?}");
        // Run on: ten connections in all, then the fatal gave-up.
        let mut sim = Sim::new(bc11_config(Strategy::FullJitter), 11);
        let all = bc11_run(&mut sim, body, 3_600_000);
        assert_eq!(all.len(), 10, "{name}");
        assert_eq!(all[..8], times[..], "{name}");
        let last = sim.log.iter().rev().find_map(|(_, a)| match a {
            Action::Error { code, fatal, .. } => Some((*code, *fatal)),
            _ => None,
        });
        assert_eq!(last, Some((ErrorCode::GaveUp, true)), "{name}");
        let goaways = sim
            .delivered()
            .into_iter()
            .filter(|m| m.event == "goaway")
            .count();
        assert_eq!(goaways, if name == "B" { 10 } else { 0 }, "{name}");
    }
}

/// BC-11 with the yardstick's equal jitter: the k-th gap is at least
/// 1000 + d_k/2 (1.5, 2, 3, 5, 9, 17, 33 s…), so at most 8 requests in 60 s.
#[test]
fn bc11_equal_jitter_guaranteed_growth() {
    let mut sim = Sim::new(bc11_config(Strategy::EqualJitter), 11);
    let times = bc11_run(&mut sim, b"event: goaway\ndata: x\n\n", 60_000);
    let gaps: Vec<u64> = times.windows(2).map(|w| w[1] - w[0] - 100).collect();
    for (k, g) in gaps.iter().enumerate() {
        let d = (500u64 << k).min(60_000);
        assert!(*g >= 1000 + d / 2 && *g <= 1000 + d, "k={k} gap={g}");
    }
    assert!(times.len() <= 8, "{times:?}");
}

/// BC-11 C: 401 without custom headers: exactly one request, fatal `auth`.
#[test]
fn bc11_c_401_is_fatal() {
    let mut sim = Sim::new(fetch_sse_config(), 1);
    let o = the_open(&sim.start());
    let acts = sim.head(
        o.id,
        ResponseHead::new(401).with_content_type("application/json"),
    );
    sim.run_for(60_000);
    assert_eq!(errors(&acts), [fatal_error(ErrorCode::Auth, Some(401))]);
    assert_eq!(sim.opens().len(), 1);
}

/// With custom headers: a 401 is retried once, at once, asking the adapter to
/// refresh its headers; a second 401 in a row is fatal. After a success, a new
/// 401 may refresh again. A 403 is taken as a 401 is.
#[test]
fn auth_refresh_once() {
    let mut config = tidings_core::engine::Config::new("/stream");
    config.has_custom_headers = true;
    let mut sim = Sim::new(config, 1);
    let acts = sim.start();
    assert!(acts.contains(&Action::TransportChanged {
        transport: TransportKind::FetchSse,
        previous: None,
        reason: Reason::Capability
    }));
    let o1 = the_open(&acts);
    assert!(!o1.refresh_auth);
    let acts = sim.head(o1.id, ResponseHead::new(401));
    let o2 = the_open(&acts);
    assert!(o2.refresh_auth);
    assert_eq!(
        errors(&acts),
        [Action::Error {
            code: ErrorCode::Auth,
            status: Some(401),
            retry_in_ms: Some(0),
            fatal: false,
            id: None,
        }]
    );
    // The refreshed request works; later the token expires again.
    sim.stream(o2.id, b"data: a\n\n");
    sim.run_for(20_000);
    let acts = sim.head(o2.id, ResponseHead::new(401)); // stale: ignored
    assert!(acts.is_empty());
    sim.end(o2.id);
    let o3 = sim.must_open(60_000);
    assert!(!o3.refresh_auth);
    let o4 = the_open(&sim.head(o3.id, ResponseHead::new(401)));
    assert!(o4.refresh_auth);
    let acts = sim.head(o4.id, ResponseHead::new(401));
    assert_eq!(errors(&acts), [fatal_error(ErrorCode::Auth, Some(401))]);
    sim.run_for(600_000);
    assert_eq!(sim.opens().len(), 4);

    let mut config = tidings_core::engine::Config::new("/stream");
    config.has_custom_headers = true;
    let mut sim = Sim::new(config, 1);
    let o = the_open(&sim.start());
    let o2 = the_open(&sim.head(o.id, ResponseHead::new(403)));
    assert!(o2.refresh_auth);
    assert_eq!(o2.status, Some(403));
    let acts = sim.head(o2.id, ResponseHead::new(401));
    assert_eq!(errors(&acts), [fatal_error(ErrorCode::Auth, Some(401))]);
    assert!(opens(&sim.run_for(600_000)).is_empty());
}

/// A `url` function on every transport: a 401 or 403 asks it again once, at
/// once (0 ms, no backoff step), before any backoff; a second refusal in a
/// row is fatal `auth`, never a loop. Each `Open` names the previous
/// answer's status (`None` when there was none).
#[test]
fn url_function_refreshes_once_on_every_transport() {
    for t in TransportKind::ALL {
        for status in [401, 403] {
            let mut config = Config::new("/stream");
            config.transports = vec![t];
            config.url_function = true;
            let mut sim = Sim::new(config, 7);
            let o1 = the_open(&sim.start());
            assert_eq!((o1.refresh_auth, o1.status), (false, None), "{t:?}");
            let acts = if t == TransportKind::EventSource {
                // Learned from the status probe of the failed EventSource.
                let acts = sim.error(o1.id, TransportError::NativeFailed);
                assert!(acts.contains(&Action::Probe(o1.id)), "{t:?}");
                sim.probe(o1.id, Some(ResponseHead::new(status)))
            } else {
                sim.head(o1.id, ResponseHead::new(status))
            };
            let o2 = the_open(&acts);
            assert_eq!((o2.refresh_auth, o2.status), (true, Some(status)), "{t:?}");
            // At once: no time passed since the first request.
            assert_eq!(sim.opens()[1].0, 0, "{t:?}");
            let acts = if t == TransportKind::EventSource {
                sim.error(o2.id, TransportError::NativeFailed);
                sim.probe(o2.id, Some(ResponseHead::new(status)))
            } else {
                sim.head(o2.id, ResponseHead::new(status))
            };
            assert_eq!(
                errors(&acts),
                [fatal_error(ErrorCode::Auth, Some(status))],
                "{t:?}"
            );
            assert!(opens(&sim.run_for(600_000)).is_empty(), "{t:?}");
            assert_eq!(sim.opens().len(), 2, "{t:?}");
        }
    }
}

/// Without a `url` or `headers` function there is nothing to ask again: a
/// 401 or 403 is fatal at once, on the native probe too.
#[test]
fn refusal_without_functions_is_fatal_at_once() {
    for status in [401, 403] {
        let mut sim = Sim::new(Config::new("/stream"), 7);
        let o = the_open(&sim.start());
        sim.error(o.id, TransportError::NativeFailed);
        let acts = sim.probe(o.id, Some(ResponseHead::new(status)));
        assert_eq!(errors(&acts), [fatal_error(ErrorCode::Auth, Some(status))]);
        assert!(opens(&sim.run_for(600_000)).is_empty());
    }
}

/// An adapter that reports `handle_opened` for a fetch stream and then the
/// head anyway: the second report changes nothing (no parser reset mid-body).
#[test]
fn duplicate_open_reports_keep_the_body() {
    let mut sim = Sim::new(fetch_sse_config(), 3);
    let o = the_open(&sim.start());
    sim.opened(o.id);
    sim.bytes(o.id, b"data: par");
    sim.head(o.id, ResponseHead::event_stream());
    sim.head(o.id, ResponseHead::new(500));
    sim.bytes(o.id, b"t\n\n");
    assert_eq!(
        data(&sim.log.iter().map(|(_, a)| a.clone()).collect::<Vec<_>>()),
        ["part"]
    );
    assert_eq!(sim.engine.state(), State::Open);
}

/// `eventsource`, a one-shot 503 / 429 / 204: the native EventSource fails
/// before opening and its status probe then gets `200 text/event-stream`, so
/// the engine takes it as a refusal: `http-status` without a status, not
/// fatal, retried under backoff, and no transport change (twice in a row
/// either: an HTTP refusal says nothing against the path). A probe that
/// failed itself is `network-or-cors` with evidence: the second one in a row
/// skips the streams.
#[test]
fn native_refusal_then_served_is_a_transient_status_failure() {
    let mut config = tidings_core::engine::Config::new("/stream");
    config.backoff.strategy = Strategy::None;
    let mut sim = Sim::new(config, 5);
    let o = the_open(&sim.start());
    let acts = sim.probe(o.id, Some(ResponseHead::event_stream()));
    assert_eq!(
        errors(&acts),
        [Action::Error {
            code: ErrorCode::HttpStatus,
            status: None,
            retry_in_ms: Some(1500),
            fatal: false,
            id: None,
        }]
    );
    assert_eq!(
        states(&acts),
        [(State::Waiting, Reason::Backoff, Some(1500))]
    );
    let o2 = sim.must_open(1500);
    assert_eq!(o2.transport, TransportKind::EventSource);
    let served = ResponseHead::new(200).with_content_type("Text/Event-Stream; charset=utf-8");
    sim.probe(o2.id, Some(served));
    let o3 = sim.must_open(60_000);
    assert_eq!(o3.transport, TransportKind::EventSource);
    let changes = sim.find(|a| match a {
        Action::TransportChanged { reason, .. } => Some(*reason),
        _ => None,
    });
    assert_eq!(changes, [(0, Reason::Start)]);
    sim.opened(o3.id);
    assert_eq!(sim.native(o3.id, "message", "hi", "1").len(), 1);

    // The probe failed too: a network verdict and evidence.
    let mut sim = Sim::new(tidings_core::engine::Config::new("/stream"), 5);
    let o = the_open(&sim.start());
    let acts = sim.probe(o.id, None);
    assert!(matches!(
        errors(&acts)[..],
        [Action::Error {
            code: ErrorCode::NetworkOrCors,
            ..
        }]
    ));
    let o2 = sim.must_open(60_000);
    sim.probe(o2.id, None);
    let o3 = sim.must_open(60_000);
    assert_eq!(o3.transport, TransportKind::LongPoll);
}

/// `eventsource`: a native `EventSource` the browser failed (readyState
/// CLOSED) before it opened hides why, so the engine asks once for the status
/// probe and keeps the attempt live for its answer. One that opened (its
/// `open` or an event), or failed a second time, is a network error at once,
/// with no probe.
#[test]
fn native_failure_is_probed_only_before_it_opened() {
    let probes = |acts: &[Action]| {
        acts.iter()
            .filter(|a| matches!(a, Action::Probe(_)))
            .count()
    };
    let network = |acts: &[Action]| {
        matches!(
            errors(acts)[..],
            [Action::Error {
                code: ErrorCode::NetworkOrCors,
                fatal: false,
                ..
            }]
        )
    };
    let mut sim = Sim::new(tidings_core::engine::Config::new("/stream"), 5);
    let o = the_open(&sim.start());
    let acts = sim.error(o.id, TransportError::NativeFailed);
    assert!(acts.contains(&Action::Probe(o.id)), "{acts:?}");
    assert_eq!((probes(&acts), errors(&acts).len()), (1, 0));
    assert_eq!(sim.engine.live_attempt(), Some(o.id), "kept for the answer");
    let again = sim.error(o.id, TransportError::NativeFailed);
    assert_eq!(probes(&again), 0);
    assert!(network(&again), "{again:?}");
    assert_eq!(sim.engine.live_attempt(), None);

    for seen in ["open", "event"] {
        let mut sim = Sim::new(tidings_core::engine::Config::new("/stream"), 5);
        let o = the_open(&sim.start());
        match seen {
            "open" => drop(sim.opened(o.id)),
            _ => drop(sim.native(o.id, "message", "hi", "")),
        }
        let acts = sim.error(o.id, TransportError::NativeFailed);
        assert_eq!(probes(&acts), 0, "after {seen}: {acts:?}");
        assert!(network(&acts), "after {seen}: {acts:?}");
        assert_eq!(sim.engine.live_attempt(), None);
    }
}

/// `eventsource`: the probe after a failed native open answers with a status
/// or a media type the stream cannot use; the engine takes it as the
/// attempt's own head. `text/event-streamx` is not `text/event-stream` (one
/// media-type rule, the whole token), so it stops with `bad-content-type`;
/// a 204 stops with `no-content`; a 503 waits for its `Retry-After`.
#[test]
fn native_probe_head_is_the_attempts_head() {
    let fatal = |head: ResponseHead| {
        let mut sim = Sim::new(tidings_core::engine::Config::new("/stream"), 5);
        let o = the_open(&sim.start());
        errors(&sim.probe(o.id, Some(head)))
    };
    let streamx = ResponseHead::new(200).with_content_type("text/event-streamx");
    assert_eq!(
        fatal(streamx),
        [fatal_error(ErrorCode::BadContentType, Some(200))]
    );
    assert_eq!(
        fatal(ResponseHead::new(204)),
        [fatal_error(ErrorCode::NoContent, Some(204))]
    );
    let busy = ResponseHead::new(503).with_header("Retry-After", "7");
    assert!(matches!(
        fatal(busy)[..],
        [Action::Error {
            code: ErrorCode::HttpStatus,
            status: Some(503),
            retry_in_ms: Some(ms),
            fatal: false,
            id: None,
        }] if ms >= 7000
    ));
}

/// `eventsource`: whatever the probe answers, the EventSource behind it has
/// failed, so the attempt ends. A probe for an attempt that already took a
/// head (the first `make fuzz` engine finding, fuzz/regressions/engine/)
/// must not be dropped as a second head, which would leave the attempt live
/// with nothing running: it is a `network-or-cors` failure and a backoff, as
/// the browser's own failure after an open is.
#[test]
fn native_probe_ends_its_attempt_whatever_it_saw() {
    let late = |first: ResponseHead, probe: Option<ResponseHead>| {
        let mut sim = Sim::new(tidings_core::engine::Config::new("/stream"), 5);
        let o = the_open(&sim.start());
        sim.head(o.id, first);
        let acts = sim.probe(o.id, probe);
        assert_eq!(sim.engine.live_attempt(), None, "the probed attempt ended");
        errors(&acts)
    };
    let stream = || ResponseHead::new(200).with_content_type("text/event-stream");
    for probe in [Some(ResponseHead::new(503)), Some(stream()), None] {
        let errs = late(stream(), probe.clone());
        assert!(
            matches!(
                errs[..],
                [Action::Error {
                    code: ErrorCode::NetworkOrCors,
                    fatal: false,
                    ..
                }]
            ),
            "probe {probe:?}: {errs:?}"
        );
    }
}

/// The app's `headers` function fails before each request: its own error
/// (`headers`, not fatal, with the delay) and its own reason
/// (`headers-failed`), retried after the growing backoff delay; never
/// evidence against the transport (eight in a row stay on `fetch-sse`, where
/// two failed opens would skip the streams) and never the breaker (no
/// `breaker-open` after its threshold of 5). `maxAttempts` still ends it.
#[test]
fn headers_function_failure_has_its_own_reason_and_retry_rule() {
    let mut config = fetch_sse_config();
    config.backoff.strategy = Strategy::None;
    config.backoff.max_attempts = Some(9);
    let mut sim = Sim::new(config, 5);
    let mut o = the_open(&sim.start());
    let mut delays = Vec::new();
    for _ in 0..8 {
        assert_eq!(o.transport, TransportKind::FetchSse);
        let acts = sim.headers_failed(o.id);
        let [Action::Error {
            code: ErrorCode::Headers,
            status: None,
            retry_in_ms: Some(ms),
            fatal: false,
            id: None,
        }] = errors(&acts)[..]
        else {
            panic!("{acts:#?}")
        };
        assert_eq!(
            states(&acts),
            [(State::Waiting, Reason::HeadersFailed, Some(ms))]
        );
        delays.push(ms);
        o = sim.must_open(ms);
    }
    assert_eq!(delays, [1500, 2000, 3000, 5000, 9000, 17000, 33000, 61000]);
    let acts = sim.headers_failed(o.id);
    assert!(matches!(
        errors(&acts)[..],
        [Action::Error {
            code: ErrorCode::GaveUp,
            fatal: true,
            ..
        }]
    ));
    let changes = sim.find(|a| match a {
        Action::TransportChanged { reason, .. } => Some(*reason),
        _ => None,
    });
    assert_eq!(changes, [(0, Reason::Start)]);
}

/// The engine is the one source of the transport name, including "stopped
/// before choosing": `None` before start, and for good after a start that
/// found no usable transport or an invalid URL (it never reports a
/// transport it did not choose, such as `poll` for a subscription that
/// never ran).
#[test]
fn transport_is_none_until_chosen_and_after_stopping_before_choosing() {
    let mut config = tidings_core::engine::Config::new("/stream");
    config.transports = vec![TransportKind::EventSource];
    let mut sim = Sim::new(config, 1);
    assert_eq!(sim.engine.transport(), None);
    let acts = sim.start_with(tidings_core::engine::Capabilities::default());
    assert!(matches!(
        errors(&acts)[..],
        [Action::Error {
            code: ErrorCode::GaveUp,
            fatal: true,
            ..
        }]
    ));
    assert_eq!(sim.engine.transport(), None);

    let mut sim = Sim::new(tidings_core::engine::Config::new(""), 1);
    sim.start();
    assert_eq!(sim.engine.state(), State::Closed);
    assert_eq!(sim.engine.transport(), None);

    let mut sim = Sim::new(fetch_sse_config(), 1);
    sim.start();
    assert_eq!(sim.engine.transport(), Some(TransportKind::FetchSse));
}

/// BC-11 with no body at all, on native EventSource too: a server that
/// answers and closes at once, every time, on a stream
/// transport: every attempt is retried at the backoff's pace (the 1 000 ms
/// floor plus full jitter that grows), never in a tight loop. Returns the
/// times of the opens in the first 10 s of virtual time.
fn opens_against_an_answer_and_close(transport: TransportKind, seed: u64) -> Vec<u64> {
    let mut c = Config::new("/stream");
    c.transports = vec![transport];
    let (mut sim, mut o) = Sim::started(c, seed);
    let mut at = vec![0];
    loop {
        if transport == TransportKind::EventSource {
            sim.opened(o.id);
            sim.error(o.id, TransportError::NativeReconnecting);
        } else {
            sim.head(o.id, es_head(200));
            sim.end(o.id);
        }
        match sim.next_open(10_000u64.saturating_sub(sim.now.mono.0)) {
            Some(next) => {
                at.push(sim.last_open_at);
                o = next;
            }
            None => return at,
        }
    }
}

#[test]
fn bc11_an_empty_stream_closed_at_once_is_retried_at_the_backoffs_pace_on_both_stream_transports() {
    for transport in [TransportKind::FetchSse, TransportKind::EventSource] {
        for seed in 0..20 {
            let at = opens_against_an_answer_and_close(transport, seed);
            // The floor alone allows at most 10 opens in 10 s; full jitter
            // over a growing step leaves fewer.
            assert!(
                (3..=8).contains(&at.len()),
                "{transport:?} seed {seed}: {at:?}"
            );
            for w in at.windows(2) {
                assert!(w[1] - w[0] >= 1000, "{transport:?} seed {seed}: {at:?}");
            }
        }
    }
    let at = opens_against_an_answer_and_close(TransportKind::FetchSse, 7);
    assert_eq!(at, [0, 1195, 2211, 5013, 8345]);
    let at = opens_against_an_answer_and_close(TransportKind::EventSource, 7);
    assert_eq!(at, [0, 1195, 2211, 5013, 8345]);
}
