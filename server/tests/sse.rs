#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::time::Duration;

use common::*;

#[tokio::test]
async fn stream_headers_retry_and_heartbeat_first() {
    let (srv, url) = start().await;
    let mut r = sse(&url, None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["content-type"], "text/event-stream");
    assert_eq!(r.headers["cache-control"], "no-store");
    assert_eq!(r.headers["x-accel-buffering"], "no");
    let first = r.next_block().await.unwrap();
    assert_eq!(first.get("retry"), Some("1000"));
    let hb = r.next_block().await.unwrap();
    assert_eq!(hb.0[0], (String::new(), "hb".to_string()));
    assert!(hb.is_heartbeat());
    assert_eq!(hb.data(), "");
    srv.shutdown().await;
}

#[tokio::test]
async fn live_events_in_order_then_replay_after_cursor() {
    let (srv, url) = start().await;
    let mut r = sse(&url, None).await;
    for (i, d) in ["one", "two", "three"].iter().enumerate() {
        assert_eq!(publish(&url, d).await, (i + 1).to_string());
    }
    let got: Vec<(String, String)> = [
        r.next_event().await.unwrap(),
        r.next_event().await.unwrap(),
        r.next_event().await.unwrap(),
    ]
    .iter()
    .map(|b| (b.id().unwrap().to_string(), b.data()))
    .collect();
    assert_eq!(
        got,
        vec![
            ("1".into(), "one".into()),
            ("2".into(), "two".into()),
            ("3".into(), "three".into())
        ]
    );
    drop(r);

    // Reconnect with Last-Event-ID: 1 → 2, 3, then live 4.
    let mut r = sse(&url, Some("1")).await;
    assert_eq!(r.next_event().await.unwrap().id(), Some("2"));
    assert_eq!(r.next_event().await.unwrap().id(), Some("3"));
    publish(&url, "four").await;
    let b = r.next_event().await.unwrap();
    assert_eq!((b.id(), b.data().as_str()), (Some("4"), "four"));
    srv.shutdown().await;
}

#[tokio::test]
async fn cursor_in_query_and_header_wins() {
    let (srv, url) = start().await;
    publish_all(&url, &["a", "b", "c"]).await;
    let mut r = open_sse(&url, "/sse?lastEventId=2", &[]).await;
    assert_eq!(r.next_event().await.unwrap().id(), Some("3"));
    let mut r = open_sse(&url, "/sse?last_event_id=1", &[]).await;
    assert_eq!(r.next_event().await.unwrap().id(), Some("2"));
    let mut r = open_sse(&url, "/sse?lastEventId=0", &[("Last-Event-ID", "2")]).await;
    assert_eq!(r.next_event().await.unwrap().id(), Some("3"));
    srv.shutdown().await;
}

#[tokio::test]
async fn cursor_older_than_buffer_gets_reset_first() {
    let (srv, url) = start_with(|c| c.buffer = 2).await;
    publish_all(&url, &["a", "b", "c", "d", "e"]).await;
    // Buffer holds 4, 5; the successor of 2 (3) is gone.
    let mut r = sse(&url, Some("2")).await;
    let reset = r.next_event().await.unwrap();
    assert_eq!(reset.event(), Some("reset"));
    assert_eq!(reset.id(), None);
    assert_eq!(reset.data(), r#"{"reason":"cursor-too-old"}"#);
    // Then an id-only block: the client's cursor moves to the newest id.
    let head = r.next_block().await.unwrap();
    assert_eq!(head.0, vec![("id".to_string(), "5".to_string())]);
    publish(&url, "f").await;
    assert_eq!(r.next_event().await.unwrap().id(), Some("6"));

    // Buffer now holds 5, 6: cursor 4's successor is still there.
    let mut r = sse(&url, Some("4")).await;
    assert_eq!(r.next_event().await.unwrap().id(), Some("5"));
    let mut r = sse(&url, Some("3")).await;
    assert_eq!(r.next_event().await.unwrap().event(), Some("reset"));

    // From the future (a previous server run) and garbage: reset.
    for c in ["99", "x:1"] {
        let mut r = sse(&url, Some(c)).await;
        assert_eq!(r.next_event().await.unwrap().event(), Some("reset"), "{c}");
    }
    srv.shutdown().await;
}

#[tokio::test]
async fn named_and_multiline_events() {
    let (srv, url) = start().await;
    let mut r = sse(&url, None).await;
    publish_event(&url, Some("price"), "line1\nline2\r\nline3").await;
    publish(&url, r#"{"a":1}"#).await;
    let b = r.next_event().await.unwrap();
    assert_eq!(b.event(), Some("price"));
    assert_eq!(b.data(), "line1\nline2\nline3");
    let b = r.next_event().await.unwrap();
    assert_eq!(b.event(), None);
    assert_eq!(b.data(), r#"{"a":1}"#);
    srv.shutdown().await;
}

#[tokio::test]
async fn heartbeat_interval_is_configurable_per_request() {
    let (srv, url) = start().await;
    let mut r = open_sse(&url, "/sse?heartbeat_ms=50&retry_ms=250", &[]).await;
    assert_eq!(r.next_block().await.unwrap().get("retry"), Some("250"));
    let mut beats = 0;
    while beats < 3 {
        let b = r.next_block_within(Duration::from_secs(2)).await.unwrap();
        if b.is_heartbeat() {
            beats += 1;
        }
    }
    srv.shutdown().await;
}

#[tokio::test]
async fn lagging_stream_is_closed_not_thinned() {
    let (srv, url) = start_with(|c| c.stream_queue = 4).await;
    let mut r = sse(&url, None).await;
    // 100 events of 100 KB while the client reads nothing: more than the
    // socket buffers hold, so the stream falls more than 4 events behind.
    let big = "x".repeat(100 * 1024);
    for _ in 0..100 {
        publish(&url, &big).await;
    }
    let got = r.read_to_end(Duration::from_secs(10)).await;
    assert!(got.len() < 100, "stream should have been closed on lag");
    let ids: Vec<u64> = got
        .iter()
        .map(|b| b.id().unwrap().parse().unwrap())
        .collect();
    let expect: Vec<u64> = (1..=ids.len() as u64).collect();
    assert_eq!(ids, expect, "no event may be skipped before the close");
    // Resume by cursor: the rest, no gap.
    let last = ids.last().copied().unwrap_or(0);
    let mut r = sse(&url, Some(&last.to_string())).await;
    assert_eq!(
        r.next_event().await.unwrap().id(),
        Some((last + 1).to_string().as_str())
    );
    drop(r);
    srv.shutdown().await;
}

#[tokio::test]
async fn shutdown_ends_open_streams() {
    let (srv, url) = start().await;
    let mut r = sse(&url, None).await;
    r.next_block().await.unwrap();
    tokio::time::timeout(Duration::from_secs(3), srv.shutdown())
        .await
        .expect("shutdown does not hang");
    let rest = r.read_to_end(Duration::from_secs(2)).await;
    assert!(rest.is_empty());
    assert!(r.ended);
}

#[tokio::test]
async fn log_records_request_and_stream_close() {
    let (srv, url) = start().await;
    publish_all(&url, &["a", "b"]).await;
    let mut r = open_sse(
        &url,
        "/sse?lastEventId=0",
        &[("Origin", "http://other.test")],
    )
    .await;
    assert_eq!(r.next_event().await.unwrap().id(), Some("1"));
    assert_eq!(r.next_event().await.unwrap().id(), Some("2"));
    drop(r);
    // Give the server a moment to notice the close (next heartbeat write
    // or EOF); ask for fast heartbeats by reading the log a few times.
    let mut entry = None;
    for _ in 0..50 {
        let e = log_for(&url, "/sse").await.remove(0);
        if !e["end_ms"].is_null() {
            entry = Some(e);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let e = entry.expect("stream close recorded");
    assert_eq!(e["method"], "GET");
    assert_eq!(e["query"], "lastEventId=0");
    assert_eq!(e["headers"]["origin"], "http://other.test");
    assert_eq!(e["status"], 200);
    assert_eq!(e["stream"], true);
    assert_eq!(e["events"], 2);
    assert_eq!(e["end"], "dropped");
    assert!(e["conn"].as_u64().unwrap() >= 1);
    assert!(e["end_ms"].as_u64() >= e["t_ms"].as_u64());
    // The log does not log itself; clear empties it.
    let entries = log_entries(&url).await;
    assert!(entries.iter().all(|e| e["path"] != "/_log"));
    post(&url, "/_log/clear").await;
    assert!(log_entries(&url).await.is_empty());
    srv.shutdown().await;
}
