//! Browser tests of the Rust API (`tidings::subscribe` → a `Stream` of
//! `Message`s, feature `rust`) in headless Chromium via `wasm-pack test`,
//! cross-origin to the reference server `make test` starts
//! (`TIDINGS_TEST_SERVER`): typed JSON messages, named events, resume after
//! a server restart, a decoding error, drop closing the connection, and two
//! subscriptions sharing one connection.
#![cfg(all(target_arch = "wasm32", feature = "rust"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::pin::Pin;
use std::task::Poll;

use futures_core::Stream;
use tidings::{Error, Event, Message, Options, Reason, Scope, State, Status, Subscription};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

mod support;
use support::*;

#[derive(serde::Deserialize, Debug, PartialEq)]
struct Tick {
    tag: String,
    n: u32,
}

fn unique(prefix: &str) -> String {
    format!("{prefix}{}", (js_sys::Math::random() * 1e12) as u64)
}

/// The next item of `s`, or `None` after `ms` without one.
async fn within<S: Stream + Unpin>(s: &mut S, ms: u32) -> Option<S::Item> {
    let mut timeout = gloo_timers::future::TimeoutFuture::new(ms);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(item) = Pin::new(&mut *s).poll_next(cx) {
            return Poll::Ready(item);
        }
        Pin::new(&mut timeout).poll(cx).map(|_| None)
    })
    .await
}

use std::future::Future;

/// Whether `s` ends (yields `None`) within `ms`, items before the end
/// skipped; `false` when the time runs out first.
async fn ends_within<S: Stream + Unpin>(s: &mut S, ms: u32) -> bool {
    let mut timeout = gloo_timers::future::TimeoutFuture::new(ms);
    std::future::poll_fn(|cx| loop {
        match Pin::new(&mut *s).poll_next(cx) {
            Poll::Ready(None) => return Poll::Ready(true),
            Poll::Ready(Some(_)) => continue,
            Poll::Pending => return Pin::new(&mut timeout).poll(cx).map(|_| false),
        }
    })
    .await
}

/// Wait for [`Event::Open`] on `sub`'s events.
async fn opened(sub: &Subscription) {
    let mut events = sub.events();
    loop {
        match within(&mut events, 5000).await {
            Some(Event::Open { .. }) => return,
            Some(_) => continue,
            None => panic!("never opened (state {:?})", sub.state()),
        }
    }
}

/// The next `n` messages whose data holds `tag` (others are other tests').
async fn take_tagged(sub: &mut Subscription, tag: &str, n: usize) -> Vec<Message> {
    let mut got = Vec::new();
    while got.len() < n {
        match within(sub, 8000).await {
            Some(m) if m.data.contains(tag) => got.push(m),
            Some(_) => {}
            None => panic!("got {} of {n}: {got:?}", got.len()),
        }
    }
    got
}

#[wasm_bindgen_test]
async fn typed_json_messages_arrive_in_order_with_ids() {
    let tag = unique("typed");
    let url = format!("{}/sse?t={tag}", server());
    let mut sub = tidings::subscribe(&url, Options::new().seed(1)).unwrap();
    opened(&sub).await;
    let mut ids = Vec::new();
    for n in 1..=3 {
        ids.push(publish(&format!(r#"{{"tag":"{tag}","n":{n}}}"#)).await);
    }
    let got = take_tagged(&mut sub, &tag, 3).await;
    let ticks: Vec<Tick> = got.iter().map(|m| m.json().unwrap()).collect();
    let expected: Vec<Tick> = (1..=3)
        .map(|n| Tick {
            tag: tag.clone(),
            n,
        })
        .collect();
    assert_eq!(ticks, expected);
    let got_ids: Vec<&str> = got.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(got_ids, ids);
    assert_eq!(got[2].last_event_id, ids[2]);
    assert_eq!(got[0].event, "message");
    assert_eq!(got[0].transport, "eventsource");
    assert_eq!(sub.last_event_id(), ids[2]);
    assert_eq!(sub.state(), State::Open);
}

#[wasm_bindgen_test]
async fn named_events_are_delivered_under_their_name_and_others_are_not() {
    let tag = unique("named");
    let url = format!("{}/sse?t={tag}", server());
    let mut sub = tidings::subscribe(&url, Options::new().events(["price"])).unwrap();
    opened(&sub).await;
    http("POST", "/publish?event=price", &format!("{tag} p1")).await;
    http("POST", "/publish?event=volume", &format!("{tag} v1")).await;
    http("POST", "/publish", &format!("{tag} m1")).await;
    let got = take_tagged(&mut sub, &tag, 2).await;
    let seen: Vec<(String, String)> = got.into_iter().map(|m| (m.event, m.data)).collect();
    assert_eq!(
        seen,
        [
            ("price".to_string(), format!("{tag} p1")),
            ("message".to_string(), format!("{tag} m1"))
        ]
    );
}

#[wasm_bindgen_test]
async fn a_decoding_failure_is_a_typed_error_and_the_stream_goes_on() {
    let tag = unique("decode");
    let url = format!("{}/sse?t={tag}", server());
    let mut sub = tidings::subscribe(&url, Options::new()).unwrap();
    opened(&sub).await;
    let bad = publish(&format!("{tag} not json")).await;
    let wrong = publish(&format!(r#"{{"tag":"{tag}","n":"one"}}"#)).await;
    publish(&format!(r#"{{"tag":"{tag}","n":2}}"#)).await;
    let got = take_tagged(&mut sub, &tag, 3).await;
    let e = got[0].json::<Tick>().unwrap_err();
    assert!(
        matches!(&e, Error::Decode { id, .. } if *id == bad),
        "{e:?}"
    );
    assert_eq!(e.code(), "parse");
    let e = got[1].json::<Tick>().unwrap_err();
    assert!(
        matches!(&e, Error::Decode { id, .. } if *id == wrong),
        "{e:?}"
    );
    assert_eq!(got[2].json::<Tick>().unwrap(), Tick { tag, n: 2 });
}

#[wasm_bindgen_test]
async fn invalid_options_and_urls_are_refused_up_front() {
    let e = tidings::subscribe("ftp://x/", Options::new())
        .err()
        .unwrap();
    assert_eq!(e, Error::InvalidUrl);
    let url = format!("{}/sse", server());
    let e = tidings::subscribe(&url, Options::new().events(["open"]))
        .err()
        .unwrap();
    assert_eq!(e.code(), "invalid-option");
    let events = "expected an array of non-empty names other than \"open\", \"error\", \
                  \"statechange\", \"transportchange\", \"reset\", \"uptodate\", \
                  \"statuschange\", got [\"open\"] (object)";
    assert_eq!(e, refused("events", events));
    assert_eq!(e.to_string(), format!("invalid-option: events: {events}"));
    // `persistKey`: non-empty, and only with `persist` (either scope).
    let expected = "expected a non-empty string, with persist, got ";
    for (options, got) in [
        (Options::new().persist_key("k"), "\"k\" (string)"),
        (
            Options::new().persist(Scope::Local).persist_key(""),
            "\"\" (string)",
        ),
    ] {
        let e = tidings::subscribe(&url, options).err().unwrap();
        assert_eq!(e, refused("persistKey", &format!("{expected}{got}")));
    }
    let e = tidings::subscribe(&url, Options::new().last_event_id("a\nb"))
        .err()
        .unwrap();
    let lf = "expected a string without U+0000, CR or LF, got \"a\\nb\" (string)";
    assert_eq!(e, refused("lastEventId", lf));
}

/// `Error::InvalidOption` for `option` with `detail`.
fn refused(option: &str, detail: &str) -> Error {
    Error::InvalidOption {
        option: option.into(),
        detail: detail.into(),
    }
}

#[wasm_bindgen_test]
async fn resume_after_a_server_restart_loses_and_repeats_nothing() {
    let tag = unique("restart");
    let url = format!("{}/sse?t={tag}", server());
    let mut sub = tidings::subscribe(&url, Options::new().seed(7)).unwrap();
    let mut events = sub.events();
    opened(&sub).await;
    let mut ids = vec![publish(&format!("{tag} 1")).await];
    ids.push(publish(&format!("{tag} 2")).await);
    let mut got = take_tagged(&mut sub, &tag, 2).await;
    // Every stream is dropped; for 300 ms every request is refused.
    http("POST", "/_restart", r#"{"ms":300,"mode":"refuse"}"#).await;
    // Published while the client is away (it waits its backoff floor, 1 s):
    // only the resume from the cursor can bring these.
    gloo_timers::future::TimeoutFuture::new(400).await;
    ids.push(publish(&format!("{tag} 3")).await);
    ids.push(publish(&format!("{tag} 4")).await);
    got.extend(take_tagged(&mut sub, &tag, 2).await);
    ids.push(publish(&format!("{tag} 5")).await);
    got.extend(take_tagged(&mut sub, &tag, 1).await);
    let got_ids: Vec<&str> = got.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(got_ids, ids);
    // Nothing more of ours (no repeat) after a moment.
    gloo_timers::future::TimeoutFuture::new(300).await;
    while let Some(m) = within(&mut sub, 10).await {
        assert!(!m.data.contains(&tag), "repeated or extra: {m:?}");
    }
    // The reconnect was seen as such.
    let mut reopened = 0;
    while let Some(e) = within(&mut events, 10).await {
        if matches!(e, Event::Open { .. }) {
            reopened += 1;
        }
    }
    assert!(reopened >= 1, "no second open");
    assert!(sub.stats().reconnects >= 1);
}

/// The server log entries of `/sse` for `tag` that have ended.
async fn ended(tag: &str) -> usize {
    let reqs = requests("/sse", tag).await;
    reqs.iter().filter(|r| !field(r, "end").is_empty()).count()
}

/// Wait up to `ms` for the server to see `n` `/sse` streams of `tag` end.
async fn server_sees_end(tag: &str, n: usize, ms: u32) -> bool {
    let mut waited = 0;
    while waited < ms {
        if ended(tag).await >= n {
            return true;
        }
        gloo_timers::future::TimeoutFuture::new(50).await;
        waited += 50;
    }
    false
}

#[wasm_bindgen_test]
async fn dropping_the_subscription_closes_the_connection() {
    let tag = unique("drop");
    let url = format!("{}/sse?t={tag}", server());
    let sub = tidings::subscribe(&url, Options::new()).unwrap();
    opened(&sub).await;
    assert_eq!(requests("/sse", &tag).await.len(), 1);
    assert_eq!(ended(&tag).await, 0);
    drop(sub);
    assert!(
        server_sees_end(&tag, 1, 3000).await,
        "the stream never ended"
    );
}

#[wasm_bindgen_test]
async fn two_subscriptions_share_one_connection_and_dropping_one_keeps_it() {
    let tag = unique("share");
    let url = format!("{}/sse?t={tag}", server());
    let mut a = tidings::subscribe(&url, Options::new().seed(3)).unwrap();
    let mut b = tidings::subscribe(&url, Options::new().seed(3)).unwrap();
    opened(&a).await;
    // b joined an open connection: its events start with that `open`.
    opened(&b).await;
    let first = publish(&format!("{tag} 1")).await;
    assert_eq!(take_tagged(&mut a, &tag, 1).await[0].id, first);
    assert_eq!(take_tagged(&mut b, &tag, 1).await[0].id, first);
    drop(a);
    let second = publish(&format!("{tag} 2")).await;
    assert_eq!(take_tagged(&mut b, &tag, 1).await[0].id, second);
    // One request for both, still open after one of them left.
    assert_eq!(requests("/sse", &tag).await.len(), 1);
    assert_eq!(ended(&tag).await, 0);
    b.close();
    assert_eq!(b.state(), State::Closed);
    assert!(
        within(&mut b, 50).await.is_none(),
        "the stream ends at close"
    );
    assert!(
        server_sees_end(&tag, 1, 3000).await,
        "the stream never ended"
    );
}

/// The next `/sse` request of every test is answered with HTTP `status`
/// (`every`: all of them, `"times": null`) until `DELETE /_faults`.
async fn fault_sse(status: u16, every: bool) {
    let times = if every { r#""times":null,"# } else { "" };
    let rule = format!(r#"{{"path":"/sse",{times}"fault":{{"kind":"status","status":{status}}}}}"#);
    http("POST", "/_faults", &rule).await;
}

/// `fetch-sse` alone (the fault rules above answer its requests).
fn fetch_sse() -> Options {
    Options::new().transports(&[tidings::TransportKind::FetchSse])
}

/// Subscribes to `url` (a fault rule in place) and waits up to 5 s for the
/// message stream to end, then clears the faults; the subscription and its
/// events from the start.
async fn subscribe_until_it_ends(url: &str, options: Options) -> (Subscription, tidings::Events) {
    let mut sub = tidings::subscribe(url, options).unwrap();
    let events = sub.events();
    let ended = ends_within(&mut sub, 5000).await;
    http("DELETE", "/_faults", "").await;
    assert!(ended, "the message stream never ended");
    (sub, events)
}

/// Whether an event is the state change to `state`.
fn is_state(state: State) -> impl Fn(&Event) -> bool {
    move |e| matches!(e, Event::State { state: s, .. } if *s == state)
}

#[wasm_bindgen_test]
async fn a_fatal_error_is_an_event_and_ends_the_message_stream() {
    let tag = unique("fatal");
    fault_sse(404, true).await;
    let url = format!("{}/sse?t={tag}", server());
    let (sub, mut events) = subscribe_until_it_ends(&url, fetch_sse()).await;
    assert_eq!(sub.state(), State::Closed);
    let mut errors = Vec::new();
    while let Some(e) = within(&mut events, 10).await {
        if let Event::Error(e) = e {
            errors.push(e);
        }
    }
    let expected = Error::Connection {
        code: tidings::ErrorCode::HttpStatus,
        status: Some(404),
        retry_in_ms: None,
        fatal: true,
        id: None,
    };
    assert_eq!(errors, std::slice::from_ref(&expected));
    assert_eq!(expected.code(), "http-status");
    assert_eq!(expected.to_string(), "http-status (HTTP 404), stopped");
    assert_eq!(requests("/sse", &tag).await.len(), 1);
}

// ----- persist, reconnect() and the calm status in the Rust API -----

/// `sessionStorage[method](key, value)` as a string (`None` for `null`).
fn session_storage(method: &str, key: &str, value: &str) -> Option<String> {
    let f = js_sys::Function::new_with_args("m,k,v", "return sessionStorage[m](k,v)");
    let this = wasm_bindgen::JsValue::NULL;
    f.call3(&this, &method.into(), &key.into(), &value.into())
        .unwrap()
        .as_string()
}

/// The events of `events` up to and including the first that `done`
/// accepts; panics after `ms` without one (`what` says which).
async fn events_until(
    events: &mut tidings::Events,
    ms: u32,
    what: &str,
    done: impl Fn(&Event) -> bool,
) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        match within(events, ms).await {
            Some(e) => {
                let last = done(&e);
                seen.push(e);
                if last {
                    return seen;
                }
            }
            None => panic!("no {what} within {ms} ms: {seen:?}"),
        }
    }
}

#[wasm_bindgen_test]
async fn persist_writes_the_cursor_when_the_next_message_is_pulled_restores_it_and_reset_clears_it()
{
    let tag = unique("persist");
    let url = format!("{}/sse?t={tag}", server());
    let stored_at = format!("tidings:cursor:{tag}");
    let options = || {
        Options::new()
            .transports(&[tidings::TransportKind::FetchSse])
            .persist(Scope::Session)
            .persist_key(&tag)
    };
    let mut a = tidings::subscribe(&url, options()).unwrap();
    opened(&a).await;
    let one = publish(&format!("{tag} 1")).await;
    let two = publish(&format!("{tag} 2")).await;
    let got = take_tagged(&mut a, &tag, 2).await;
    assert_eq!(got[1].id, two);
    // Pulling the second message said the first was handled; the second
    // is not yet (the app may still be handling it).
    assert_eq!(session_storage("getItem", &stored_at, ""), Some(one));
    assert!(within(&mut a, 50).await.is_none());
    assert_eq!(
        session_storage("getItem", &stored_at, ""),
        Some(two.clone())
    );
    drop(a);

    // Published while nobody listens: the next subscription starts from the
    // stored cursor and gets it, once.
    let three = publish(&format!("{tag} 3")).await;
    let mut b = tidings::subscribe(&url, options()).unwrap();
    assert_eq!(b.last_event_id(), two);
    let got = take_tagged(&mut b, &tag, 1).await;
    assert_eq!(
        (got[0].id.as_str(), got[0].data.clone()),
        (three.as_str(), format!("{tag} 3"))
    );
    drop(b);

    // A stored cursor the server cannot resume from (newer than its newest
    // id): a reset, and the stored cursor goes.
    session_storage("setItem", &stored_at, "999999999999");
    let c = tidings::subscribe(&url, options()).unwrap();
    assert_eq!(c.last_event_id(), "999999999999");
    let mut events = c.events();
    events_until(&mut events, 5000, "reset", |e| {
        matches!(e, Event::Reset { .. })
    })
    .await;
    let cleared = wait_until(2000, || {
        session_storage("getItem", &stored_at, "").is_none()
    })
    .await;
    assert!(
        cleared,
        "still stored: {:?}",
        session_storage("getItem", &stored_at, "")
    );
}

/// Messages queued on the `Stream` before a server `reset` and pulled after
/// it do not write their cursor back (it is from before the gap).
#[wasm_bindgen_test]
async fn persist_pulls_of_messages_queued_before_a_reset_write_nothing() {
    let tag = unique("staleafterreset");
    let data = "id: a1\ndata: one\n\nid: a2\ndata: two\n\nevent: reset\ndata: {}\n\nid: b1\ndata: three\n\n";
    let fault = format!(
        r#"{{"path":"/sse","fault":{{"kind":"script","status":200,"content_type":"text/event-stream","writes":[{{"data":{data:?}}}],"then":"hang"}}}}"#
    );
    http("POST", "/_faults", &fault).await;
    let url = format!("{}/sse?t={tag}", server());
    let stored_at = format!("tidings:cursor:{tag}");
    let options = Options::new()
        .transports(&[tidings::TransportKind::FetchSse])
        .persist(Scope::Session)
        .persist_key(&tag);
    let mut sub = tidings::subscribe(&url, options).unwrap();
    let mut events = sub.events();
    // Nothing pulled yet: a1 and a2 wait on the stream.
    events_until(&mut events, 5000, "reset", |e| {
        matches!(e, Event::Reset { .. })
    })
    .await;
    http("DELETE", "/_faults", "").await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(within(&mut sub, 5000).await.expect("a message").id);
    }
    assert_eq!(ids, ["a1", "a2", "b1"]);
    assert_eq!(session_storage("getItem", &stored_at, ""), None);
    assert!(within(&mut sub, 50).await.is_none());
    assert_eq!(
        session_storage("getItem", &stored_at, "").as_deref(),
        Some("b1")
    );
}

#[wasm_bindgen_test]
async fn reconnect_ends_a_backoff_wait_at_once() {
    let tag = unique("reconnect");
    // One 500: a client-side backoff wait of at least 20 s follows.
    fault_sse(500, false).await;
    let url = format!("{}/sse?t={tag}", server());
    let sub = tidings::subscribe(&url, fetch_sse().backoff_floor_ms(20_000)).unwrap();
    let mut events = sub.events();
    let seen = events_until(&mut events, 5000, "waiting", is_state(State::Waiting)).await;
    http("DELETE", "/_faults", "").await;
    let Some(Event::State {
        reason, delay_ms, ..
    }) = seen.last()
    else {
        unreachable!()
    };
    assert_eq!(
        (*reason, delay_ms.is_some_and(|ms| ms >= 20_000)),
        (Reason::Backoff, true)
    );
    sub.reconnect();
    let open = is_state(State::Open);
    let seen = events_until(&mut events, 5000, "open after reconnect()", open).await;
    assert!(seen.iter().any(|e| matches!(e, Event::Open { .. })));
    let states: Vec<(State, Reason)> = seen
        .iter()
        .filter_map(|e| match e {
            Event::State { state, reason, .. } => Some((*state, *reason)),
            _ => None,
        })
        .collect();
    assert_eq!(
        states,
        [
            (State::Connecting, Reason::Reconnect),
            (State::Open, Reason::Reconnect)
        ]
    );
    assert_eq!(requests("/sse", &tag).await.len(), 2);
}

#[wasm_bindgen_test]
async fn status_is_calm_lost_after_lost_after_ms_then_connected_again() {
    let tag = unique("status");
    let url = format!("{}/sse?t={tag}", server());
    let sub = tidings::subscribe(&url, Options::new().lost_after_ms(300)).unwrap();
    assert_eq!(sub.status(), Status::Connecting);
    let mut events = sub.events();
    let is_status = |e: &Event| matches!(e, Event::Status { .. });
    let statuses = |seen: Vec<Event>| -> Vec<Status> {
        seen.into_iter()
            .filter_map(|e| match e {
                Event::Status { status, .. } => Some(status),
                _ => None,
            })
            .collect()
    };
    let seen = events_until(&mut events, 5000, "status", is_status).await;
    assert_eq!(statuses(seen), [Status::Connected]);
    assert_eq!(sub.status(), Status::Connected);
    // Down for 2.5 s (refused), far longer than lost_after_ms: lost, with the
    // reason of the state behind it, then back.
    http("POST", "/_restart", r#"{"ms":2500,"mode":"refuse"}"#).await;
    let seen = events_until(&mut events, 5000, "lost", is_status).await;
    let lost = seen.last().cloned();
    assert!(
        matches!(
            lost,
            Some(Event::Status {
                status: Status::Reconnecting,
                reason: Reason::Backoff
            })
        ),
        "{lost:?}"
    );
    assert_eq!(sub.status(), Status::Reconnecting);
    let seen = events_until(&mut events, 15_000, "back", is_status).await;
    assert_eq!(statuses(seen), [Status::Connected]);
    assert_eq!(sub.status(), Status::Connected);
    sub.close();
    assert_eq!(sub.status(), Status::Closed);
}

#[wasm_bindgen_test]
async fn reconnect_revives_a_subscription_that_gave_up_and_its_streams_go_on() {
    let tag = unique("revive");
    fault_sse(500, false).await;
    let url = format!("{}/sse?t={tag}", server());
    let options = fetch_sse().backoff_max_attempts(1);
    let (mut sub, mut events) = subscribe_until_it_ends(&url, options).await;
    assert_eq!((sub.state(), sub.status()), (State::Closed, Status::Closed));
    sub.reconnect();
    let open = is_state(State::Open);
    events_until(&mut events, 5000, "open after reconnect()", open).await;
    let back = publish(&format!("{tag} back")).await;
    assert_eq!(take_tagged(&mut sub, &tag, 1).await[0].id, back);
}

#[wasm_bindgen_test]
async fn a_headers_fn_gives_the_connection_attempt_its_headers() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let tag = unique("hf");
    let url = format!("{}/sse?t={tag}", server());
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = Rc::clone(&seen);
    let options = Options::new().headers_fn(move |ctx| {
        s.borrow_mut().push(ctx.attempt);
        async move {
            Ok(vec![(
                "Authorization".into(),
                format!("Bearer c{}", ctx.attempt),
            )])
        }
    });
    let mut sub = tidings::subscribe(&url, options).unwrap();
    opened(&sub).await;
    let id = publish(&format!("{tag} one")).await;
    let got = take_tagged(&mut sub, &tag, 1).await;
    assert_eq!(
        got.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(),
        [id.as_str()]
    );
    // One call, for the one connection attempt (its `attempt` as the JS
    // API numbers a subscription's).
    assert_eq!(seen.borrow().len(), 1);
    let first = seen.borrow()[0];
    let reqs = requests("/sse", &tag).await;
    let auth: Vec<String> = reqs
        .iter()
        .map(|e| {
            field(
                &js_sys::Reflect::get(e, &"headers".into()).unwrap(),
                "authorization",
            )
        })
        .collect();
    assert_eq!(auth, [format!("Bearer c{first}")]);
    sub.close();
}

#[wasm_bindgen_test]
async fn a_headers_fn_error_is_an_error_event_with_code_headers() {
    let tag = unique("hfe");
    let url = format!("{}/sse?t={tag}", server());
    let options = Options::new().headers_fn(|_| async { Err(String::from("no token")) });
    let sub = tidings::subscribe(&url, options).unwrap();
    let mut events = sub.events();
    let mut code = None;
    while let Some(e) = within(&mut events, 10_000).await {
        if let Event::Error(e) = e {
            code = Some(e.code());
            break;
        }
    }
    assert_eq!(code, Some("headers"));
    assert!(requests("/sse", &tag).await.is_empty());
}

/// A stream started by a POST (`method`, `body`) ends at its `end` marker:
/// every token, the marker not among them, then the stream ends; a POST
/// on `eventsource` alone is refused.
#[wasm_bindgen_test]
async fn a_post_stream_ends_at_its_end_marker() {
    let url = format!("{}/answer?n=5&cuts=", server());
    let options = Options::new()
        .method("POST")
        .body(r#"{"prompt":"hi"}"#)
        .end_data("[DONE]");
    let mut sub = tidings::subscribe(&url, options).unwrap();
    let mut got = Vec::new();
    while let Some(m) = within(&mut sub, 5000).await {
        got.push(m.data);
    }
    assert_eq!(got, ["t1", "t2", "t3", "t4", "t5"]);
    assert_eq!(sub.state(), State::Closed);
    let refused = Options::new()
        .method("POST")
        .transports(&[tidings::TransportKind::EventSource]);
    let e = tidings::subscribe(&url, refused).err();
    assert!(
        matches!(&e, Some(Error::InvalidOption { option, .. }) if option == "transports"),
        "{e:?}"
    );
}
