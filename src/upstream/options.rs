//! `send()` options and body as the app passes them (JS names), turned into
//! the core's [`SendConfig`] and what the adapter keeps. Read and checked
//! before anything starts, with the same rules and helpers as `subscribe()`
//! (`src/options.rs`): `undefined`/`null` give the default, unknown keys are
//! ignored, a known key with a wrong value rejects with `invalid-option`
//! (message `invalid option: <name>: expected …, got …`), a getter that
//! throws too.

use tidings_core::upstream::{is_forbidden_request_header, IdempotencyKey, SendConfig};
use wasm_bindgen::JsValue;

use crate::options::{
    backoff, checked, checked_headers, count, fail, flag, get, invalid, ms_in, object, set_ms,
    signal, text, AT_LEAST_ONE,
};

/// What the adapter keeps besides the core's [`SendConfig`].
pub struct SendOptions {
    /// The core's configuration (method, header name, attempts, timeouts,
    /// backoff).
    pub config: SendConfig,
    /// `idempotencyKey`, else one generated for this send.
    pub key: Option<IdempotencyKey>,
    /// `headers`: an object, or `(ctx) => object | Promise<object>` called
    /// before every attempt with `{ url, attempt }`.
    pub headers: Option<JsValue>,
    /// `credentials: true`: `credentials: "include"` (cookies cross-origin);
    /// default `false` (`"same-origin"`), as `withCredentials`.
    pub credentials: bool,
    /// `signal`: aborting rejects the send with the signal's reason.
    pub signal: Option<web_sys::AbortSignal>,
    /// `ordered`: one at a time per URL, in call order. Default `false`.
    pub ordered: bool,
}

/// The body, snapshotted so every attempt sends the same bytes.
pub struct Body {
    /// What `fetch` gets (`undefined` for no body).
    pub value: JsValue,
    /// Its size on the wire in bytes; `None` when unknown before sending
    /// (`FormData`: its multipart encoding is the browser's).
    pub bytes: Option<u64>,
}

impl SendOptions {
    /// Read and check `v`; no side effect, so a rejection leaves nothing.
    pub fn from_js(v: &JsValue, has_body: bool) -> Result<SendOptions, JsValue> {
        checked(|| read(v, has_body, SendConfig::default()))
    }
}

/// The send keys of `v` over `c` (also `report()`'s shared keys, read over
/// its own defaults; the caller runs it inside [`checked`], where a refusal
/// is [`fail`]ed).
pub fn read(v: &JsValue, has_body: bool, mut c: SendConfig) -> SendOptions {
    object("options", v);
    if let Some(m) = text(v, "method") {
        c.method = method(&m, has_body);
    }
    if let Some(h) = text(v, "idempotencyHeader") {
        // A forbidden name would be dropped by `fetch`: the key lost.
        if !is_token(&h) || is_forbidden_request_header(&h) {
            let got = JsValue::from_str(&h);
            fail(invalid(
                "idempotencyHeader",
                "a header name fetch sends",
                &got,
            ));
        }
        c.idempotency_header = h;
    }
    if let Some(n) = count(v, "maxAttempts", "maxAttempts") {
        c.max_attempts = match n {
            Some(0) => {
                fail(invalid("maxAttempts", AT_LEAST_ONE, &get(v, "maxAttempts")));
                1
            }
            Some(n) => n,
            None => u32::MAX,
        };
    }
    set_ms(&mut c.timeout_ms, v, "timeoutMs", "");
    c.deadline_ms = ms_in(v, "deadlineMs", "");
    set_ms(&mut c.max_retry_after_ms, v, "maxRetryAfterMs", "");
    backoff(&mut c.backoff, v);
    let key = text(v, "idempotencyKey").and_then(|k| {
        let key = IdempotencyKey::new(&k).ok();
        if key.is_none() {
            fail(invalid(
                "idempotencyKey",
                "non-empty printable ASCII, at most 255 characters",
                &JsValue::from_str(&k),
            ));
        }
        key
    });
    SendOptions {
        config: c,
        key,
        headers: checked_headers(get(v, "headers")),
        credentials: flag(v, "credentials").unwrap_or(false),
        signal: signal(&get(v, "signal")),
        ordered: flag(v, "ordered").unwrap_or(false),
    }
}

/// `method`: an HTTP token (RFC 9110 §9.1), not one `fetch` forbids
/// (`CONNECT`, `TRACE`, `TRACK`), and not `GET`/`HEAD` with a body (`fetch`
/// throws a `TypeError` for each). The standard methods are upper-cased as
/// `fetch` normalizes them.
fn method(m: &str, has_body: bool) -> String {
    let upper = m.to_ascii_uppercase();
    let forbidden = one_of(&["CONNECT", "TRACE", "TRACK"], &upper);
    let bodiless = has_body && (upper == "GET" || upper == "HEAD");
    if !is_token(m) || forbidden || bodiless {
        let got = JsValue::from_str(m);
        fail(invalid(
            "method",
            "a method fetch sends (no GET/HEAD with a body)",
            &got,
        ));
    }
    let standard = one_of(&["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"], &upper);
    if standard {
        upper
    } else {
        m.into()
    }
}

/// Whether `s` is in `list` (a loop, not the slice's `contains`: one copy
/// of smaller code for both lists).
fn one_of(list: &[&str], s: &str) -> bool {
    for n in list {
        if *n == s {
            return true;
        }
    }
    false
}

/// An RFC 9110 token (§5.6.2): a header name or a method.
/// A loop, not `all` over `contains`: the smaller code.
fn is_token(s: &str) -> bool {
    for &b in s.as_bytes() {
        if !b.is_ascii_alphanumeric() && !b"!#$%&'*+-.^_`|~".contains(&b) {
            return false;
        }
    }
    !s.is_empty()
}

/// The body: `undefined`/`null` (none), a string, an `ArrayBuffer` or a view
/// of one (copied now, so a later change of the caller's buffer cannot make
/// a retry differ from the first attempt: the server would answer 422), a
/// `Blob` (immutable), `URLSearchParams` (copied) or `FormData` (sent as
/// is; its size is unknown, so it never goes out at `pagehide`). Anything
/// else (a `ReadableStream` cannot be sent twice) is `invalid-option` `body`.
/// Made by `bodyOf` in `request.js` (one call instead of a type test and a
/// copy one JS call at a time).
pub fn body(v: &JsValue) -> Result<Body, JsValue> {
    let b = body_of(v)?;
    Ok(Body {
        value: b.get(0),
        bytes: b.get(1).as_f64().map(|n| n as u64),
    })
}

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/upstream/request.js")]
extern "C" {
    /// `[value, bytes]` of the body `v` (`request.js`); throws the
    /// `invalid-option` `body` error.
    #[wasm_bindgen(js_name = bodyOf, catch)]
    fn body_of(v: &JsValue) -> Result<js_sys::Array, JsValue>;
}
