//! `POST /publish[?event=name]`: the body (text or JSON, as-is) becomes the
//! data of the next event. `resendAfterMs` / `maxResends`: re-send it until
//! acknowledged (`ack.rs`).

use std::collections::HashMap;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::app::AppState;

pub async fn publish(
    State(s): State<AppState>,
    Query(q): Query<HashMap<String, String>>,
    body: String,
) -> Response {
    let event = q.get("event").filter(|e| !e.is_empty()).cloned();
    if let Some(e) = &event {
        if e.contains(['\r', '\n']) {
            return (StatusCode::BAD_REQUEST, "event name must be one line").into_response();
        }
    }
    let resend = match crate::ack::resend_options(&q) {
        Ok(r) => r,
        Err(e) => return (StatusCode::BAD_REQUEST, e).into_response(),
    };
    let ev = s.hub.publish(event, body);
    if let Some((after_ms, max)) = resend {
        crate::ack::spawn_resends(s.clone(), ev.clone(), after_ms, max);
    }
    Json(serde_json::json!({ "id": ev.id_string() })).into_response()
}
