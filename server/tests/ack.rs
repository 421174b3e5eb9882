//! Delivery ACKs (docs/upstream.md): `POST /publish?resendAfterMs=` re-sends an
//! event (same id) to live streams until `POST /ack` names it; `GET /_ack`.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::time::Duration;

use common::*;
use reqwest::Method;
use serde_json::{json, Value};

async fn publish_resend(url: &str, data: &str, query: &str) -> String {
    let v = send_json(
        request(Method::POST, url, &format!("/publish?{query}"), &[]).body(data.to_string()),
    )
    .await;
    v["id"].as_str().unwrap().to_string()
}

async fn ack(url: &str, body: &str) -> reqwest::Response {
    send(request(Method::POST, url, "/ack", &[]).body(body.to_string())).await
}

async fn acks(url: &str) -> Value {
    send_json(request(Method::GET, url, "/_ack", &[])).await
}

/// The next event block within `wait`, skipping heartbeats.
async fn next_event_within(r: &mut SseReader, wait: Duration) -> Option<Block> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        // None on timeout (the helper itself panics on one).
        let b = tokio::time::timeout(left, r.next_block_within(left + Duration::from_secs(1)))
            .await
            .ok()??;
        if b.is_event() {
            return Some(b);
        }
    }
}

#[tokio::test]
async fn an_unacknowledged_event_is_resent_with_its_id_until_acked() {
    let (_srv, url) = start().await;
    let mut r = sse(&url, None).await;
    let id = publish_resend(&url, "hello", "resendAfterMs=100&maxResends=50").await;
    let first = next_event_within(&mut r, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(
        (first.id(), first.data()),
        (Some(id.as_str()), "hello".to_string())
    );
    for _ in 0..2 {
        let again = next_event_within(&mut r, Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(
            (again.id(), again.data()),
            (Some(id.as_str()), "hello".to_string())
        );
    }
    let resp = ack(&url, &json!({ "ids": [id] }).to_string()).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.json::<Value>().await.unwrap(), json!({ "acked": 1 }));
    // At most one re-send was already on its way when the ACK arrived.
    let mut after = 0;
    while next_event_within(&mut r, Duration::from_millis(600))
        .await
        .is_some()
    {
        after += 1;
    }
    assert!(after <= 1, "{after} re-sends after the ACK");
    let v = acks(&url).await;
    assert_eq!(v["acked"], json!([id]));
    let resent = v["resent"][&id].as_u64().unwrap();
    assert!((2..=4).contains(&resent), "{v}");
    // A repeated ACK batch (a retry) changes nothing.
    let again = ack(&url, &json!({ "ids": [id] }).to_string()).await;
    assert_eq!(again.json::<Value>().await.unwrap(), json!({ "acked": 0 }));
    assert_eq!(acks(&url).await["batches"], json!(2));
}

#[tokio::test]
async fn resends_stop_after_max_resends_and_plain_publishes_are_never_resent() {
    let (_srv, url) = start().await;
    let mut r = sse(&url, None).await;
    let id = publish_resend(&url, "x", "resendAfterMs=50&maxResends=2").await;
    let plain = publish(&url, "y").await;
    let mut ids = Vec::new();
    while let Some(b) = next_event_within(&mut r, Duration::from_millis(500)).await {
        ids.push(b.id().unwrap().to_string());
    }
    assert_eq!(ids, vec![id.clone(), plain.clone(), id.clone(), id.clone()]);
    assert_eq!(acks(&url).await["resent"], json!({ id: 2 }));
}

#[tokio::test]
async fn bad_ack_bodies_and_resend_options_are_400() {
    let (_srv, url) = start().await;
    for body in [
        "",
        "[]",
        "{\"ids\": [1]}",
        "{\"ids\": [\"a\"]}",
        "{\"id\": []}",
    ] {
        assert_eq!(ack(&url, body).await.status(), 400, "{body}");
    }
    for q in [
        "resendAfterMs=0",
        "resendAfterMs=x",
        "resendAfterMs=10&maxResends=-1",
    ] {
        let r = send(request(Method::POST, &url, &format!("/publish?{q}"), &[]).body("z")).await;
        assert_eq!(r.status(), 400, "{q}");
    }
    assert_eq!(
        acks(&url).await,
        json!({ "acked": [], "resent": {}, "batches": 0 })
    );
}

/// What an ACK's credentials look like on the wire: the log records the
/// `Cookie` and `Content-Type` request headers (the browser e2e checks that
/// an ACK carries the subscription's cookies and stays JSON).
#[tokio::test]
async fn the_log_records_cookie_and_content_type() {
    let (_srv, url) = start().await;
    let headers = [
        ("Cookie", "session=s1"),
        ("Content-Type", "application/json"),
    ];
    let r = send(request(Method::POST, &url, "/ack", &headers).body("{\"ids\": []}")).await;
    assert_eq!(r.status(), 200);
    let log = send_json(request(Method::GET, &url, "/_log?path=/ack", &[])).await;
    let h = &log["entries"][0]["headers"];
    assert_eq!(
        (h["cookie"].as_str(), h["content-type"].as_str()),
        (Some("session=s1"), Some("application/json")),
        "{log}"
    );
}
