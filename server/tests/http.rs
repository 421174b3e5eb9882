#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use common::*;

#[tokio::test]
async fn cors_preflight_headers() {
    let (srv, url) = start().await;
    let resp = client()
        .request(reqwest::Method::OPTIONS, format!("{url}/sse"))
        .header("Origin", "http://page.test:9000")
        .header("Access-Control-Request-Method", "GET")
        .header(
            "Access-Control-Request-Headers",
            "last-event-id, authorization",
        )
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success());
    let h = resp.headers();
    assert_eq!(h["access-control-allow-origin"], "http://page.test:9000");
    assert_eq!(h["access-control-allow-credentials"], "true");
    assert_eq!(h["access-control-max-age"], "600");
    let allow = h["access-control-allow-headers"].to_str().unwrap();
    for name in [
        "last-event-id",
        "if-none-match",
        "if-modified-since",
        "authorization",
        "content-type",
        "cache-control",
        "x-requested-with",
    ] {
        assert!(allow.contains(name), "{name} in {allow}");
    }
    let vary = h["vary"].to_str().unwrap();
    assert!(vary.contains("origin"), "{vary}");
    srv.shutdown().await;
}

#[tokio::test]
async fn cors_on_simple_requests() {
    let (srv, url) = start().await;
    let resp = client()
        .post(format!("{url}/publish"))
        .header("Origin", "http://page.test")
        .body("x")
        .send()
        .await
        .unwrap();
    let h = resp.headers();
    assert_eq!(h["access-control-allow-origin"], "http://page.test");
    assert_eq!(h["access-control-allow-credentials"], "true");
    let expose = h["access-control-expose-headers"].to_str().unwrap();
    for name in [
        "etag",
        "last-modified",
        "retry-after",
        "date",
        "x-poll-interval",
        "ratelimit-reset",
        "x-ratelimit-reset",
        "x-request-id",
    ] {
        assert!(expose.contains(name), "{name} in {expose}");
    }
    assert!(h.contains_key("date"));
    assert!(h.contains_key("x-request-id"));
    let v: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(v, serde_json::json!({"id": "1"}));
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
    let r = client().get(format!("{url}/")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "<h1>demo</h1>");
    let r = client()
        .get(format!("{url}/pkg/tidings_bg.wasm"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/wasm");
    let r = client()
        .get(format!("{url}/pkg/tidings.js"))
        .send()
        .await
        .unwrap();
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .contains("javascript"));
    let r = client().get(format!("{url}/nope")).send().await.unwrap();
    assert_eq!(r.status(), 404);
    srv.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn publish_rejects_multiline_event_names() {
    let (srv, url) = start().await;
    let r = client()
        .post(format!("{url}/publish?event=a%0Ab"))
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    srv.shutdown().await;
}
