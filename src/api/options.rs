//! `subscribe()` options as the app passes them (JS names, camelCase), turned
//! into the engine's [`Config`] and the adapter's own options. Every duration
//! is a number of milliseconds and says so in its name (`…Ms`). The table with
//! defaults is in the README and in `tidings_core::engine::Config`.
//!
//! Read with `Reflect.get` rather than serde-wasm-bindgen: serde's error path
//! formats floats and links `core::fmt`, which cost about 18 KB gzip of the
//! bundle (measured with `make size`, see README "Size"). Unknown keys are
//! ignored and a value of the wrong type falls back to the default, so an app
//! written against a newer version keeps working.

use tidings_core::engine::{Config, TransportKind};
use tidings_core::policy::backoff::Strategy;
use tidings_core::policy::interval::IntervalMode;
use wasm_bindgen::JsValue;

/// How message data reaches the app.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
pub enum Parse {
    /// The data string as sent (default).
    #[default]
    Text,
    /// `JSON.parse(data)`; a failure is an `error` event with code `parse`.
    Json,
}

/// What the adapter keeps besides the engine's [`Config`].
pub struct Options {
    /// The engine's configuration.
    pub config: Config,
    /// `parse`: `"text"` (default) or `"json"`.
    pub parse: Parse,
    /// `withCredentials`: send cookies cross-origin. Default `false`.
    pub with_credentials: bool,
    /// `seed`: seeds the jitter PRNG. Default: random (`crypto.getRandomValues`).
    pub seed: Option<u64>,
    /// `signal`: an `AbortSignal` that closes the subscription.
    pub signal: Option<web_sys::AbortSignal>,
    /// `headers`: an object, or a function returning one (or a Promise of one).
    pub headers: Option<JsValue>,
    /// `debug`: log every decision of the engine with its reason on the
    /// console (`console.debug`). Default `false`.
    pub debug: bool,
}

impl Options {
    /// Read `v` for `url`; `undefined`/`null` give the defaults.
    pub fn from_js(url: &str, v: &JsValue) -> Self {
        let mut c = Config::new(url);
        let mut o = Options {
            config: Config::new(url),
            parse: Parse::Text,
            with_credentials: false,
            seed: None,
            signal: None,
            headers: None,
            debug: false,
        };
        if v.is_object() {
            read_into(&mut c, &mut o, v);
        }
        o.config = c.sanitized();
        o
    }
}

fn read_into(c: &mut Config, o: &mut Options, v: &JsValue) {
    o.parse = match get(v, "parse").as_string().as_deref() {
        Some("json") => Parse::Json,
        _ => Parse::Text,
    };
    o.with_credentials = get(v, "withCredentials").as_bool().unwrap_or(false);
    o.debug = get(v, "debug").as_bool().unwrap_or(false);
    o.seed = get(v, "seed")
        .as_f64()
        .filter(|s| s.is_finite())
        .map(|s| s as u64);
    o.signal = {
        let s = get(v, "signal");
        (!s.is_undefined() && !s.is_null()).then(|| wasm_bindgen::JsCast::unchecked_into(s))
    };

    let urls = get(v, "urls");
    c.urls.eventsource = get(&urls, "eventsource").as_string();
    c.urls.fetch_sse = get(&urls, "fetch-sse").as_string();
    c.urls.long_poll = get(&urls, "long-poll").as_string();
    c.urls.poll = get(&urls, "poll").as_string();
    let transports = strings(&get(v, "transports"));
    if !transports.is_empty() {
        c.transports = transports
            .iter()
            .filter_map(|t| TransportKind::from_name(t))
            .collect();
    }
    c.events = strings(&get(v, "events"));
    if let Some(id) = get(v, "lastEventId").as_string() {
        c.last_event_id = id;
    }
    if let Some(p) = get(v, "lastEventIdParam").as_string() {
        c.last_event_id_param = p;
    }
    let headers = get(v, "headers");
    c.has_custom_headers = headers.is_object() || headers.is_function();
    o.headers = c.has_custom_headers.then_some(headers);
    if let Some(h) = get(v, "heartbeatEvent").as_string() {
        c.heartbeat_event = h;
    }
    let p = get(v, "pauseWhenHidden");
    if let Some(b) = p.as_bool() {
        c.pause_when_hidden = b.then_some(0);
    } else if let Some(after) = ms(&get(&p, "afterMs")) {
        c.pause_when_hidden = Some(after);
    }

    let b = get(v, "backoff");
    c.backoff.strategy = match get(&b, "strategy").as_string().as_deref() {
        Some("equal-jitter") => Strategy::EqualJitter,
        Some("decorrelated") => Strategy::Decorrelated,
        Some("none") => Strategy::None,
        _ => Strategy::FullJitter,
    };
    set_ms(&mut c.backoff.base_ms, &get(&b, "baseMs"));
    set_ms(&mut c.backoff.max_ms, &get(&b, "maxMs"));
    set_ms(&mut c.backoff.floor_ms, &get(&b, "floorMs"));
    set_ms(&mut c.backoff.healthy_after_ms, &get(&b, "healthyAfterMs"));
    if let Some(n) = get(&b, "maxAttempts").as_f64() {
        c.backoff.max_attempts = (n.is_finite() && n >= 0.0).then(|| n.min(u32::MAX as f64) as u32);
    }
    set_ms(&mut c.max_retry_after_ms, &get(v, "maxRetryAfterMs"));
    let br = get(v, "breaker");
    if let Some(n) = get(&br, "failureThreshold").as_f64() {
        c.breaker.failure_threshold = n.clamp(0.0, u32::MAX as f64) as u32;
    }
    set_ms(&mut c.breaker.cooldown_ms, &get(&br, "cooldownMs"));
    let i = get(v, "interval");
    c.interval.mode = match get(&i, "mode").as_string().as_deref() {
        Some("aimd") => IntervalMode::Aimd,
        Some("rate-window") => IntervalMode::RateWindow,
        Some("fixed") => IntervalMode::Fixed,
        _ => IntervalMode::Exponential,
    };
    set_ms(&mut c.interval.initial_ms, &get(&i, "initialMs"));
    set_ms(&mut c.interval.min_ms, &get(&i, "minMs"));
    set_ms(&mut c.interval.max_ms, &get(&i, "maxMs"));
    let w = get(v, "watchdog");
    set_ms(&mut c.watchdog.idle_timeout_ms, &get(&w, "idleTimeoutMs"));
    set_ms(
        &mut c.watchdog.first_event_timeout_ms,
        &get(&w, "firstEventTimeoutMs"),
    );
    set_ms(
        &mut c.long_poll.timeout_ms,
        &get(&get(v, "longPoll"), "timeoutMs"),
    );
    let f = get(v, "fallback");
    if let Some(n) = get(&f, "afterFailures").as_f64() {
        c.fallback.after_failures = n.clamp(0.0, u32::MAX as f64) as u32;
    }
    set_ms(&mut c.fallback.remember_ms, &get(&f, "rememberMs"));
}

/// `o[key]`, or `undefined` when `o` is not an object or the getter throws.
pub(crate) fn get(o: &JsValue, key: &str) -> JsValue {
    if !o.is_object() {
        return JsValue::UNDEFINED;
    }
    js_sys::Reflect::get(o, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// A non-negative finite number of milliseconds, truncated.
fn ms(v: &JsValue) -> Option<u64> {
    v.as_f64()
        .filter(|n| n.is_finite() && *n >= 0.0)
        .map(|n| n as u64)
}

fn set_ms(field: &mut u64, v: &JsValue) {
    if let Some(n) = ms(v) {
        *field = n;
    }
}

/// An array of strings; non-string entries are skipped.
fn strings(v: &JsValue) -> Vec<String> {
    if !js_sys::Array::is_array(v) {
        return Vec::new();
    }
    js_sys::Array::from(v)
        .iter()
        .filter_map(|x| x.as_string())
        .collect()
}
