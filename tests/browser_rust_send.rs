//! Browser tests of the Rust API's `tidings::send` (features `rust` and
//! `send`) in headless Chromium via `wasm-pack test`, cross-origin to the
//! reference server's `POST /send` (`TIDINGS_TEST_SERVER`): a `headers`
//! function per attempt, the JS API's refusals and error codes as typed
//! errors, and an `AbortSignal` ending a send in flight.
#![cfg(all(target_arch = "wasm32", feature = "rust", feature = "send"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::cell::RefCell;
use std::rc::Rc;

use tidings::{Error, ErrorCode, SendError, SendOptions};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

mod support;
use support::*;

fn unique(prefix: &str) -> String {
    format!("{prefix}{}", (js_sys::Math::random() * 1e12) as u64)
}

/// `POST /_faults` with a JSON rule (the server reads JSON only).
async fn fault(rule: &str) {
    let f = js_sys::Function::new_with_args(
        "u,b",
        "return fetch(u,{method:'POST',headers:{'content-type':'application/json'},body:b}).then(r=>r.status)",
    );
    let url = format!("{}/_faults", server());
    let p = f.call2(&JsValue::NULL, &url.into(), &rule.into()).unwrap();
    let status = JsFuture::from(js_sys::Promise::from(p)).await.unwrap();
    assert_eq!(status.as_f64(), Some(200.0), "fault {rule}");
}

async fn clear_faults() {
    http("DELETE", "/_faults", "").await;
}

/// The server log's `POST /send` entries carrying idempotency key `key`
/// (sent as an RFC 8941 sf-string: quoted).
async fn sends_with_key(key: &str) -> Vec<JsValue> {
    let quoted = format!("\"{key}\"");
    let log = http("GET", "/_log", "").await;
    let entries =
        js_sys::Reflect::get(&js_sys::JSON::parse(&log).unwrap(), &"entries".into()).unwrap();
    js_sys::Array::from(&entries)
        .iter()
        .filter(|e| {
            let h = js_sys::Reflect::get(e, &"headers".into()).unwrap();
            field(e, "method") == "POST" && field(&h, "idempotency-key") == quoted
        })
        .collect()
}

#[wasm_bindgen_test]
async fn headers_fn_runs_before_every_attempt_and_a_503_is_retried_with_the_same_key() {
    clear_faults().await;
    fault(r#"{"path":"/send","times":1,"fault":{"kind":"status","status":503}}"#).await;
    let key = unique("k");
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = Rc::clone(&seen);
    let options = SendOptions::new()
        .idempotency_key(&key)
        .header("Authorization", "ignored: headers_fn replaces it")
        .headers_fn(move |ctx| {
            s.borrow_mut().push((ctx.url.clone(), ctx.attempt));
            async move {
                Ok(vec![(
                    "Authorization".into(),
                    format!("Bearer t{}", ctx.attempt),
                )])
            }
        });
    let url = format!("{}/send", server());
    let r = tidings::send(&url, Some("{\"n\":1}"), options)
        .await
        .unwrap();
    assert_eq!((r.status, r.attempts, r.replayed), (201, 2, false));
    assert!(r.body.contains(&key), "{}", r.body);
    assert_eq!(*seen.borrow(), vec![(url.clone(), 1), (url, 2)]);
    let auth: Vec<String> = sends_with_key(&key)
        .await
        .iter()
        .map(|e| {
            field(
                &js_sys::Reflect::get(e, &"headers".into()).unwrap(),
                "authorization",
            )
        })
        .collect();
    assert_eq!(auth, ["Bearer t1", "Bearer t2"]);
}

#[wasm_bindgen_test]
async fn refusals_are_the_js_apis_and_nothing_is_sent() {
    let key = unique("bad");
    let url = format!("{}/send", server());
    let options = SendOptions::new().idempotency_key(&key).max_attempts(0);
    let e = tidings::send(&url, None, options).await.unwrap_err();
    assert_eq!(e.code(), "invalid-option");
    match e {
        SendError::Invalid(Error::InvalidOption { option, .. }) => {
            assert_eq!(option, "maxAttempts")
        }
        e => panic!("{e:?}"),
    }
    let e = tidings::send("ftp://x/send", None, SendOptions::new())
        .await
        .unwrap_err();
    assert!(matches!(e, SendError::Invalid(Error::InvalidUrl)), "{e:?}");
    let options = SendOptions::new().idempotency_key(&key).method("TRACE");
    let e = tidings::send(&url, None, options).await.unwrap_err();
    assert_eq!(e.code(), "invalid-option");
    assert!(sends_with_key(&key).await.is_empty());
}

#[wasm_bindgen_test]
async fn a_permanent_answer_fails_at_once_with_its_code_and_status() {
    clear_faults().await;
    fault(r#"{"path":"/send","times":1,"fault":{"kind":"status","status":400}}"#).await;
    let url = format!("{}/send", server());
    let e = tidings::send(&url, Some("x"), SendOptions::new())
        .await
        .unwrap_err();
    match e {
        SendError::Failed {
            code,
            status,
            attempts,
        } => assert_eq!(
            (code, status, attempts),
            (ErrorCode::HttpStatus, Some(400), 1)
        ),
        e => panic!("{e:?}"),
    }
    clear_faults().await;
}

#[wasm_bindgen_test]
async fn a_headers_fn_error_fails_the_send_with_code_headers_before_anything_is_sent() {
    let key = unique("h");
    let options = SendOptions::new()
        .idempotency_key(&key)
        .headers_fn(|_| async { Err(String::from("no token")) });
    let url = format!("{}/send", server());
    let e = tidings::send(&url, Some("x"), options).await.unwrap_err();
    assert_eq!(e.code(), "headers");
    match &e {
        SendError::Headers { attempts, cause } => {
            assert_eq!(*attempts, 1);
            assert!(cause.contains("no token"), "{cause}");
        }
        e => panic!("{e:?}"),
    }
    assert!(sends_with_key(&key).await.is_empty());
}

#[wasm_bindgen_test]
async fn aborting_the_signal_ends_a_send_in_flight() {
    clear_faults().await;
    fault(r#"{"path":"/send","times":1,"fault":{"kind":"delay","ms":5000}}"#).await;
    let controller = web_sys::AbortController::new().unwrap();
    let options = SendOptions::new().signal(&controller.signal());
    let url = format!("{}/send", server());
    let started = js_sys::Date::now();
    let out = Rc::new(RefCell::new(None));
    let o = Rc::clone(&out);
    wasm_bindgen_futures::spawn_local(async move {
        *o.borrow_mut() = Some(tidings::send(&url, Some("x"), options).await);
    });
    gloo_timers::future::TimeoutFuture::new(300).await;
    controller.abort();
    assert!(wait_until(2000, || out.borrow().is_some()).await);
    // Well before the 5 s delay, and no retry after it.
    assert!(js_sys::Date::now() - started < 2500.0);
    let r = out.borrow_mut().take().unwrap();
    let e = r.unwrap_err();
    assert_eq!(e.code(), "abort");
    match e {
        SendError::Aborted(reason) => assert_eq!(field(&reason, "name"), "AbortError"),
        e => panic!("{e:?}"),
    }
    clear_faults().await;
}

/// The bodies `GET /_send` says were applied that contain `tag`.
async fn applied_with(tag: &str) -> Vec<String> {
    let v = js_sys::JSON::parse(&http("GET", "/_send", "").await).unwrap();
    let applied = js_sys::Reflect::get(&v, &"applied".into()).unwrap();
    js_sys::Array::from(&applied)
        .iter()
        .map(|a| field(&a, "body"))
        .filter(|b| b.contains(tag))
        .collect()
}

#[cfg(feature = "report")]
#[wasm_bindgen_test]
async fn report_sends_each_body_its_task_gives_and_stop_ends_it() {
    use tidings::{ReportOptions, State};
    let tag = unique("rep");
    let calls = Rc::new(RefCell::new(0u32));
    let c = Rc::clone(&calls);
    let t = tag.clone();
    let send = SendOptions::new().headers_fn(|ctx| async move {
        Ok(vec![(
            "Authorization".into(),
            format!("Bearer r{}", ctx.attempt),
        )])
    });
    let options = ReportOptions::new()
        .startup_jitter_ms(0)
        .interval_initial_ms(200)
        .interval_min_ms(100)
        .send(send);
    let url = format!("{}/send", server());
    let reporter = tidings::report(
        &url,
        move || {
            *c.borrow_mut() += 1;
            let body = format!("{{\"tag\":\"{t}\",\"n\":{}}}", c.borrow());
            async move { Some(body) }
        },
        options,
    )
    .unwrap();
    let mut bodies = Vec::new();
    for _ in 0..100 {
        bodies = applied_with(&tag).await;
        if bodies.len() >= 2 {
            break;
        }
        gloo_timers::future::TimeoutFuture::new(50).await;
    }
    assert_eq!(
        bodies.get(..2).map(<[String]>::to_vec),
        Some(vec![
            format!("{{\"tag\":\"{tag}\",\"n\":1}}"),
            format!("{{\"tag\":\"{tag}\",\"n\":2}}"),
        ])
    );
    assert!(reporter.stats().delivered >= 2);
    reporter.stop();
    assert_eq!(reporter.state(), State::Closed);
    let at_stop = applied_with(&tag).await.len();
    // Ten intervals with the handle (and its task) alive: a reporter still
    // running would add reports.
    gloo_timers::future::TimeoutFuture::new(2000).await;
    let n = applied_with(&tag).await.len();
    assert!(n <= at_stop + 1, "{at_stop} at stop, {n} after");
    drop(reporter);
    assert!(n <= *calls.borrow() as usize);
}

#[cfg(feature = "report")]
#[wasm_bindgen_test]
async fn report_refuses_a_send_only_option_as_js_does() {
    use tidings::ReportOptions;
    let options = ReportOptions::new().send(SendOptions::new().ordered(true));
    let e = tidings::report("/send", || async { None }, options)
        .err()
        .unwrap();
    match e {
        Error::InvalidOption { option, .. } => assert_eq!(option, "ordered"),
        e => panic!("{e:?}"),
    }
}

#[cfg(feature = "append")]
#[wasm_bindgen_test]
async fn appender_refusals_and_a_failed_batch_are_typed_with_the_js_codes() {
    use tidings::{AppendError, AppendFailure, AppenderOptions};
    let e = tidings::appender("/s", AppenderOptions::new().producer_id(""))
        .err()
        .unwrap();
    match e {
        Error::InvalidOption { option, .. } => assert_eq!(option, "producerId"),
        e => panic!("{e:?}"),
    }
    // The reference server is no Durable Streams server, and cross-origin
    // its CORS refuses the producer headers: one failed attempt, then
    // `gave-up`, which every later append gets too.
    let url = format!("{}/send", server());
    let options = AppenderOptions::new()
        .producer_id("p1")
        .send(SendOptions::new().max_attempts(1));
    let a = tidings::appender(&url, options).unwrap();
    assert_eq!((a.producer_id().as_str(), a.epoch()), ("p1", 0));
    match a.append_json("not json").await {
        Err(AppendFailure::Invalid(Error::InvalidOption { option, .. })) => {
            assert_eq!(option, "value")
        }
        r => panic!("{r:?}"),
    }
    let gave_up = AppendError::Send {
        code: ErrorCode::GaveUp,
        status: None,
    };
    match a.append_json(r#"{"n":1}"#).await {
        Err(AppendFailure::Failed(e)) => assert_eq!(e, gave_up),
        r => panic!("{r:?}"),
    }
    let later = a.append_json("2").await.unwrap_err();
    assert_eq!(later.code(), "gave-up");
}
