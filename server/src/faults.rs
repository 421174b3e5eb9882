//! Fault injection, scripted per endpoint and consumed per request.
//!
//! `POST /_faults` queues rules `{"path": "/sse", "times": N | null, "fault":
//! {...}}` (`times` absent = 1, null = until cleared; `path` "*" = any path
//! outside `/_…`). Each request takes the first queued rule for its path
//! (preflights and `/_…` control paths never do). `DELETE /_faults[?path=]`
//! clears, `GET /_faults` lists. `POST /_restart` drops every open connection
//! at once and refuses (or answers 503 to) new requests for a while.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use base64::Engine;
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{json, Value};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::app::AppState;
use crate::body::SseCounter;
use crate::clock::{http_date, skewed, wall_now};
use crate::cursor::query_flag;
use crate::log::{FaultNote, NoDate};
use crate::serve::ConnInfo;

/// `Retry-After` given as delta-seconds or as the raw header text.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RetryAfter {
    Seconds(u64),
    Raw(String),
}

/// `Date` header of a status fault: `true` (default) = the server's clock
/// (shifted by `clock_skew_s`), `false` = no `Date` header, a string = as is.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DateSpec {
    Auto(bool),
    Raw(String),
}

/// One write of a scripted body.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Write {
    /// Wait before this write.
    #[serde(default)]
    pub delay_ms: u64,
    /// Text to write...
    #[serde(default)]
    pub data: Option<String>,
    /// ...or bytes, base64 (standard alphabet).
    #[serde(default)]
    pub base64: Option<String>,
    /// Those bytes this many times over, as one write (absent = 1), so a
    /// multi-MiB body fits a small rule (BC-16). At most 64 MiB in all.
    #[serde(default)]
    pub repeat: Option<usize>,
}

/// How a scripted body ends.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Then {
    /// End the body cleanly.
    #[default]
    Fin,
    /// Keep the response open, sending nothing more.
    Hang,
    /// Abort the connection (no clean end of the body).
    Abort,
}

fn default_status() -> u16 {
    200
}

fn default_trickle_bytes() -> usize {
    1
}

/// A fault. JSON: `{"kind": "<kebab-case name>", ...fields}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Fault {
    /// Answer at once with this status (503/429 with Retry-After, 204, 500,
    /// 200 text/html, ...). The endpoint itself is not called.
    Status {
        status: u16,
        #[serde(default)]
        retry_after: Option<RetryAfter>,
        /// `Retry-After` as an HTTP-date this many seconds after the
        /// (skewed) server clock.
        #[serde(default)]
        retry_after_date_s: Option<i64>,
        #[serde(default)]
        date: Option<DateSpec>,
        /// Emulated skew of the server clock in seconds (positive = ahead):
        /// shifts `Date` and HTTP-date `Retry-After`.
        #[serde(default)]
        clock_skew_s: Option<i64>,
        #[serde(default)]
        content_type: Option<String>,
        #[serde(default)]
        body: Option<String>,
        /// Extra response headers (`RateLimit-Reset`, `X-Poll-Interval`...).
        #[serde(default)]
        headers: BTreeMap<String, String>,
    },
    /// 401 (with `WWW-Authenticate: Bearer`) unless the request carries
    /// `Authorization: Bearer <token>`; with it, the endpoint answers.
    Auth { token: String },
    /// A token that rotates every `period_ms` (`rotating_token`): 401 (as
    /// `auth`) unless the request carries the current or the next one, as
    /// `Authorization: Bearer <token>` or the query parameter `token`. A
    /// stream it lets through ends when its token expires (the client must
    /// come back with a fresh one). `GET /_token?period_ms=` hands tokens out.
    RotatingToken { period_ms: u64 },
    /// End the response body after N events, N ms or N bytes (whichever
    /// first; none given = at once). `abort: true` breaks the connection
    /// instead of ending the body cleanly.
    Close {
        #[serde(default)]
        after_events: Option<u64>,
        #[serde(default)]
        after_ms: Option<u64>,
        #[serde(default)]
        after_bytes: Option<u64>,
        #[serde(default)]
        abort: bool,
    },
    /// Send the head and then nothing more, holding the connection open
    /// (after N events or N ms, if given: a stream that stalls).
    Silent {
        #[serde(default)]
        after_events: Option<u64>,
        #[serde(default)]
        after_ms: Option<u64>,
    },
    /// Hold every body byte until the body ends or `kb` KiB accumulated,
    /// as a buffering proxy does.
    Buffer {
        #[serde(default)]
        kb: Option<u64>,
    },
    /// Ping as the common server libraries do instead of the endpoint's own
    /// heartbeats: a comment `: ping` + CRLF CRLF every `ms` (sse-starlette's
    /// wire format; axum `KeepAlive` and better-sse send a bare `:`), the
    /// first one `ms` after the head. The endpoint's heartbeats and its
    /// `retry:` block are dropped (so no byte comes before the first ping or
    /// event), unless `retry: true` keeps the `retry:` block (better-sse).
    /// `after_first_event: true` sends no ping before the first event.
    Ping {
        ms: u64,
        #[serde(default)]
        retry: bool,
        #[serde(default)]
        after_first_event: bool,
    },
    /// Send the body `bytes` (default 1) bytes at a time, every `ms`.
    Trickle {
        ms: u64,
        #[serde(default = "default_trickle_bytes")]
        bytes: usize,
    },
    /// A scripted raw response: status, headers, then the writes in order
    /// (each after its delay), then fin / hang / abort.
    Script {
        #[serde(default = "default_status")]
        status: u16,
        /// Default `text/event-stream`.
        #[serde(default)]
        content_type: Option<String>,
        #[serde(default)]
        headers: BTreeMap<String, String>,
        #[serde(default)]
        writes: Vec<Write>,
        #[serde(default)]
        then: Then,
    },
    /// Wait before the response head (then the endpoint answers); `ms` null
    /// = never answer (until shutdown or `/_restart`).
    Delay {
        #[serde(default)]
        ms: Option<u64>,
    },
    /// Resume only from the `Last-Event-ID` header, as many hand-written
    /// servers do: the cursor query parameters (`lastEventId`,
    /// `last_event_id`) are ignored, and a request without the header
    /// replays everything still buffered from the first event.
    HeaderOnlyResume,
    /// Lets the endpoint answer (so a `POST /send` is applied), then closes
    /// the connection without sending a byte of the answer: the client sees
    /// a network error. `every: N` drops only the Nth, 2Nth, … request that
    /// takes the rule; `probability` (0..=1) drops each with that chance,
    /// decided by a hash of `seed` and the request's number, so the same
    /// requests are dropped on every run. Neither: every request it takes.
    DropResponse {
        #[serde(default)]
        every: Option<u64>,
        #[serde(default)]
        probability: Option<f64>,
        #[serde(default)]
        seed: u64,
    },
}

/// Response extension set by a `drop-response` fault: the connection is
/// closed instead of sending this response (see `serve.rs`).
#[derive(Debug, Clone, Copy)]
pub struct DropConnection;

/// Whether a `drop-response` rule drops its `n`th request (from 1).
pub fn drops_nth(n: u64, every: Option<u64>, probability: Option<f64>, seed: u64) -> bool {
    match (every, probability) {
        (Some(every), _) => every > 0 && n % every == 0,
        (None, Some(p)) => unit_hash(seed, n) < p,
        (None, None) => true,
    }
}

/// The `n`th output of a SplitMix64 stream seeded with `seed`, as a number
/// in [0, 1).
fn unit_hash(seed: u64, n: u64) -> f64 {
    const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut z = seed.wrapping_add(n.wrapping_mul(GAMMA));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

fn one() -> Option<u64> {
    Some(1)
}

fn nullable<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Option::<u64>::deserialize(d)
}

/// Which requests a rule applies to besides its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum When {
    /// Only requests that carry a cursor (`Last-Event-ID`, `lastEventId` /
    /// `last_event_id`, `If-None-Match`, `If-Modified-Since`): a server that
    /// answers 409 to a resume from a cursor it no longer knows.
    Cursor,
    /// Only requests without one.
    NoCursor,
}

impl When {
    fn matches(when: Option<When>, has_cursor: bool) -> bool {
        match when {
            None => true,
            Some(When::Cursor) => has_cursor,
            Some(When::NoCursor) => !has_cursor,
        }
    }
}

/// What `POST /_faults` takes (one rule or an array of them).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// Exact request path, or "*" for any path outside `/_…`.
    pub path: String,
    /// `"cursor"` / `"no-cursor"`: only requests with / without a cursor
    /// (absent = every request).
    #[serde(default)]
    pub when: Option<When>,
    /// Requests it applies to; absent = 1, null = until cleared.
    #[serde(default = "one", deserialize_with = "nullable")]
    pub times: Option<u64>,
    pub fault: Fault,
}

/// A queued rule.
#[derive(Debug, Clone, Serialize)]
pub struct Rule {
    pub id: u64,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<When>,
    /// Applications left (null = until cleared).
    pub remaining: Option<u64>,
    /// Requests that took it so far (numbers them for `drop-response`).
    pub taken: u64,
    pub fault: Fault,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RestartMode {
    #[serde(rename = "refuse")]
    Refuse,
    #[serde(rename = "503")]
    Unavailable,
}

/// What each connection watches: the latest restart, and the connection
/// that asked for it (kept, so it gets its answer).
#[derive(Debug, Clone, Copy, Default)]
pub struct RestartSignal {
    pub generation: u64,
    pub except_conn: u64,
}

/// Fault rules and the restart state.
#[derive(Debug)]
pub struct Faults {
    rules: Mutex<Vec<Rule>>,
    next_rule: AtomicU64,
    restart_until_ms: AtomicU64,
    restart_503: AtomicBool,
    restart_tx: watch::Sender<RestartSignal>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            rules: Mutex::new(Vec::new()),
            next_rule: AtomicU64::new(1),
            restart_until_ms: AtomicU64::new(0),
            restart_503: AtomicBool::new(false),
            restart_tx: watch::Sender::new(RestartSignal::default()),
        }
    }
}

impl Faults {
    pub fn add(&self, spec: RuleSpec) -> Rule {
        let rule = Rule {
            id: self.next_rule.fetch_add(1, Ordering::Relaxed),
            path: spec.path,
            when: spec.when,
            remaining: spec.times,
            taken: 0,
            fault: spec.fault,
        };
        if rule.remaining != Some(0) {
            lock(&self.rules).push(rule.clone());
        }
        rule
    }

    pub fn list(&self) -> Vec<Rule> {
        lock(&self.rules).clone()
    }

    /// Removes the rules for `path` (all rules when None); returns how many.
    pub fn clear(&self, path: Option<&str>) -> usize {
        let mut g = lock(&self.rules);
        let before = g.len();
        g.retain(|r| path.is_some_and(|p| r.path != p));
        before - g.len()
    }

    /// Takes one application of the first rule matching `path` (for a
    /// request without a cursor).
    pub fn take(&self, path: &str) -> Option<(u64, Fault)> {
        self.take_for(path, false)
    }

    /// Takes one application of the first rule matching `path` and, for
    /// rules with a `when`, whether the request carries a cursor.
    pub fn take_for(&self, path: &str, has_cursor: bool) -> Option<(u64, Fault)> {
        self.take_nth(path, has_cursor).map(|(id, f, _)| (id, f))
    }

    /// As [`Faults::take_for`], also returning which application of the
    /// rule this is (from 1).
    pub fn take_nth(&self, path: &str, has_cursor: bool) -> Option<(u64, Fault, u64)> {
        if path.starts_with("/_") {
            return None;
        }
        let mut g = lock(&self.rules);
        let i = g
            .iter()
            .position(|r| (r.path == path || r.path == "*") && When::matches(r.when, has_cursor))?;
        let rule = &mut g[i];
        rule.taken += 1;
        let out = (rule.id, rule.fault.clone(), rule.taken);
        if let Some(n) = rule.remaining.as_mut() {
            *n = n.saturating_sub(1);
            if *n == 0 {
                g.remove(i);
            }
        }
        Some(out)
    }

    pub fn subscribe_restart(&self) -> watch::Receiver<RestartSignal> {
        self.restart_tx.subscribe()
    }

    /// Drops every connection but `except_conn` and refuses new requests
    /// until `until_ms`. Returns the number of connections told to drop.
    pub fn restart(&self, until_ms: u64, mode: RestartMode, except_conn: u64) -> usize {
        self.restart_503
            .store(mode == RestartMode::Unavailable, Ordering::SeqCst);
        self.restart_until_ms.store(until_ms, Ordering::SeqCst);
        let generation = self.restart_tx.borrow().generation + 1;
        self.restart_tx.send_replace(RestartSignal {
            generation,
            except_conn,
        });
        self.restart_tx.receiver_count().saturating_sub(1)
    }

    /// The restart window in force at `now_ms`: its mode and ms left.
    pub fn restarting(&self, now_ms: u64) -> Option<(RestartMode, u64)> {
        let until = self.restart_until_ms.load(Ordering::SeqCst);
        if now_ms >= until {
            return None;
        }
        let mode = if self.restart_503.load(Ordering::SeqCst) {
            RestartMode::Unavailable
        } else {
            RestartMode::Refuse
        };
        Some((mode, until - now_ms))
    }

    pub fn end_restart(&self) {
        self.restart_until_ms.store(0, Ordering::SeqCst);
    }
}

// ---------------------------------------------------------------------------
// Control endpoints

fn bad_request(msg: String) -> Response {
    (StatusCode::BAD_REQUEST, Json(json!({ "error": msg }))).into_response()
}

/// `POST /_faults` with a rule or an array of rules →
/// `{"queued": [Rule...]}` (400 with `{"error"}` on a bad rule).
pub async fn post_faults(State(s): State<AppState>, body: Bytes) -> Response {
    let specs: Vec<RuleSpec> = match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Array(items)) => {
            match items
                .into_iter()
                .map(serde_json::from_value)
                .collect::<Result<Vec<RuleSpec>, _>>()
            {
                Ok(v) => v,
                Err(e) => return bad_request(e.to_string()),
            }
        }
        Ok(v) => match serde_json::from_value(v) {
            Ok(spec) => vec![spec],
            Err(e) => return bad_request(e.to_string()),
        },
        Err(e) => return bad_request(e.to_string()),
    };
    for spec in &specs {
        if let Err(e) = validate(&spec.fault) {
            return bad_request(e);
        }
    }
    let queued: Vec<Rule> = specs.into_iter().map(|r| s.faults.add(r)).collect();
    Json(json!({ "queued": queued })).into_response()
}

fn validate(f: &Fault) -> Result<(), String> {
    let check_headers = |h: &BTreeMap<String, String>| -> Result<(), String> {
        for (k, v) in h {
            HeaderName::try_from(k.as_str()).map_err(|e| format!("header {k}: {e}"))?;
            HeaderValue::try_from(v.as_str()).map_err(|e| format!("header {k}: {e}"))?;
        }
        Ok(())
    };
    match f {
        Fault::Status {
            status,
            headers,
            date,
            content_type,
            retry_after,
            ..
        } => {
            StatusCode::from_u16(*status).map_err(|e| e.to_string())?;
            check_headers(headers)?;
            if let Some(DateSpec::Raw(d)) = date {
                HeaderValue::try_from(d.as_str()).map_err(|e| e.to_string())?;
            }
            if let Some(RetryAfter::Raw(r)) = retry_after {
                HeaderValue::try_from(r.as_str()).map_err(|e| e.to_string())?;
            }
            if let Some(ct) = content_type {
                HeaderValue::try_from(ct.as_str()).map_err(|e| e.to_string())?;
            }
        }
        Fault::Script {
            status,
            headers,
            writes,
            content_type,
            ..
        } => {
            StatusCode::from_u16(*status).map_err(|e| e.to_string())?;
            check_headers(headers)?;
            if let Some(ct) = content_type {
                HeaderValue::try_from(ct.as_str()).map_err(|e| e.to_string())?;
            }
            for w in writes {
                write_bytes(w)?;
            }
        }
        Fault::Trickle { bytes: 0, .. } => return Err("trickle: bytes must be > 0".into()),
        Fault::Ping { ms: 0, .. } => return Err("ping: ms must be > 0".into()),
        Fault::DropResponse {
            every, probability, ..
        } => validate_drop(*every, *probability)?,
        _ => {}
    }
    Ok(())
}

fn validate_drop(every: Option<u64>, probability: Option<f64>) -> Result<(), String> {
    match (every, probability) {
        (Some(_), Some(_)) => Err("drop-response: every or probability, not both".into()),
        (Some(0), None) => Err("drop-response: every must be > 0".into()),
        (None, Some(p)) if !(0.0..=1.0).contains(&p) => {
            Err("drop-response: probability must lie in 0..=1".into())
        }
        _ => Ok(()),
    }
}

fn write_bytes(w: &Write) -> Result<Bytes, String> {
    let one: Vec<u8> = match (&w.data, &w.base64) {
        (Some(d), None) => d.clone().into_bytes(),
        (None, Some(b)) => base64::engine::general_purpose::STANDARD
            .decode(b)
            .map_err(|e| format!("base64: {e}"))?,
        (None, None) => Vec::new(),
        (Some(_), Some(_)) => return Err("a write has data or base64, not both".into()),
    };
    let n = w.repeat.unwrap_or(1);
    if one.len().saturating_mul(n) > 64 << 20 {
        return Err("a write repeats to more than 64 MiB".into());
    }
    Ok(Bytes::from(one.repeat(n)))
}

/// `GET /_faults` → `{"rules": [Rule...], "restarting_ms": N | null}`.
pub async fn get_faults(State(s): State<AppState>) -> Json<Value> {
    let restarting = s.faults.restarting(s.clock.ms()).map(|(_, left)| left);
    Json(json!({ "rules": s.faults.list(), "restarting_ms": restarting }))
}

/// `DELETE /_faults[?path=/sse]` → `{"cleared": N}`; also ends a restart
/// window when no path is given.
pub async fn delete_faults(
    State(s): State<AppState>,
    Query(q): Query<HashMap<String, String>>,
) -> Json<Value> {
    let path = q.get("path").map(String::as_str);
    let n = s.faults.clear(path);
    if path.is_none() {
        s.faults.end_restart();
    }
    Json(json!({ "cleared": n }))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestartSpec {
    /// How long new requests are refused (default 1000).
    #[serde(default)]
    pub ms: Option<u64>,
    /// "refuse" (default: close the connection without an answer) or "503"
    /// (answer 503 with `Retry-After`).
    #[serde(default)]
    pub mode: Option<RestartMode>,
    /// Also forget every event and count ids from 1 again, as a restarted
    /// server with in-memory state would (old cursors then get a reset).
    #[serde(default)]
    pub lose_state: bool,
    /// With `lose_state`: `false` answers an old cursor (newer than anything
    /// published since) with live events only instead of a reset, as a naive
    /// server does; it then reissues ids 1, 2, … Default `true`.
    #[serde(default)]
    pub reset_old_cursors: Option<bool>,
}

/// `POST /_restart` with an optional JSON body (or query `ms`, `mode`,
/// `lose_state`) → `{"dropped": N, "ms": N, "mode": "refuse"|"503"}`.
pub async fn post_restart(
    State(s): State<AppState>,
    conn: Option<axum::Extension<ConnInfo>>,
    Query(q): Query<HashMap<String, String>>,
    body: Bytes,
) -> Response {
    let mut spec: RestartSpec = if body.iter().all(u8::is_ascii_whitespace) {
        RestartSpec::default()
    } else {
        match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => return bad_request(e.to_string()),
        }
    };
    if let Some(ms) = q.get("ms").and_then(|v| v.parse().ok()) {
        spec.ms = Some(ms);
    }
    match q.get("mode").map(String::as_str) {
        Some("503") => spec.mode = Some(RestartMode::Unavailable),
        Some("refuse") => spec.mode = Some(RestartMode::Refuse),
        _ => {}
    }
    if query_flag(&q, "lose_state") {
        spec.lose_state = true;
    }
    if let Some(v) = q.get("reset_old_cursors") {
        spec.reset_old_cursors = Some(v == "1" || v == "true");
    }
    let ms = spec.ms.unwrap_or(1000);
    let mode = spec.mode.unwrap_or(RestartMode::Refuse);
    if spec.lose_state {
        s.hub.forget_all(spec.reset_old_cursors.unwrap_or(true));
    }
    let except = conn.map(|c| c.0.id).unwrap_or(0);
    let dropped = s.faults.restart(s.clock.ms() + ms, mode, except);
    s.log.print(&format!(
        "restart: dropping {dropped} connections, refusing for {ms}ms ({mode:?})"
    ));
    Json(json!({ "dropped": dropped, "ms": ms, "mode": mode })).into_response()
}

// ---------------------------------------------------------------------------
// The middleware

/// 401 with `WWW-Authenticate: Bearer`.
fn unauthorized() -> Response {
    let mut resp = (
        StatusCode::UNAUTHORIZED,
        Json(json!({ "error": "unauthorized" })),
    )
        .into_response();
    resp.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"tidings\""),
    );
    resp
}

/// The `rotating-token` fault's token number `i`.
pub fn rotating_token(i: u64) -> String {
    format!("tok{i}-s3cr3t")
}

/// The token a request presents: `Authorization: Bearer <token>`, else the
/// query parameter `token`; empty when neither.
fn presented_token(req: &Request, query: &HashMap<String, String>) -> String {
    let bearer = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    bearer
        .or(query.get("token").map(String::as_str))
        .unwrap_or_default()
        .to_string()
}

/// `GET /_token?period_ms=N`: `{ token, expires_in_ms }` for the
/// `rotating-token` fault of that period: the current token, or the next one
/// when the current has under a quarter of its period left (so a request
/// made with it at once is not refused by the rotation).
pub async fn get_token(
    State(s): State<AppState>,
    Query(q): Query<HashMap<String, String>>,
) -> Json<Value> {
    let period_ms = q
        .get("period_ms")
        .and_then(|p| p.parse::<u64>().ok())
        .unwrap_or(2000)
        .max(1);
    let now = s.clock.ms();
    let mut i = now / period_ms;
    if (i + 1) * period_ms - now < period_ms / 4 {
        i += 1;
    }
    let expires_in_ms = (i + 1) * period_ms - now;
    Json(json!({ "token": rotating_token(i), "expires_in_ms": expires_in_ms }))
}

fn note(req: &Request, v: Value) {
    if let Some(n) = req.extensions().get::<FaultNote>() {
        n.set(v);
    }
}

fn fault_json(rule: u64, path: &str, f: &Fault) -> Value {
    let mut v = serde_json::to_value(f).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert("rule".into(), json!(rule));
        m.insert("path".into(), json!(path));
    }
    v
}

/// The error that makes hyper break the connection off mid-body. Waits a
/// moment first: hyper flushes what it holds only when the body is pending,
/// and an error in the same poll would lose the head and the last writes.
async fn abort_error() -> axum::Error {
    tokio::time::sleep(Duration::from_millis(20)).await;
    axum::Error::new(std::io::Error::other("fault: connection aborted"))
}

/// Applies the restart window and the queued faults. Sits inside CORS (so
/// faulted answers stay readable cross-origin) and outside the endpoints.
pub async fn middleware(State(s): State<AppState>, req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    if path.starts_with("/_") || req.method() == axum::http::Method::OPTIONS {
        return next.run(req).await;
    }
    if let Some((RestartMode::Unavailable, left)) = s.faults.restarting(s.clock.ms()) {
        note(&req, json!({ "kind": "restart", "mode": "503" }));
        let secs = left.div_ceil(1000).max(1);
        let mut resp = (StatusCode::SERVICE_UNAVAILABLE, "restarting\n").into_response();
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        return resp;
    }
    let query: HashMap<String, String> = Query::try_from_uri(req.uri())
        .map(|q| q.0)
        .unwrap_or_default();
    let has_cursor = crate::cursor::carries_cursor(req.headers(), &query);
    let Some((rule, fault, nth)) = s.faults.take_nth(&path, has_cursor) else {
        return next.run(req).await;
    };
    let mut applied = fault_json(rule, &path, &fault);
    let shutdown = s.shutdown.clone();
    match fault {
        Fault::Status {
            status,
            retry_after,
            retry_after_date_s,
            date,
            clock_skew_s,
            content_type,
            body,
            headers,
        } => {
            note(&req, applied);
            let now = skewed(wall_now(), clock_skew_s.unwrap_or(0));
            let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut resp = Response::new(Body::from(body.unwrap_or_default()));
            *resp.status_mut() = code;
            let h = resp.headers_mut();
            h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            if let Some(ct) = content_type.and_then(|c| HeaderValue::try_from(c).ok()) {
                h.insert(header::CONTENT_TYPE, ct);
            }
            let ra = match (retry_after, retry_after_date_s) {
                (_, Some(d)) => Some(http_date(skewed(now, d))),
                (Some(RetryAfter::Seconds(n)), None) => Some(n.to_string()),
                (Some(RetryAfter::Raw(r)), None) => Some(r),
                (None, None) => None,
            };
            if let Some(v) = ra.and_then(|r| HeaderValue::try_from(r).ok()) {
                h.insert(header::RETRY_AFTER, v);
            }
            match date {
                None | Some(DateSpec::Auto(true)) => {
                    if let Ok(v) = HeaderValue::try_from(http_date(now)) {
                        h.insert(header::DATE, v);
                    }
                }
                Some(DateSpec::Auto(false)) => {
                    resp.extensions_mut().insert(NoDate);
                }
                Some(DateSpec::Raw(d)) => {
                    if let Ok(v) = HeaderValue::try_from(d) {
                        h.insert(header::DATE, v);
                    }
                }
            }
            add_headers(&mut resp, &headers);
            resp
        }
        Fault::Auth { token } => {
            let presented = req
                .headers()
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .map(str::trim);
            let ok = presented == Some(token.as_str());
            if let Value::Object(m) = &mut applied {
                m.insert(
                    "result".into(),
                    json!(if ok { "passed" } else { "rejected" }),
                );
            }
            note(&req, applied);
            if ok {
                return next.run(req).await;
            }
            unauthorized()
        }
        Fault::RotatingToken { period_ms } => {
            let period_ms = period_ms.max(1);
            let now = s.clock.ms();
            let presented = presented_token(&req, &query);
            let k = now / period_ms;
            let valid = [k, k + 1]
                .into_iter()
                .find(|&i| presented == rotating_token(i));
            if let Value::Object(m) = &mut applied {
                m.insert("token".into(), json!(presented));
                m.insert(
                    "result".into(),
                    json!(if valid.is_some() {
                        "passed"
                    } else {
                        "rejected"
                    }),
                );
            }
            note(&req, applied);
            let Some(i) = valid else {
                return unauthorized();
            };
            let left = ((i + 1) * period_ms).saturating_sub(now);
            let resp = next.run(req).await;
            map_body(resp, |body| {
                cut_body(
                    body,
                    None,
                    Some(left),
                    None,
                    Cut::Close { abort: false },
                    shutdown,
                )
            })
        }
        Fault::Delay { ms } => {
            note(&req, applied);
            match ms {
                Some(ms) => {
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
                        _ = shutdown.cancelled() => {}
                    }
                    next.run(req).await
                }
                None => {
                    shutdown.cancelled().await;
                    (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response()
                }
            }
        }
        Fault::Script {
            status,
            content_type,
            headers,
            writes,
            then,
        } => {
            note(&req, applied);
            let chunks: Vec<(u64, Bytes)> = writes
                .iter()
                .map(|w| (w.delay_ms, write_bytes(w).unwrap_or_default()))
                .collect();
            let stream = async_stream::stream! {
                for (delay, bytes) in chunks {
                    if delay > 0 {
                        tokio::select! {
                            _ = tokio::time::sleep(Duration::from_millis(delay)) => {}
                            _ = shutdown.cancelled() => return,
                        }
                    }
                    yield Ok::<Bytes, axum::Error>(bytes);
                }
                match then {
                    Then::Fin => {}
                    Then::Hang => shutdown.cancelled().await,
                    Then::Abort => yield Err(abort_error().await),
                }
            };
            let mut resp = Response::new(Body::from_stream(stream));
            *resp.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            let ct = content_type.unwrap_or_else(|| "text/event-stream".into());
            let h = resp.headers_mut();
            if let Ok(v) = HeaderValue::try_from(ct) {
                h.insert(header::CONTENT_TYPE, v);
            }
            h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            add_headers(&mut resp, &headers);
            resp
        }
        Fault::Close {
            after_events,
            after_ms,
            after_bytes,
            abort,
        } => {
            note(&req, applied);
            let resp = next.run(req).await;
            map_body(resp, |body| {
                cut_body(
                    body,
                    after_events,
                    after_ms,
                    after_bytes,
                    Cut::Close { abort },
                    shutdown,
                )
            })
        }
        Fault::Silent {
            after_events,
            after_ms,
        } => {
            note(&req, applied);
            let resp = next.run(req).await;
            map_body(resp, |body| {
                cut_body(body, after_events, after_ms, None, Cut::Hang, shutdown)
            })
        }
        Fault::Buffer { kb } => {
            note(&req, applied);
            let resp = next.run(req).await;
            map_body(resp, |body| buffer_body(body, kb))
        }
        Fault::Ping {
            ms,
            retry,
            after_first_event,
        } => {
            note(&req, applied);
            let resp = next.run(req).await;
            let ping = PingSpec {
                period: Duration::from_millis(ms),
                retry,
                after_first_event,
            };
            map_body(resp, |body| ping_body(body, ping, shutdown))
        }
        Fault::Trickle { ms, bytes } => {
            note(&req, applied);
            let resp = next.run(req).await;
            map_body(resp, |body| trickle_body(body, ms, bytes, shutdown))
        }
        Fault::HeaderOnlyResume => {
            note(&req, applied);
            next.run(header_only_resume(req)).await
        }
        Fault::DropResponse {
            every,
            probability,
            seed,
        } => {
            let cut = drops_nth(nth, every, probability, seed);
            if let Value::Object(m) = &mut applied {
                m.insert("n".into(), json!(nth));
                m.insert(
                    "result".into(),
                    json!(if cut { "dropped" } else { "passed" }),
                );
            }
            note(&req, applied);
            let mut resp = next.run(req).await;
            if cut {
                resp.extensions_mut().insert(DropConnection);
            }
            resp
        }
    }
}

/// `req` without the cursor query parameters, and with `Last-Event-ID: 0`
/// (replay from the first event) when it carried no such header.
fn header_only_resume(mut req: Request) -> Request {
    let uri = req.uri();
    let kept: Vec<&str> = uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|pair| {
            let key = pair.split_once('=').map_or(*pair, |(k, _)| k);
            !pair.is_empty() && !crate::cursor::CURSOR_PARAMS.contains(&key)
        })
        .collect();
    let path_and_query = if kept.is_empty() {
        uri.path().to_string()
    } else {
        format!("{}?{}", uri.path(), kept.join("&"))
    };
    if let Ok(new_uri) = axum::http::Uri::try_from(path_and_query) {
        *req.uri_mut() = new_uri;
    }
    let has_header = req
        .headers()
        .get("last-event-id")
        .is_some_and(|v| !v.as_bytes().iter().all(u8::is_ascii_whitespace));
    if !has_header {
        req.headers_mut()
            .insert("last-event-id", HeaderValue::from_static("0"));
    }
    req
}

fn add_headers(resp: &mut Response, headers: &BTreeMap<String, String>) {
    for (k, v) in headers {
        if let (Ok(k), Ok(v)) = (
            HeaderName::try_from(k.as_str()),
            HeaderValue::try_from(v.as_str()),
        ) {
            resp.headers_mut().insert(k, v);
        }
    }
}

fn map_body(resp: Response, f: impl FnOnce(Body) -> Body) -> Response {
    let (mut parts, body) = resp.into_parts();
    // The new body's length is not the old one's.
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, f(body))
}

#[derive(Debug, Clone, Copy)]
enum Cut {
    Close { abort: bool },
    Hang,
}

/// Passes the body through until N events, N ms or N bytes, then closes
/// (cleanly or by abort) or goes silent.
fn cut_body(
    body: Body,
    after_events: Option<u64>,
    after_ms: Option<u64>,
    after_bytes: Option<u64>,
    cut: Cut,
    shutdown: CancellationToken,
) -> Body {
    let stream = async_stream::stream! {
        let mut data = body.into_data_stream();
        let mut counter = SseCounter::default();
        let mut sent: u64 = 0;
        let deadline = after_ms.map(|ms| tokio::time::Instant::now() + Duration::from_millis(ms));
        let unconditional = after_events.is_none() && after_ms.is_none() && after_bytes.is_none();
        let mut reached = unconditional || after_events == Some(0) || after_bytes == Some(0);
        while !reached {
            let next = tokio::select! {
                biased;
                _ = sleep_until_opt(deadline) => None,
                c = data.next() => Some(c),
            };
            match next {
                None => reached = true,
                Some(Some(Ok(chunk))) => {
                    let mut end = chunk.len();
                    if let Some(n) = after_events {
                        if let Some(p) = counter.feed(&chunk, n) {
                            end = p;
                            reached = true;
                        }
                    }
                    if let Some(b) = after_bytes {
                        let left = usize::try_from(b.saturating_sub(sent)).unwrap_or(usize::MAX);
                        if left <= end {
                            end = left;
                            reached = true;
                        }
                    }
                    sent += end as u64;
                    if end > 0 {
                        yield Ok::<Bytes, axum::Error>(chunk.slice(..end));
                    }
                }
                Some(Some(Err(e))) => {
                    yield Err(e);
                    return;
                }
                // The body ended before the fault triggered.
                Some(None) => return,
            }
        }
        drop(data);
        match cut {
            Cut::Close { abort: false } => {}
            Cut::Close { abort: true } => yield Err(abort_error().await),
            Cut::Hang => shutdown.cancelled().await,
        }
    };
    Body::from_stream(stream)
}

async fn sleep_until_opt(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// Holds bytes until the body ends or `kb` KiB are held.
fn buffer_body(body: Body, kb: Option<u64>) -> Body {
    let limit = kb.map(|k| usize::try_from(k.saturating_mul(1024)).unwrap_or(usize::MAX));
    let stream = async_stream::stream! {
        let mut data = body.into_data_stream();
        let mut held = BytesMut::new();
        while let Some(chunk) = data.next().await {
            match chunk {
                Ok(c) => {
                    held.extend_from_slice(&c);
                    if limit.is_some_and(|l| held.len() >= l) {
                        yield Ok::<Bytes, axum::Error>(held.split().freeze());
                    }
                }
                Err(e) => {
                    if !held.is_empty() {
                        yield Ok(held.split().freeze());
                    }
                    yield Err(e);
                    return;
                }
            }
        }
        if !held.is_empty() {
            yield Ok(held.split().freeze());
        }
    };
    Body::from_stream(stream)
}

/// The comment a `ping` fault sends (sse-starlette's wire format).
pub const PING: &[u8] = b": ping\r\n\r\n";

#[derive(Debug, Clone, Copy)]
struct PingSpec {
    period: Duration,
    retry: bool,
    after_first_event: bool,
}

/// The endpoint's chunk without its heartbeats (and, in the first chunk,
/// without its `retry:` block unless kept). `/sse` writes each heartbeat
/// whole, and the `retry:` block only at the start of its first chunk.
fn strip_own_pings(chunk: &[u8], first: bool, keep_retry: bool) -> Vec<u8> {
    let mut rest = chunk;
    if first && !keep_retry && rest.starts_with(b"retry:") {
        if let Some(end) = rest.windows(2).position(|w| w == b"\n\n") {
            rest = &rest[end + 2..];
        }
    }
    let hb = crate::sse::HEARTBEAT.as_bytes();
    let mut out = Vec::with_capacity(rest.len());
    let mut i = 0;
    while i < rest.len() {
        if rest[i..].starts_with(hb) {
            i += hb.len();
        } else {
            out.push(rest[i]);
            i += 1;
        }
    }
    out
}

/// Replaces the endpoint's heartbeats by comment pings every `period`.
fn ping_body(body: Body, ping: PingSpec, shutdown: CancellationToken) -> Body {
    let stream = async_stream::stream! {
        let mut data = body.into_data_stream();
        let mut counter = SseCounter::default();
        let mut first = true;
        let start = tokio::time::Instant::now() + ping.period;
        let mut next_ping = (!ping.after_first_event).then_some(start);
        loop {
            let chunk = tokio::select! {
                biased;
                _ = shutdown.cancelled() => return,
                _ = sleep_until_opt(next_ping) => {
                    next_ping = Some(tokio::time::Instant::now() + ping.period);
                    yield Ok::<Bytes, axum::Error>(Bytes::from_static(PING));
                    continue;
                }
                c = data.next() => c,
            };
            match chunk {
                Some(Ok(c)) => {
                    let out = strip_own_pings(&c, first, ping.retry);
                    first = false;
                    if next_ping.is_none() {
                        counter.count(&out);
                        if counter.events > 0 {
                            next_ping = Some(tokio::time::Instant::now() + ping.period);
                        }
                    }
                    if !out.is_empty() {
                        yield Ok(Bytes::from(out));
                    }
                }
                Some(Err(e)) => {
                    yield Err(e);
                    return;
                }
                None => return,
            }
        }
    };
    Body::from_stream(stream)
}

/// Sends `step` bytes every `ms`.
fn trickle_body(body: Body, ms: u64, step: usize, shutdown: CancellationToken) -> Body {
    let stream = async_stream::stream! {
        let mut data = body.into_data_stream();
        let mut first = true;
        while let Some(chunk) = data.next().await {
            match chunk {
                Ok(c) => {
                    let mut off = 0;
                    while off < c.len() {
                        if !first {
                            tokio::select! {
                                _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
                                _ = shutdown.cancelled() => return,
                            }
                        }
                        first = false;
                        let end = (off + step).min(c.len());
                        yield Ok::<Bytes, axum::Error>(c.slice(off..end));
                        off = end;
                    }
                }
                Err(e) => {
                    yield Err(e);
                    return;
                }
            }
        }
    };
    Body::from_stream(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(v: Value) -> RuleSpec {
        serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn times_default_one_null_forever() {
        let f = Faults::default();
        f.add(spec(
            json!({"path": "/sse", "fault": {"kind": "status", "status": 503}}),
        ));
        f.add(spec(
            json!({"path": "/sse", "times": 2, "fault": {"kind": "auth", "token": "t"}}),
        ));
        assert!(matches!(
            f.take("/sse"),
            Some((1, Fault::Status { status: 503, .. }))
        ));
        assert!(matches!(f.take("/sse"), Some((2, Fault::Auth { .. }))));
        assert!(matches!(f.take("/sse"), Some((2, Fault::Auth { .. }))));
        assert!(f.take("/sse").is_none());
        f.add(spec(
            json!({"path": "*", "times": null, "fault": {"kind": "delay", "ms": 1}}),
        ));
        for _ in 0..5 {
            assert!(f.take("/poll").is_some());
        }
        assert!(f.take("/_log").is_none());
        assert_eq!(f.clear(None), 1);
        assert!(f.take("/poll").is_none());
    }

    #[test]
    fn when_cursor_or_no_cursor() {
        let f = Faults::default();
        f.add(spec(json!({"path": "/lp", "when": "cursor", "times": null,
            "fault": {"kind": "status", "status": 409}})));
        f.add(spec(json!({"path": "/lp", "when": "no-cursor",
            "fault": {"kind": "delay", "ms": 1}})));
        assert!(matches!(
            f.take_for("/lp", true),
            Some((1, Fault::Status { status: 409, .. }))
        ));
        assert!(matches!(f.take_for("/lp", true), Some((1, _))));
        assert!(matches!(
            f.take_for("/lp", false),
            Some((2, Fault::Delay { .. }))
        ));
        assert!(f.take_for("/lp", false).is_none());
        assert!(f.take("/lp").is_none());
        assert!(serde_json::from_value::<RuleSpec>(
            json!({"path": "/lp", "when": "always", "fault": {"kind": "buffer"}})
        )
        .is_err());
    }

    #[test]
    fn clear_by_path() {
        let f = Faults::default();
        f.add(spec(json!({"path": "/a", "fault": {"kind": "buffer"}})));
        f.add(spec(json!({"path": "/b", "fault": {"kind": "buffer"}})));
        assert_eq!(f.clear(Some("/a")), 1);
        assert!(f.take("/a").is_none());
        assert!(f.take("/b").is_some());
    }

    #[test]
    fn unknown_fields_and_kinds_are_rejected() {
        let bad = [
            json!({"path": "/sse", "fault": {"kind": "status", "status": 503, "oops": 1}}),
            json!({"path": "/sse", "fault": {"kind": "explode"}}),
            json!({"path": "/sse", "fault": {"kind": "trickle"}}),
        ];
        for b in bad {
            assert!(
                serde_json::from_value::<RuleSpec>(b.clone()).is_err(),
                "{b}"
            );
        }
    }

    #[test]
    fn header_only_resume_drops_the_query_cursor() {
        let req = |uri: &str, header: Option<&str>| {
            let mut b = Request::builder().uri(uri);
            if let Some(h) = header {
                b = b.header("last-event-id", h);
            }
            b.body(Body::empty()).unwrap_or_default()
        };
        let out = header_only_resume(req("/sse?case=a&lastEventId=4&last_event_id=4&x=1", None));
        assert_eq!(out.uri().to_string(), "/sse?case=a&x=1");
        assert_eq!(out.headers()["last-event-id"], "0");
        let out = header_only_resume(req("/sse?lastEventId=4", Some("3")));
        assert_eq!(out.uri().to_string(), "/sse");
        assert_eq!(out.headers()["last-event-id"], "3");
    }

    #[test]
    fn strip_own_pings_keeps_events_only() {
        let hb = crate::sse::HEARTBEAT;
        let head = format!("retry: 1000\n\n{hb}id: 1\ndata: a\n\n");
        assert_eq!(
            strip_own_pings(head.as_bytes(), true, false),
            b"id: 1\ndata: a\n\n"
        );
        assert_eq!(
            strip_own_pings(head.as_bytes(), true, true),
            b"retry: 1000\n\nid: 1\ndata: a\n\n"
        );
        assert!(strip_own_pings(hb.as_bytes(), false, false).is_empty());
        // A later chunk's `retry:` text is data, never stripped.
        assert_eq!(
            strip_own_pings(b"retry: 5\n\n", false, false),
            b"retry: 5\n\n"
        );
    }

    #[test]
    fn drop_response_numbers_its_requests() {
        let f = Faults::default();
        f.add(spec(json!({"path": "/send", "times": null,
            "fault": {"kind": "drop-response", "every": 3}})));
        let nths: Vec<u64> = (0..4)
            .filter_map(|_| f.take_nth("/send", false).map(|t| t.2))
            .collect();
        assert_eq!(nths, [1, 2, 3, 4]);
        assert_eq!(f.list()[0].taken, 4);
        let every: Vec<bool> = (1..=6).map(|n| drops_nth(n, Some(3), None, 0)).collect();
        assert_eq!(every, [false, false, true, false, false, true]);
        assert!((1..=5).all(|n| drops_nth(n, None, None, 0)));
        assert!(!(1..=100).any(|n| drops_nth(n, None, Some(0.0), 9)));
        assert!((1..=100).all(|n| drops_nth(n, None, Some(1.0), 9)));
        // Seeded: the same numbers every run, about the asked share.
        let pick = |seed| -> Vec<u64> {
            (1..=1000)
                .filter(|&n| drops_nth(n, None, Some(0.2), seed))
                .collect()
        };
        assert_eq!(pick(7), pick(7));
        assert_ne!(pick(7), pick(8));
        assert!((150..=250).contains(&pick(7).len()), "{}", pick(7).len());
    }

    #[test]
    fn restart_window() {
        let f = Faults::default();
        let mut rx = f.subscribe_restart();
        assert!(f.restarting(0).is_none());
        f.restart(500, RestartMode::Unavailable, 7);
        assert!(rx.has_changed().unwrap_or(false));
        assert_eq!(rx.borrow_and_update().except_conn, 7);
        assert_eq!(f.restarting(100), Some((RestartMode::Unavailable, 400)));
        assert!(f.restarting(500).is_none());
    }
}
