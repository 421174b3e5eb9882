//! `appender(url, options)`: Durable Streams idempotent appends.
//! Every decision (batches, producer headers, what each answer means, when
//! to retry) is `tidings_core::upstream::Appender`'s; this file reports
//! facts (answers, failures, the timer, `online`/`offline`, the `signal`)
//! and carries out its actions (a `fetch` per request through
//! `request.rs`, promises resolved or rejected). Actions run after the
//! machine's borrow ends, and promises settle from the task queue, so no app
//! code runs while the machine is borrowed.

use std::cell::RefCell;
use std::rc::Rc;

use tidings_core::engine::TransportError;
use tidings_core::time::Now;
use tidings_core::upstream::{
    AppendAction, AppendError, AppendInput, AppendRequest, Appender, AppenderConfig, IdempotencyKey,
};
use wasm_bindgen::prelude::*;

use super::driver::{self, Drive, Live, Slots, Tag};
use super::options::SendOptions;
use super::promise;
use super::request::{Reply, Request};
use crate::guard::Listener;
use crate::options::{absent, checked, count, fail, flag, get, invalid, text};

/// What `append` and `close` promise: resolve, reject.
type Settle = (js_sys::Function, js_sys::Function);

struct Inner {
    machine: RefCell<Appender>,
    url: String,
    content_type: String,
    json: bool,
    app_headers: Option<JsValue>,
    credentials: bool,
    producer_id: String,
    /// The live request and the timer.
    live: Live,
    /// Appends not yet durable: (index, promise).
    pending: RefCell<Vec<(u64, Settle)>>,
    closing: RefCell<Vec<Settle>>,
    /// Why it stopped (later appends reject with it), once it did.
    ended: RefCell<Option<JsValue>>,
    /// It stopped because the close was confirmed: a later `close()`
    /// resolves too.
    closed: std::cell::Cell<bool>,
    signal: Option<web_sys::AbortSignal>,
    /// What the app's `headers` threw (`cause` of the `headers` error).
    cause: RefCell<Option<JsValue>>,
    abort_listener: RefCell<Option<Listener>>,
}

/// An appender to one Durable Streams stream (`appender(url, options)`).
#[wasm_bindgen(js_name = Appender)]
pub struct AppenderJs {
    inner: Rc<Inner>,
}

/// Open an appender to the stream at `url` (it must exist: create it with
/// `PUT`). Options: `contentType` (the stream's; default
/// `application/json`), `producerId` (default: a fresh UUID per appender),
/// `epoch` (default 0), `autoClaim` (default false), `maxBatch` (values per
/// request, default 1000), `maxBatchBytes` (default 1 MiB), and the send's
/// `headers`, `credentials`, `signal`, `maxAttempts` (default: no limit),
/// `timeoutMs`, `deadlineMs` (per batch), `backoff`, `maxRetryAfterMs`.
/// Throws `invalid-url` / `invalid-option` before anything is sent.
#[wasm_bindgen(js_name = appender)]
pub fn appender_js(url: JsValue, options: JsValue) -> Result<AppenderJs, JsValue> {
    let url = crate::js::to_string(&url).unwrap_or_default();
    let url = crate::options::resolve_url(&url)?;
    let send = SendOptions::from_js(&options, true)?;
    let (c, content_type) = checked(|| {
        let c = config(&options, send.config);
        (c, text(&options, "contentType"))
    })?;
    let content_type = content_type.unwrap_or_else(|| "application/json".into());
    let json = tidings_core::upstream::is_json_stream(&content_type);
    let c = AppenderConfig { json, ..c };
    let producer_id = c.producer_id.clone();
    let machine = Appender::new(c, crate::clock::random_seed());
    let inner = Rc::new(Inner {
        machine: RefCell::new(machine),
        url,
        content_type,
        json,
        app_headers: send.headers,
        credentials: send.credentials,
        producer_id,
        live: Live::default(),
        pending: RefCell::new(Vec::new()),
        closing: RefCell::new(Vec::new()),
        ended: RefCell::new(None),
        closed: Default::default(),
        signal: send.signal,
        cause: RefCell::new(None),
        abort_listener: RefCell::new(None),
    });
    listen(&inner);
    super::page::hold(&(inner.clone() as _));
    Ok(AppenderJs { inner })
}

/// The appender's own options over the send's.
fn config(v: &JsValue, send: tidings_core::upstream::SendConfig) -> AppenderConfig {
    let id = match text(v, "producerId") {
        Some(id) => {
            if !tidings_core::upstream::is_valid_producer_id(&id) {
                let got = JsValue::from_str(&id);
                fail(invalid("producerId", "1 to 256 bytes", &got));
            }
            id
        }
        None => super::new_key()
            .map_err(fail)
            .map_or_else(|_| String::new(), IdempotencyKey::into_string),
    };
    let mut c = AppenderConfig::new(&id);
    c.send = send;
    // Appends retry as long as they fail unless told; the close is bounded
    // unless told (`Infinity`: as long as it fails).
    if absent(&get(v, "maxAttempts")) {
        c.send.max_attempts = u32::MAX;
    } else {
        c.close_max_attempts = c.send.max_attempts;
    }
    let epoch = get(v, "epoch");
    if !absent(&epoch) {
        let e = epoch
            .as_f64()
            .and_then(tidings_core::upstream::producer_epoch);
        match e {
            Some(e) => c.epoch = e,
            None => fail(invalid("epoch", "an integer ≥ 0", &epoch)),
        }
    }
    c.auto_claim = flag(v, "autoClaim").unwrap_or(false);
    if let Some(n) = count(v, "maxBatch", "maxBatch") {
        c.max_batch_items = n.map_or(usize::MAX, |n| n.max(1) as usize);
    }
    if let Some(n) = count(v, "maxBatchBytes", "maxBatchBytes") {
        c.max_batch_bytes = n.map_or(usize::MAX, |n| n as usize);
    }
    c
}

#[wasm_bindgen(js_class = Appender)]
impl AppenderJs {
    /// Append `value` (JSON streams: any JSON value, an array too, stored as
    /// ONE message; other streams: a string, sent as UTF-8, or bytes). The
    /// promise resolves once the server holds it, or rejects with the
    /// appender's error (`stale-epoch`, `sequence-gap`, `stream-closed`,
    /// `conflict`, `http-status`, `auth`, `gave-up`, `timeout`, the signal's
    /// reason); after `close()` or a failure it rejects at once.
    pub fn append(&self, value: JsValue) -> Result<js_sys::Promise, JsValue> {
        let bytes = encode(&value, self.inner.json)?;
        let (promise, settle) = promise();
        if let Some(e) = self.inner.ended.borrow().clone() {
            let _ = settle.1.call1(&JsValue::UNDEFINED, &e);
            return Ok(promise);
        }
        // Its promise is pending before the machine hears of it: whatever
        // feeding it settles (a failure) settles this one too.
        let index = self.inner.machine.borrow().next_index();
        match index {
            Some(i) => self.inner.pending.borrow_mut().push((i, settle)),
            None => {
                let e = closed_error(&self.inner.url);
                let _ = settle.1.call1(&JsValue::UNDEFINED, &e);
                return Ok(promise);
            }
        }
        feed(&self.inner, AppendInput::Append(bytes));
        Ok(promise)
    }

    /// Close the stream (`Stream-Closed: true`) once every pending value is
    /// in it, with `last` (optional, a value as for `append`) as the final
    /// message in the same request. Resolves when the server confirmed;
    /// rejects with the appender's error. Called again, it settles as the
    /// first did (its `last` is not sent).
    pub fn close(&self, last: JsValue) -> Result<js_sys::Promise, JsValue> {
        let last = match last.is_undefined() {
            true => None,
            false => Some(encode(&last, self.inner.json)?),
        };
        let (promise, settle) = promise();
        if let Some(e) = self.inner.ended.borrow().clone() {
            let _ = match self.inner.closed.get() {
                true => settle.0.call0(&JsValue::UNDEFINED),
                false => settle.1.call1(&JsValue::UNDEFINED, &e),
            };
            return Ok(promise);
        }
        self.inner.closing.borrow_mut().push(settle);
        feed(&self.inner, AppendInput::Close(last));
        Ok(promise)
    }

    /// The `Producer-Id` sent.
    #[wasm_bindgen(getter, js_name = producerId)]
    pub fn producer_id_js(&self) -> JsValue {
        JsValue::from_str(&self.inner.producer_id)
    }

    /// The current `Producer-Epoch` (it moves on an auto-claim).
    #[wasm_bindgen(getter)]
    pub fn epoch(&self) -> f64 {
        self.inner.machine.borrow().producer().0 as f64
    }
}

impl AppenderJs {
    /// [`AppenderJs::producer_id_js`] for Rust callers.
    pub fn producer_id(&self) -> String {
        self.inner.producer_id.clone()
    }
}

/// A value's bytes: `JSON.stringify` for JSON streams (a value it cannot
/// encode, `undefined` or a function, is `invalid-option` `value`), else a
/// string's UTF-8 or an `ArrayBuffer`/view's bytes.
fn encode(v: &JsValue, json: bool) -> Result<Vec<u8>, JsValue> {
    if json {
        let bad = || invalid("value", "a value JSON.stringify encodes", v);
        let s = js_sys::JSON::stringify(v).map_err(|_| bad())?;
        return s.as_string().map(String::into_bytes).ok_or_else(bad);
    }
    if let Some(s) = v.as_string() {
        return Ok(s.into_bytes());
    }
    if v.is_instance_of::<js_sys::ArrayBuffer>() || js_sys::ArrayBuffer::is_view(v) {
        let b = super::options::body(v)?;
        return Ok(js_sys::Uint8Array::new(&b.value).to_vec());
    }
    Err(invalid("value", "a string, an ArrayBuffer or a view", v))
}

/// Watch the `signal`; `online`/`offline` come from `page.rs`, which holds
/// the appender ([`Drive::online`]).
fn listen(inner: &Rc<Inner>) {
    if !crate::lifecycle::is_online() {
        feed(inner, AppendInput::Online(false));
    }
    let Some(s) = &inner.signal else { return };
    let weak = Rc::downgrade(inner);
    let listener = Listener::new(s.as_ref(), "abort", move |_| {
        if let Some(inner) = weak.upgrade() {
            feed(&inner, AppendInput::Abort);
        }
    });
    if s.aborted() {
        feed(inner, AppendInput::Abort);
    }
    if inner.ended.borrow().is_none() {
        *inner.abort_listener.borrow_mut() = Some(listener);
    }
}

/// Feed one fact, then carry out what the machine drained.
fn feed(inner: &Rc<Inner>, fact: AppendInput) {
    driver::feed(inner, fact);
}

impl Drive for Inner {
    type M = Appender;
    const MAX_ACTIONS: usize = 64;

    fn machine(&self) -> &RefCell<Appender> {
        &self.machine
    }

    fn live(&self) -> &Live {
        &self.live
    }

    /// Appends not yet durable: the batch of the last request sent is
    /// among them (or, just after an answer, it is durable and the server
    /// answers its keepalive copy as a duplicate).
    fn owes(&self) -> bool {
        !self.pending.borrow().is_empty()
    }

    fn online(self: Rc<Self>, on: bool) {
        feed(&self, AppendInput::Online(on));
    }

    fn reply(self: Rc<Self>, tag: Tag, reply: Reply) {
        let id = tag.id;
        match reply {
            // The head has every header field (the `Producer-*` ones too).
            Reply::Answer(a) => feed(&self, AppendInput::Response(id, a.head)),
            Reply::HeadersFailed(cause) => {
                *self.cause.borrow_mut() = Some(cause);
                feed(&self, AppendInput::HeadersFailed(id));
            }
            Reply::Failed | Reply::NotStarted => {
                feed(&self, AppendInput::Error(id, TransportError::NetworkOrCors));
            }
        }
    }

    fn act(self: &Rc<Self>, _now: Now, a: AppendAction) {
        match a {
            AppendAction::Issue(r) => issue(self, r),
            AppendAction::Abort { request } => driver::abort(&**self, Some(tag(request))),
            AppendAction::Durable { through } => {
                // The promises of values before `through`, in index order:
                // split off once, resolved after the borrow ends.
                let done = {
                    let mut p = self.pending.borrow_mut();
                    let n = p.iter().take_while(|(i, _)| *i < through).count();
                    let rest = p.split_off(n);
                    std::mem::replace(&mut *p, rest)
                };
                for (_, (resolve, _)) in done {
                    let _ = resolve.call0(&JsValue::UNDEFINED);
                }
            }
            AppendAction::Closed => end(self, None),
            AppendAction::Failed { error, .. } => end(self, Some(error)),
            // Armed by the loop (`Machine::next` splits it off as `Err`).
            AppendAction::Wait { .. } => {}
        }
    }
}

/// Request `id`'s tag (its attempt number for the `headers` function is
/// the id too).
fn tag(id: u64) -> Tag {
    Tag {
        id,
        attempt: id as u32,
    }
}

/// Closed (`error: None`) or failed: settle every promise, drop the
/// signal's listener, the timer and the live request.
fn end(inner: &Rc<Inner>, error: Option<AppendError>) {
    let e = match error {
        Some(AppendError::Aborted) => {
            super::abort_reason(inner.signal.as_ref(), "the appender was aborted")
        }
        Some(err) => error_value(err, &inner.url),
        None => closed_error(&inner.url),
    };
    if let Some(cause) = inner.cause.borrow_mut().take() {
        crate::js::set(e.unchecked_ref(), "cause", &cause);
    }
    *inner.ended.borrow_mut() = Some(e.clone());
    inner.closed.set(error.is_none());
    let listener = inner.abort_listener.borrow_mut().take();
    drop(listener);
    driver::release(&**inner);
    let pending = std::mem::take(&mut *inner.pending.borrow_mut());
    let closing = std::mem::take(&mut *inner.closing.borrow_mut());
    for (_, (_, reject)) in pending {
        let _ = reject.call1(&JsValue::UNDEFINED, &e);
    }
    for (resolve, reject) in closing {
        let _ = match error {
            None => resolve.call0(&JsValue::UNDEFINED),
            Some(_) => reject.call1(&JsValue::UNDEFINED, &e),
        };
    }
}

fn error_value(err: AppendError, url: &str) -> JsValue {
    let code = err.code();
    let status = match err {
        AppendError::Send { status, .. } => status,
        _ => None,
    };
    let e = super::failed("append failed: ", code, status, url);
    let o: &js_sys::Object = e.unchecked_ref();
    let num = |n: u64| JsValue::from_f64(n as f64);
    match err {
        AppendError::StaleEpoch { current: Some(c) } => crate::js::set(o, "epoch", &num(c)),
        AppendError::SequenceGap { expected, sent } => {
            if let Some(x) = expected {
                crate::js::set(o, "expectedSeq", &num(x));
            }
            crate::js::set(o, "seq", &num(sent));
        }
        _ => {}
    }
    e
}

/// `append failed: stream-closed (<url>)`: an append or close after the
/// appender closed names its stream, as every other appender error does.
fn closed_error(url: &str) -> JsValue {
    super::failed("append failed: ", "stream-closed", None, url)
}

/// Carry out `Issue`: POST through `request.rs`; the reply comes back as a fact.
fn issue(inner: &Rc<Inner>, r: AppendRequest) {
    let close = r.body.is_empty();
    let req = Rc::new(Request {
        url: inner.url.clone(),
        body: match close {
            true => JsValue::UNDEFINED,
            false => js_sys::Uint8Array::from(&r.body[..]).into(),
        },
        app_headers: inner.app_headers.clone(),
        credentials: inner.credentials,
        body_bytes: Some(r.body.len() as u64),
    });
    let mut extra = r.headers;
    if !close {
        extra.push(("Content-Type".into(), inner.content_type.clone()));
    }
    let d: Rc<dyn Slots> = inner.clone();
    // The appender reads only the answer's head: its body is capped as a
    // send's (not read past 1 MiB), and then just not there.
    let issue = tidings_core::upstream::Issue {
        attempt: r.request as u32,
        method: "POST".into(),
        headers: extra,
        max_answer_bytes: tidings_core::upstream::DEFAULT_MAX_ANSWER_BYTES,
    };
    driver::issue(&d, &req, tag(r.request), issue);
}
