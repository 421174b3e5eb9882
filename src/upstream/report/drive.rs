//! One reporter: its core [`Reporter`] machine, the report bodies it has
//! not settled, its live attempt, its one timer and its page listeners,
//! driven by the upstream drive loop (`driver.rs`). Facts go in through
//! [`feed`]; the actions are carried out after the machine's borrow ends, so
//! the app's code (its `task`, its `headers` function, its listeners) never
//! runs while the machine is borrowed. Every decision is the machine's.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use tidings_core::engine::{Action, State, TransportError};
use tidings_core::time::Now;
use tidings_core::upstream::{IdempotencyKey, Issue, ReportAction, ReportInput, Reporter};
use wasm_bindgen::{JsCast, JsValue};

use super::super::driver::{self, Live, Slots, Tag};
use super::super::request::{Reply, Request};
use crate::guard::{JsTask, Listener, Report};
use crate::lifecycle::{Lifecycle, PageFact};
use crate::target::{report_error, Listeners};

/// One reporter from `report()` to `closed`.
pub struct Drive {
    machine: RefCell<Reporter>,
    url: String,
    app_headers: Option<JsValue>,
    credentials: bool,
    task: js_sys::Function,
    /// The bodies of reports not settled yet, by report number.
    bodies: RefCell<Vec<(u64, Rc<Request>)>>,
    /// The attempt in flight (at most one: the machine's rule) and the timer.
    live: Live,
    page: RefCell<Option<Lifecycle>>,
    abort_listener: RefCell<Option<Listener>>,
    /// What calls the app's `task` ([`collect`]), made at the first.
    collector: RefCell<Option<Result<JsTask, JsValue>>>,
    /// The app's `statechange` / `error` listeners.
    pub listeners: Listeners,
    closed: Cell<bool>,
}

impl Drive {
    /// A reporter not started yet; `(headers, credentials)`: the options'.
    pub fn new(
        machine: Reporter,
        url: String,
        (app_headers, credentials): (Option<JsValue>, bool),
        task: js_sys::Function,
    ) -> Rc<Drive> {
        Rc::new(Drive {
            machine: RefCell::new(machine),
            url,
            app_headers,
            credentials,
            task,
            bodies: RefCell::new(Vec::new()),
            live: Live::default(),
            page: RefCell::new(None),
            abort_listener: RefCell::new(None),
            collector: RefCell::new(None),
            listeners: Listeners::default(),
            closed: Cell::new(false),
        })
    }

    /// Whether the reporter stopped.
    pub fn is_closed(&self) -> bool {
        self.closed.get()
    }

    /// The machine's counters.
    pub fn stats(&self) -> tidings_core::upstream::ReportStats {
        self.machine.borrow().stats()
    }

    /// The machine's state.
    pub fn state(&self) -> State {
        self.machine.borrow().state()
    }
}

/// Start: report the page as it is now (hidden, offline), watch it, watch
/// the `signal`, then `handle_start`.
pub fn start(d: &Rc<Drive>, signal: Option<web_sys::AbortSignal>) {
    // `stop()` in the same tick as `report()`: nothing to start.
    if d.is_closed() {
        return;
    }
    let weak = Rc::downgrade(d);
    let on_page: crate::lifecycle::Report = Rc::new(move |fact| {
        if let Some(d) = weak.upgrade() {
            page_fact(&d, fact);
        }
    });
    *d.page.borrow_mut() = Some(Lifecycle::watch(on_page));
    if let Some(signal) = signal {
        if signal.aborted() {
            feed(d, ReportInput::Stop);
            return;
        }
        let weak = Rc::downgrade(d);
        let l = Listener::new(signal.as_ref(), "abort", move |_| {
            if let Some(d) = weak.upgrade() {
                feed(&d, ReportInput::Stop);
            }
        });
        *d.abort_listener.borrow_mut() = Some(l);
    }
    feed(d, ReportInput::Start);
}

/// Visibility and connectivity go to the machine; the other page facts
/// (freeze, back-forward cache, network hints) do not concern a reporter.
fn page_fact(d: &Rc<Drive>, fact: PageFact) {
    match fact {
        PageFact::Hidden(h) => feed(d, ReportInput::Visible(!h)),
        PageFact::Online(on) => feed(d, ReportInput::Online(on)),
        _ => {}
    }
}

/// Feed one fact (both clocks read now), then carry out every action the
/// machine drained. Nothing after `closed`.
#[inline(never)]
pub fn feed(d: &Rc<Drive>, fact: ReportInput) {
    driver::feed(d, fact);
}

impl driver::Drive for Drive {
    type M = Reporter;

    fn machine(&self) -> &RefCell<Reporter> {
        &self.machine
    }

    fn live(&self) -> &Live {
        &self.live
    }

    fn reply(self: Rc<Self>, tag: Tag, reply: Reply) {
        let (report, n) = (tag.id, tag.attempt);
        let fact = match reply {
            Reply::Answer(a) => {
                let hint = body_hint_ms(&a.body);
                ReportInput::Response(report, n, a.head, hint)
            }
            Reply::HeadersFailed(cause) => {
                // The app's `headers` failed: nothing was sent; reported as
                // the app's exception, and a failed attempt to the machine.
                report_error(&cause);
                ReportInput::Error(report, n, TransportError::Network)
            }
            Reply::Failed => ReportInput::Error(report, n, TransportError::NetworkOrCors),
            Reply::NotStarted => ReportInput::Error(report, n, TransportError::Network),
        };
        feed(&self, fact);
    }

    /// After the batch's events (a fatal `error`, then `closed`): nothing
    /// more reaches the app.
    fn fed(&self) {
        if self.is_closed() {
            self.listeners.clear();
        }
    }

    fn open(&self) -> bool {
        !self.is_closed()
    }

    /// A report is not settled (its body kept): the last one sent, or one
    /// collected after it was delivered (then the server answers the
    /// keepalive copy, the same key, with its replay).
    fn owes(&self) -> bool {
        !self.bodies.borrow().is_empty()
    }

    fn act(self: &Rc<Self>, _now: Now, action: ReportAction) {
        let event_only = matches!(
            action,
            ReportAction::State { .. } | ReportAction::Error { .. }
        );
        // The app stopped the reporter from a listener earlier in this batch.
        if self.is_closed() && !event_only {
            return;
        }
        match action {
            ReportAction::Collect { report } => collect(self, report),
            ReportAction::Issue { report, issue } => issue_attempt(self, report, issue),
            ReportAction::Abort { .. } => driver::abort(&**self, None),
            ReportAction::Settled { report, .. } => {
                self.bodies.borrow_mut().retain(|(n, _)| *n != report)
            }
            ReportAction::State {
                state,
                reason,
                delay_ms,
            } => {
                if state == State::Closed {
                    close(self);
                }
                let a = Action::State {
                    state,
                    reason,
                    delay_ms,
                };
                event(self, &a);
            }
            ReportAction::Error {
                code,
                status,
                retry_in_ms,
                fatal,
            } => {
                let a = Action::Error {
                    code,
                    status,
                    retry_in_ms,
                    fatal,
                    id: None,
                };
                event(self, &a);
            }
            // Armed by the loop (`Machine::next` splits it off as `Err`).
            ReportAction::Wait { .. } => {}
        }
    }
}

/// `statechange` / `error` with a subscription's shapes (the listeners are
/// cleared once a batch closed the reporter, so nothing follows `closed`).
fn event(d: &Rc<Drive>, a: &Action) {
    if let Some((kind, e)) = crate::event::js::from_action(a, &d.url) {
        d.listeners.dispatch(kind, &e, &|| true);
    }
}

/// Closed for good: the attempt, the timer and the page listeners go; the
/// reporter leaves the live set (`super::forget`).
fn close(d: &Rc<Drive>) {
    d.closed.set(true);
    driver::release(&**d);
    let dropped = (
        d.page.borrow_mut().take(),
        d.abort_listener.borrow_mut().take(),
    );
    drop(dropped);
    d.bodies.borrow_mut().clear();
    super::forget(d);
}

/// Carry out `Collect`: call the app's `task()` from a microtask (never
/// while the machine is borrowed), await it when it gives a promise, and
/// answer with a fresh key when it gave a body (`collector` in `stats.js`).
/// A throw, a rejection or a body `send()` would refuse is reported
/// (`reportError`) and counts as nothing to report: the reporter goes on.
fn collect(d: &Rc<Drive>, report: u64) {
    let mut c = d.collector.borrow_mut();
    let c = c.get_or_insert_with(|| {
        let weak = Rc::downgrade(d);
        let on: Report = Box::new(move |got| {
            let Some(d) = weak.upgrade() else { return };
            let got: js_sys::Array = got.unchecked_into();
            let report = got.get(0).as_f64().unwrap_or_default() as u64;
            let got = match got.length() {
                2 => Ok(got.get(1)),
                _ => Err(got.get(2)),
            };
            let key = match got.and_then(|v| body(&d, report, &v)) {
                Ok(key) => key,
                Err(thrown) => {
                    report_error(&thrown);
                    None
                }
            };
            feed(&d, ReportInput::Collected(report, key));
        });
        JsTask::start(on, |f| Ok(collector(&d.task, f)))
    });
    if let Ok(c) = c {
        c.handle().unchecked_ref::<Collector>().call(report as f64);
    }
}

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/upstream/report/stats.js")]
extern "C" {
    /// `collector`'s handle: its `call(n)` collects report `n`.
    type Collector;
    #[wasm_bindgen(method)]
    fn call(this: &Collector, report: f64);
    /// The app's `task`, called by `call(n)` on a microtask, its answer
    /// reported to `report` (`stats.js`); nothing after `abort()`.
    fn collector(task: &js_sys::Function, report: &JsValue) -> web_sys::AbortController;
}

/// Keep the task's answer as report `report`'s body; `None` for nothing to
/// report (`undefined` / `null`).
fn body(d: &Drive, report: u64, v: &JsValue) -> Result<Option<IdempotencyKey>, JsValue> {
    if crate::options::absent(v) {
        return Ok(None);
    }
    let body = super::super::options::body(v)?;
    let key = super::super::new_key()?;
    let req = Request {
        url: d.url.clone(),
        body: body.value,
        app_headers: d.app_headers.clone(),
        credentials: d.credentials,
        body_bytes: body.bytes,
    };
    d.bodies.borrow_mut().push((report, Rc::new(req)));
    Ok(Some(key))
}

/// Carry out `Issue`: one attempt with `send()`'s attempt code; its reply is
/// fed back as a fact.
fn issue_attempt(d: &Rc<Drive>, report: u64, issue: Issue) {
    let n = issue.attempt;
    let req = d
        .bodies
        .borrow()
        .iter()
        .find(|(r, _)| *r == report)
        .map(|(_, req)| Rc::clone(req));
    let tag = Tag {
        id: report,
        attempt: n,
    };
    let slots: Rc<dyn Slots> = d.clone();
    match &req {
        Some(req) => driver::issue(&slots, req, tag, issue),
        // A broken invariant (no body): a failed attempt, fed from the task
        // queue as every reply is.
        None => driver::not_started(&slots, tag),
    }
}

/// `_polling.next_interval_ms` of a JSON answer body (the `poll`
/// transport's envelope), read with the browser's `JSON.parse`; `None` for
/// any other body.
fn body_hint_ms(body: &JsValue) -> Option<u64> {
    super::super::request::polling_hint(body)
        .as_f64()
        .map(|ms| ms as u64)
}
