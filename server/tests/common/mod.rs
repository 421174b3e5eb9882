//! Helpers shared by the integration tests: start a server on port 0, send
//! requests to it, install faults, read its log, read an SSE stream block by
//! block.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers"
)]

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::{Method, RequestBuilder, Response};
use serde_json::Value;
use tidings_server::{Config, Server};

/// Starts a server with the test configuration on a free port; returns it
/// with its base URL (`http://127.0.0.1:PORT`), which every test needs.
pub async fn start() -> (Server, String) {
    start_with(|_| {}).await
}

/// As [`start`], with the configuration changed by `f` first.
pub async fn start_with(f: impl FnOnce(&mut Config)) -> (Server, String) {
    let mut cfg = Config::for_tests();
    f(&mut cfg);
    let srv = Server::start(cfg).await.expect("server starts");
    let url = srv.url();
    (srv, url)
}

/// As [`start`], with fault rules (one rule or an array) already in place.
pub async fn start_faulted(rules: Value) -> (Server, String) {
    let (srv, url) = start().await;
    add_faults(&url, rules).await;
    (srv, url)
}

/// A new HTTP client (with its own connection pool) on each call.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder().build().unwrap()
}

/// Asserts that `took` lies in `range` (at least its start, under its end):
/// long enough that the server really waited, short enough that it did not
/// hang.
pub fn assert_took(took: Duration, range: std::ops::Range<Duration>) {
    assert!(range.contains(&took), "{took:?}");
}

/// `METHOD {url}{path}` with the given request headers, not yet sent (the
/// caller may add a body or a timeout).
pub fn request(method: Method, url: &str, path: &str, headers: &[(&str, &str)]) -> RequestBuilder {
    headers.iter().fold(
        client().request(method, format!("{url}{path}")),
        |req, (k, v)| req.header(*k, *v),
    )
}

/// Sends a request; only a transport error fails the test, any status is an
/// answer.
pub async fn send(req: RequestBuilder) -> Response {
    req.send().await.unwrap()
}

/// Sends a request and reads the answer as JSON.
pub async fn send_json(req: RequestBuilder) -> Value {
    body_json(send(req).await).await
}

/// The body of an answer, parsed as JSON.
pub async fn body_json(resp: Response) -> Value {
    resp.json().await.unwrap()
}

/// `GET {url}{path}`.
pub async fn get(url: &str, path: &str) -> Response {
    get_with(url, path, &[]).await
}

/// `GET {url}{path}` with request headers.
pub async fn get_with(url: &str, path: &str, headers: &[(&str, &str)]) -> Response {
    send(request(Method::GET, url, path, headers)).await
}

/// `POST {url}{path}` without a body (the control endpoints take their
/// options in the query).
pub async fn post(url: &str, path: &str) -> Response {
    send(request(Method::POST, url, path, &[])).await
}

/// Publishes one unnamed event; returns its id.
pub async fn publish(url: &str, data: &str) -> String {
    publish_event(url, None, data).await
}

/// Publishes each of `data` in order (ids count on from the last one).
pub async fn publish_all(url: &str, data: &[&str]) {
    for d in data {
        publish(url, d).await;
    }
}

/// Publishes one event (named when `event` is given); returns its id.
pub async fn publish_event(url: &str, event: Option<&str>, data: &str) -> String {
    let path = match event {
        Some(e) => format!("/publish?event={e}"),
        None => "/publish".to_string(),
    };
    let v = send_json(request(Method::POST, url, &path, &[]).body(data.to_string())).await;
    v["id"].as_str().unwrap().to_string()
}

/// `POST /_faults` with `rules` (one rule or an array), whatever the answer.
pub async fn post_faults(url: &str, rules: &Value) -> Response {
    send(request(Method::POST, url, "/_faults", &[]).json(rules)).await
}

/// Installs fault rules; the server must accept them.
pub async fn add_faults(url: &str, rules: Value) {
    let r = post_faults(url, &rules).await;
    assert_eq!(r.status(), 200, "rule accepted");
}

/// `DELETE /_faults`: removes every rule (and ends a restart window).
pub async fn clear_faults(url: &str) {
    send(request(Method::DELETE, url, "/_faults", &[])).await;
}

/// One SSE block as (field, value) pairs; comments as ("", text).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Block(pub Vec<(String, String)>);

impl Block {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    pub fn id(&self) -> Option<&str> {
        self.get("id")
    }
    pub fn event(&self) -> Option<&str> {
        self.get("event")
    }
    pub fn data(&self) -> String {
        self.0
            .iter()
            .filter(|(k, _)| k == "data")
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
    pub fn is_heartbeat(&self) -> bool {
        self.event() == Some("heartbeat")
    }
    /// An event a client dispatches with an id: an `id` and `data` (not a
    /// retry line, comment, heartbeat, reset or id-only block).
    pub fn is_event(&self) -> bool {
        self.id().is_some() && self.0.iter().any(|(k, _)| k == "data")
    }
}

pub struct SseReader {
    pub status: reqwest::StatusCode,
    pub headers: reqwest::header::HeaderMap,
    stream: futures_util::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buf: String,
    pub ended: bool,
}

impl SseReader {
    pub async fn open(req: reqwest::RequestBuilder) -> SseReader {
        let resp = tokio::time::timeout(Duration::from_secs(5), req.send())
            .await
            .expect("response head in time")
            .expect("request ok");
        SseReader {
            status: resp.status(),
            headers: resp.headers().clone(),
            stream: resp.bytes_stream().boxed(),
            buf: String::new(),
            ended: false,
        }
    }

    /// Next block (including retry-only and comment blocks), or None at the
    /// end of the stream. Panics after `wait` without a block.
    pub async fn next_block_within(&mut self, wait: Duration) -> Option<Block> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(pos) = self.buf.find("\n\n") {
                let raw: String = self.buf.drain(..pos + 2).collect();
                let mut b = Block::default();
                for line in raw.trim_end_matches('\n').split('\n') {
                    if let Some(c) = line.strip_prefix(':') {
                        b.0.push((String::new(), c.trim_start().to_string()));
                    } else if let Some((k, v)) = line.split_once(':') {
                        b.0.push((k.to_string(), v.strip_prefix(' ').unwrap_or(v).to_string()));
                    } else {
                        b.0.push((line.to_string(), String::new()));
                    }
                }
                return Some(b);
            }
            if self.ended {
                return None;
            }
            match tokio::time::timeout_at(deadline, self.stream.next()).await {
                Err(_) => panic!("no SSE block within {wait:?}; buffered: {:?}", self.buf),
                Ok(Some(Ok(chunk))) => self.buf.push_str(&String::from_utf8_lossy(&chunk)),
                Ok(Some(Err(_))) | Ok(None) => self.ended = true,
            }
        }
    }

    pub async fn next_block(&mut self) -> Option<Block> {
        self.next_block_within(Duration::from_secs(5)).await
    }

    /// Next block that is an event with an id or a reset (skips retry lines,
    /// heartbeats and id-only blocks).
    pub async fn next_event(&mut self) -> Option<Block> {
        loop {
            let b = self.next_block().await?;
            if b.is_event() || b.event() == Some("reset") {
                return Some(b);
            }
        }
    }

    /// Reads until the stream ends (panics after `wait`); returns the events.
    pub async fn read_to_end(&mut self, wait: Duration) -> Vec<Block> {
        let mut out = Vec::new();
        while let Some(b) = self.next_block_within(wait).await {
            if b.is_event() {
                out.push(b);
            }
        }
        out
    }
}

/// Opens `GET /sse`, from `last_event_id` when given.
pub async fn sse(url: &str, last_event_id: Option<&str>) -> SseReader {
    match last_event_id {
        Some(id) => open_sse(url, "/sse", &[("Last-Event-ID", id)]).await,
        None => open_sse(url, "/sse", &[]).await,
    }
}

/// Opens an event stream at `{url}{path}` (query included) with request
/// headers.
pub async fn open_sse(url: &str, path: &str, headers: &[(&str, &str)]) -> SseReader {
    SseReader::open(request(Method::GET, url, path, headers)).await
}

/// Every entry of `GET /_log`.
pub async fn log_entries(url: &str) -> Vec<Value> {
    let v = send_json(request(Method::GET, url, "/_log", &[])).await;
    v["entries"].as_array().cloned().unwrap_or_default()
}

/// The `/_log` entries of requests to `path`, oldest first.
pub async fn log_for(url: &str, path: &str) -> Vec<Value> {
    let mut entries = log_entries(url).await;
    entries.retain(|e| e["path"] == path);
    entries
}
