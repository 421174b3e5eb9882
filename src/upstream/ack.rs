//! `subscribe(url, { ack: { url, batchMs, maxBatch } })`: delivery ACKs.
//! The batching is `tidings_core::upstream::AckBatcher`'s, driven by the
//! upstream drive loop (`driver.rs`) as every upstream machine is; each
//! batch is posted with [`super::send_js`] (one idempotent send: its own
//! key, the send's retries). "Received" is reported by the subscription
//! when it dispatched a message to the app's listeners (the async iterator
//! is one of them: a message it buffered counts).
//!
//! `pagehide`: the ids still waiting for their batch go out at once with
//! `fetch(…, { keepalive: true })` (the core's `AckInput::PageHide`): a send's
//! retries cannot run once the page is gone, and an id never acknowledged is
//! re-sent by the server to the next page, which would show it again.

use std::cell::RefCell;
use std::rc::Rc;

use tidings_core::time::Now;
use tidings_core::upstream::{ack_body, AckAction, AckBatcher, AckInput};
use tidings_core::upstream::{
    DEFAULT_ACK_BATCH_MS, DEFAULT_ACK_MAX_BATCH, DEFAULT_IDEMPOTENCY_HEADER,
};
use wasm_bindgen::prelude::*;

use super::driver::{self, Drive, Live, Tag};
use super::request::Reply;
use crate::guard::Listener;
use crate::options::{
    absent, count, fail, get, group, invalid, set_ms, text, AT_LEAST_ONE, STRING,
};

/// One subscription's ACKs.
pub struct Acker {
    machine: RefCell<AckBatcher>,
    url: String,
    /// The subscription's `headers` (an object or a function), sent with
    /// every batch: a server that authenticates the stream authenticates
    /// its ACKs the same way.
    headers: Option<JsValue>,
    /// The subscription's `withCredentials` (`credentials: "include"`).
    credentials: bool,
    /// The timer (no attempt: each batch is a `send` of its own).
    live: Live,
    /// The window's `pagehide` listener (none in a worker), until close.
    pagehide: RefCell<Option<Listener>>,
}

/// Read `ack` (`undefined`/`null`: none) inside [`crate::options::checked`]:
/// `url` is required and resolved against the page; `batchMs` (default
/// 1000) and `maxBatch` (≥ 1, default 100). Refusals (`invalid-url` /
/// `invalid-option` `ack.*`) are [`fail`]ed. Then [`start`].
pub fn read(v: &JsValue) -> Option<AckOptions> {
    if absent(&get(v, "ack")) {
        return None;
    }
    let a = group(v, "ack");
    let url = text(&a, "url").unwrap_or_else(|| {
        fail(invalid("ack.url", STRING, &get(&a, "url")));
        String::new()
    });
    let url = crate::options::resolve_url(&url).map_err(fail).ok()?;
    let mut batch_ms = DEFAULT_ACK_BATCH_MS;
    set_ms(&mut batch_ms, &a, "batchMs", "ack");
    let max = match count(&a, "maxBatch", "ack.maxBatch") {
        Some(Some(0)) => {
            fail(invalid("ack.maxBatch", AT_LEAST_ONE, &get(&a, "maxBatch")));
            1
        }
        Some(Some(n)) => n as usize,
        Some(None) => usize::MAX,
        None => DEFAULT_ACK_MAX_BATCH,
    };
    Some(AckOptions { url, batch_ms, max })
}

/// `ack`'s options, read and checked ([`read`]).
pub struct AckOptions {
    url: String,
    batch_ms: u64,
    max: usize,
}

/// The ACKs of `options` ([`read`]). `headers` and `credentials` are the
/// subscription's (`headers`, `withCredentials`): every batch goes with them.
pub fn start(options: AckOptions, headers: Option<JsValue>, credentials: bool) -> Rc<Acker> {
    let AckOptions { url, batch_ms, max } = options;
    let acker = Rc::new(Acker {
        machine: RefCell::new(AckBatcher::new(batch_ms, max)),
        url,
        headers,
        credentials,
        live: Live::default(),
        pagehide: RefCell::new(None),
    });
    if crate::js::in_window() {
        let weak = Rc::downgrade(&acker);
        let listener = Listener::new(&crate::js::global(), "pagehide", move |_| {
            if let Some(a) = weak.upgrade() {
                driver::feed(&a, AckInput::PageHide);
            }
        });
        *acker.pagehide.borrow_mut() = Some(listener);
    }
    acker
}

/// The app received message `id`; `leader`: this tab holds the connection.
pub fn received(acker: &Rc<Acker>, id: &str, leader: bool) {
    let id = String::from(id);
    driver::feed(acker, AckInput::Received { id, leader });
}

/// The subscription closed: post what is pending; the timer and the
/// `pagehide` listener go.
pub fn close(acker: &Rc<Acker>) {
    driver::feed(acker, AckInput::Close);
    driver::release(&**acker);
    let pagehide = acker.pagehide.borrow_mut().take();
    drop(pagehide);
}

impl Drive for Acker {
    type M = AckBatcher;

    fn machine(&self) -> &RefCell<AckBatcher> {
        &self.machine
    }

    fn live(&self) -> &Live {
        &self.live
    }

    fn act(self: &Rc<Self>, _now: Now, action: AckAction) {
        match action {
            AckAction::Send(ids) => post(self, &ack_body(&ids)),
            AckAction::SendKeepalive(ids) => post_keepalive(self, &ack_body(&ids)),
            // Armed by the loop (`Machine::next` splits it off as `Err`).
            AckAction::Wait { .. } => {}
        }
    }

    /// Never called: the batcher issues no attempt of its own.
    fn reply(self: Rc<Self>, _tag: Tag, _reply: Reply) {}
}

/// The batch's body: a JSON `Blob`, so the request is `Content-Type:
/// application/json` whatever the subscription's `headers` are (an object
/// or a function, passed to the request as they are; a header they set
/// themselves wins, as for a send).
fn json_body(body: &str) -> JsValue {
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type("application/json");
    let parts = js_sys::Array::of1(&JsValue::from_str(body));
    web_sys::Blob::new_with_str_sequence_and_options(&parts, &bag)
        .map_or_else(|_| JsValue::from_str(body), JsValue::from)
}

/// One batch as the page goes: a single `keepalive` request with its own
/// key (as a send's first attempt has) and the subscription's headers and
/// credentials, its answer not read. A `headers` function is called as for
/// attempt 1 and must return its headers at once: a promise cannot settle
/// before the page goes (`request::app_headers_now`). A function that
/// throws leaves the batch to the server's re-send.
fn post_keepalive(acker: &Acker, body: &str) {
    let req = super::request::Request {
        url: acker.url.clone(),
        body: json_body(body),
        app_headers: acker.headers.clone(),
        credentials: acker.credentials,
        body_bytes: None,
    };
    let Ok(headers) = super::request::app_headers_now(&req) else {
        return;
    };
    if let Ok(key) = super::new_key() {
        let _ = headers.set(DEFAULT_IDEMPOTENCY_HEADER, &key.header_value());
    }
    super::request::keepalive(&req, "POST", &headers);
}

/// One batch: a `send` with a JSON body and the subscription's headers and
/// credentials; its outcome is not the app's business (a failed batch is
/// re-sent by the server's timeout, and the dedupe hides the repeat), so
/// its rejection is caught.
fn post(acker: &Acker, body: &str) {
    let options = js_sys::Object::new();
    if let Some(h) = &acker.headers {
        crate::js::set(&options, "headers", h);
    }
    if acker.credentials {
        crate::js::set(&options, "credentials", &JsValue::TRUE);
    }
    let Ok(p) = super::send_js(
        JsValue::from_str(&acker.url),
        json_body(body),
        options.into(),
    ) else {
        return;
    };
    super::request::quiet(&p);
}
