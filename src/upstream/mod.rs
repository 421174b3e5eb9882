//! `send(url, body, options)`: one upstream request that takes effect once,
//! behind the default `send` feature.
//!
//! ```js
//! import init, { send } from "tidings";
//! await init();
//! const r = await send("/send", JSON.stringify({ text: "hi" }), {
//!   headers: { "Content-Type": "application/json" },
//! });
//! console.log(r.status, r.body, r.attempts, r.replayed);
//! ```
//!
//! The decisions (retry or not, when, the key's header, which sends survive
//! `pagehide`) are `tidings_core::upstream`'s. This folder only reports facts
//! and carries out actions:
//! - `options.rs`: the options and the body, checked before anything starts;
//! - `request.rs`: one attempt, a `fetch` owned by an `AbortController` guard;
//! - `driver.rs`: the one drive loop of the upstream machines (fact in,
//!   actions out, the attempt and the timer), shared by the four below;
//! - `task.rs`: one send (machine, attempt, timer, `signal`, promise);
//! - `appender.rs`: `appender(url, options)`, Durable Streams idempotent
//!   appends (the core's `Appender`);
//! - `report/`: `report(url, task, options)`, the reporter's adapter
//!   over the same attempt code;
//! - `stream.rs`: `stream(url, options)`'s operations (create, `HEAD`,
//!   delete, close), each one send of the core's `StreamOp`;
//! - `ack.rs`: `subscribe({ ack })`, delivery ACKs (the core's
//!   `AckBatcher`), each batch one send;
//! - `page.rs`: the pending sends, `ordered` queues, `online`/`offline` and
//!   `pagehide` listeners.

// The Rust API has no `ack` option (yet): without `js`, unused.
#[cfg_attr(not(feature = "js"), allow(dead_code))]
pub(crate) mod ack;
#[cfg(feature = "append")]
mod appender;
mod driver;
mod options;
mod page;
#[cfg(feature = "report")]
mod report;
mod request;
#[cfg(feature = "stream-handles")]
mod stream;
mod task;

#[cfg(feature = "append")]
pub use appender::{appender_js, AppenderJs};
#[cfg(feature = "report")]
pub use report::{report_js, Reporter};

use tidings_core::upstream::{IdempotencyKey, SendInput, Sender};
use wasm_bindgen::prelude::*;

use options::SendOptions;

/// Send `body` to `url` once: every attempt carries the same idempotency key
/// (`options.idempotencyKey`, else one generated now), transient failures
/// are retried after the core's backoff, permanent ones reject at once.
///
/// Returns a `Promise` of `{ status, headers, body, attempts, replayed }`.
/// It rejects with an `Error` with `code` (`invalid-url`, `invalid-option`,
/// `http-status`, `auth`, `gave-up`, `timeout`, `headers`, `too-large`: a
/// success whose body is over the core's 1 MiB cap), `status` (when an
/// answer caused it) and `attempts`; with the signal's reason (an
/// `AbortError` `DOMException`) on abort. Throws (the package entry turns it
/// into a rejection) only for a bad URL, body or option: nothing was sent.
#[wasm_bindgen(js_name = send)]
pub fn send_js(url: JsValue, body: JsValue, options: JsValue) -> Result<js_sys::Promise, JsValue> {
    #[cfg_attr(not(feature = "stream-handles"), allow(clippy::let_unit_value))]
    let op = Default::default();
    run(url, body, options, op)
}

/// A stream operation (`stream()`) and what its create asks for; `None`
/// for a send.
#[cfg(feature = "stream-handles")]
type RunOp = Option<(
    tidings_core::upstream::StreamOp,
    tidings_core::upstream::CreateOptions,
)>;
/// A send (a build without `stream()`).
#[cfg(not(feature = "stream-handles"))]
type RunOp = ();

/// `send()`, or stream operation `op` (`stream.rs`) over `send()`'s body
/// and options (the operation's method; not `ordered`), checked, then
/// started as a task the page holds; its promise. One copy for both calls.
#[cfg_attr(feature = "stream-handles", inline(never))]
fn run(
    url: JsValue,
    body: JsValue,
    options: JsValue,
    op: RunOp,
) -> Result<js_sys::Promise, JsValue> {
    let url = url_of(&url)?;
    let body = options::body(&body)?;
    let has_body = !body.value.is_undefined();
    #[cfg_attr(not(feature = "stream-handles"), allow(unused_mut))]
    let mut o = SendOptions::from_js(&options, has_body)?;
    let key = match o.key {
        Some(k) => k,
        None => new_key()?,
    };
    let req = request::Request {
        url,
        body: body.value,
        app_headers: o.headers,
        credentials: o.credentials,
        body_bytes: body.bytes,
    };
    // The operation's request is the core's; its headers replace the key's
    // on every attempt (`task.rs`).
    #[cfg(feature = "stream-handles")]
    let op = op.map(|(op, create)| {
        let (method, headers) = op.request(&create);
        o.config.method = method.into();
        o.ordered = false;
        (op, headers)
    });
    let sender = Sender::new(o.config, &key, crate::clock::random_seed());
    let (signal, ordered) = (o.signal, o.ordered);
    let (promise, settle) = promise();
    let t = task::Task::new(sender, req, ordered, signal, settle, op);
    let now = page::add(&t);
    task::watch(&t, crate::lifecycle::is_online());
    // Queued (`ordered`): the deadline runs from the call all the same.
    task::feed(
        &t,
        if now {
            SendInput::Start
        } else {
            SendInput::Queued
        },
    );
    Ok(promise)
}

/// A new pending `Promise` and its `(resolve, reject)`. Out of line: one
/// copy for `send()` and the appender's `append()` and `close()`.
#[inline(never)]
pub(crate) fn promise() -> (js_sys::Promise, (js_sys::Function, js_sys::Function)) {
    let o = request::pending();
    let f = |i| o.get(i).unchecked_into();
    (o.get(0).unchecked_into(), (f(1), f(2)))
}

/// The URL argument of `send()` and `report()`, resolved: a string or an
/// object (a `URL`) converted with `String()`; anything else as `""`, which
/// [`crate::options::resolve_url`] refuses (`invalid-url`). Out of line:
/// one copy for both calls.
#[inline(never)]
pub(crate) fn url_of(url: &JsValue) -> Result<String, JsValue> {
    let url = match url.is_string() || url.is_object() {
        true => crate::js::to_string(url).ok(),
        false => None,
    };
    crate::options::resolve_url(&url.unwrap_or_default())
}

/// [`send_js`] for Rust callers: the same checks and the same `Promise`
/// (await it with `wasm_bindgen_futures::JsFuture`).
pub fn send(url: &str, body: JsValue, options: JsValue) -> Result<js_sys::Promise, JsValue> {
    send_js(JsValue::from_str(url), body, options)
}

/// A fresh key for one send: `crypto.randomUUID()` where the page is a
/// secure context (the only place it exists), else a version 4 UUID from
/// `crypto.getRandomValues` (`request.js`). Both are printable ASCII, so
/// always a valid [`IdempotencyKey`].
pub(crate) fn new_key() -> Result<IdempotencyKey, JsValue> {
    IdempotencyKey::new(&request::uuid()?).map_err(|_| JsValue::from_str("bad random key"))
}

/// An upstream error: an `Error` with `code`, its message `what` (`send
/// failed: `), the `code`, the failing status (≥ 300) of the answer that
/// caused it, and the URL (`send failed: http-status 503
/// (https://example.com/up)`), so a log of `e.message` alone says what the
/// server answered and which one; and `status` when an answer caused it (a
/// 2xx of `too-large` included). Out of line: one copy for `send()` and
/// the appender.
#[inline(never)]
fn failed(what: &str, code: &str, status: Option<u16>, url: &str) -> JsValue {
    let mut m = String::from(what);
    m.push_str(code);
    if let Some(s) = status.filter(|s| *s >= 300) {
        m.push(' ');
        tidings_core::wire::push_decimal(&mut m, u64::from(s));
    }
    crate::js::push_url(&mut m, url);
    let e = crate::js::error(code, &m);
    if let Some(s) = status {
        let o: &js_sys::Object = e.unchecked_ref();
        crate::js::set(o, "status", &JsValue::from_f64(f64::from(s)));
    }
    e
}

/// What `fetch` rejects with on abort: the signal's `reason` (an
/// `AbortError` `DOMException` unless the app gave its own), else a new
/// `AbortError` with `message`. Out of line: one copy for `send()` and the
/// appender.
#[inline(never)]
fn abort_reason(signal: Option<&web_sys::AbortSignal>, message: &str) -> JsValue {
    let reason = signal.map_or(JsValue::UNDEFINED, |s| {
        crate::options::get(s.as_ref(), "reason")
    });
    if !reason.is_undefined() {
        return reason;
    }
    web_sys::DomException::new_with_message_and_name(message, "AbortError")
        .map_or(JsValue::UNDEFINED, JsValue::from)
}
