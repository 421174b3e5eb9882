//! Request log: one stdout line per request (and per closed stream), plus a
//! JSON log that tests read with `GET /_log` and clear with `POST /_log/clear`.

use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::extract::{Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::app::AppState;
use crate::body::Tracked;
use crate::clock::{http_date, wall_now};
use crate::serve::ConnInfo;

/// Request headers recorded in the log (lower case).
pub const LOGGED_HEADERS: &[&str] = &[
    "last-event-id",
    "if-none-match",
    "if-modified-since",
    "origin",
    "authorization",
    "cookie",
    "content-type",
    "access-control-request-method",
    "access-control-request-headers",
    "idempotency-key",
    "x-idempotency-key",
];

/// One request as recorded.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LogEntry {
    /// Request id (also sent as the `X-Request-Id` response header).
    pub req: u64,
    /// Connection id (one per TCP connection, counted from 1).
    pub conn: u64,
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    /// The recorded request headers that were present.
    pub headers: BTreeMap<String, String>,
    /// Arrival, ms since server start (monotonic).
    pub t_ms: u64,
    /// Response status; null while pending; 0 = the connection was closed
    /// without a response.
    pub status: Option<u16>,
    /// When the response head was produced.
    pub head_ms: Option<u64>,
    /// When the response body ended (for streams: when the stream closed).
    pub end_ms: Option<u64>,
    /// How the body ended: "complete", "dropped" (client went away or the
    /// connection was dropped) or "error" (aborted mid-body).
    pub end: Option<&'static str>,
    /// True for `text/event-stream` responses.
    pub stream: bool,
    /// SSE events (blocks with an id) sent in the body.
    pub events: u64,
    /// Body bytes sent.
    pub bytes: u64,
    /// The fault applied to this request, if any.
    pub fault: Option<Value>,
}

#[derive(Debug)]
pub struct RequestLog {
    entries: Mutex<VecDeque<LogEntry>>,
    capacity: usize,
    quiet: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl RequestLog {
    pub fn new(capacity: usize, quiet: bool) -> Self {
        RequestLog {
            entries: Mutex::new(VecDeque::new()),
            capacity,
            quiet,
        }
    }

    pub fn push(&self, e: LogEntry) {
        if self.capacity == 0 {
            return;
        }
        let mut g = lock(&self.entries);
        while g.len() >= self.capacity {
            g.pop_front();
        }
        g.push_back(e);
    }

    /// Applies `f` to the entry of request `req`, if it is still recorded.
    pub fn update<R>(&self, req: u64, f: impl FnOnce(&mut LogEntry) -> R) -> Option<R> {
        let mut g = lock(&self.entries);
        // Not a binary search: ids are taken before the entry is pushed, so
        // two requests arriving together can be pushed out of id order, and a
        // binary search then missed one (its status stayed null for good:
        // the flaky "five answers each" poll test). The entry sought is
        // nearly always among the last few.
        let i = g.iter().rposition(|e| e.req == req)?;
        g.get_mut(i).map(f)
    }

    pub fn entries(&self) -> Vec<LogEntry> {
        lock(&self.entries).iter().cloned().collect()
    }

    pub fn clear(&self) {
        lock(&self.entries).clear();
    }

    /// Records a request refused during a restart window (no response).
    pub fn refused<B>(&self, s: &crate::app::Shared, conn: u64, req: &axum::http::Request<B>) {
        let req_id = s.next_req_id();
        let now = s.clock.ms();
        let path = req.uri().path().to_string();
        self.push(LogEntry {
            req: req_id,
            conn,
            method: req.method().to_string(),
            path: path.clone(),
            query: req.uri().query().map(str::to_string),
            headers: pick_headers(req.headers()),
            t_ms: now,
            status: Some(0),
            head_ms: None,
            end_ms: Some(now),
            end: Some("error"),
            stream: false,
            events: 0,
            bytes: 0,
            fault: Some(serde_json::json!({ "kind": "restart", "mode": "refuse" })),
        });
        self.print(&format!(
            "conn={conn} req={req_id} {} {path} refused (restarting)",
            req.method()
        ));
    }

    /// One line on stdout (flushed), unless `--quiet`.
    pub fn print(&self, line: &str) {
        if self.quiet {
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

/// Where the fault middleware notes the fault it applied: recorded in the
/// log at once (visible while the request is pending) and read back by the
/// log middleware for the stdout line.
#[derive(Debug, Clone)]
pub struct FaultNote {
    value: Arc<Mutex<Option<Value>>>,
    state: AppState,
    req: u64,
}

impl FaultNote {
    pub fn set(&self, v: Value) {
        self.state
            .log
            .update(self.req, |e| e.fault = Some(v.clone()));
        *lock(&self.value) = Some(v);
    }
    pub fn get(&self) -> Option<Value> {
        lock(&self.value).clone()
    }
}

/// The request id, in the request's extensions.
#[derive(Debug, Clone, Copy)]
pub struct ReqId(pub u64);

/// Response extension: do not add a `Date` header.
#[derive(Debug, Clone, Copy)]
pub struct NoDate;

pub fn pick_headers(h: &HeaderMap) -> BTreeMap<String, String> {
    LOGGED_HEADERS
        .iter()
        .filter_map(|name| {
            h.get(*name).map(|v| {
                (
                    name.to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
        })
        .collect()
}

/// The outermost middleware: records the request, adds `Date` and
/// `X-Request-Id`, prints the line, and tracks the body to its end.
pub async fn middleware(State(s): State<AppState>, mut req: Request, next: Next) -> Response {
    let conn = req
        .extensions()
        .get::<ConnInfo>()
        .map(|c| c.id)
        .unwrap_or(0);
    let req_id = s.next_req_id();
    let method = req.method().to_string();
    let path = req.uri().path().to_string();
    let query = req.uri().query().map(str::to_string);
    let recorded = !path.starts_with("/_log");
    let headers = pick_headers(req.headers());
    let note = FaultNote {
        value: Arc::default(),
        state: s.clone(),
        req: req_id,
    };
    req.extensions_mut().insert(note.clone());
    req.extensions_mut().insert(ReqId(req_id));
    if recorded {
        s.log.push(LogEntry {
            req: req_id,
            conn,
            method: method.clone(),
            path: path.clone(),
            query: query.clone(),
            headers: headers.clone(),
            t_ms: s.clock.ms(),
            status: None,
            head_ms: None,
            end_ms: None,
            end: None,
            stream: false,
            events: 0,
            bytes: 0,
            fault: None,
        });
    }

    let mut pending = Pending {
        state: s.clone(),
        req: req_id,
        armed: recorded,
    };
    let mut resp = next.run(req).await;
    pending.armed = false;

    // A dropped answer is logged as none (status 0), as a refused request.
    let dropped = resp
        .extensions()
        .get::<crate::faults::DropConnection>()
        .is_some();
    let status = if dropped { 0 } else { resp.status().as_u16() };
    let no_date = resp.extensions().get::<NoDate>().is_some();
    if !no_date && !resp.headers().contains_key(header::DATE) {
        if let Ok(v) = HeaderValue::from_str(&http_date(wall_now())) {
            resp.headers_mut().insert(header::DATE, v);
        }
    }
    resp.headers_mut()
        .insert("x-request-id", HeaderValue::from(req_id));
    let stream = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    let fault = note.get();
    if !recorded {
        return resp;
    }
    let head_ms = s.clock.ms();
    s.log.update(req_id, |e| {
        e.status = Some(status);
        e.head_ms = Some(head_ms);
        e.stream = stream;
        e.fault = fault.clone();
    });
    let mut line = format!("conn={conn} req={req_id} {method} {path}");
    if let Some(q) = &query {
        line.push('?');
        line.push_str(q);
    }
    line.push_str(&format!(" {status}"));
    for (k, v) in &headers {
        line.push_str(&format!(" {k}={v}"));
    }
    if let Some(f) = &fault {
        let kind = f["kind"].as_str().unwrap_or("?");
        match f["rule"].as_u64() {
            Some(rule) => line.push_str(&format!(" fault={kind}#{rule}")),
            None => line.push_str(&format!(" fault={kind}")),
        }
    }
    s.log.print(&line);

    let (parts, body) = resp.into_parts();
    let body = Tracked::new(body, s.clone(), req_id, conn, path, stream);
    Response::from_parts(parts, axum::body::Body::new(body))
}

/// Marks a request whose handler was dropped before answering (the client
/// went away, or `/_restart` dropped the connection) as status 0.
struct Pending {
    state: AppState,
    req: u64,
    armed: bool,
}

impl Drop for Pending {
    fn drop(&mut self) {
        if self.armed {
            let now = self.state.clock.ms();
            self.state.log.update(self.req, |e| {
                e.status = Some(0);
                e.end_ms = Some(now);
                e.end = Some("dropped");
            });
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct LogQuery {
    /// Only entries for this exact path.
    pub path: Option<String>,
    /// Only entries that arrived at or after this time (ms since start).
    pub since_ms: Option<u64>,
}

/// `GET /_log` → `{"now_ms": N, "entries": [LogEntry...]}`.
pub async fn get_log(State(s): State<AppState>, Query(q): Query<LogQuery>) -> Response {
    let entries: Vec<LogEntry> = s
        .log
        .entries()
        .into_iter()
        .filter(|e| q.path.as_deref().is_none_or(|p| e.path == p))
        .filter(|e| q.since_ms.is_none_or(|t| e.t_ms >= t))
        .collect();
    let mut resp = Json(serde_json::json!({
        "now_ms": s.clock.ms(),
        "entries": entries,
    }))
    .into_response();
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// `POST /_log/clear` → `{"cleared": true}`.
pub async fn clear_log(State(s): State<AppState>) -> Json<Value> {
    s.log.clear();
    Json(serde_json::json!({ "cleared": true }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two requests arriving together take ids 7 and 8 but can be pushed as
    /// 8, 7: both must still get their status.
    #[test]
    fn update_finds_entries_pushed_out_of_id_order() {
        let log = RequestLog::new(100, true);
        for req in [1, 2, 3, 5, 4, 8, 7, 9] {
            log.push(LogEntry {
                req,
                ..LogEntry::default()
            });
        }
        for req in 1..=9 {
            let found = log.update(req, |e| e.status = Some(304));
            assert_eq!(found.is_some(), req != 6, "req {req}");
        }
        let statuses: Vec<_> = log.entries().iter().map(|e| e.status).collect();
        assert_eq!(statuses, vec![Some(304); 8]);
    }
}
