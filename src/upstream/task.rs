//! One send: its [`Sender`] machine, its live attempt, its one timer, its
//! `signal` listener and its promise, driven by the upstream drive loop
//! (`driver.rs`): facts go in through [`feed`]; the actions are carried out
//! after the machine's borrow ends, so nothing they trigger (a `signal`
//! aborted from the app's `headers` function, the next `ordered` send
//! starting) can find the machine borrowed. Every decision is the machine's.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use tidings_core::engine::{ErrorCode, TransportError};
use tidings_core::time::Now;
use tidings_core::upstream::{
    is_replayed, Outcome, SendAction, SendInput, Sender, REPLAYED_HEADER,
};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::Headers;

use super::driver::{self, Drive, Live, Slots, Tag};
use super::request::{Answer, Reply, Request};
use crate::guard::Listener;

/// Which stream operation a task is (`stream()`) and the headers its
/// attempts carry in place of the sender's idempotency header
/// (`StreamOp::request`); `None` for a send.
#[cfg(feature = "stream-handles")]
pub type Op = Option<(tidings_core::upstream::StreamOp, Vec<(String, String)>)>;
/// A send (a build without `stream()`).
#[cfg(not(feature = "stream-handles"))]
pub type Op = ();

/// One send from call to settle.
pub struct Task {
    sender: RefCell<Sender>,
    /// URL, body, app headers, credentials: the same on every attempt.
    pub req: Rc<Request>,
    /// `ordered: true`: queued per URL (`page.rs`).
    pub ordered: bool,
    live: Live,
    /// The answer of the live attempt, kept until the machine settles on it.
    answer: RefCell<Option<Answer>>,
    /// What the app's `headers` threw (`HeadersFailed`).
    cause: RefCell<Option<JsValue>>,
    signal: Option<web_sys::AbortSignal>,
    abort_listener: RefCell<Option<Listener>>,
    settled: Cell<bool>,
    resolve: js_sys::Function,
    reject: js_sys::Function,
    /// The stream operation it carries out, if any.
    #[cfg_attr(not(feature = "stream-handles"), allow(dead_code))]
    op: Op,
}

impl Task {
    /// A send not started yet (or stream operation `op`); its promise's
    /// `resolve` and `reject`.
    pub fn new(
        sender: Sender,
        req: Request,
        ordered: bool,
        signal: Option<web_sys::AbortSignal>,
        settle: (js_sys::Function, js_sys::Function),
        op: Op,
    ) -> Rc<Task> {
        Rc::new(Task {
            sender: RefCell::new(sender),
            req: Rc::new(req),
            ordered,
            live: Live::default(),
            answer: RefCell::new(None),
            cause: RefCell::new(None),
            signal,
            abort_listener: RefCell::new(None),
            settled: Cell::new(false),
            resolve: settle.0,
            reject: settle.1,
            op,
        })
    }

    /// Whether the promise has settled.
    pub fn is_settled(&self) -> bool {
        self.settled.get()
    }
}

/// Watch the caller's `signal` and report the page's connectivity; an
/// already aborted signal settles at once, before anything is sent.
pub fn watch(task: &Rc<Task>, online: bool) {
    if !online {
        feed(task, SendInput::Online(false));
    }
    let Some(signal) = &task.signal else { return };
    if signal.aborted() {
        feed(task, SendInput::Abort);
        return;
    }
    let weak = Rc::downgrade(task);
    let listener = Listener::new(signal.as_ref(), "abort", move |_| {
        if let Some(task) = weak.upgrade() {
            feed(&task, SendInput::Abort);
        }
    });
    *task.abort_listener.borrow_mut() = Some(listener);
}

/// Feed one fact to the machine, then carry out every action it drained.
/// Nothing after the send settled.
#[inline(never)]
pub fn feed(task: &Rc<Task>, fact: SendInput) {
    driver::feed(task, fact);
}

impl Drive for Task {
    type M = Sender;

    fn machine(&self) -> &RefCell<Sender> {
        &self.sender
    }

    fn live(&self) -> &Live {
        &self.live
    }

    fn reply(self: Rc<Self>, tag: Tag, reply: Reply) {
        let n = tag.attempt;
        match reply {
            Reply::Answer(answer) if answer.too_large => {
                feed(&self, SendInput::TooLarge(n, answer.head));
            }
            Reply::Answer(answer) => {
                let head = answer.head.clone();
                *self.answer.borrow_mut() = Some(answer);
                feed(&self, SendInput::Response(n, head));
            }
            Reply::HeadersFailed(cause) => {
                *self.cause.borrow_mut() = Some(cause);
                feed(&self, SendInput::HeadersFailed(n));
            }
            Reply::Failed => feed(&self, SendInput::Error(n, TransportError::NetworkOrCors)),
            Reply::NotStarted => feed(&self, SendInput::Error(n, TransportError::Network)),
        }
    }

    fn open(&self) -> bool {
        !self.is_settled()
    }

    fn act(self: &Rc<Self>, _now: Now, action: SendAction) {
        match action {
            #[allow(unused_mut)]
            SendAction::Issue(mut issue) => {
                #[cfg(feature = "stream-handles")]
                if let Some((_, headers)) = &self.op {
                    issue.headers = headers.clone();
                }
                let tag = Tag {
                    id: 0,
                    attempt: issue.attempt,
                };
                let d: Rc<dyn Slots> = self.clone();
                driver::issue(&d, &self.req, tag, issue);
            }
            SendAction::Abort { .. } => driver::abort(&**self, None),
            SendAction::Settle(outcome) => settle(self, outcome),
            // Armed by the loop (`Machine::next` splits it off as `Err`).
            SendAction::Wait { .. } => {}
        }
    }
}

/// Settle the promise once: drop the attempt, the timer and the listener,
/// free the send's place (the next `ordered` send may start), then resolve
/// or reject (no app code runs synchronously from either).
fn settle(task: &Rc<Task>, outcome: Outcome) {
    task.settled.set(true);
    driver::release(&**task);
    let listener = task.abort_listener.borrow_mut().take();
    drop(listener);
    super::page::forget(task);
    let (ok, value) = match outcome {
        Outcome::Ok { status, attempts } => (true, result(task, status, attempts)),
        Outcome::Err {
            code,
            status,
            attempts,
        } => (
            false,
            error(task, code_of(task, code, status), status, attempts),
        ),
        Outcome::HeadersFailed { attempts } => {
            let e = error(task, "headers", None, attempts);
            if let Some(cause) = task.cause.borrow_mut().take() {
                crate::js::set(e.unchecked_ref(), "cause", &cause);
            }
            (false, e)
        }
        Outcome::Aborted => (
            false,
            super::abort_reason(task.signal.as_ref(), "the send was aborted"),
        ),
    };
    let f = if ok { &task.resolve } else { &task.reject };
    let _ = f.call1(&JsValue::UNDEFINED, &value);
}

/// `SendResult`: `{ status, attempts, replayed, headers, body }`.
fn result(task: &Task, status: u16, attempts: u32) -> JsValue {
    let answer = task.answer.borrow_mut().take();
    // The machine settles `Ok` only on an answer it was fed, so `answer`
    // is there; the fallback keeps a broken invariant from panicking.
    let (headers, body) = match answer {
        Some(a) => (Some(a.headers), a.body),
        None => (Headers::new().ok(), JsValue::from_str("")),
    };
    // A stream operation's answer says whether the stream is closed where a
    // send's says whether it was replayed: both a header that is `true`.
    #[cfg(feature = "stream-handles")]
    let flag = match task.op {
        Some(_) => "stream-closed",
        None => REPLAYED_HEADER,
    };
    #[cfg(not(feature = "stream-handles"))]
    let flag = REPLAYED_HEADER;
    let replayed = headers.as_ref().and_then(|h| h.get(flag).ok().flatten());
    let replayed = is_replayed(replayed.as_deref());
    let headers = headers.map_or(JsValue::UNDEFINED, JsValue::from);
    super::request::send_result(status, attempts, replayed, &headers, &body)
}

/// The code of a failed send: the core's, or for a stream operation its
/// refusal by the last status (`StreamOp::code`: `not-found`, `gone`).
fn code_of(task: &Task, code: ErrorCode, status: Option<u16>) -> &'static str {
    #[cfg(feature = "stream-handles")]
    if task.op.is_some() {
        return tidings_core::upstream::StreamOp::code(code, status);
    }
    let _ = (task, status);
    code.as_str()
}

/// The package's error: an `Error` with `code`, `status` (when an answer
/// caused it) and `attempts`; its message `send failed: <code>[ <status>]
/// (<url>)` (`send failed: http-status 503 (https://example.com/up)`; a
/// stream operation's `head failed: not-found 404 (<url>)`).
fn error(task: &Task, code: &str, status: Option<u16>, attempts: u32) -> JsValue {
    #[cfg(feature = "stream-handles")]
    let what = task.op.as_ref().map_or("send failed: ", |op| op.0.failed());
    #[cfg(not(feature = "stream-handles"))]
    let what = "send failed: ";
    let e = super::failed(what, code, status, &task.req.url);
    let o: &js_sys::Object = e.unchecked_ref();
    crate::js::set(o, "attempts", &JsValue::from_f64(f64::from(attempts)));
    e
}
