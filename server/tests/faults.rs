#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::time::{Duration, SystemTime};

use tokio::time::Instant;

use common::*;
use futures_util::StreamExt;
use reqwest::Method;
use serde_json::{json, Value};

#[tokio::test]
async fn status_503_with_retry_after_for_n_requests_then_normal() {
    let (srv, url) = start_faulted(
        json!({"path": "/sse", "times": 2, "fault": {"kind": "status", "status": 503, "retry_after": 7}}),
    )
    .await;
    for _ in 0..2 {
        let r = get_with(&url, "/sse", &[("Origin", "http://page.test")]).await;
        assert_eq!(r.status(), 503);
        assert_eq!(r.headers()["retry-after"], "7");
        assert!(r.headers().contains_key("date"));
        // Faulted answers stay readable cross-origin.
        assert_eq!(
            r.headers()["access-control-allow-origin"],
            "http://page.test"
        );
    }
    let mut r = sse(&url, None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.next_block().await.unwrap().get("retry"), Some("1000"));
    drop(r);
    let faults: Vec<Value> = log_for(&url, "/sse")
        .await
        .into_iter()
        .map(|e| e["fault"].clone())
        .collect();
    assert_eq!(faults.len(), 3);
    assert_eq!(faults[0]["kind"], "status");
    assert_eq!(faults[0]["status"], 503);
    assert_eq!(faults[0]["rule"], 1);
    assert!(faults[2].is_null());
    srv.shutdown().await;
}

#[tokio::test]
async fn status_429_http_date_retry_after_with_skewed_date() {
    let (srv, url) = start_faulted(
        json!({"path": "/poll", "fault": {"kind": "status", "status": 429,
            "retry_after_date_s": 30, "clock_skew_s": -3600,
            "headers": {"RateLimit-Reset": "30", "X-RateLimit-Reset": "1700000000"}}}),
    )
    .await;
    let r = get(&url, "/poll").await;
    assert_eq!(r.status(), 429);
    let h = r.headers();
    let date = httpdate::parse_http_date(h["date"].to_str().unwrap()).unwrap();
    let ra = httpdate::parse_http_date(h["retry-after"].to_str().unwrap()).unwrap();
    assert_eq!(ra.duration_since(date).unwrap(), Duration::from_secs(30));
    #[allow(
        clippy::disallowed_methods,
        reason = "test compares with the real clock"
    )]
    let behind = SystemTime::now().duration_since(date).unwrap();
    assert!(behind >= Duration::from_secs(3590), "{behind:?}");
    assert_eq!(h["ratelimit-reset"], "30");
    assert_eq!(h["x-ratelimit-reset"], "1700000000");
    srv.shutdown().await;
}

#[tokio::test]
async fn status_without_date_or_with_a_chosen_date() {
    let (srv, url) = start_faulted(
        json!([
            {"path": "/sse", "fault": {"kind": "status", "status": 503, "retry_after": "Wed, 21 Oct 2015 07:28:00 GMT", "date": false}},
            {"path": "/sse", "fault": {"kind": "status", "status": 503, "date": "Wed, 21 Oct 2015 07:27:00 GMT"}}
        ]),
    )
    .await;
    let r = get(&url, "/sse").await;
    assert!(!r.headers().contains_key("date"));
    assert_eq!(r.headers()["retry-after"], "Wed, 21 Oct 2015 07:28:00 GMT");
    let r = get(&url, "/sse").await;
    assert_eq!(r.headers()["date"], "Wed, 21 Oct 2015 07:27:00 GMT");
    assert!(!r.headers().contains_key("retry-after"));
    srv.shutdown().await;
}

#[tokio::test]
async fn status_204_and_wrong_content_type_and_any_body() {
    let (srv, url) = start_faulted(
        json!([
            {"path": "/sse", "fault": {"kind": "status", "status": 204}},
            {"path": "/sse", "fault": {"kind": "status", "status": 200, "content_type": "text/html", "body": "<html>proxy login</html>"}},
            {"path": "/sse", "fault": {"kind": "status", "status": 500, "content_type": "application/json", "body": "{\"error\":\"boom\"}"}}
        ]),
    )
    .await;
    let r = get(&url, "/sse").await;
    assert_eq!(r.status(), 204);
    let r = get(&url, "/sse").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/html");
    assert_eq!(r.text().await.unwrap(), "<html>proxy login</html>");
    let r = get(&url, "/sse").await;
    assert_eq!(r.status(), 500);
    assert_eq!(r.headers()["content-type"], "application/json");
    assert_eq!(r.text().await.unwrap(), r#"{"error":"boom"}"#);
    srv.shutdown().await;
}

#[tokio::test]
async fn auth_401_until_the_token_is_presented() {
    let (srv, url) = start_faulted(
        json!({"path": "/sse", "times": null, "fault": {"kind": "auth", "token": "fresh"}}),
    )
    .await;
    let r = get(&url, "/sse").await;
    assert_eq!(r.status(), 401);
    assert!(r.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .starts_with("Bearer"));
    let r = get_with(&url, "/sse", &[("Authorization", "Bearer stale")]).await;
    assert_eq!(r.status(), 401);
    let mut r = open_sse(&url, "/sse", &[("Authorization", "Bearer fresh")]).await;
    assert_eq!(r.status, 200);
    r.next_block().await.unwrap();
    drop(r);
    let sse_log = log_for(&url, "/sse").await;
    let results: Vec<&str> = sse_log
        .iter()
        .map(|e| e["fault"]["result"].as_str().unwrap())
        .collect();
    assert_eq!(results, ["rejected", "rejected", "passed"]);
    assert_eq!(sse_log[2]["headers"]["authorization"], "Bearer fresh");
    // Until cleared.
    clear_faults(&url).await;
    assert_eq!(get(&url, "/sse").await.status(), 200);
    srv.shutdown().await;
}

#[tokio::test]
async fn close_after_n_events_cleanly_or_by_abort() {
    let (srv, url) = start().await;
    for i in 0..5 {
        publish(&url, &format!("m{i}")).await;
    }
    add_faults(
        &url,
        json!([
            {"path": "/sse", "fault": {"kind": "close", "after_events": 2}},
            {"path": "/sse", "fault": {"kind": "close", "after_events": 1, "abort": true}}
        ]),
    )
    .await;
    let mut r = sse(&url, Some("0")).await;
    let got = r.read_to_end(Duration::from_secs(3)).await;
    let ids: Vec<&str> = got.iter().map(|b| b.id().unwrap()).collect();
    assert_eq!(ids, ["1", "2"]);

    // Abort: the body breaks off (reqwest reports an error), after event 1.
    let resp = get_with(&url, "/sse", &[("Last-Event-ID", "0")]).await;
    let mut stream = resp.bytes_stream();
    let mut text = String::new();
    let mut errored = false;
    while let Some(c) = tokio::time::timeout(Duration::from_secs(3), stream.next())
        .await
        .unwrap()
    {
        match c {
            Ok(b) => text.push_str(&String::from_utf8_lossy(&b)),
            Err(_) => {
                errored = true;
                break;
            }
        }
    }
    assert!(errored, "aborted body must error, got {text:?}");
    assert!(text.ends_with("id: 1\ndata: m0\n\n"), "{text:?}");
    tokio::time::sleep(Duration::from_millis(50)).await;
    let log = log_entries(&url).await;
    assert_eq!(log[log.len() - 2]["events"], 2);
    assert_eq!(log[log.len() - 2]["end"], "complete");
    assert_eq!(log[log.len() - 1]["events"], 1);
    assert_eq!(log[log.len() - 1]["end"], "error");
    srv.shutdown().await;
}

#[tokio::test]
async fn close_after_ms() {
    let (srv, url) =
        start_faulted(json!({"path": "/sse", "fault": {"kind": "close", "after_ms": 200}})).await;
    let t0 = Instant::now();
    let mut r = sse(&url, None).await;
    r.read_to_end(Duration::from_secs(3)).await;
    assert_took(
        t0.elapsed(),
        Duration::from_millis(190)..Duration::from_secs(2),
    );
    srv.shutdown().await;
}

#[tokio::test]
async fn silent_sends_headers_then_nothing() {
    let (srv, url) = start_faulted(json!({"path": "/sse", "fault": {"kind": "silent"}})).await;
    let resp = tokio::time::timeout(
        Duration::from_secs(2),
        request(Method::GET, &url, "/sse?heartbeat_ms=20", &[]).send(),
    )
    .await
    .expect("head arrives")
    .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let mut stream = resp.bytes_stream();
    assert!(
        tokio::time::timeout(Duration::from_millis(300), stream.next())
            .await
            .is_err(),
        "no byte may arrive"
    );
    srv.shutdown().await;
}

#[tokio::test]
async fn silent_after_events_is_a_stalled_stream() {
    let (srv, url) = start().await;
    publish_all(&url, &["a", "b"]).await;
    add_faults(
        &url,
        json!({"path": "/sse", "fault": {"kind": "silent", "after_events": 1}}),
    )
    .await;
    let mut r = open_sse(&url, "/sse?heartbeat_ms=20", &[("Last-Event-ID", "0")]).await;
    assert_eq!(r.next_event().await.unwrap().id(), Some("1"));
    // Event 2 and every heartbeat are held back.
    let mut s = Vec::new();
    let res = tokio::time::timeout(Duration::from_millis(300), async {
        while let Some(b) = r.next_block().await {
            s.push(b);
        }
    })
    .await;
    assert!(res.is_err() && s.is_empty(), "{s:?}");
    srv.shutdown().await;
}

#[tokio::test]
async fn buffer_holds_bytes_until_enough_accumulate() {
    let (srv, url) =
        start_faulted(json!({"path": "/sse", "fault": {"kind": "buffer", "kb": 2}})).await;
    let mut r = sse(&url, None).await;
    publish(&url, "small").await;
    let res = tokio::time::timeout(Duration::from_millis(300), r.next_block()).await;
    assert!(res.is_err(), "nothing may arrive before 2 KiB");
    publish(&url, &"y".repeat(2048)).await;
    let first = r.next_block().await.unwrap();
    assert_eq!(first.get("retry"), Some("1000"));
    assert_eq!(r.next_event().await.unwrap().data(), "small");
    assert_eq!(r.next_event().await.unwrap().id(), Some("2"));
    drop(r);

    // Without a size: everything at the end of the body (here: shutdown).
    add_faults(&url, json!({"path": "/sse", "fault": {"kind": "buffer"}})).await;
    let resp = get(&url, "/sse?lastEventId=0&heartbeat_ms=20").await;
    let mut stream = resp.bytes_stream();
    let early = tokio::time::timeout(Duration::from_millis(300), stream.next()).await;
    assert!(early.is_err(), "held until the body ends");
    let stop = tokio::spawn(srv.shutdown());
    let mut all = Vec::new();
    while let Some(Ok(c)) = stream.next().await {
        all.push(c);
    }
    assert_eq!(all.len(), 1, "one flush at the end");
    let text = String::from_utf8_lossy(&all[0]).into_owned();
    assert!(text.starts_with("retry: 1000\n\n: hb\n"), "{text}");
    assert!(
        text.matches(": hb\n").count() >= 5,
        "heartbeats were held too"
    );
    assert!(text.contains("id: 2\n"));
    stop.await.unwrap();
}

/// Reads raw chunks of `resp` for `span`, each with its arrival time.
async fn chunks_for(resp: reqwest::Response, span: Duration) -> Vec<(Duration, String)> {
    let t0 = Instant::now();
    let mut stream = resp.bytes_stream();
    let mut out = Vec::new();
    while let Ok(Some(Ok(c))) = tokio::time::timeout_at(t0 + span, stream.next()).await {
        out.push((t0.elapsed(), String::from_utf8_lossy(&c).into_owned()));
    }
    out
}

#[tokio::test]
async fn ping_replaces_heartbeats_by_comments_like_sse_starlette() {
    let (srv, url) =
        start_faulted(json!({"path": "/sse", "fault": {"kind": "ping", "ms": 150}})).await;
    // The endpoint's own heartbeats every 20 ms and its `retry:` are dropped:
    // nothing before the first ping, 150 ms after the head.
    let resp = get(&url, "/sse?heartbeat_ms=20").await;
    let got = chunks_for(resp, Duration::from_millis(520)).await;
    let text: String = got.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(text, ": ping\r\n\r\n".repeat(3), "{got:?}");
    assert!(got[0].0 >= Duration::from_millis(140), "{got:?}");
    let log = log_for(&url, "/sse").await;
    assert_eq!(log[0]["fault"]["kind"], "ping");
    srv.shutdown().await;
}

#[tokio::test]
async fn ping_after_first_event_keeping_retry_like_better_sse() {
    let (srv, url) = start_faulted(json!({"path": "/sse", "times": null, "fault":
        {"kind": "ping", "ms": 100, "retry": true, "after_first_event": true}}))
    .await;
    let resp = get(&url, "/sse?heartbeat_ms=20").await;
    let url2 = url.clone();
    let publisher = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        publish(&url2, "a").await;
    });
    let got = chunks_for(resp, Duration::from_millis(550)).await;
    publisher.await.unwrap();
    let text: String = got.iter().map(|(_, t)| t.as_str()).collect();
    // `retry:` at once, then nothing until the event (300 ms), then pings.
    assert!(
        text.starts_with("retry: 1000\n\nid: 1\ndata: a\n\n: ping\r\n\r\n"),
        "{got:?}"
    );
    assert!(!text.contains(": hb"), "{text}");
    assert_eq!(got[0].1, "retry: 1000\n\n");
    assert!(got[1].0 >= Duration::from_millis(280), "{got:?}");
    assert!(matches!(text.matches(": ping").count(), 1..=3), "{text}");
    srv.shutdown().await;
}

#[tokio::test]
async fn trickle_sends_one_byte_at_a_time() {
    let (srv, url) =
        start_faulted(json!({"path": "/sse", "fault": {"kind": "trickle", "ms": 10}})).await;
    let t0 = Instant::now();
    let resp = get(&url, "/sse").await;
    let mut stream = resp.bytes_stream();
    let mut text = Vec::new();
    while text.len() < 13 {
        let c = stream.next().await.unwrap().unwrap();
        assert_eq!(c.len(), 1);
        text.extend_from_slice(&c);
    }
    assert_eq!(text, b"retry: 1000\n\n");
    assert!(
        t0.elapsed() >= Duration::from_millis(110),
        "{:?}",
        t0.elapsed()
    );
    srv.shutdown().await;
}

#[tokio::test]
async fn script_replays_writes_then_fin_hang_or_abort() {
    let (srv, url) = start_faulted(
        json!([
            {"path": "/sse", "fault": {"kind": "script", "writes": [
                {"data": "id: 1\ndata: a"},
                {"delay_ms": 100, "data": "\n\n"},
                {"base64": "77u/aWQ6IDIKZGF0YTogYgoK"}
            ], "then": "fin"}},
            {"path": "/sse", "fault": {"kind": "script", "writes": [{"data": "id: 9\ndata: z\n\n"}], "then": "hang"}},
            {"path": "/sse", "fault": {"kind": "script", "writes": [{"data": "id: 9\n"}], "then": "abort",
                "status": 200, "content_type": "text/event-stream; charset=utf-8", "headers": {"X-Test": "1"}}}
        ]),
    )
    .await;
    let t0 = Instant::now();
    let r = get(&url, "/sse").await;
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let body = r.bytes().await.unwrap();
    assert!(t0.elapsed() >= Duration::from_millis(100));
    assert_eq!(
        &body[..],
        b"id: 1\ndata: a\n\n\xEF\xBB\xBFid: 2\ndata: b\n\n".as_slice()
    );

    let mut r = sse(&url, None).await;
    assert_eq!(r.next_block().await.unwrap().id(), Some("9"));
    assert!(
        tokio::time::timeout(Duration::from_millis(200), r.next_block())
            .await
            .is_err()
    );
    drop(r);

    let r = get(&url, "/sse").await;
    assert_eq!(r.headers()["x-test"], "1");
    assert_eq!(
        r.headers()["content-type"],
        "text/event-stream; charset=utf-8"
    );
    assert!(r.bytes().await.is_err());
    srv.shutdown().await;
}

#[tokio::test]
async fn delay_before_head_or_never() {
    let (srv, url) = start_faulted(json!([
        {"path": "/publish", "fault": {"kind": "delay", "ms": 200}},
        {"path": "/sse", "fault": {"kind": "delay", "ms": null}}
    ]))
    .await;
    let t0 = Instant::now();
    assert_eq!(publish(&url, "x").await, "1");
    assert!(t0.elapsed() >= Duration::from_millis(190));
    let res = tokio::time::timeout(
        Duration::from_millis(300),
        request(Method::GET, &url, "/sse", &[]).send(),
    )
    .await;
    assert!(res.is_err(), "no head may arrive");
    let pending = log_for(&url, "/sse").await.remove(0);
    assert!(pending["status"].is_null() || pending["status"] == 0);
    assert_eq!(pending["fault"]["kind"], "delay", "visible while pending");
    srv.shutdown().await;
}

#[tokio::test]
async fn preflights_and_control_paths_do_not_consume_faults() {
    let (srv, url) =
        start_faulted(json!({"path": "*", "fault": {"kind": "status", "status": 503}})).await;
    let preflight = [
        ("Origin", "http://page.test"),
        ("Access-Control-Request-Method", "GET"),
    ];
    let pre = send(request(Method::OPTIONS, &url, "/poll", &preflight)).await;
    assert!(pre.status().is_success());
    assert_eq!(log_entries(&url).await.len(), 2, "POST /_faults + OPTIONS");
    let listed = body_json(get(&url, "/_faults").await).await;
    assert_eq!(listed["rules"].as_array().unwrap().len(), 1);
    assert_eq!(get(&url, "/anything").await.status(), 503);
    let listed = body_json(get(&url, "/_faults").await).await;
    assert!(listed["rules"].as_array().unwrap().is_empty());
    srv.shutdown().await;
}

#[tokio::test]
async fn bad_rules_are_rejected() {
    let (srv, url) = start().await;
    for bad in [
        json!({"path": "/sse", "fault": {"kind": "nope"}}),
        json!({"path": "/sse", "fault": {"kind": "status", "status": 1000}}),
        json!({"path": "/sse", "fault": {"kind": "script", "writes": [{"base64": "***"}]}}),
        json!({"path": "/sse", "fault": {"kind": "status", "status": 503, "headers": {"bad name": "x"}}}),
        json!({"path": "/sse", "fault": {"kind": "ping", "ms": 0}}),
    ] {
        let r = post_faults(&url, &bad).await;
        assert_eq!(r.status(), 400, "{bad}");
        assert!(body_json(r).await["error"].is_string());
    }
    srv.shutdown().await;
}

#[tokio::test]
async fn restart_drops_connections_and_refuses_for_a_while() {
    let (srv, url) = start().await;
    let mut a = sse(&url, None).await;
    let mut b = sse(&url, None).await;
    a.next_block().await.unwrap();
    b.next_block().await.unwrap();
    let t0 = Instant::now();
    let v =
        send_json(request(Method::POST, &url, "/_restart", &[]).json(&json!({"ms": 400}))).await;
    assert_eq!(v["mode"], "refuse");
    assert!(v["dropped"].as_u64().unwrap() >= 2);
    a.read_to_end(Duration::from_secs(2)).await;
    b.read_to_end(Duration::from_secs(2)).await;
    assert!(a.ended && b.ended);
    // Refused: the connection closes without an answer.
    let r = request(Method::GET, &url, "/sse", &[]).send().await;
    assert!(r.is_err(), "{r:?}");
    // Control paths still answer.
    assert_eq!(get(&url, "/_faults").await.status(), 200);
    // After the window, normal again.
    let left = Duration::from_millis(450).saturating_sub(t0.elapsed());
    tokio::time::sleep(left).await;
    let r = get(&url, "/sse?heartbeat_ms=0").await;
    assert_eq!(r.status(), 200);
    drop(r);
    let log = log_entries(&url).await;
    assert!(log
        .iter()
        .any(|e| e["status"] == 0 && e["fault"]["kind"] == "restart"));
    let dropped = log
        .iter()
        .filter(|e| e["path"] == "/sse" && e["end"] == "dropped")
        .count();
    assert!(dropped >= 2);
    srv.shutdown().await;
}

#[tokio::test]
async fn restart_503_mode_and_lost_state() {
    let (srv, url) = start().await;
    publish_all(&url, &["a", "b", "c"]).await;
    post(&url, "/_restart?ms=300&mode=503&lose_state=1").await;
    let r = get_with(&url, "/sse", &[("Origin", "http://page.test")]).await;
    assert_eq!(r.status(), 503);
    assert_eq!(r.headers()["retry-after"], "1");
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "http://page.test"
    );
    // DELETE /_faults ends the window early.
    clear_faults(&url).await;
    // State was lost: cursor 3 is from "a previous run".
    let mut r = sse(&url, Some("3")).await;
    assert_eq!(r.next_event().await.unwrap().event(), Some("reset"));
    assert_eq!(publish(&url, "new").await, "1");
    drop(r);
    srv.shutdown().await;
}

/// `header-only-resume`: the query cursor is ignored (a replay from the
/// first event), the `Last-Event-ID` header is honoured; the log keeps the
/// request as sent.
#[tokio::test]
async fn header_only_resume_ignores_the_query_cursor() {
    let (srv, url) = start_faulted(
        json!({"path": "/sse", "times": null, "fault": {"kind": "header-only-resume"}}),
    )
    .await;
    publish_all(&url, &["a", "b", "c"]).await;
    let mut r = open_sse(&url, "/sse?lastEventId=2", &[]).await;
    let ids: Vec<String> = [
        r.next_event().await.unwrap(),
        r.next_event().await.unwrap(),
        r.next_event().await.unwrap(),
    ]
    .iter()
    .map(|b| b.id().unwrap_or("").to_string())
    .collect();
    assert_eq!(ids, ["1", "2", "3"]);
    drop(r);
    let mut r = open_sse(&url, "/sse?lastEventId=1", &[("Last-Event-ID", "2")]).await;
    assert_eq!(r.next_event().await.unwrap().id(), Some("3"));
    drop(r);
    let log = log_for(&url, "/sse").await;
    assert_eq!(log[0]["query"], "lastEventId=2");
    assert!(log[0]["headers"].get("last-event-id").is_none());
    assert_eq!(log[0]["fault"]["kind"], "header-only-resume");
    srv.shutdown().await;
}

/// `reset_old_cursors: false`: a naive restarted server. The old cursor 3
/// gets live events only, and ids 1, 2, … are reissued with new data.
#[tokio::test]
async fn lost_state_without_reset_reissues_ids() {
    let (srv, url) = start().await;
    publish_all(&url, &["a", "b", "c"]).await;
    let r = request(Method::POST, &url, "/_restart", &[])
        .json(&json!({"ms": 0, "lose_state": true, "reset_old_cursors": false}));
    send_json(r).await;
    let mut r = sse(&url, Some("3")).await;
    assert_eq!(publish(&url, "x").await, "1");
    let b = r.next_event().await.unwrap();
    assert_eq!(
        (b.id(), b.event(), b.data().as_str()),
        (Some("1"), None, "x")
    );
    drop(r);
    // The query form, and a later restart that resets old cursors again.
    post(&url, "/_restart?ms=0&lose_state=1&reset_old_cursors=0").await;
    let mut r = sse(&url, Some("5")).await;
    assert_eq!(publish(&url, "y").await, "1");
    assert_eq!(r.next_event().await.unwrap().data(), "y");
    drop(r);
    post(&url, "/_restart?ms=0&lose_state=1").await;
    let mut r = sse(&url, Some("5")).await;
    assert_eq!(r.next_event().await.unwrap().event(), Some("reset"));
    drop(r);
    srv.shutdown().await;
}

/// `"when": "cursor"`: the rule applies only to requests that resume from a
/// cursor (header, query or validators); others reach the endpoint and do
/// not use it up. `"no-cursor"` is the converse.
#[tokio::test]
async fn when_cursor_answers_409_only_to_a_resume() {
    let (srv, url) = start_faulted(json!([
        {"path": "/long-poll", "when": "cursor", "times": 3,
         "fault": {"kind": "status", "status": 409}},
        {"path": "/long-poll", "when": "no-cursor",
         "fault": {"kind": "status", "status": 418}}
    ]))
    .await;
    assert_eq!(get(&url, "/long-poll?hold_ms=0").await.status(), 418);
    assert_eq!(get(&url, "/long-poll?hold_ms=0").await.status(), 204);
    assert_eq!(
        get(&url, "/long-poll?hold_ms=0&lastEventId=4")
            .await
            .status(),
        409
    );
    let r = get_with(&url, "/long-poll?hold_ms=0", &[("Last-Event-ID", "4")]).await;
    assert_eq!(r.status(), 409);
    let r = get_with(&url, "/long-poll?hold_ms=0", &[("If-None-Match", "\"4\"")]).await;
    assert_eq!(r.status(), 409);
    let r = get_with(&url, "/long-poll?hold_ms=0", &[("If-None-Match", "\"0\"")]).await;
    assert_ne!(r.status(), 409);
    let faults: Vec<Value> = log_for(&url, "/long-poll")
        .await
        .into_iter()
        .map(|e| e["fault"]["status"].clone())
        .collect();
    assert_eq!(
        faults,
        [
            json!(418),
            Value::Null,
            json!(409),
            json!(409),
            json!(409),
            Value::Null
        ]
    );
    let bad = post_faults(
        &url,
        &json!({"path": "/sse", "when": "sometimes", "fault": {"kind": "buffer"}}),
    )
    .await;
    assert_eq!(bad.status(), 400);
    srv.shutdown().await;
}
