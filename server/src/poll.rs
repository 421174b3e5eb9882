//! `GET /poll` (messages after a cursor, answered at once, conditional) and
//! `GET /resource` (one JSON document that changes on every publish).

use std::collections::HashMap;

use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use crate::app::AppState;
use crate::cursor::{self, query_flag, query_u64};
use crate::hub::Cursor;
use crate::validators::{self, etag, if_modified_since, if_none_match, none_match_hits, secs};

/// `GET /poll`: cursor as on `/long-poll` (`Last-Event-ID`, `lastEventId` /
/// `last_event_id`, else `If-None-Match`). `ETag: "<newest id>"`,
/// `Cache-Control: no-cache`, `Last-Modified` of the newest event.
/// - `If-None-Match` matching the current tag (weak comparison), or a cursor
///   already at the newest id → 304.
/// - else 200 JSON array `[{"id","event"?,"data"}]` of the events after the
///   cursor (no cursor: `[]`, the tag is the starting point); a cursor that
///   cannot be resumed → `[{"id": "<newest>", "event": "reset", "data": ...}]`.
/// - `?envelope=1` → `{"messages": [...], "_polling": {"next_interval_ms": N}}`
///   (N from `?next_interval_ms=`, else `?interval_s=` × 1000, else omitted).
/// - `?interval_s=N` → `X-Poll-Interval: N` (on 200 and 304).
pub async fn poll(
    State(s): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let cursor = cursor::from_request_or_etag(&headers, &q);
    let replay = s.hub.replay(&cursor);
    let current = etag(replay.head, false);
    let inm = if_none_match(&headers);
    let not_modified = inm.as_deref().is_some_and(|l| none_match_hits(l, &current))
        || (replay.reset.is_none() && cursor == Cursor::Id(replay.head));
    let interval_s = query_u64(&q, "interval_s");
    let mut resp = if not_modified {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let items = replay.json_items();
        let body = if query_flag(&q, "envelope") {
            let next = query_u64(&q, "next_interval_ms")
                .or_else(|| interval_s.map(|s| s.saturating_mul(1000)));
            let mut v = json!({ "messages": items });
            if let (Some(n), Value::Object(m)) = (next, &mut v) {
                m.insert("_polling".into(), json!({ "next_interval_ms": n }));
            }
            v
        } else {
            Value::Array(items)
        };
        axum::Json(body).into_response()
    };
    let h = resp.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    validators::insert(h, &current, s.hub.last().map(|e| e.published));
    if let Some(n) = interval_s {
        h.insert("x-poll-interval", HeaderValue::from(n));
    }
    resp
}

/// `GET /resource[?weak=1]` → `{"version": n, "data": <newest data, as JSON
/// when it parses, else a string; null before the first publish>}` with
/// `ETag: "<n>"` (`W/"<n>"` with `?weak=1`), `Last-Modified` (the newest
/// publish, else server start), `Cache-Control: no-cache`. 304 when
/// `If-None-Match` matches (weak comparison), or, without `If-None-Match`,
/// when `If-Modified-Since` is not older than `Last-Modified`.
pub async fn resource(
    State(s): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let last = s.hub.last();
    let version = s.hub.last_id();
    let tag = etag(version, query_flag(&q, "weak"));
    let modified = last.as_ref().map(|e| e.published).unwrap_or(s.started);
    let not_modified = match if_none_match(&headers) {
        Some(list) => none_match_hits(&list, &tag),
        None => if_modified_since(&headers).is_some_and(|ims| secs(modified) <= secs(ims)),
    };
    let mut resp = if not_modified {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let data = match &last {
            Some(e) => serde_json::from_str::<Value>(&e.data)
                .unwrap_or_else(|_| Value::String(e.data.clone())),
            None => Value::Null,
        };
        axum::Json(json!({ "version": version, "data": data })).into_response()
    };
    let h = resp.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    validators::insert(h, &tag, Some(modified));
    resp
}
