#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::time::Duration;

use common::*;
use serde_json::json;
use tokio::time::Instant;

// ---------------------------------------------------------------- long-poll

#[tokio::test]
async fn long_poll_answers_pending_events_at_once() {
    let (srv, url) = start().await;
    publish(&url, "a").await;
    publish_event(&url, Some("price"), "b\nc").await;
    let t0 = Instant::now();
    let r = get(&url, "/long-poll?lastEventId=0").await;
    assert!(t0.elapsed() < Duration::from_secs(1));
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    assert_eq!(r.headers()["etag"], "\"2\"");
    assert!(r.headers().contains_key("last-modified"));
    assert_eq!(
        r.text().await.unwrap(),
        "id: 1\ndata: a\n\nid: 2\nevent: price\ndata: b\ndata: c\n\n"
    );
    // Header cursor, and the header wins over the query.
    let r = get_with(&url, "/long-poll?lastEventId=0", &[("Last-Event-ID", "1")]).await;
    assert_eq!(
        r.text().await.unwrap(),
        "id: 2\nevent: price\ndata: b\ndata: c\n\n"
    );
    // nchan-style: the previous ETag as the cursor.
    let r = get_with(&url, "/long-poll", &[("If-None-Match", "\"1\"")]).await;
    assert_eq!(r.headers()["etag"], "\"2\"");
    srv.shutdown().await;
}

#[tokio::test]
async fn long_poll_holds_then_204_or_answers_on_publish() {
    let (srv, url) = start().await;
    let t0 = Instant::now();
    let r = get(&url, "/long-poll?hold_ms=200").await;
    assert_eq!(r.status(), 204);
    assert!(t0.elapsed() >= Duration::from_millis(190));

    let u = url.clone();
    let waiter = tokio::spawn(async move {
        let r = get(&u, "/long-poll?lastEventId=0&hold_ms=5000&format=json").await;
        (r.status(), r.headers().clone(), body_json(r).await)
    });
    tokio::time::sleep(Duration::from_millis(150)).await;
    let t1 = Instant::now();
    publish(&url, r#"{"x":1}"#).await;
    let (status, headers, body) = waiter.await.unwrap();
    assert!(t1.elapsed() < Duration::from_secs(2));
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(headers["etag"], "\"1\"");
    assert_eq!(body, json!([{"id": "1", "data": "{\"x\":1}"}]));
    srv.shutdown().await;
}

/// `?empty=200`: an empty hold ends with an empty 200 (no content type, or
/// `empty_type`) instead of 204. `?from_start=1`: no cursor means every
/// buffered event; a cursor still wins.
#[tokio::test]
async fn long_poll_empty_200_and_from_start() {
    let (srv, url) = start().await;
    let r = get(&url, "/long-poll?hold_ms=0&empty=200").await;
    assert_eq!(r.status(), 200);
    assert!(!r.headers().contains_key("content-type"));
    assert_eq!(r.text().await.unwrap(), "");
    let r = get(
        &url,
        "/long-poll?hold_ms=0&empty=200&empty_type=application/json",
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/json");
    assert_eq!(r.text().await.unwrap(), "");
    publish_all(&url, &["a", "b"]).await;
    let r = get(&url, "/long-poll?hold_ms=0&from_start=1").await;
    assert_eq!(
        r.text().await.unwrap(),
        "id: 1\ndata: a\n\nid: 2\ndata: b\n\n"
    );
    let r = get(&url, "/long-poll?hold_ms=0&from_start=1&lastEventId=1").await;
    assert_eq!(r.text().await.unwrap(), "id: 2\ndata: b\n\n");
    let r = get(
        &url,
        "/long-poll?hold_ms=0&from_start=1&lastEventId=2&empty=200",
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "");
    srv.shutdown().await;
}

#[tokio::test]
async fn long_poll_default_hold_comes_from_the_server_option() {
    let (srv, url) = start_with(|c| c.hold_ms = 150).await;
    let t0 = Instant::now();
    let r = get(&url, "/long-poll").await;
    assert_eq!(r.status(), 204);
    assert_took(
        t0.elapsed(),
        Duration::from_millis(140)..Duration::from_secs(2),
    );
    srv.shutdown().await;
}

#[tokio::test]
async fn long_poll_reset_and_envelope() {
    let (srv, url) = start_with(|c| c.buffer = 2).await;
    publish_all(&url, &["a", "b", "c", "d"]).await;
    let r = get(&url, "/long-poll?lastEventId=1&hold_ms=5000").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["etag"], "\"4\"");
    assert_eq!(
        r.text().await.unwrap(),
        "event: reset\ndata: {\"reason\":\"cursor-too-old\"}\n\nid: 4\n\n"
    );
    let r = get(&url, "/long-poll?lastEventId=1&format=json").await;
    let v = body_json(r).await;
    assert_eq!(
        v,
        json!([{"id": "4", "event": "reset", "data": "{\"reason\":\"cursor-too-old\"}"}])
    );
    let r = get(&url, "/long-poll?last_event_id=2&format=json&envelope=1").await;
    let v = body_json(r).await;
    assert_eq!(
        v,
        json!({"messages": [{"id": "3", "data": "c"}, {"id": "4", "data": "d"}]})
    );
    srv.shutdown().await;
}

#[tokio::test]
async fn long_poll_takes_faults() {
    let (srv, url) = start().await;
    publish(&url, "a").await;
    add_faults(
        &url,
        json!([
            {"path": "/long-poll", "fault": {"kind": "status", "status": 408}},
            {"path": "/long-poll", "fault": {"kind": "close", "after_bytes": 4, "abort": true}}
        ]),
    )
    .await;
    assert_eq!(get(&url, "/long-poll?lastEventId=0").await.status(), 408);
    let r = get(&url, "/long-poll?lastEventId=0").await;
    assert!(r.text().await.is_err(), "aborted mid-body");
    assert_eq!(
        get(&url, "/long-poll?lastEventId=0")
            .await
            .text()
            .await
            .unwrap(),
        "id: 1\ndata: a\n\n"
    );
    srv.shutdown().await;
}

// --------------------------------------------------------------------- poll

#[tokio::test]
async fn poll_answers_at_once_with_etag_and_304() {
    let (srv, url) = start().await;
    let r = get(&url, "/poll").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["etag"], "\"0\"");
    assert_eq!(r.headers()["cache-control"], "no-cache");
    assert_eq!(body_json(r).await, json!([]));

    publish(&url, "a").await;
    publish_event(&url, Some("price"), "b").await;
    // The previous ETag as the cursor.
    let r = get_with(&url, "/poll", &[("If-None-Match", "\"0\"")]).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["etag"], "\"2\"");
    assert!(r.headers().contains_key("last-modified"));
    assert_eq!(
        body_json(r).await,
        json!([{"id": "1", "data": "a"}, {"id": "2", "event": "price", "data": "b"}])
    );
    // Nothing new: 304, for a matching tag (weak comparison too) or a
    // cursor at the newest id.
    for h in [
        vec![("If-None-Match", "\"2\"")],
        vec![("If-None-Match", "W/\"2\"")],
        vec![("Last-Event-ID", "2")],
    ] {
        let r = get_with(&url, "/poll", &h).await;
        assert_eq!(r.status(), 304, "{h:?}");
        assert_eq!(r.headers()["etag"], "\"2\"");
        assert_eq!(r.headers()["cache-control"], "no-cache");
    }
    let r = get(&url, "/poll?lastEventId=1").await;
    assert_eq!(
        body_json(r).await,
        json!([{"id": "2", "event": "price", "data": "b"}])
    );
    srv.shutdown().await;
}

#[tokio::test]
async fn poll_hints_envelope_and_reset() {
    let (srv, url) = start_with(|c| c.buffer = 1).await;
    publish_all(&url, &["a", "b"]).await;
    let r = get(&url, "/poll?lastEventId=1&envelope=1&interval_s=7").await;
    assert_eq!(r.headers()["x-poll-interval"], "7");
    assert_eq!(
        body_json(r).await,
        json!({"messages": [{"id": "2", "data": "b"}], "_polling": {"next_interval_ms": 7000}})
    );
    let r = get(&url, "/poll?lastEventId=1&envelope=1&next_interval_ms=2500").await;
    assert_eq!(body_json(r).await["_polling"]["next_interval_ms"], 2500);
    let r = get(&url, "/poll?lastEventId=2&interval_s=3").await;
    assert_eq!(r.status(), 304);
    assert_eq!(r.headers()["x-poll-interval"], "3");
    // Evicted successor: reset, with the newest id as the new cursor.
    let r = get(&url, "/poll?lastEventId=0").await;
    assert_eq!(
        body_json(r).await,
        json!([{"id": "2", "event": "reset", "data": "{\"reason\":\"cursor-too-old\"}"}])
    );
    srv.shutdown().await;
}

#[tokio::test]
async fn poll_takes_faults() {
    let (srv, url) = start_faulted(
        json!({"path": "/poll", "fault": {"kind": "status", "status": 503, "retry_after": 2,
            "headers": {"X-Poll-Interval": "30"}}}),
    )
    .await;
    let r = get(&url, "/poll").await;
    assert_eq!(r.status(), 503);
    assert_eq!(r.headers()["retry-after"], "2");
    assert_eq!(r.headers()["x-poll-interval"], "30");
    assert_eq!(get(&url, "/poll").await.status(), 200);
    let polls = log_for(&url, "/poll").await;
    assert_eq!(polls[0]["fault"]["status"], 503);
    assert!(polls[1]["fault"].is_null());
    srv.shutdown().await;
}

// ----------------------------------------------------------------- resource

#[tokio::test]
async fn resource_changes_on_every_publish() {
    let (srv, url) = start().await;
    let r = get(&url, "/resource").await;
    assert_eq!(r.headers()["etag"], "\"0\"");
    assert_eq!(r.headers()["cache-control"], "no-cache");
    assert!(r.headers().contains_key("last-modified"));
    assert_eq!(body_json(r).await, json!({"version": 0, "data": null}));
    publish(&url, r#"{"price": 10}"#).await;
    let r = get(&url, "/resource").await;
    assert_eq!(r.headers()["etag"], "\"1\"");
    assert_eq!(
        body_json(r).await,
        json!({"version": 1, "data": {"price": 10}})
    );
    publish(&url, "plain text").await;
    let r = get(&url, "/resource?weak=1").await;
    assert_eq!(r.headers()["etag"], "W/\"2\"");
    assert_eq!(
        body_json(r).await,
        json!({"version": 2, "data": "plain text"})
    );
    srv.shutdown().await;
}

#[tokio::test]
async fn resource_conditional_requests() {
    let (srv, url) = start().await;
    publish(&url, "1").await;
    let r = get(&url, "/resource").await;
    let lm = r.headers()["last-modified"].to_str().unwrap().to_string();
    // If-None-Match, weak comparison both ways.
    for (path, inm) in [
        ("/resource", "\"1\""),
        ("/resource", "W/\"1\""),
        ("/resource?weak=1", "\"1\""),
        ("/resource", "\"7\", \"1\""),
        ("/resource", "*"),
    ] {
        let r = get_with(&url, path, &[("If-None-Match", inm)]).await;
        assert_eq!(r.status(), 304, "{path} {inm}");
        assert!(r.headers().contains_key("etag"));
    }
    assert_eq!(
        get_with(&url, "/resource", &[("If-None-Match", "\"0\"")])
            .await
            .status(),
        200
    );
    // If-Modified-Since: not older → 304; older → 200.
    let r = get_with(&url, "/resource", &[("If-Modified-Since", &lm)]).await;
    assert_eq!(r.status(), 304);
    let r = get_with(
        &url,
        "/resource",
        &[("If-Modified-Since", "Sat, 01 Jan 2000 00:00:00 GMT")],
    )
    .await;
    assert_eq!(r.status(), 200);
    // If-None-Match wins over If-Modified-Since.
    let r = get_with(
        &url,
        "/resource",
        &[("If-None-Match", "\"0\""), ("If-Modified-Since", &lm)],
    )
    .await;
    assert_eq!(r.status(), 200);
    // A publish makes the tag stale.
    publish(&url, "2").await;
    assert_eq!(
        get_with(&url, "/resource", &[("If-None-Match", "\"1\"")])
            .await
            .status(),
        200
    );
    srv.shutdown().await;
}

#[tokio::test]
async fn resource_takes_faults() {
    let (srv, url) = start_faulted(
        json!({"path": "/resource", "fault": {"kind": "status", "status": 200,
            "content_type": "text/html", "body": "<html>captive portal</html>"}}),
    )
    .await;
    let r = get(&url, "/resource").await;
    assert_eq!(r.headers()["content-type"], "text/html");
    assert_eq!(r.text().await.unwrap(), "<html>captive portal</html>");
    srv.shutdown().await;
}
