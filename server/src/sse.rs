//! `GET /sse`: the event stream.
//!
//! Order on the wire: `retry: <ms>`, a heartbeat, then a `reset` event when
//! the cursor cannot be resumed (followed by an id-only block that moves the
//! client's cursor to the newest id), the replay (events after the cursor), then
//! live events interleaved with heartbeats. A stream that falls behind the
//! live queue is closed (the client resumes by cursor), never thinned out.

use std::collections::HashMap;
use std::convert::Infallible;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::Response;
use bytes::Bytes;
use tokio::sync::broadcast::error::RecvError;

use crate::app::AppState;
use crate::cursor::{self, query_u64};
use crate::log::ReqId;

/// Comment (for fetch-based readers) plus an event native EventSource sees.
pub const HEARTBEAT: &str = ": hb\nevent: heartbeat\ndata:\n\n";

/// Headers of every event-stream response.
pub fn stream_headers(resp: &mut Response) {
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
}

enum Step {
    Send(Bytes),
    Stop,
}

/// Query: `lastEventId` / `last_event_id` (cursor), `retry_ms` (overrides
/// the `retry:` value), `heartbeat_ms` (overrides the interval; 0 = none).
pub async fn sse(
    State(s): State<AppState>,
    req_id: Option<axum::Extension<ReqId>>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let req = req_id.map(|r| r.0 .0).unwrap_or(0);
    let cursor = cursor::from_request(&headers, &q);
    let retry_ms = query_u64(&q, "retry_ms").unwrap_or(s.cfg.retry_ms);
    let heartbeat_ms = query_u64(&q, "heartbeat_ms").unwrap_or(s.cfg.heartbeat_ms);
    let (replay, mut rx) = s.hub.subscribe(&cursor);
    let shutdown = s.shutdown.clone();
    let state = s.clone();

    let stream = async_stream::stream! {
        let mut head = format!("retry: {retry_ms}\n\n{HEARTBEAT}");
        if let Some(reason) = replay.reset {
            head.push_str(&reason.sse_block());
            head.push_str(&replay.head_block());
        }
        yield Ok::<Bytes, Infallible>(Bytes::from(head));
        for ev in replay.events {
            if shutdown.is_cancelled() {
                return;
            }
            yield Ok(ev.frame.clone());
        }
        let period = Duration::from_millis(heartbeat_ms.max(1));
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let step = tokio::select! {
                biased;
                _ = shutdown.cancelled() => Step::Stop,
                r = rx.recv() => match r {
                    Ok(ev) => Step::Send(ev.frame.clone()),
                    Err(RecvError::Lagged(n)) => {
                        state.log.print(&format!(
                            "req={req} /sse lagged by {n} events: closing so the client resumes by cursor"
                        ));
                        Step::Stop
                    }
                    Err(RecvError::Closed) => Step::Stop,
                },
                _ = tick.tick(), if heartbeat_ms > 0 => Step::Send(Bytes::from_static(HEARTBEAT.as_bytes())),
            };
            match step {
                Step::Send(b) => yield Ok(b),
                Step::Stop => break,
            }
        }
    };

    let mut resp = Response::new(Body::from_stream(stream));
    stream_headers(&mut resp);
    resp
}
