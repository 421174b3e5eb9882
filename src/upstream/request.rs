//! One attempt of a send: a `fetch` owned by an [`Attempt`] guard (aborted
//! through its `AbortController` on drop). It reports one [`Reply`] and
//! decides nothing: the whole answer (head and body text) is read before it
//! is reported, so an answer cut off mid-body is a network error (retried;
//! the server replays the stored answer) rather than a result without its
//! body. The body is read up to the core's cap (`Issue::max_answer_bytes`)
//! and no further: past it the read is cancelled and the answer reported
//! without its body ([`Answer::too_large`]), for the core to decide.

use std::rc::Rc;

use tidings_core::engine::ResponseHead;
use tidings_core::upstream::Issue;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{AbortController, Headers, Response};

use crate::guard::{JsTask, Report};

/// What a send carries on every attempt.
pub struct Request {
    /// The resolved URL.
    pub url: String,
    /// The body snapshot (`undefined` for none).
    pub body: JsValue,
    /// The app's `headers`: an object or a function.
    pub app_headers: Option<JsValue>,
    /// `credentials: "include"` instead of `"same-origin"`.
    pub credentials: bool,
    /// The body's size on the wire (`None`: unknown, `FormData`), for the
    /// `pagehide` hand-off.
    pub body_bytes: Option<u64>,
}

/// The answer to an attempt, body read.
pub struct Answer {
    /// What the core needs: status and the header fields.
    pub head: ResponseHead,
    /// The browser's `Headers` of the response (handed to the app).
    pub headers: Headers,
    /// The body as text (a JS string); `""` when [`Answer::too_large`].
    pub body: JsValue,
    /// The body was longer than the cap: not read past it.
    pub too_large: bool,
}

/// What an attempt reported.
pub enum Reply {
    /// A whole answer.
    Answer(Answer),
    /// The app's `headers` failed (what it threw, or the `TypeError` of an
    /// invalid header); nothing was sent.
    HeadersFailed(JsValue),
    /// `fetch` rejected (network, CORS, or an abort) or the body broke off.
    Failed,
    /// The attempt could not start (no `AbortController`; a reporter's body
    /// missing): nothing was sent.
    NotStarted,
}

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/upstream/request.js")]
extern "C" {
    /// One attempt of `url` with `init` (`request.js`): the app's `headers`
    /// for attempt `attempt`, then `extra` (name, value, …), the fetch and
    /// its answer (at most `cap` bytes of body), each reported to `report`;
    /// returns its `AbortController` (nothing is reported after its abort).
    #[wasm_bindgen(js_name = attempt, catch)]
    fn attempt_js(
        headers: &JsValue,
        url: &str,
        attempt: u32,
        init: &JsValue,
        extra: &js_sys::Array,
        cap: f64,
        report: &JsValue,
    ) -> Result<AbortController, JsValue>;

    /// The app's headers for attempt 1 now, a function's promise left out
    /// (`request.js`).
    #[wasm_bindgen(js_name = appHeadersNow, catch)]
    fn app_headers_now_js(headers: &JsValue, url: &str) -> Result<Headers, JsValue>;

    /// `_polling.next_interval_ms` of a JSON object body, a finite number
    /// ≥ 0; else `undefined` (`request.js`).
    #[wasm_bindgen(js_name = pollingHint)]
    pub fn polling_hint(body: &JsValue) -> JsValue;

    /// The request init of an upstream request (`request.js`).
    #[wasm_bindgen(js_name = init)]
    fn init_js(
        method: &str,
        body: &JsValue,
        credentials: bool,
        headers: &JsValue,
        keepalive: bool,
    ) -> JsValue;

    /// `fetch(url, init)` with its outcome unread (`request.js`).
    #[wasm_bindgen(js_name = keepalive)]
    fn keepalive_js(url: &str, init: &JsValue);

    /// A fresh UUID (`request.js`): `crypto.randomUUID()`, else a version
    /// 4 UUID from `crypto.getRandomValues`.
    #[wasm_bindgen(catch)]
    pub fn uuid() -> Result<String, JsValue>;

    /// `[promise, resolve, reject]`: a pending `Promise` and its settling
    /// functions (`request.js`).
    pub fn pending() -> js_sys::Array;

    /// `p` with its rejection handled (`request.js`).
    pub fn quiet(p: &JsValue);

    /// `send()`'s result object (`request.js`).
    #[wasm_bindgen(js_name = sendResult)]
    pub fn send_result(
        status: u16,
        attempts: u32,
        replayed: bool,
        headers: &JsValue,
        body: &JsValue,
    ) -> JsValue;
}

/// A live attempt; dropping it aborts the request and silences its
/// reports.
#[must_use = "a guard: dropping it undoes what it holds at once"]
pub struct Attempt {
    /// `attempt`'s `AbortController` and where it reports.
    _task: JsTask,
}

/// Start `issue` of `req`: its method, the core's extra headers (the
/// idempotency key: set last, so the app's headers cannot replace it), at
/// most `max_answer_bytes` of the answer body read, and `attempt` as the
/// `headers` function's. `on_reply` runs once, from the browser's task
/// queue (never from here), unless the attempt was aborted first; `on_sent`
/// gets `req`, the method and the headers just before the request goes out
/// (reused at `pagehide`).
pub fn start(
    req: &Rc<Request>,
    issue: Issue,
    on_sent: impl FnOnce(&Rc<Request>, String, &Headers) + 'static,
    on_reply: impl FnOnce(Reply) + 'static,
) -> Result<Attempt, JsValue> {
    let extra = js_sys::Array::new();
    for (name, value) in &issue.headers {
        extra.push(&JsValue::from_str(name));
        extra.push(&JsValue::from_str(value));
    }
    let given = req.app_headers.clone().unwrap_or(JsValue::UNDEFINED);
    let (url, n, cap) = (&req.url, issue.attempt, issue.max_answer_bytes as f64);
    let init = init_js(
        &issue.method,
        &req.body,
        req.credentials,
        &JsValue::UNDEFINED,
        false,
    );
    let report = reporter(Rc::clone(req), issue.method, on_sent, on_reply);
    let start = |f: &JsValue| attempt_js(&given, url, n, &init, &extra, cap, f);
    let _task = JsTask::start(report, start)?;
    Ok(Attempt { _task })
}

/// `attempt`'s reports: `[0, headers]` the request went out with these
/// (`on_sent`), then once `[1, response, text]` the answer, `[2]` a
/// failure, `[3, error]` the app's headers failed (`on_reply`). The app's
/// function runs in JS from a microtask, never while the send's machine is
/// borrowed.
fn reporter(
    req: Rc<Request>,
    method: String,
    on_sent: impl FnOnce(&Rc<Request>, String, &Headers) + 'static,
    on_reply: impl FnOnce(Reply) + 'static,
) -> Report {
    let (mut on_sent, mut on_reply, mut method) = (Some(on_sent), Some(on_reply), method);
    Box::new(move |fact| {
        let fact: js_sys::Array = fact.unchecked_into();
        let reply = match fact.get(0).as_f64() {
            Some(0.0) => {
                if let Some(f) = on_sent.take() {
                    f(
                        &req,
                        std::mem::take(&mut method),
                        fact.get(1).unchecked_ref(),
                    );
                }
                return;
            }
            Some(1.0) => Reply::Answer(answer(&fact)),
            Some(2.0) => Reply::Failed,
            _ => Reply::HeadersFailed(fact.get(1)),
        };
        if let Some(f) = on_reply.take() {
            f(reply);
        }
    })
}

/// Re-issue a send with `keepalive: true` at `pagehide`, with the headers
/// its last attempt sent (the app's function is not called again: its
/// promise could not settle before the page goes). Fire and forget: the
/// answer, if the page lives on (back-forward cache), is not read; the
/// send's own next attempt gets the server's replay.
pub fn keepalive(req: &Request, method: &str, headers: &Headers) {
    let init = init_js(method, &req.body, req.credentials, headers, true);
    keepalive_js(&req.url, &init);
}

/// The app's headers for a request that must go now (`pagehide`): as for
/// attempt 1, but a function's promise cannot be waited for (the page is
/// going), so one is left out: the request goes without the app's headers.
/// Errors: what the function threw, an invalid header.
#[cfg_attr(not(feature = "js"), allow(dead_code))]
pub fn app_headers_now(req: &Request) -> Result<Headers, JsValue> {
    let given = req.app_headers.clone().unwrap_or(JsValue::UNDEFINED);
    app_headers_now_js(&given, &req.url)
}

/// The answer from `attempt`'s `[1, response, body text]`: the core's
/// part of its head and its body (`""` when over the cap).
fn answer(a: &js_sys::Array) -> Answer {
    let response: Response = a.get(1).unchecked_into();
    let headers = response.headers();
    let mut head = ResponseHead::new(response.status());
    head.headers = crate::transport::fetch::fields(&headers);
    let body = a.get(2);
    Answer {
        head,
        headers,
        too_large: body.is_null(),
        body: match body.is_null() {
            true => JsValue::from_str(""),
            false => body,
        },
    }
}
