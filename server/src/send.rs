//! `POST /send`: an upstream endpoint with an idempotency store, after the
//! IETF httpapi draft "The Idempotency-Key HTTP Header Field"
//! (draft-ietf-httpapi-idempotency-key-header-06).
//!
//! The key is the request's `Idempotency-Key` header (or the header named by
//! `?key_header=`), an RFC 8941 sf-string (draft §2.1; RFC 8941 §3.3.3,
//! parsed as §4.2 and §4.2.5 say). The fingerprint (draft §2.4) is the whole
//! request body, compared byte for byte. Per draft §2.6 and §2.7:
//! - a first request is applied (appended to the applied list with the next
//!   sequence number) and answered 201 `{"seq": n, "key": k}`; the answer is
//!   stored under the key;
//! - a repeat with the same body gets the stored answer again, plus
//!   `Idempotent-Replayed: true`;
//! - a repeat while the first is still being applied gets 409;
//! - the same key with a different body gets 422;
//! - no key, a key that is not an sf-string, an empty key or two header
//!   lines get 400, and nothing is applied.
//!
//! The store lives in memory beside the event hub, not in it: `/_restart`
//! (with or without `lose_state`) keeps it, as a server whose store is in a
//! database would; it ends with the process. Keys never expire.
//! `GET /_send` lists what was applied; `POST /_send/clear` forgets it all.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use bytes::Bytes;
use serde::Serialize;
use serde_json::{json, Value};

use crate::app::AppState;

/// The header a key comes in unless `?key_header=` names another (draft §2).
pub const KEY_HEADER: &str = "idempotency-key";
/// Added to a replayed answer (Stripe's name for it).
pub const REPLAYED_HEADER: &str = "idempotent-replayed";
/// Longest `?delay_ms=` hold of the apply.
pub const MAX_DELAY_MS: u64 = 600_000;

/// One applied request, in apply order.
#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    /// Sequence number, from 1 (also in the answer).
    pub seq: u64,
    pub key: String,
    /// The request body (lossy UTF-8).
    pub body: String,
    /// When it was applied, ms since server start.
    pub t_ms: u64,
}

/// The stored first answer for a key.
#[derive(Debug, Clone)]
struct Answer {
    status: StatusCode,
    body: String,
}

#[derive(Debug)]
enum Entry {
    /// Being applied (held by `?delay_ms=` until `done_ms`, ms since server
    /// start): a repeat gets 409.
    InFlight {
        body: Bytes,
        done_ms: u64,
    },
    Done {
        body: Bytes,
        answer: Answer,
    },
}

impl Entry {
    fn body(&self) -> &Bytes {
        match self {
            Entry::InFlight { body, .. } | Entry::Done { body, .. } => body,
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    keys: HashMap<String, Entry>,
    applied: Vec<Applied>,
}

/// The idempotency store and the applied list.
#[derive(Debug, Default)]
pub struct SendStore {
    inner: Mutex<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What the store decides for a request, before any apply.
#[derive(Debug)]
enum Verdict {
    /// New key: marked in flight; apply it.
    Apply,
    Replay(Answer),
    /// The first is still being applied, for about `left_ms` more.
    InFlight {
        left_ms: u64,
    },
    DifferentBody,
}

impl SendStore {
    /// Looks `key` up at `now_ms`; a new key is marked in flight until
    /// `now_ms + delay_ms`.
    fn check(&self, key: &str, body: &Bytes, now_ms: u64, delay_ms: u64) -> Verdict {
        let mut g = lock(&self.inner);
        match g.keys.get(key) {
            Some(e) if e.body() != body => Verdict::DifferentBody,
            Some(Entry::InFlight { done_ms, .. }) => Verdict::InFlight {
                left_ms: done_ms.saturating_sub(now_ms),
            },
            Some(Entry::Done { answer, .. }) => Verdict::Replay(answer.clone()),
            None => {
                let entry = Entry::InFlight {
                    body: body.clone(),
                    done_ms: now_ms + delay_ms,
                };
                g.keys.insert(key.to_string(), entry);
                Verdict::Apply
            }
        }
    }

    /// Applies the request of `key` and stores its answer.
    fn apply(&self, key: &str, body: Bytes, t_ms: u64) -> Answer {
        let mut g = lock(&self.inner);
        let seq = g.applied.len() as u64 + 1;
        g.applied.push(Applied {
            seq,
            key: key.to_string(),
            body: String::from_utf8_lossy(&body).into_owned(),
            t_ms,
        });
        let answer = Answer {
            status: StatusCode::CREATED,
            body: json!({ "seq": seq, "key": key }).to_string(),
        };
        g.keys.insert(
            key.to_string(),
            Entry::Done {
                body,
                answer: answer.clone(),
            },
        );
        answer
    }

    /// Forgets an in-flight key whose apply was abandoned (shutdown).
    fn abandon(&self, key: &str) {
        let mut g = lock(&self.inner);
        if matches!(g.keys.get(key), Some(Entry::InFlight { .. })) {
            g.keys.remove(key);
        }
    }

    /// What was applied, in order.
    pub fn applied(&self) -> Vec<Applied> {
        lock(&self.inner).applied.clone()
    }

    /// Forgets every key and the applied list; returns how many were applied.
    pub fn clear(&self) -> usize {
        let mut g = lock(&self.inner);
        let n = g.applied.len();
        *g = Inner::default();
        n
    }

    fn counts(&self) -> (usize, usize) {
        let g = lock(&self.inner);
        let in_flight = g
            .keys
            .values()
            .filter(|e| matches!(e, Entry::InFlight { .. }))
            .count();
        (g.keys.len(), in_flight)
    }
}

/// Parses a field value as an RFC 8941 Item whose bare item is a String
/// (§4.2: surrounding SP dropped; §4.2.5: `"`, printable ASCII, `\"` and
/// `\\` escapes, `"`). Parameters after the string (`;…`) are accepted and
/// ignored. Returns the unescaped string.
pub fn parse_sf_string(raw: &[u8]) -> Result<String, &'static str> {
    let start = raw.iter().position(|&b| b != b' ').unwrap_or(raw.len());
    let end = raw
        .iter()
        .rposition(|&b| b != b' ')
        .map_or(start, |i| i + 1);
    let v = &raw[start..end];
    let Some(rest) = v.strip_prefix(b"\"") else {
        return Err("not an sf-string: it must start with a double quote");
    };
    let mut out = String::new();
    let mut i = 0;
    while i < rest.len() {
        match rest[i] {
            b'\\' => match rest.get(i + 1) {
                Some(&c @ (b'"' | b'\\')) => {
                    out.push(char::from(c));
                    i += 2;
                }
                _ => return Err("not an sf-string: a backslash escapes only \" and \\"),
            },
            b'"' => {
                let tail = &rest[i + 1..];
                if tail.is_empty() || tail.starts_with(b";") {
                    return Ok(out);
                }
                return Err("not an sf-string: text after the closing quote");
            }
            c @ 0x20..=0x7e => {
                out.push(char::from(c));
                i += 1;
            }
            _ => return Err("not an sf-string: only printable ASCII is allowed"),
        }
    }
    Err("not an sf-string: no closing quote")
}

/// The key of a request, from header `name`: exactly one field line holding
/// a non-empty sf-string (draft §2.1: "Clients MUST NOT include more than
/// one Idempotency-Key header field").
fn request_key(headers: &HeaderMap, name: &str) -> Result<String, String> {
    let mut lines = headers.get_all(name).iter();
    let Some(v) = lines.next() else {
        return Err(format!("missing {name} header"));
    };
    if lines.next().is_some() {
        return Err(format!("more than one {name} header"));
    }
    let key = parse_sf_string(v.as_bytes()).map_err(|e| format!("{name}: {e}"))?;
    if key.is_empty() {
        return Err(format!("{name}: the key is empty"));
    }
    Ok(key)
}

fn error(status: StatusCode, msg: String) -> Response {
    let mut resp = (status, Json(json!({ "error": msg }))).into_response();
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

fn answer_response(a: &Answer, replayed: bool) -> Response {
    let mut resp = (a.status, a.body.clone()).into_response();
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if replayed {
        h.insert(REPLAYED_HEADER, HeaderValue::from_static("true"));
    }
    resp
}

/// `POST /send[?key_header=X-Idempotency-Key&delay_ms=N&close=1]`: see the
/// module doc. `delay_ms` holds the apply that long (at most
/// [`MAX_DELAY_MS`]); `close=1` answers with `Connection: close`.
pub async fn send(
    State(s): State<AppState>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let name = q.get("key_header").map_or(KEY_HEADER, String::as_str);
    let delay_ms = match q.get("delay_ms").map(|v| v.parse::<u64>()) {
        None => 0,
        Some(Ok(ms)) if ms <= MAX_DELAY_MS => ms,
        Some(_) => {
            let msg = format!("delay_ms must be a number of ms up to {MAX_DELAY_MS}");
            return error(StatusCode::BAD_REQUEST, msg);
        }
    };
    let key = match request_key(&headers, name) {
        Ok(k) => k,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let mut resp = match s.sends.check(&key, &body, s.clock.ms(), delay_ms) {
        Verdict::Replay(a) => answer_response(&a, true),
        Verdict::InFlight { left_ms } => in_flight(&key, left_ms),
        Verdict::DifferentBody => error(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("key {key:?} was used with a different body"),
        ),
        Verdict::Apply => match apply_detached(&s, key, body, delay_ms).await {
            Some(a) => answer_response(&a, false),
            None => error(StatusCode::SERVICE_UNAVAILABLE, "shutting down".into()),
        },
    };
    if query_is_on(&q, "close") {
        resp.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    resp
}

/// 409 for a repeat of a key still being applied, with `Retry-After`: the
/// seconds left of the hold, rounded up, at least 1.
fn in_flight(key: &str, left_ms: u64) -> Response {
    let msg = format!("the first request with key {key:?} is still being applied");
    let mut resp = error(StatusCode::CONFLICT, msg);
    let secs = left_ms.div_ceil(1000).max(1);
    resp.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    resp
}

fn query_is_on(q: &HashMap<String, String>, name: &str) -> bool {
    q.get(name).is_some_and(|v| v == "1" || v == "true")
}

/// Applies in a task of its own, so a connection cut mid-hold (a client
/// timeout, `/_restart`) does not leave the key in flight for good: the
/// apply completes and a retry gets the replay. None on shutdown.
async fn apply_detached(s: &AppState, key: String, body: Bytes, delay_ms: u64) -> Option<Answer> {
    let s = s.clone();
    let task = tokio::spawn(async move {
        if delay_ms > 0 {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(delay_ms)) => {}
                _ = s.shutdown.cancelled() => {
                    s.sends.abandon(&key);
                    return None;
                }
            }
        }
        Some(s.sends.apply(&key, body, s.clock.ms()))
    });
    task.await.ok().flatten()
}

/// `GET /_send` → `{"applied": [{"seq", "key", "body", "t_ms"}...], "keys":
/// N, "in_flight": N}`.
pub async fn get_applied(State(s): State<AppState>) -> Response {
    let (keys, in_flight) = s.sends.counts();
    let v: Value = json!({
        "applied": s.sends.applied(),
        "keys": keys,
        "in_flight": in_flight,
    });
    let mut resp = Json(v).into_response();
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// `POST /_send/clear` → `{"cleared": N}` (N = applied requests forgotten).
pub async fn clear(State(s): State<AppState>) -> Json<Value> {
    Json(json!({ "cleared": s.sends.clear() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sf_strings_parse_as_rfc_8941_says() {
        assert_eq!(parse_sf_string(b"\"abc\"").as_deref(), Ok("abc"));
        assert_eq!(parse_sf_string(b"  \"a b\"  ").as_deref(), Ok("a b"));
        assert_eq!(parse_sf_string(br#""a\"b\\c""#).as_deref(), Ok(r#"a"b\c"#));
        assert_eq!(parse_sf_string(b"\"k\";x=1").as_deref(), Ok("k"));
        assert_eq!(parse_sf_string(b"\"\"").as_deref(), Ok(""));
        for bad in [
            &b"abc"[..],
            b"\"abc",
            b"\"a\\nb\"",
            b"\"a\"b",
            b"\"a\", \"b\"",
            b"\"caf\xc3\xa9\"",
            b"\"tab\there\"",
            b"",
        ] {
            assert!(parse_sf_string(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn store_applies_once_replays_and_refuses() {
        let st = SendStore::default();
        let a = Bytes::from_static(b"a");
        assert!(matches!(st.check("k", &a, 100, 2500), Verdict::Apply));
        assert!(matches!(
            st.check("k", &a, 600, 0),
            Verdict::InFlight { left_ms: 2000 }
        ));
        assert!(matches!(
            st.check("k", &Bytes::from_static(b"b"), 600, 0),
            Verdict::DifferentBody
        ));
        let first = st.apply("k", a.clone(), 5);
        assert_eq!(first.status, StatusCode::CREATED);
        assert_eq!(first.body, r#"{"key":"k","seq":1}"#);
        match st.check("k", &a, 700, 0) {
            Verdict::Replay(r) => assert_eq!(r.body, first.body),
            v => panic!("{v:?}"),
        }
        assert_eq!(st.applied().len(), 1);
        assert!(matches!(st.check("j", &a, 0, 0), Verdict::Apply));
        st.abandon("j");
        assert!(matches!(st.check("j", &a, 0, 0), Verdict::Apply));
        assert_eq!(st.counts(), (2, 1));
        assert_eq!(st.clear(), 1);
        assert_eq!(st.counts(), (0, 0));
    }
}
