//! `GET /long-poll`: held until there is news after the cursor or the hold
//! ends.
//!
//! Cursor: `Last-Event-ID`, else `?lastEventId=` / `?last_event_id=`, else
//! `If-None-Match` (our ETags are `"<id>"`, so nchan-style clients that send
//! the validators back resume too). `?hold_ms=` (default `--hold-ms`).
//! Answers: 200 `text/event-stream` with the events (as on `/sse`, without
//! `retry:` or heartbeats), or with `?format=json` a JSON array
//! `[{"id","event"?,"data"}]` (`&envelope=1`: `{"messages": [...]}`); 204 when
//! the hold ends empty. A cursor that cannot be resumed answers at once with
//! the reset (SSE: the `reset` event then an id-only block with the newest
//! id; JSON: `{"id": "<newest>", "event": "reset", "data": "{...}"}`).
//! `ETag` is `"<last id in the answer>"`, `Last-Modified` its time.
//! `?empty=200` answers an empty hold with an empty 200 instead of 204
//! (`&empty_type=` sets its `Content-Type`); `?from_start=1` makes "no
//! cursor" mean every buffered event instead of "the next event".

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use crate::app::AppState;
use crate::cursor::{self, query_flag, query_u64};
use crate::hub::{Event, Replay};
use crate::validators;

/// Longest hold a request may ask for.
const MAX_HOLD_MS: u64 = 10 * 60 * 1000;

/// Events answered at most per response (the rest on the next request).
const MAX_EVENTS: usize = 1000;

pub async fn long_poll(
    State(s): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let cursor = cursor::from_request_or_etag(&headers, &q);
    let hold = Duration::from_millis(
        query_u64(&q, "hold_ms")
            .unwrap_or(s.cfg.hold_ms)
            .min(MAX_HOLD_MS),
    );
    let format = Format::from_query(&q);
    let (replay, mut rx) = s.hub.subscribe(&cursor);
    if replay.reset.is_some() || !replay.events.is_empty() {
        return answer(replay, format);
    }
    let mut events: Vec<Arc<Event>> = Vec::new();
    let mut lagged = false;
    tokio::select! {
        _ = tokio::time::sleep(hold) => {}
        _ = s.shutdown.cancelled() => {}
        r = rx.recv() => match r {
            Ok(ev) => events.push(ev),
            Err(RecvError::Lagged(_)) => lagged = true,
            Err(RecvError::Closed) => {}
        },
    }
    while !lagged && !events.is_empty() && events.len() < MAX_EVENTS {
        match rx.try_recv() {
            Ok(ev) => events.push(ev),
            Err(TryRecvError::Lagged(_)) => lagged = true,
            Err(_) => break,
        }
    }
    if lagged {
        // Fell behind the live queue: answer from the buffer instead.
        return answer(s.hub.replay(&cursor), format);
    }
    if events.is_empty() {
        return no_news(&q);
    }
    let head = events.last().map(|e| e.id).unwrap_or(0);
    answer(
        Replay {
            reset: None,
            events,
            head,
        },
        format,
    )
}

/// The answer when the hold ends empty: 204, or with `?empty=200` a 200
/// with an empty body (a server that says "no news" that way), whose
/// `Content-Type` is `?empty_type=` when given (none otherwise).
fn no_news(q: &HashMap<String, String>) -> Response {
    let mut resp = if q.get("empty").is_some_and(|v| v == "200") {
        let mut r = Response::new(axum::body::Body::empty());
        if let Some(ct) = q
            .get("empty_type")
            .and_then(|t| HeaderValue::try_from(t.as_str()).ok())
        {
            r.headers_mut().insert(header::CONTENT_TYPE, ct);
        }
        r
    } else {
        StatusCode::NO_CONTENT.into_response()
    };
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    EventStream,
    Json,
    Envelope,
}

impl Format {
    fn from_query(q: &HashMap<String, String>) -> Format {
        let envelope = query_flag(q, "envelope");
        match q.get("format").map(String::as_str) {
            Some("json") if envelope => Format::Envelope,
            Some("json") => Format::Json,
            _ => Format::EventStream,
        }
    }
}

fn answer(mut replay: Replay, format: Format) -> Response {
    replay.events.truncate(MAX_EVENTS);
    let last = replay.events.last().cloned();
    let cursor_id = match &last {
        Some(e) => e.id,
        None => replay.head,
    };
    let mut resp = match format {
        Format::EventStream => {
            let mut body = String::new();
            if let Some(reason) = replay.reset {
                body.push_str(&reason.sse_block());
                body.push_str(&replay.head_block());
            }
            for e in &replay.events {
                body.push_str(&String::from_utf8_lossy(&e.frame));
            }
            let mut r = body.into_response();
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            );
            r
        }
        Format::Json | Format::Envelope => {
            let items = replay.json_items();
            let v = if format == Format::Envelope {
                json!({ "messages": items })
            } else {
                Value::Array(items)
            };
            axum::Json(v).into_response()
        }
    };
    let h = resp.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    validators::insert(
        h,
        &validators::etag(cursor_id, false),
        last.map(|e| e.published),
    );
    resp
}
