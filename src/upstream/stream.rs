//! `stream(url, options)`'s operations on a Durable Streams stream (create,
//! `HEAD`, delete, close; docs/durable-streams.md "Stream handles"): one
//! export for all four, the operation by its number. Each is one send of
//! the core's `StreamOp` (its request, its refusals' codes) through
//! `send()`'s option reader, task, drive loop and `pagehide` hand-off; this
//! file only reads a create's options.

use tidings_core::upstream::{producer_epoch, CreateOptions, StreamOp};
use wasm_bindgen::prelude::*;

use crate::options::{absent, checked, fail, flag, get, invalid, object, text};

/// Carry out operation `op` (`StreamOp` number: 0 create, 1 head, 2 delete,
/// 3 close) on the stream at `url` with `send()`'s `options` (`headers`,
/// `credentials`, `signal`, `maxAttempts` default 5, `timeoutMs`,
/// `deadlineMs`, `backoff`, `maxRetryAfterMs`; the others are ignored) and,
/// for a create, `create`: `{ contentType, ttlSeconds, expiresAt, closed,
/// body }`. Returns `send()`'s result promise, its `replayed` the answer's
/// `Stream-Closed: true`; rejections as `send()`'s, plus `not-found` (404),
/// `gone` (410), `stream-closed` (409 with `Stream-Closed: true`), the
/// message naming the operation (`head failed: not-found 404 (<url>)`).
/// Throws `invalid-url` / `invalid-option` (the package entry turns it into a
/// rejection) before anything is sent.
#[wasm_bindgen(js_name = stream)]
pub fn stream_js(
    url: JsValue,
    op: u32,
    options: JsValue,
    create: JsValue,
) -> Result<js_sys::Promise, JsValue> {
    let op = StreamOp::from_number(op).unwrap_or(StreamOp::Head);
    let (c, body) = match op {
        StreamOp::Create => create_options(&create)?,
        _ => (CreateOptions::default(), JsValue::UNDEFINED),
    };
    super::run(url, body, options, Some((op, c)))
}

/// A create's options and its body, unread (`invalid-option` naming the key).
fn create_options(v: &JsValue) -> Result<(CreateOptions, JsValue), JsValue> {
    checked(|| {
        object("create", v);
        let ttl = get(v, "ttlSeconds");
        let ttl_seconds = ttl.as_f64().and_then(producer_epoch);
        if !absent(&ttl) && ttl_seconds.is_none() {
            fail(invalid("ttlSeconds", "an integer ≥ 0", &ttl));
        }
        let c = CreateOptions {
            content_type: text(v, "contentType"),
            ttl_seconds,
            expires_at: text(v, "expiresAt"),
            closed: flag(v, "closed").unwrap_or(false),
        };
        if let Err(name) = c.check() {
            let expected = "printable ASCII (expiresAt: not with ttlSeconds)";
            fail(invalid(name, expected, &get(v, name)));
        }
        (c, get(v, "body"))
    })
}
