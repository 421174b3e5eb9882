//! Browser test (wasm-bindgen-test, headless Chromium via `wasm-pack test`):
//! subscribe to the reference server over native EventSource, receive what is
//! published in order with ids, and stop receiving after `close()`.
//!
//! The test page is served by the test runner, so this run is cross-origin to
//! the reference server (CORS). `make test` starts the server on a free port
//! and passes its URL at compile time in `TIDINGS_TEST_SERVER`.
#![cfg(all(target_arch = "wasm32", feature = "js"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

mod support;
use support::*;

#[wasm_bindgen_test]
async fn publish_three_receive_in_order_then_close_stops_delivery() {
    let tag = format!("skeleton-{}", js_sys::Math::random());
    let got: Rc<RefCell<Vec<(String, String, String)>>> = Rc::default();
    let opened = Rc::new(RefCell::new(false));

    let url = format!("{}/sse?test={tag}", server());
    let sub = tidings::api::subscribe(&url, JsValue::UNDEFINED).unwrap();
    let g = got.clone();
    let t = tag.clone();
    let on_message = Closure::<dyn FnMut(JsValue)>::new(move |e: JsValue| {
        let data = field(&e, "data");
        if data.starts_with(&t) {
            g.borrow_mut()
                .push((field(&e, "id"), field(&e, "lastEventId"), data));
        }
    });
    let o = opened.clone();
    let on_open = Closure::<dyn FnMut(JsValue)>::new(move |_| *o.borrow_mut() = true);
    sub.add_event_listener("message", on_message.as_ref().clone(), JsValue::UNDEFINED)
        .unwrap();
    sub.add_event_listener("open", on_open.as_ref().clone(), JsValue::UNDEFINED)
        .unwrap();

    assert!(
        wait_until(5000, || *opened.borrow()).await,
        "stream never opened"
    );
    let mut ids = Vec::new();
    for i in 1..=3 {
        ids.push(publish(&format!("{tag} #{i}")).await);
    }
    assert!(
        wait_until(5000, || got.borrow().len() == 3).await,
        "got {:?}",
        got.borrow()
    );
    let expected: Vec<(String, String, String)> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.clone(), id.clone(), format!("{tag} #{}", i + 1)))
        .collect();
    assert_eq!(*got.borrow(), expected);
    assert_eq!(sub.last_event_id(), ids[2]);

    sub.close();
    publish(&format!("{tag} #4")).await;
    publish(&format!("{tag} #5")).await;
    gloo_timers::future::TimeoutFuture::new(1000).await;
    assert_eq!(got.borrow().len(), 3, "a closed subscription delivered");

    // The server saw our stream end: in its request log, the /sse request
    // made from this page has an end ("dropped": the client went away).
    let log = http("GET", "/_log", "").await;
    let parsed = js_sys::JSON::parse(&log).unwrap();
    let entries = js_sys::Reflect::get(&parsed, &"entries".into()).unwrap();
    let ours: Vec<JsValue> = js_sys::Array::from(&entries)
        .iter()
        .filter(|e| field(e, "path") == "/sse" && field(e, "query").contains(&tag))
        .collect();
    assert_eq!(ours.len(), 1, "one /sse request expected: {log}");
    assert_eq!(
        field(&ours[0], "end"),
        "dropped",
        "stream not closed: {log}"
    );
}

#[wasm_bindgen_test]
fn invalid_urls_throw_invalid_url() {
    for url in [
        "ftp://example.com/x",
        "javascript:alert(1)",
        "data:text/plain,x",
        "",
        "   ",
        "http://",
    ] {
        let err = match tidings::api::subscribe(url, JsValue::UNDEFINED) {
            Ok(_) => panic!("{url} was accepted"),
            Err(e) => e,
        };
        assert_eq!(field(&err, "code"), "invalid-url", "{url}");
    }
}

/// Subscribe with `options` (a JS object literal) and collect messages whose
/// data starts with `tag`, as (id, lastEventId, data, transport).
type Got = Rc<RefCell<Vec<(String, String, String, String)>>>;

fn collect(sub: &tidings::api::Subscription, tag: &str) -> (Got, Closure<dyn FnMut(JsValue)>) {
    let got: Got = Rc::default();
    let g = got.clone();
    let t = tag.to_string();
    let f = Closure::<dyn FnMut(JsValue)>::new(move |e: JsValue| {
        let data = field(&e, "data");
        if data.starts_with(&t) {
            g.borrow_mut().push((
                field(&e, "id"),
                field(&e, "lastEventId"),
                data,
                field(&e, "transport"),
            ));
        }
    });
    sub.add_event_listener("message", f.as_ref().clone(), JsValue::UNDEFINED)
        .unwrap();
    (got, f)
}

#[wasm_bindgen_test]
async fn fetch_sse_delivers_in_order_and_resumes_from_the_cursor() {
    let tag = format!("fsse-{}", js_sys::Math::random());
    let first = publish(&format!("{tag} #1")).await;
    publish(&format!("{tag} #2")).await;
    publish(&format!("{tag} #3")).await;

    // Resume from #1: the server replays #2 and #3 (cross-origin, so the
    // cursor travels as the `lastEventId` query parameter), then live #4.
    let options = js_sys::JSON::parse(&format!(
        r#"{{"transports":["fetch-sse"],"lastEventId":"{first}","seed":7}}"#
    ))
    .unwrap();
    let sub = tidings::api::subscribe(&format!("{}/sse", server()), options).unwrap();
    let (got, _keep) = collect(&sub, &tag);
    assert!(
        wait_until(5000, || got.borrow().len() == 2).await,
        "replay: {:?}",
        got.borrow()
    );
    let fourth = publish(&format!("{tag} #4")).await;
    assert!(
        wait_until(5000, || got.borrow().len() == 3).await,
        "live: {:?}",
        got.borrow()
    );
    let datas: Vec<String> = got.borrow().iter().map(|m| m.2.clone()).collect();
    assert_eq!(datas, [2, 3, 4].map(|i| format!("{tag} #{i}")));
    assert!(got
        .borrow()
        .iter()
        .all(|m| m.3 == "fetch-sse" && m.0 == m.1));
    assert_eq!(got.borrow()[2].0, fourth);
    assert_eq!(sub.transport(), "fetch-sse");
    assert_eq!(sub.last_event_id(), fourth);
    sub.close();

    let log = http("GET", "/_log", "").await;
    let needle = format!("lastEventId={first}");
    assert!(log.contains(&needle), "cursor not in the query: {log}");
}

#[wasm_bindgen_test]
async fn two_subscriptions_with_the_same_options_share_one_connection() {
    let tag = format!("shared-{}", js_sys::Math::random());
    http("POST", "/_log/clear", "").await;
    let url = format!("{}/sse?share={tag}", server());
    let a = tidings::api::subscribe(&url, JsValue::UNDEFINED).unwrap();
    let b = tidings::api::subscribe(&url, JsValue::UNDEFINED).unwrap();
    let (got_a, _ka) = collect(&a, &tag);
    let (got_b, _kb) = collect(&b, &tag);
    gloo_timers::future::TimeoutFuture::new(300).await;
    publish(&format!("{tag} x")).await;
    assert!(
        wait_until(5000, || got_a.borrow().len() == 1
            && got_b.borrow().len() == 1)
        .await
    );
    let log = http("GET", "/_log", "").await;
    assert_eq!(log.matches(&tag).count(), 1, "one request expected: {log}");
    a.close();
    // b still receives after a closed.
    publish(&format!("{tag} y")).await;
    assert!(wait_until(5000, || got_b.borrow().len() == 2).await);
    assert_eq!(got_a.borrow().len(), 1);
    b.close();
}

type Strings = Rc<RefCell<Vec<String>>>;

/// Collect every event of `kind` as its `code` (errors) or `transport` (open).
fn record(
    sub: &tidings::api::Subscription,
    kind: &str,
    key: &'static str,
) -> (Strings, Closure<dyn FnMut(JsValue)>) {
    let got: Rc<RefCell<Vec<String>>> = Rc::default();
    let g = got.clone();
    let f =
        Closure::<dyn FnMut(JsValue)>::new(move |e: JsValue| g.borrow_mut().push(field(&e, key)));
    sub.add_event_listener(kind, f.as_ref().clone(), JsValue::UNDEFINED)
        .unwrap();
    (got, f)
}

#[wasm_bindgen_test]
async fn a_fatal_error_at_start_reaches_listeners_added_after_subscribe() {
    // `headers` rule out the only transport listed: the engine stops at start.
    let options =
        js_sys::JSON::parse(r#"{"transports":["eventsource"],"headers":{"x-a":"1"}}"#).unwrap();
    let sub = tidings::api::subscribe("/sse", options).unwrap();
    let (codes, _k) = record(&sub, "error", "code");
    assert!(wait_until(2000, || !codes.borrow().is_empty()).await);
    assert_eq!(*codes.borrow(), ["gave-up"]);
    assert_eq!(sub.state(), "closed");
    // It never chose a transport.
    assert_eq!(sub.transport(), "");
}

#[wasm_bindgen_test]
async fn a_stopped_shared_connection_is_not_reused() {
    let tag = format!("dead-{}", js_sys::Math::random());
    let url = format!("{}/nothing-here?t={tag}", server());
    let options = js_sys::JSON::parse(r#"{"transports":["fetch-sse"]}"#).unwrap();
    let a = tidings::api::subscribe(&url, options.clone()).unwrap();
    let (codes_a, _ka) = record(&a, "error", "code");
    assert!(wait_until(3000, || !codes_a.borrow().is_empty()).await);
    assert_eq!(*codes_a.borrow(), ["http-status"]); // 404: permanent
    let b = tidings::api::subscribe(&url, options).unwrap();
    let (codes_b, _kb) = record(&b, "error", "code");
    assert!(
        wait_until(3000, || !codes_b.borrow().is_empty()).await,
        "the second subscription never tried"
    );
    let log = http("GET", "/_log", "").await;
    assert_eq!(log.matches(&tag).count(), 2, "two requests expected: {log}");
}

#[wasm_bindgen_test]
async fn a_subscription_joining_an_open_connection_gets_open() {
    let url = format!("{}/sse?t=join-{}", server(), js_sys::Math::random());
    let a = tidings::api::subscribe(&url, JsValue::UNDEFINED).unwrap();
    let (open_a, _ka) = record(&a, "open", "transport");
    assert!(wait_until(5000, || !open_a.borrow().is_empty()).await);
    let b = tidings::api::subscribe(&url, JsValue::UNDEFINED).unwrap();
    let (open_b, _kb) = record(&b, "open", "transport");
    assert!(
        wait_until(2000, || !open_b.borrow().is_empty()).await,
        "late joiner got no open"
    );
    assert_eq!(*open_b.borrow(), ["eventsource"]);
    a.close();
    b.close();
}
