//! `POST /answer`: an LLM-like answer streamed token by token after a POST,
//! cut mid-body at set points, ended by `data: [DONE]`; `GET /answer` resumes
//! one (the "resumable stream" pattern). For the `method` / `body` /
//! `resume` / `end` tests (docs/post-streams.md).
//!
//! Tokens are `id: <i>` / `data: t<i>` for `i` in 1..=`n`. An answer starts
//! after the cursor (the `Last-Event-ID` header, else the `lastEventId`
//! query parameter; none: from the start) and is cut at the first of `cuts`
//! above the cursor: every token up to it, then half of the next event, then
//! the body is aborted. So each cut happens once, with no state kept: a
//! resume from 300 is next cut at 600. The answer that reaches `n` ends with
//! `data: [DONE]` and closes.
//!
//! Query: `n` (default 1000), `cuts` (comma-separated, default
//! `300,600,900`; empty: none). A POST must carry a JSON body with a
//! `"prompt"` (else 400: the test sees every attempt sent its body); a GET
//! must name the answer with `stream` (else 400).

use std::collections::HashMap;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Query;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

use crate::cursor::query_u64;
use crate::sse::stream_headers;

/// Tokens per body chunk.
const CHUNK: u64 = 50;

/// Where the request resumes: the last token the client has (0: none).
fn resumed_from(headers: &HeaderMap, q: &HashMap<String, String>) -> u64 {
    let header = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty());
    header
        .or_else(|| q.get("lastEventId").map(String::as_str))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

pub async fn answer(
    method: Method,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
    body: String,
) -> Response {
    let asked = match method {
        Method::POST => body.contains("\"prompt\""),
        _ => q.contains_key("stream"),
    };
    if !asked {
        return (StatusCode::BAD_REQUEST, "POST a prompt or GET a stream").into_response();
    }
    let n = query_u64(&q, "n").unwrap_or(1000);
    let cuts: Vec<u64> = match q.get("cuts") {
        Some(c) => c.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        None => vec![300, 600, 900],
    };
    let from = resumed_from(&headers, &q);
    let cut = cuts.into_iter().filter(|&c| c > from && c < n).min();
    let last = cut.unwrap_or(n);
    let stream = async_stream::stream! {
        let mut i = from + 1;
        while i <= last {
            let end = (i + CHUNK - 1).min(last);
            let chunk: String = (i..=end).map(|t| format!("id: {t}\ndata: t{t}\n\n")).collect();
            yield Ok::<Bytes, std::io::Error>(Bytes::from(chunk));
            i = end + 1;
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        match cut {
            Some(c) => {
                yield Ok(Bytes::from(format!("id: {}\ndata: t", c + 1)));
                // Let the tokens before the cut reach the client first.
                tokio::time::sleep(Duration::from_millis(100)).await;
                yield Err(std::io::Error::other("cut mid-body"));
            }
            None => yield Ok(Bytes::from_static(b"data: [DONE]\n\n")),
        }
    };
    let mut resp = Response::new(Body::from_stream(stream));
    stream_headers(&mut resp);
    resp
}
