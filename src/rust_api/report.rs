//! `tidings::report(url, task, ReportOptions)`: the JS API's `report()` for
//! Rust (behind the `report` feature, as in JS), over the same checks and
//! drive loop (`src/upstream/report/`). A drop-based handle: dropping the
//! [`Reporter`] stops it, as dropping a [`Subscription`](super::Subscription)
//! closes it.

use std::future::Future;

use tidings_core::engine::State;
use tidings_core::upstream::ReportStats;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use super::headers::JsHeadersFn;
use super::{Error, SendOptions};

/// `report` options: the send's ([`ReportOptions::send`]: `method`,
/// headers, `max_attempts`, `timeout_ms`, `signal`… but not
/// `idempotency_key` or `ordered`, refused as in JS) and the reporter's
/// own. Unset ones keep the JS defaults (docs/upstream.md); checked when
/// [`report`] is called.
#[derive(Clone, Default)]
pub struct ReportOptions {
    send: SendOptions,
    entries: Vec<(&'static str, &'static str, JsValue)>,
}

impl ReportOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    fn set(mut self, group: &'static str, key: &'static str, value: JsValue) -> Self {
        self.entries.retain(|(g, k, _)| !(*g == group && *k == key));
        self.entries.push((group, key, value));
        self
    }

    /// The send options every report goes out with (each report has its
    /// own fresh idempotency key, reused by its retries).
    #[must_use]
    pub fn send(mut self, send: SendOptions) -> Self {
        self.send = send;
        self
    }

    /// `interval.initialMs`: the pace to start with (default 5000).
    #[must_use]
    pub fn interval_initial_ms(self, ms: u64) -> Self {
        self.set("interval", "initialMs", (ms as f64).into())
    }

    /// `interval.minMs` (default 1000).
    #[must_use]
    pub fn interval_min_ms(self, ms: u64) -> Self {
        self.set("interval", "minMs", (ms as f64).into())
    }

    /// `interval.maxMs` (default 300000).
    #[must_use]
    pub fn interval_max_ms(self, ms: u64) -> Self {
        self.set("interval", "maxMs", (ms as f64).into())
    }

    /// `startupJitterMs`: the first report waits a random part of this.
    #[must_use]
    pub fn startup_jitter_ms(self, ms: u64) -> Self {
        self.set("", "startupJitterMs", (ms as f64).into())
    }

    /// `keepAll`: send every report, none superseded by a newer one
    /// (default `false`).
    #[must_use]
    pub fn keep_all(self, on: bool) -> Self {
        self.set("", "keepAll", on.into())
    }

    /// `maxQueued`: with `keep_all`, reports kept at most (at least 1).
    #[must_use]
    pub fn max_queued(self, n: u32) -> Self {
        self.set("", "maxQueued", f64::from(n).into())
    }

    /// `whenHidden: "continue"` (`true`) or `"stop"` (`false`, the default).
    #[must_use]
    pub fn continue_when_hidden(self, on: bool) -> Self {
        let v = if on { "continue" } else { "stop" };
        self.set("", "whenHidden", v.into())
    }

    /// `whenHidden: { intervalMs }`: while hidden, report at this pace.
    #[must_use]
    pub fn when_hidden_interval_ms(self, ms: u64) -> Self {
        let o = js_sys::Object::new();
        crate::js::set(&o, "intervalMs", &(ms as f64).into());
        self.set("", "whenHidden", o.into())
    }

    fn to_js(&self) -> (JsValue, Option<JsHeadersFn>) {
        let (o, keep) = self.send.to_js();
        for (group, key, value) in &self.entries {
            let target = match *group {
                "" => o.clone(),
                g => {
                    let c = crate::options::get(&o, g);
                    if c.is_object() {
                        c
                    } else {
                        let c = JsValue::from(js_sys::Object::new());
                        crate::js::set_dyn(o.unchecked_ref(), g, &c);
                        c
                    }
                }
            };
            crate::js::set_dyn(target.unchecked_ref(), key, value);
        }
        (o, keep)
    }
}

/// A running reporter ([`report`]). Dropping it stops it: the request in
/// flight is aborted, no report follows (keep it in the component's state
/// for as long as it should report).
pub struct Reporter {
    js: crate::upstream::Reporter,
    _task: Closure<dyn Fn() -> JsValue>,
    _headers: Option<JsHeadersFn>,
}

impl Reporter {
    /// Stop now (as dropping it). Idempotent.
    pub fn stop(&self) {
        self.js.stop();
    }

    /// Report now, within the pacing rules (not before a failure's wait, not
    /// within `interval_min_ms` of the last request, not while paused).
    pub fn flush(&self) {
        self.js.flush();
    }

    /// `Connecting`, `Open` (the last report was delivered), `Waiting`
    /// (after a failure, or before the first report), `Paused` (hidden or
    /// offline) or `Closed`.
    pub fn state(&self) -> State {
        self.js.state_now()
    }

    /// The counters (`stats()` in JS).
    pub fn stats(&self) -> ReportStats {
        self.js.stats_now()
    }
}

impl Drop for Reporter {
    fn drop(&mut self) {
        self.js.stop();
    }
}

/// Report to `url` every interval: `task()`'s future gives the body (text,
/// sent as is; `None`: nothing to report this time), sent as one `send`
/// with a fresh idempotency key per report. The pace, backoff, superseding
/// and pauses (hidden, offline) are the JS `report()`'s. Refused before
/// anything starts with [`Error::InvalidUrl`] or [`Error::InvalidOption`].
///
/// ```no_run
/// use tidings::{ReportOptions, SendOptions};
/// let r = tidings::report("/location", || async { Some(String::from("{\"x\":1}")) },
///     ReportOptions::new()
///         .interval_initial_ms(10_000)
///         .send(SendOptions::new().header("Content-Type", "application/json")))?;
/// // …later, or on the component's cleanup:
/// drop(r);
/// # Ok::<(), tidings::Error>(())
/// ```
pub fn report<F, Fut>(url: &str, task: F, options: ReportOptions) -> Result<Reporter, Error>
where
    F: Fn() -> Fut + 'static,
    Fut: Future<Output = Option<String>> + 'static,
{
    let task = Closure::<dyn Fn() -> JsValue>::new(move || {
        let fut = task();
        wasm_bindgen_futures::future_to_promise(async move {
            Ok(fut.await.map_or(JsValue::UNDEFINED, JsValue::from))
        })
        .into()
    });
    let (js_options, headers) = options.to_js();
    let js = crate::upstream::report_js(url.into(), task.as_ref().clone(), js_options)
        .map_err(|e| Error::from_js(&e))?;
    Ok(Reporter {
        js,
        _task: task,
        _headers: headers,
    })
}
