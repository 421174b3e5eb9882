//! Helpers shared by the integration tests: start a server on port 0, read
//! an SSE stream block by block.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers"
)]

use std::time::Duration;

use futures_util::StreamExt;
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

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().build().unwrap()
}

pub async fn publish(url: &str, data: &str) -> String {
    publish_event(url, None, data).await
}

pub async fn publish_event(url: &str, event: Option<&str>, data: &str) -> String {
    let mut u = format!("{url}/publish");
    if let Some(e) = event {
        u.push_str(&format!("?event={e}"));
    }
    let v: serde_json::Value = client()
        .post(u)
        .body(data.to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    v["id"].as_str().unwrap().to_string()
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
            let has_data = b.0.iter().any(|(k, _)| k == "data");
            if (b.id().is_some() && has_data) || b.event() == Some("reset") {
                return Some(b);
            }
        }
    }

    /// Reads until the stream ends (panics after `wait`); returns the events.
    pub async fn read_to_end(&mut self, wait: Duration) -> Vec<Block> {
        let mut out = Vec::new();
        while let Some(b) = self.next_block_within(wait).await {
            if b.id().is_some() && b.0.iter().any(|(k, _)| k == "data") {
                out.push(b);
            }
        }
        out
    }
}

pub async fn sse(url: &str, last_event_id: Option<&str>) -> SseReader {
    let mut req = client().get(format!("{url}/sse"));
    if let Some(id) = last_event_id {
        req = req.header("Last-Event-ID", id);
    }
    SseReader::open(req).await
}

pub async fn log_entries(url: &str) -> Vec<serde_json::Value> {
    let v: serde_json::Value = client()
        .get(format!("{url}/_log"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    v["entries"].as_array().cloned().unwrap_or_default()
}
