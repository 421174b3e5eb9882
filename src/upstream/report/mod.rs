//! `report(url, task, options)`: every interval, the app's `task()` gives a
//! body and it is sent as one `send()`, behind the `send`
//! feature.
//!
//! ```js
//! import init, { report } from "tidings";
//! await init();
//! const r = report("/location", () => JSON.stringify(here()), {
//!   headers: { "Content-Type": "application/json" },
//! });
//! r.addEventListener("error", (e) => console.warn(e.code, e.retryInMs));
//! r.stop();
//! ```
//!
//! The decisions (startup jitter, pace, server hints, backoff, supersede or
//! keep every report, hidden and offline) are the core's
//! `tidings_core::upstream::Reporter`. This folder only reports facts and
//! carries out its actions:
//! - `options.rs`: the options, checked before anything starts;
//! - `drive.rs`: the drive loop (machine, task, attempt, timer, page facts).
//!
//! A running reporter is held by the live set here, not by its JS handle:
//! `report(url, task)` without keeping the result reports until the page
//! goes; `stop()` (or the `signal`, or a permanent answer) ends it.

mod drive;
mod options;

use std::cell::RefCell;
use std::rc::Rc;

use tidings_core::upstream::{ReportInput, Reporter as Machine};
use wasm_bindgen::prelude::*;

use drive::Drive;
use options::ReportOptions;

thread_local! {
    /// The running reporters (each leaves at `closed`).
    static LIVE: RefCell<Vec<Rc<Drive>>> = const { RefCell::new(Vec::new()) };
}

/// Remove `d` from the live set (dropped outside the borrow).
fn forget(d: &Rc<Drive>) {
    let gone = LIVE.with(|l| {
        let mut l = l.borrow_mut();
        let i = l.iter().position(|x| Rc::ptr_eq(x, d));
        i.map(|i| l.swap_remove(i))
    });
    drop(gone);
}

#[wasm_bindgen(module = "/src/upstream/report/stats.js")]
extern "C" {
    /// The counters as one object (`stats.js`).
    #[wasm_bindgen(js_name = reportStats)]
    #[allow(clippy::too_many_arguments)]
    fn report_stats(
        reports: f64,
        skipped: f64,
        requests: f64,
        retries: f64,
        delivered: f64,
        superseded: f64,
        failed: f64,
        transient_failures: f64,
        interval_ms: f64,
    ) -> JsValue;
}

/// What `report()` returns. Listen with `addEventListener(type, fn)` for
/// `statechange` and `error` (the shapes of a subscription's).
#[wasm_bindgen]
pub struct Reporter {
    drive: Rc<Drive>,
}

/// Report to `url` every interval: `task()` (sync or async) gives the body
/// (anything `send()` takes; `undefined`/`null`: nothing to report this
/// time), sent with one fresh idempotency key per report, reused only by
/// that report's retries. Throws an `Error` with `code` `invalid-url` or
/// `invalid-option` (a `task` that is not a function, or an option; see
/// `options.rs`) before anything starts.
#[wasm_bindgen(js_name = report)]
pub fn report_js(url: JsValue, task: JsValue, options: JsValue) -> Result<Reporter, JsValue> {
    let url = super::url_of(&url)?;
    let task: js_sys::Function = task
        .dyn_into()
        .map_err(|t| crate::options::invalid("task", "a function", &t))?;
    let ReportOptions {
        config,
        headers,
        credentials,
        signal,
    } = ReportOptions::from_js(&options)?;
    let machine = Machine::new(config, crate::clock::random_seed());
    let d = Drive::new(machine, url, (headers, credentials), task);
    LIVE.with(|l| l.borrow_mut().push(Rc::clone(&d)));
    super::page::hold(&(Rc::clone(&d) as _));
    // Started from a microtask, so listeners added right after `report()`
    // see the first `statechange` (as a subscription's do).
    let weak = Rc::downgrade(&d);
    let start = move || {
        if let Some(d) = weak.upgrade() {
            drive::start(&d, signal)
        }
    };
    super::driver::soon(&*d, Box::new(start));
    Ok(Reporter { drive: d })
}

/// For the Rust API's handle (`tidings::Reporter`).
#[cfg(feature = "rust")]
impl Reporter {
    /// The machine's state.
    pub(crate) fn state_now(&self) -> tidings_core::engine::State {
        self.drive.state()
    }

    /// The machine's counters.
    pub(crate) fn stats_now(&self) -> tidings_core::upstream::ReportStats {
        self.drive.stats()
    }
}

#[wasm_bindgen]
impl Reporter {
    /// Stop: the request in flight is aborted, no report follows, state
    /// `closed`. Idempotent.
    pub fn stop(&self) {
        drive::feed(&self.drive, ReportInput::Stop);
    }

    /// Report now, within the pacing rules: not before a failure's wait, not
    /// within `interval.minMs` of the last request, not while hidden
    /// (`whenHidden: "stop"`) or offline, and after a report in flight
    /// answers.
    pub fn flush(&self) {
        drive::feed(&self.drive, ReportInput::Flush);
    }

    /// `connecting` (until a report is delivered, or a request after a
    /// failure), `open` (the last report was delivered), `waiting` (after a
    /// failure, or before the first report), `paused` (hidden or offline) or
    /// `closed`.
    #[wasm_bindgen(getter)]
    pub fn state(&self) -> JsValue {
        crate::js::name(self.drive.state().as_str())
    }

    /// Counters: `{ reports, skipped, requests, retries, delivered,
    /// superseded, failed, transientFailures, intervalMs }`.
    pub fn stats(&self) -> JsValue {
        let s = self.drive.stats();
        let n = |n: u64| n as f64;
        report_stats(
            n(s.reports),
            n(s.skipped),
            n(s.requests),
            n(s.retries),
            n(s.delivered),
            n(s.superseded),
            n(s.failed),
            n(s.transient_failures),
            n(s.interval_ms),
        )
    }

    /// As `EventTarget.addEventListener` (see `Subscription`); `type` is
    /// converted with `String(type)`.
    #[wasm_bindgen(js_name = addEventListener)]
    pub fn add_event_listener(
        &self,
        kind: JsValue,
        listener: JsValue,
        options: JsValue,
    ) -> Result<(), JsValue> {
        if self.drive.is_closed() {
            return Ok(());
        }
        self.drive.listeners.add_js(&kind, listener, &options)?;
        Ok(())
    }

    /// As `EventTarget.removeEventListener`.
    #[wasm_bindgen(js_name = removeEventListener)]
    pub fn remove_event_listener(&self, kind: JsValue, listener: JsValue) -> Result<(), JsValue> {
        self.drive.listeners.remove_js(&kind, &listener)
    }
}
