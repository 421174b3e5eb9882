#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use common::*;
use reqwest::Method;

/// Asserts that each of `names` appears in the header list `list` (CORS
/// lists are comma-joined, in no promised order).
fn assert_listed(list: &str, names: &[&str]) {
    for name in names {
        assert!(list.contains(name), "{name} in {list}");
    }
}

#[tokio::test]
async fn cors_preflight_headers() {
    let (srv, url) = start().await;
    let preflight = [
        ("Origin", "http://page.test:9000"),
        ("Access-Control-Request-Method", "GET"),
        (
            "Access-Control-Request-Headers",
            "last-event-id, authorization",
        ),
    ];
    let resp = send(request(Method::OPTIONS, &url, "/sse", &preflight)).await;
    assert!(resp.status().is_success());
    let h = resp.headers();
    assert_eq!(h["access-control-allow-origin"], "http://page.test:9000");
    assert_eq!(h["access-control-allow-credentials"], "true");
    assert_eq!(h["access-control-max-age"], "600");
    let allow = h["access-control-allow-headers"].to_str().unwrap();
    assert_listed(
        allow,
        &[
            "last-event-id",
            "if-none-match",
            "if-modified-since",
            "authorization",
            "content-type",
            "cache-control",
            "x-requested-with",
        ],
    );
    let vary = h["vary"].to_str().unwrap();
    assert!(vary.contains("origin"), "{vary}");
    srv.shutdown().await;
}

#[tokio::test]
async fn cors_on_simple_requests() {
    let (srv, url) = start().await;
    let resp = send(
        request(
            Method::POST,
            &url,
            "/publish",
            &[("Origin", "http://page.test")],
        )
        .body("x"),
    )
    .await;
    let h = resp.headers();
    assert_eq!(h["access-control-allow-origin"], "http://page.test");
    assert_eq!(h["access-control-allow-credentials"], "true");
    let expose = h["access-control-expose-headers"].to_str().unwrap();
    assert_listed(
        expose,
        &[
            "etag",
            "last-modified",
            "retry-after",
            "date",
            "x-poll-interval",
            "ratelimit-reset",
            "x-ratelimit-reset",
            "x-request-id",
        ],
    );
    assert!(h.contains_key("date"));
    assert!(h.contains_key("x-request-id"));
    assert_eq!(body_json(resp).await, serde_json::json!({"id": "1"}));
    srv.shutdown().await;
}

#[tokio::test]
async fn serves_www_and_pkg_with_wasm_mime() {
    let dir = std::env::temp_dir().join(format!("tidings-srv-test-{}", std::process::id()));
    let www = dir.join("www");
    let pkg = dir.join("pkg");
    std::fs::create_dir_all(&www).unwrap();
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(www.join("index.html"), "<h1>demo</h1>").unwrap();
    std::fs::write(pkg.join("tidings_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
    std::fs::write(pkg.join("tidings.js"), "export {}").unwrap();
    let (w, p) = (www.clone(), pkg.clone());
    let (srv, url) = start_with(move |c| {
        c.www = w;
        c.pkg = p;
    })
    .await;
    let r = get(&url, "/").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "<h1>demo</h1>");
    let r = get(&url, "/pkg/tidings_bg.wasm").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/wasm");
    let r = get(&url, "/pkg/tidings.js").await;
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .contains("javascript"));
    let r = get(&url, "/nope").await;
    assert_eq!(r.status(), 404);
    srv.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn publish_rejects_multiline_event_names() {
    let (srv, url) = start().await;
    let r = send(request(Method::POST, &url, "/publish?event=a%0Ab", &[]).body("x")).await;
    assert_eq!(r.status(), 400);
    srv.shutdown().await;
}
