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
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, AbortSignal, Headers, RequestInit, Response};

use crate::transport::fetch::{add_object, fetch, latin1_bytes};

/// The response headers the core reads for a retry and a reporter's pace
/// (the core's list).
use tidings_core::policy::headers::UPSTREAM_RESPONSE_HEADERS as WANTED;

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
    /// What the core needs: status and the [`WANTED`] headers.
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

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// `value` as a promise that also rejects when `signal` aborts
    /// (`boundary.js`).
    #[wasm_bindgen(js_name = untilAbort)]
    fn until_abort(value: &JsValue, signal: &AbortSignal) -> js_sys::Promise;

    /// `[response, body text]` of `promise`'s response, or `[response]`
    /// when its body passes `cap` bytes (`boundary.js`).
    #[wasm_bindgen(js_name = readAnswer)]
    fn read_answer(promise: &js_sys::Promise, cap: f64) -> js_sys::Promise;

    /// `promise` with its rejection handled (nothing done either way).
    fn settled(promise: &js_sys::Promise);
}

/// A live attempt; dropping it aborts the request.
#[must_use = "a guard: dropping it undoes what it holds at once"]
pub struct Attempt {
    controller: AbortController,
}

impl Drop for Attempt {
    fn drop(&mut self) {
        self.controller.abort();
    }
}

/// Start attempt `attempt` of `req` with `method` and the core's `extra`
/// headers (the idempotency key: set last, so the app's headers cannot
/// replace it), reading at most `max_answer_bytes` of the answer body.
/// `on_reply` runs once, from the browser's task queue (never from here),
/// unless the attempt was aborted first; `on_sent` gets `req` and the headers just
/// before the request goes out (reused at `pagehide`).
pub fn start(
    req: &Rc<Request>,
    method: &str,
    attempt: u32,
    extra: &[(String, String)],
    max_answer_bytes: u64,
    on_sent: impl FnOnce(&Rc<Request>, &Headers) + 'static,
    on_reply: impl FnOnce(Reply) + 'static,
) -> Result<Attempt, JsValue> {
    let controller = AbortController::new()?;
    let signal = controller.signal();
    let init = RequestInit::new();
    init.set_method(method);
    init.set_cache(web_sys::RequestCache::NoStore);
    init.set_credentials(credentials(req.credentials));
    init.set_signal(Some(&signal));
    if !req.body.is_undefined() {
        init.set_body(&req.body);
    }
    let req = Rc::clone(req);
    let extra = extra.to_vec();
    crate::js::spawn(Box::pin(async move {
        // The app's function runs here, from the task queue, never while the
        // send's machine is borrowed.
        let headers = match app_headers(&req, attempt, &signal).await {
            Ok(h) => h,
            Err(e) => {
                if !signal.aborted() {
                    on_reply(Reply::HeadersFailed(e));
                }
                return;
            }
        };
        if signal.aborted() {
            return;
        }
        for (name, value) in &extra {
            let _ = headers.set(name, &latin1_bytes(value));
        }
        init.set_headers(&headers);
        let promise = fetch(&req.url, &init);
        on_sent(&req, &headers);
        let reply = match answer(promise, max_answer_bytes).await {
            Ok(a) => Reply::Answer(a),
            Err(_) => Reply::Failed,
        };
        if !signal.aborted() {
            on_reply(reply);
        }
    }));
    Ok(Attempt { controller })
}

/// Re-issue a send with `keepalive: true` at `pagehide`, with the headers
/// its last attempt sent (the app's function is not called again: its
/// promise could not settle before the page goes). Fire and forget: the
/// answer, if the page lives on (back-forward cache), is not read; the
/// send's own next attempt gets the server's replay.
pub fn keepalive(req: &Request, method: &str, headers: &Headers) {
    let init = RequestInit::new();
    init.set_method(method);
    // `RequestInit.keepalive` (no web-sys setter in this version).
    crate::js::set(&init, "keepalive", &JsValue::TRUE);
    init.set_cache(web_sys::RequestCache::NoStore);
    init.set_credentials(credentials(req.credentials));
    init.set_headers(headers);
    if !req.body.is_undefined() {
        init.set_body(&req.body);
    }
    // Over the budget or offline, the promise rejects: nothing to do.
    settled(&fetch(&req.url, &init));
}

fn credentials(include: bool) -> web_sys::RequestCredentials {
    match include {
        true => web_sys::RequestCredentials::Include,
        false => web_sys::RequestCredentials::SameOrigin,
    }
}

/// A fresh `Headers` with the app's headers: the object, or what its
/// function returned (or resolved to) when called with `{ url, attempt }`.
/// The wait ends when `signal` aborts (the attempt timed out or was
/// dropped): a promise that never settles must not keep this attempt, and
/// the request it holds, alive.
async fn app_headers(
    req: &Request,
    attempt: u32,
    signal: &AbortSignal,
) -> Result<Headers, JsValue> {
    let headers = Headers::new()?;
    let value = app_value(req, attempt)?;
    let value = JsFuture::from(until_abort(&value, signal)).await?;
    add_returned(&headers, &value)?;
    Ok(headers)
}

/// The app's headers for attempt `attempt` now: the object, or what its
/// function returns when called with `{ url, attempt }` (perhaps a
/// promise); `undefined` without `headers`.
fn app_value(req: &Request, attempt: u32) -> Result<JsValue, JsValue> {
    let Some(h) = &req.app_headers else {
        return Ok(JsValue::UNDEFINED);
    };
    let Some(f) = h.dyn_ref::<js_sys::Function>() else {
        return Ok(h.clone());
    };
    let ctx = js_sys::Object::new();
    crate::js::set(&ctx, "url", &JsValue::from_str(&req.url));
    crate::js::set(&ctx, "attempt", &JsValue::from_f64(f64::from(attempt)));
    f.call1(&JsValue::NULL, &ctx)
}

/// The app's headers for a request that must go now (`pagehide`): as
/// [`app_headers`] for attempt 1, but a function's promise cannot be waited
/// for (the page is going), so one is left out: the request goes without
/// the app's headers. Errors: what the function threw, an invalid header.
#[cfg_attr(not(feature = "js"), allow(dead_code))]
pub fn app_headers_now(req: &Request) -> Result<Headers, JsValue> {
    let headers = Headers::new()?;
    let value = app_value(req, 1)?;
    if !value.has_type::<js_sys::Promise>() {
        add_returned(&headers, &value)?;
    }
    Ok(headers)
}

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// `Object.fromEntries(headers)`: a `Headers` as an object of values.
    #[wasm_bindgen(js_namespace = Object, js_name = fromEntries, catch)]
    fn from_entries(iterable: &JsValue) -> Result<JsValue, JsValue>;
}

/// What the app's `headers` gave: `undefined`/`null` (none), a `Headers`
/// (copied, as `fetch` takes it), or an object of header values. Anything
/// else (an array, a number, a string) is a `TypeError`: read as an object
/// it would send junk (`0: name,value`) or nothing, without a word.
fn add_returned(headers: &Headers, value: &JsValue) -> Result<(), JsValue> {
    if crate::options::absent(value) {
        return Ok(());
    }
    if value.is_instance_of::<Headers>() {
        return add_object(headers, &from_entries(value)?);
    }
    if !value.is_object() || js_sys::Array::is_array(value) {
        let e = js_sys::TypeError::new("headers must give an object of header values");
        return Err(e.into());
    }
    add_object(headers, value)
}

/// Await the response and its whole body, up to `cap` bytes (`readAnswer`).
async fn answer(promise: js_sys::Promise, cap: u64) -> Result<Answer, JsValue> {
    let read: js_sys::Array = JsFuture::from(read_answer(&promise, cap as f64))
        .await?
        .unchecked_into();
    let response: Response = read.get(0).unchecked_into();
    let headers = response.headers();
    let mut head = ResponseHead::new(response.status());
    for name in WANTED {
        if let Ok(Some(v)) = headers.get(name) {
            head.headers.push((name.to_string(), v));
        }
    }
    let body = read.get(1);
    Ok(Answer {
        head,
        headers,
        too_large: body.is_undefined(),
        body: match body.is_undefined() {
            true => JsValue::from_str(""),
            false => body,
        },
    })
}
