//! Browser tests of the streaming transports (headless Chromium via
//! `wasm-pack test`, cross-origin to the reference server started by
//! `make test`), using the server's fault injection (`POST /_faults`) and its
//! request log (`GET /_log`).
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
async fn headers_function_is_called_before_every_request_and_refreshes_once_on_401() {
    let tag = format!("auth{}", (js_sys::Math::random() * 1e9) as u64);
    http(
        "POST",
        "/_faults",
        r#"{"path":"/sse","times":null,"fault":{"kind":"auth","token":"fresh"}}"#,
    )
    .await;
    // The app's function: a stale token first; a fresh one when asked with
    // { status: 401 }. It records every context it was called with.
    let calls: Rc<RefCell<Vec<String>>> = Rc::default();
    let c = calls.clone();
    let headers_fn = Closure::<dyn FnMut(JsValue) -> JsValue>::new(move |ctx: JsValue| {
        let status = field(&ctx, "status");
        c.borrow_mut()
            .push(format!("{}:{status}", field(&ctx, "transport")));
        let token = if status == "401" { "fresh" } else { "stale" };
        let h = js_sys::Object::new();
        js_sys::Reflect::set(
            &h,
            &"Authorization".into(),
            &format!("Bearer {token}").into(),
        )
        .unwrap();
        js_sys::Promise::resolve(&h).into()
    });
    let options = js_sys::Object::new();
    js_sys::Reflect::set(&options, &"headers".into(), headers_fn.as_ref()).unwrap();
    js_sys::Reflect::set(&options, &"seed".into(), &1.into()).unwrap();
    let sub =
        tidings::api::subscribe(&format!("{}/sse?t={tag}", server()), options.into()).unwrap();

    let opened = Rc::new(RefCell::new(false));
    let o = opened.clone();
    let on_open = Closure::<dyn FnMut(JsValue)>::new(move |_| *o.borrow_mut() = true);
    sub.add_event_listener("open", on_open.as_ref().clone(), JsValue::UNDEFINED)
        .unwrap();
    assert!(
        wait_until(5000, || *opened.borrow()).await,
        "never opened; calls {:?}",
        calls.borrow()
    );
    // `headers` rules out eventsource: the first transport is fetch-sse.
    assert_eq!(sub.transport(), "fetch-sse");
    assert_eq!(*calls.borrow(), ["fetch-sse:", "fetch-sse:401"]);
    sub.close();
    http("DELETE", "/_faults", "").await;

    let reqs = requests("/sse", &tag).await;
    let auth: Vec<(String, String)> = reqs
        .iter()
        .map(|r| {
            let h = js_sys::Reflect::get(r, &"headers".into()).unwrap();
            (field(r, "status"), field(&h, "authorization"))
        })
        .collect();
    assert_eq!(
        auth,
        [
            ("401".to_string(), "Bearer stale".to_string()),
            ("200".to_string(), "Bearer fresh".to_string())
        ]
    );
}

#[wasm_bindgen_test]
async fn a_second_401_after_the_refresh_stops_with_a_fatal_auth_error() {
    let tag = format!("auth2{}", (js_sys::Math::random() * 1e9) as u64);
    http(
        "POST",
        "/_faults",
        r#"{"path":"/sse","times":null,"fault":{"kind":"auth","token":"never-given"}}"#,
    )
    .await;
    let options =
        js_sys::JSON::parse(r#"{"headers":{"Authorization":"Bearer nope"},"seed":1}"#).unwrap();
    let sub = tidings::api::subscribe(&format!("{}/sse?t={tag}", server()), options).unwrap();
    let errors: Rc<RefCell<Vec<(String, String, String)>>> = Rc::default();
    let e2 = errors.clone();
    let on_error = Closure::<dyn FnMut(JsValue)>::new(move |e: JsValue| {
        e2.borrow_mut()
            .push((field(&e, "code"), field(&e, "status"), field(&e, "fatal")));
    });
    sub.add_event_listener("error", on_error.as_ref().clone(), JsValue::UNDEFINED)
        .unwrap();
    let fatal_seen = wait_until(5000, || errors.borrow().iter().any(|e| e.2 == "true")).await;
    let seen = errors.borrow().clone();
    assert!(fatal_seen, "errors {seen:?}");
    gloo_timers::future::TimeoutFuture::new(1500).await;
    http("DELETE", "/_faults", "").await;
    let fatal: Vec<_> = errors
        .borrow()
        .iter()
        .filter(|e| e.2 == "true")
        .cloned()
        .collect();
    assert_eq!(
        fatal,
        [("auth".to_string(), "401".to_string(), "true".to_string())]
    );
    assert_eq!(sub.state(), "closed");
    // Exactly the first request and the one retry: no loop.
    assert_eq!(requests("/sse", &tag).await.len(), 2);
}
