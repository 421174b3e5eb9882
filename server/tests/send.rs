//! `POST /send` and its idempotency store (draft-ietf-httpapi-idempotency-
//! key-header §2.6, §2.7), `GET /_send`, and the `drop-response` fault.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::time::Duration;

use common::*;
use reqwest::Method;
use serde_json::{json, Value};

/// `POST {url}{path}` with `Idempotency-Key: "<key>"` (none when `key` is
/// None) and `body`; Err on a network error.
async fn send_keyed(
    url: &str,
    path: &str,
    key: Option<&str>,
    body: &str,
) -> reqwest::Result<reqwest::Response> {
    let quoted = key.map(|k| format!("\"{k}\""));
    let headers: Vec<(&str, &str)> = quoted
        .as_deref()
        .map(|q| vec![("Idempotency-Key", q)])
        .unwrap_or_default();
    request(Method::POST, url, path, &headers)
        .body(body.to_string())
        .send()
        .await
}

/// Status, `Idempotent-Replayed` header and JSON body of a send.
async fn answer(r: reqwest::Response) -> (u16, Option<String>, Value) {
    let status = r.status().as_u16();
    let replayed = r
        .headers()
        .get("idempotent-replayed")
        .map(|v| v.to_str().unwrap().to_string());
    (status, replayed, r.json().await.unwrap())
}

/// The applied list as (key, body) pairs, in apply order, after checking
/// that the sequence numbers count from 1.
async fn applied(url: &str) -> Vec<(String, String)> {
    let v = send_json(request(Method::GET, url, "/_send", &[])).await;
    let list = v["applied"].as_array().unwrap();
    for (i, a) in list.iter().enumerate() {
        assert_eq!(a["seq"], json!(i + 1), "{v}");
    }
    list.iter()
        .map(|a| {
            let s = |f: &str| a[f].as_str().unwrap().to_string();
            (s("key"), s("body"))
        })
        .collect()
}

fn pair(k: &str, b: &str) -> (String, String) {
    (k.to_string(), b.to_string())
}

#[tokio::test]
async fn first_send_applies_then_a_repeat_replays_the_stored_answer() {
    let (srv, url) = start().await;
    let r = send_keyed(&url, "/send", Some("k-1"), "hello")
        .await
        .unwrap();
    assert_eq!(r.headers()["content-type"], "application/json");
    assert_eq!(
        answer(r).await,
        (201, None, json!({"seq": 1, "key": "k-1"}))
    );
    for _ in 0..2 {
        let r = send_keyed(&url, "/send", Some("k-1"), "hello")
            .await
            .unwrap();
        assert_eq!(
            answer(r).await,
            (201, Some("true".into()), json!({"seq": 1, "key": "k-1"}))
        );
    }
    let r = send_keyed(&url, "/send", Some("k-2"), "hello")
        .await
        .unwrap();
    assert_eq!(
        answer(r).await,
        (201, None, json!({"seq": 2, "key": "k-2"}))
    );
    assert_eq!(
        applied(&url).await,
        vec![pair("k-1", "hello"), pair("k-2", "hello")]
    );
    srv.shutdown().await;
}

#[tokio::test]
async fn a_repeat_while_the_first_is_applied_gets_409_then_the_replay() {
    let (srv, url) = start().await;
    let u = url.clone();
    let first =
        tokio::spawn(async move { send_keyed(&u, "/send?delay_ms=2000", Some("k"), "a").await });
    // Wait until the first is in flight (the store says so), not a sleep.
    wait_for(&url, |v| v["in_flight"] == 1).await;
    let r = send_keyed(&url, "/send", Some("k"), "a").await.unwrap();
    // At most 2000 ms of the hold are left, rounded up to seconds.
    let left: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=2).contains(&left), "{left}");
    let (status, replayed, body) = answer(r).await;
    assert_eq!((status, replayed), (409, None));
    assert!(body["error"]
        .as_str()
        .unwrap()
        .contains("still being applied"));
    // A different body is a client bug even while in flight: 422.
    let r = send_keyed(&url, "/send", Some("k"), "b").await.unwrap();
    assert_eq!(r.status(), 422);
    let (status, _, _) = answer(first.await.unwrap().unwrap()).await;
    assert_eq!(status, 201);
    let r = send_keyed(&url, "/send", Some("k"), "a").await.unwrap();
    assert_eq!(
        answer(r).await,
        (201, Some("true".into()), json!({"seq": 1, "key": "k"}))
    );
    assert_eq!(applied(&url).await, vec![pair("k", "a")]);
    srv.shutdown().await;
}

/// Polls `GET /_send` until `ok` holds (at most 5 s).
async fn wait_for(url: &str, ok: impl Fn(&Value) -> bool) {
    for _ in 0..500 {
        let v = send_json(request(Method::GET, url, "/_send", &[])).await;
        if ok(&v) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("/_send never reached the state");
}

#[tokio::test]
async fn the_same_key_with_a_different_body_gets_422_and_applies_nothing() {
    let (srv, url) = start().await;
    send_keyed(&url, "/send", Some("k"), "a").await.unwrap();
    let r = send_keyed(&url, "/send", Some("k"), "a, edited")
        .await
        .unwrap();
    let (status, replayed, body) = answer(r).await;
    assert_eq!((status, replayed), (422, None));
    assert!(body["error"].as_str().unwrap().contains("different body"));
    assert_eq!(applied(&url).await, vec![pair("k", "a")]);
    srv.shutdown().await;
}

#[tokio::test]
async fn no_key_or_a_key_that_is_not_an_sf_string_gets_400() {
    let (srv, url) = start().await;
    let r = send_keyed(&url, "/send", None, "a").await.unwrap();
    let (status, _, body) = answer(r).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"], "missing idempotency-key header");
    // A bare token (as some servers accept), no closing quote, an empty
    // key, a list (non-ASCII bytes: the parser's unit test).
    for bad in ["abc", "\"abc", "\"\"", "\"a\", \"b\""] {
        let r = request(Method::POST, &url, "/send", &[("Idempotency-Key", bad)])
            .body("a")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400, "{bad}");
    }
    let two = client()
        .post(format!("{url}/send"))
        .header("Idempotency-Key", "\"a\"")
        .header("Idempotency-Key", "\"b\"")
        .body("a")
        .send()
        .await
        .unwrap();
    let (status, _, body) = answer(two).await;
    assert_eq!(status, 400);
    assert!(body["error"].as_str().unwrap().contains("more than one"));
    // Escapes and parameters: the key is the unescaped string.
    let r = request(
        Method::POST,
        &url,
        "/send",
        &[("Idempotency-Key", r#" "a\"b\\c";v=1 "#)],
    )
    .body("a")
    .send()
    .await
    .unwrap();
    assert_eq!(answer(r).await.2["key"], r#"a"b\c"#);
    assert_eq!(applied(&url).await, vec![pair(r#"a"b\c"#, "a")]);
    srv.shutdown().await;
}

#[tokio::test]
async fn key_header_names_the_header_the_key_comes_in() {
    let (srv, url) = start().await;
    let path = "/send?key_header=X-Idempotency-Key";
    // The default header does not count then.
    let r = send_keyed(&url, path, Some("k"), "a").await.unwrap();
    assert_eq!(r.status(), 400);
    let r = request(Method::POST, &url, path, &[("X-Idempotency-Key", "\"k\"")])
        .body("a")
        .send()
        .await
        .unwrap();
    assert_eq!(answer(r).await, (201, None, json!({"seq": 1, "key": "k"})));
    // The log records both key headers as sent (the e2e tests read them).
    let log = send_json(request(Method::GET, &url, "/_log?path=/send", &[])).await;
    let headers: Vec<&Value> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["headers"])
        .collect();
    assert_eq!(headers[0]["idempotency-key"], "\"k\"");
    assert_eq!(headers[1]["x-idempotency-key"], "\"k\"");
    srv.shutdown().await;
}

#[tokio::test]
async fn the_store_survives_a_restart_that_loses_the_events() {
    let (srv, url) = start().await;
    publish(&url, "e").await;
    send_keyed(&url, "/send", Some("k"), "a").await.unwrap();
    let r = post(&url, "/_restart?ms=0&lose_state=1").await;
    assert_eq!(r.status(), 200);
    // The events are gone (ids count from 1 again)...
    assert_eq!(publish(&url, "f").await, "1");
    // ...the idempotency store is not.
    let r = send_keyed(&url, "/send", Some("k"), "a").await.unwrap();
    assert_eq!(
        answer(r).await,
        (201, Some("true".into()), json!({"seq": 1, "key": "k"}))
    );
    let r = send_keyed(&url, "/send", Some("k"), "b").await.unwrap();
    assert_eq!(r.status(), 422);
    assert_eq!(applied(&url).await, vec![pair("k", "a")]);
    srv.shutdown().await;
}

#[tokio::test]
async fn a_connection_cut_during_the_apply_still_applies_once() {
    let (srv, url) = start().await;
    // The client gives up while the apply is held: its connection closes.
    let u = url.clone();
    let first =
        tokio::spawn(async move { send_keyed(&u, "/send?delay_ms=1000", Some("k"), "a").await });
    wait_for(&url, |v| v["in_flight"] == 1).await;
    first.abort();
    assert!(first.await.unwrap_err().is_cancelled());
    assert!(applied(&url).await.is_empty(), "still held");
    wait_for(&url, |v| v["in_flight"] == 0).await;
    let r = send_keyed(&url, "/send", Some("k"), "a").await.unwrap();
    assert_eq!(
        answer(r).await,
        (201, Some("true".into()), json!({"seq": 1, "key": "k"}))
    );
    assert_eq!(applied(&url).await, vec![pair("k", "a")]);
    srv.shutdown().await;
}

#[tokio::test]
async fn drop_response_applies_then_cuts_the_connection_and_the_retry_replays() {
    let (srv, url) =
        start_faulted(json!({"path": "/send", "fault": {"kind": "drop-response"}})).await;
    let err = send_keyed(&url, "/send", Some("k"), "a").await.unwrap_err();
    assert!(!err.is_status() && !err.is_timeout(), "{err:?}");
    assert_eq!(applied(&url).await, vec![pair("k", "a")]);
    let r = send_keyed(&url, "/send", Some("k"), "a").await.unwrap();
    assert_eq!(
        answer(r).await,
        (201, Some("true".into()), json!({"seq": 1, "key": "k"}))
    );
    let log = log_for(&url, "/send").await;
    assert_eq!(log.len(), 2);
    assert_eq!(log[0]["status"], 0);
    assert_eq!(log[0]["end"], "dropped");
    assert_eq!(log[0]["fault"]["kind"], "drop-response");
    assert_eq!(log[0]["fault"]["result"], "dropped");
    assert_eq!(log[1]["status"], 201);
    assert!(log[1]["fault"].is_null());
    srv.shutdown().await;
}

/// Sends `n` distinct keys one after another; returns the indices (from 1)
/// whose answer was dropped.
async fn dropped_of(url: &str, n: usize) -> Vec<usize> {
    let mut dropped = Vec::new();
    for i in 1..=n {
        let key = format!("k{i}");
        if send_keyed(url, "/send", Some(&key), "x").await.is_err() {
            dropped.push(i);
        }
    }
    dropped
}

#[tokio::test]
async fn drop_response_every_nth_or_by_seeded_probability() {
    let (srv, url) = start_faulted(json!({"path": "/send", "times": null,
        "fault": {"kind": "drop-response", "every": 5}}))
    .await;
    assert_eq!(dropped_of(&url, 20).await, vec![5, 10, 15, 20]);
    // Dropped or not, every one was applied exactly once.
    assert_eq!(applied(&url).await.len(), 20);
    srv.shutdown().await;

    let rule = json!({"path": "/send", "times": null,
        "fault": {"kind": "drop-response", "probability": 0.2, "seed": 7}});
    let mut runs = Vec::new();
    for _ in 0..2 {
        let (srv, url) = start_faulted(rule.clone()).await;
        runs.push(dropped_of(&url, 100).await);
        srv.shutdown().await;
    }
    assert_eq!(runs[0], runs[1], "the same seed drops the same requests");
    assert!((10..=30).contains(&runs[0].len()), "{:?}", runs[0]);
}

#[tokio::test]
async fn bad_drop_response_rules_are_rejected() {
    let (srv, url) = start().await;
    for fault in [
        json!({"kind": "drop-response", "every": 0}),
        json!({"kind": "drop-response", "probability": 1.5}),
        json!({"kind": "drop-response", "every": 2, "probability": 0.5}),
        json!({"kind": "drop-response", "often": true}),
    ] {
        let r = post_faults(&url, &json!({"path": "/send", "fault": fault})).await;
        assert_eq!(r.status(), 400, "{fault}");
    }
    srv.shutdown().await;
}

#[tokio::test]
async fn preflight_allows_the_key_headers_and_the_replay_header_is_exposed() {
    let (srv, url) = start().await;
    let r = request(
        Method::OPTIONS,
        &url,
        "/send",
        &[
            ("Origin", "http://page.test"),
            ("Access-Control-Request-Method", "POST"),
            (
                "Access-Control-Request-Headers",
                "content-type,idempotency-key,x-idempotency-key",
            ),
        ],
    )
    .send()
    .await
    .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    let h = r.headers();
    assert_eq!(h["access-control-allow-origin"], "http://page.test");
    let allow = h["access-control-allow-headers"].to_str().unwrap();
    for name in ["idempotency-key", "x-idempotency-key", "content-type"] {
        assert!(allow.split(',').any(|a| a.trim() == name), "{allow}");
    }
    assert!(h["access-control-allow-methods"]
        .to_str()
        .unwrap()
        .contains("POST"));
    // The preflight applied nothing, and did not take a fault.
    assert!(applied(&url).await.is_empty());
    send_keyed(&url, "/send", Some("k"), "a").await.unwrap();
    let r = request(
        Method::POST,
        &url,
        "/send",
        &[("Origin", "http://page.test"), ("Idempotency-Key", "\"k\"")],
    )
    .body("a")
    .send()
    .await
    .unwrap();
    let expose = r.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        expose.split(',').any(|a| a.trim() == "idempotent-replayed"),
        "{expose}"
    );
    assert_eq!(r.headers()["idempotent-replayed"], "true");
    srv.shutdown().await;
}

#[tokio::test]
async fn close_answers_with_connection_close_and_clear_forgets_everything() {
    let (srv, url) = start().await;
    let r = send_keyed(&url, "/send?close=1", Some("k"), "a")
        .await
        .unwrap();
    assert_eq!(r.headers()["connection"], "close");
    let v = send_json(request(Method::POST, &url, "/_send/clear", &[])).await;
    assert_eq!(v, json!({"cleared": 1}));
    assert!(applied(&url).await.is_empty());
    // A forgotten key is a new key.
    let r = send_keyed(&url, "/send", Some("k"), "b").await.unwrap();
    assert_eq!(answer(r).await, (201, None, json!({"seq": 1, "key": "k"})));
    srv.shutdown().await;
}
