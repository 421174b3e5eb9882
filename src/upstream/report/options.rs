//! `report()` options (JS names), read and checked before anything starts
//! with the rules of `send()` (`upstream/options.rs`): the send keys
//! (`headers`, `credentials`, `method`, `idempotencyHeader`, `timeoutMs`,
//! `deadlineMs`, `maxRetryAfterMs`, `maxAttempts`, `backoff`, `signal`) are
//! read by the send reader over the reporter's defaults; the reporter's own
//! are `interval` and `breaker` (as `subscribe()`'s), `startupJitterMs`, `whenHidden`,
//! `keepAll` and `maxQueued`. `idempotencyKey` and `ordered` mean nothing
//! here (one fresh key per report; one report at a time) and are
//! `invalid-option` rather than silently ignored.

use tidings_core::upstream::{HiddenPolicy, ReportConfig};
use wasm_bindgen::JsValue;

use crate::options::{
    absent, breaker, checked, count, fail, flag, get, interval, invalid, ms_in, AT_LEAST_ONE,
};

/// What the adapter keeps besides the core's [`ReportConfig`].
pub struct ReportOptions {
    /// The core's configuration.
    pub config: ReportConfig,
    /// `headers`: an object, or a function called before every attempt.
    pub headers: Option<JsValue>,
    /// `credentials: true`: `"include"`; default `"same-origin"`.
    pub credentials: bool,
    /// `signal`: aborting stops the reporter.
    pub signal: Option<web_sys::AbortSignal>,
}

impl ReportOptions {
    /// Read and check `v`; no side effect, so a throw leaves nothing.
    pub fn from_js(v: &JsValue) -> Result<ReportOptions, JsValue> {
        checked(|| read(v))
    }
}

fn read(v: &JsValue) -> ReportOptions {
    let mut c = ReportConfig::default();
    for key in ["idempotencyKey", "ordered"] {
        if !absent(&get(v, key)) {
            fail(invalid(key, "none (not a report() option)", &get(v, key)));
        }
    }
    let send = super::super::options::read(v, true, std::mem::take(&mut c.send));
    c.send = send.config;
    interval(&mut c.interval, v);
    breaker(&mut c.breaker, v);
    c.startup_jitter_ms = ms_in(v, "startupJitterMs", "");
    c.hidden = hidden(&get(v, "whenHidden"));
    c.keep_all = flag(v, "keepAll").unwrap_or(false);
    if let Some(n) = count(v, "maxQueued", "maxQueued") {
        c.max_queued = match n {
            Some(0) => {
                fail(invalid("maxQueued", AT_LEAST_ONE, &get(v, "maxQueued")));
                1
            }
            Some(n) => n as usize,
            None => usize::MAX,
        };
    }
    ReportOptions {
        config: c,
        headers: send.headers,
        credentials: send.credentials,
        signal: send.signal,
    }
}

/// `whenHidden`: `"stop"` (default), `"continue"`, or `{ intervalMs }` (the
/// slowest pace while hidden).
fn hidden(h: &JsValue) -> HiddenPolicy {
    if h.is_object() {
        if let Some(interval_ms) = ms_in(h, "intervalMs", "whenHidden") {
            return HiddenPolicy::Every { interval_ms };
        }
        fail(invalid(
            "whenHidden.intervalMs",
            "a number of milliseconds",
            h,
        ));
        return HiddenPolicy::Stop;
    }
    match h.as_string().as_deref() {
        _ if absent(h) => HiddenPolicy::Stop,
        Some("stop") => HiddenPolicy::Stop,
        Some("continue") => HiddenPolicy::Continue,
        _ => {
            fail(invalid(
                "whenHidden",
                "\"stop\", \"continue\" or { intervalMs }",
                h,
            ));
            HiddenPolicy::Stop
        }
    }
}
