//! Delivery ACKs (docs/upstream.md): at-least-once delivery that the client
//! acknowledges.
//!
//! - `POST /publish?resendAfterMs=N[&maxResends=M]`: besides publishing, the
//!   event is sent again (same id, same frame) to every live stream every
//!   `N` ms until an ACK names its id, at most `M` times (default
//!   [`DEFAULT_MAX_RESENDS`]). Replays by cursor are unchanged.
//! - `POST /ack` with `{"ids": ["<id>", …]}` (what `subscribe({ ack })`
//!   posts): marks the ids acknowledged; answers 200 `{"acked": <count of
//!   ids newly acknowledged>}`. Acknowledging is idempotent by nature (a
//!   set), so a repeated batch (an `Idempotency-Key` retry) changes nothing;
//!   the key is not needed. A body that is not that shape is 400.
//! - `GET /_ack`: `{"acked": [ids, ascending], "resent": {"<id>": count},
//!   "batches": <ACK requests accepted>}`; `POST /_ack/clear` forgets it.
//!
//! The store lives beside the hub, like `/send`'s, and survives `/_restart`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use crate::app::AppState;
use crate::hub::Event;

/// Re-sends of one event when `maxResends` is not given.
pub const DEFAULT_MAX_RESENDS: u32 = 10;
/// Ids in one ACK request at most (a larger body is 400).
pub const MAX_ACK_IDS: usize = 10_000;

#[derive(Debug, Default)]
struct Inner {
    acked: BTreeSet<u64>,
    resent: BTreeMap<u64, u32>,
    batches: u64,
}

/// Acknowledged ids and re-send counts.
#[derive(Debug, Default)]
pub struct AckStore {
    inner: Mutex<Inner>,
}

impl AckStore {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `id` was acknowledged.
    pub fn is_acked(&self, id: u64) -> bool {
        self.lock().acked.contains(&id)
    }
}

/// Parse `resendAfterMs` / `maxResends` from the publish query: `None` when
/// absent; `Err` for a value that is not a positive integer.
pub fn resend_options(q: &HashMap<String, String>) -> Result<Option<(u64, u32)>, &'static str> {
    let Some(after) = q.get("resendAfterMs") else {
        return Ok(None);
    };
    let after: u64 = after
        .parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or("resendAfterMs must be a positive integer")?;
    let max = match q.get("maxResends") {
        None => DEFAULT_MAX_RESENDS,
        Some(m) => m.parse().map_err(|_| "maxResends must be an integer")?,
    };
    Ok(Some((after, max)))
}

/// Re-send `ev` every `after_ms` until it is acknowledged, `max` times at
/// most, or the server shuts down.
pub fn spawn_resends(s: AppState, ev: Arc<Event>, after_ms: u64, max: u32) {
    tokio::spawn(async move {
        for _ in 0..max {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(after_ms)) => {}
                _ = s.shutdown.cancelled() => return,
            }
            if s.acks.is_acked(ev.id) {
                return;
            }
            *s.acks.lock().resent.entry(ev.id).or_insert(0) += 1;
            s.hub.resend(&ev);
        }
    });
}

/// `POST /ack`.
pub async fn ack(State(s): State<AppState>, body: String) -> Response {
    let ids = match parse_ids(&body) {
        Ok(ids) => ids,
        Err(e) => return (StatusCode::BAD_REQUEST, e).into_response(),
    };
    let mut g = s.acks.lock();
    g.batches += 1;
    let fresh = ids.into_iter().filter(|id| g.acked.insert(*id)).count();
    Json(json!({ "acked": fresh })).into_response()
}

/// `{"ids": ["1", "2"]}` → [1, 2]; ids this server never sends (not
/// decimal integers) are refused with the whole request.
fn parse_ids(body: &str) -> Result<Vec<u64>, &'static str> {
    let v: Value = serde_json::from_str(body).map_err(|_| "body must be JSON")?;
    let list = v
        .get("ids")
        .and_then(Value::as_array)
        .ok_or("body must be {\"ids\": [...]}")?;
    if list.len() > MAX_ACK_IDS {
        return Err("too many ids");
    }
    list.iter()
        .map(|id| {
            id.as_str()
                .and_then(|s| s.parse().ok())
                .ok_or("ids must be decimal strings")
        })
        .collect()
}

/// `GET /_ack`.
pub async fn get_acks(State(s): State<AppState>) -> Json<Value> {
    let g = s.acks.lock();
    let resent: serde_json::Map<String, Value> = g
        .resent
        .iter()
        .map(|(id, n)| (id.to_string(), json!(n)))
        .collect();
    let acked: Vec<String> = g.acked.iter().map(u64::to_string).collect();
    Json(json!({ "acked": acked, "resent": resent, "batches": g.batches }))
}

/// `POST /_ack/clear`.
pub async fn clear(State(s): State<AppState>) -> StatusCode {
    *s.acks.lock() = Inner::default();
    StatusCode::NO_CONTENT
}
