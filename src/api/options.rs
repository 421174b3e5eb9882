//! `subscribe()` options as the app passes them (JS names, camelCase), turned
//! into the engine's [`Config`] and the adapter's own options. Every duration
//! is a number of milliseconds and says so in its name (`…Ms`). The table with
//! defaults is in the README and in `tidings_core::engine::Config`.
//!
//! Read with `Reflect.get` rather than serde-wasm-bindgen: serde's error path
//! formats floats and links `core::fmt`, which cost about 18 KB gzip of the
//! bundle (measured with `make size`, see README "Size"). Unknown keys are
//! ignored and a number or mode of the wrong type falls back to the default,
//! so an app written against a newer version keeps working. What cannot be
//! honoured safely throws an `Error` with `code: "invalid-option"` before
//! anything starts: a getter that throws, a `signal` that is not an
//! `AbortSignal`, `headers` that are neither an object nor a function (or an
//! object with an invalid header), `events`/`heartbeatEvent` names that are
//! not strings or collide with the subscription's own event types or with
//! each other. A `urls` entry that is not an http(s) URL throws `invalid-url`.

use std::cell::Cell;

use tidings_core::engine::{Config, TransportKind};
use tidings_core::policy::backoff::Strategy;
use tidings_core::policy::interval::IntervalMode;
use wasm_bindgen::{JsCast, JsValue};

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
    /// Read and check `v` for `url` (already resolved by [`super::resolve_url`]);
    /// `undefined`/`null` give the defaults. Runs no side effect, so a throw
    /// leaves nothing behind.
    pub fn from_js(url: &str, v: &JsValue) -> Result<Self, JsValue> {
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
        THREW.with(Cell::take);
        let checked = if v.is_object() {
            read_into(&mut c, &mut o, v)
        } else {
            Ok(())
        };
        // A getter that threw comes first: the check that failed after it
        // may only have seen its `undefined`.
        if let Some(cause) = THREW.with(Cell::take) {
            return Err(with_cause(invalid("(a getter threw)"), &cause));
        }
        checked?;
        o.config = c.sanitized();
        Ok(o)
    }
}

/// The subscription's own event types: a message event (`events`) or the
/// heartbeat event of one of these names could never be told apart.
const RESERVED: [&str; 5] = ["open", "error", "statechange", "transportchange", "reset"];

fn read_into(c: &mut Config, o: &mut Options, v: &JsValue) -> Result<(), JsValue> {
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
    o.signal = signal(&get(v, "signal"))?;

    let urls = get(v, "urls");
    c.urls.eventsource = transport_url(&get(&urls, "eventsource"))?;
    c.urls.fetch_sse = transport_url(&get(&urls, "fetch-sse"))?;
    c.urls.long_poll = transport_url(&get(&urls, "long-poll"))?;
    c.urls.poll = transport_url(&get(&urls, "poll"))?;
    let transports = strings(&get(v, "transports"));
    if !transports.is_empty() {
        c.transports = transports
            .iter()
            .filter_map(|t| TransportKind::from_name(t))
            .collect();
    }
    c.events = events(&get(v, "events"))?;
    if let Some(id) = get(v, "lastEventId").as_string() {
        c.last_event_id = id;
    }
    if let Some(p) = get(v, "lastEventIdParam").as_string() {
        c.last_event_id_param = p;
    }
    let headers = get(v, "headers");
    o.headers = checked_headers(headers)?;
    c.has_custom_headers = o.headers.is_some();
    let heartbeat = get(v, "heartbeatEvent");
    if let Some(h) = heartbeat.as_string() {
        if h == "message" || RESERVED.contains(&h.as_str()) || c.events.contains(&h) {
            return Err(invalid("heartbeatEvent"));
        }
        c.heartbeat_event = h;
    } else if !heartbeat.is_undefined() && !heartbeat.is_null() {
        return Err(invalid("heartbeatEvent"));
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
    Ok(())
}

thread_local! {
    /// What the first getter that threw while reading options threw. One
    /// check after reading instead of an error branch per option keeps the
    /// reader small (it is inlined into `subscribe`; see README "Size").
    static THREW: Cell<Option<JsValue>> = const { Cell::new(None) };
}

/// `o[key]`; `undefined` when `o` is not an object or the getter throws
/// (what it threw is kept in [`THREW`] for `from_js` to report).
pub(crate) fn get(o: &JsValue, key: &str) -> JsValue {
    if !o.is_object() {
        return JsValue::UNDEFINED;
    }
    js_sys::Reflect::get(o, &JsValue::from_str(key)).unwrap_or_else(|cause| {
        THREW.with(|t| {
            let first = t.take().unwrap_or(cause);
            t.set(Some(first));
        });
        JsValue::UNDEFINED
    })
}

/// `e` with its `cause` set.
fn with_cause(e: JsValue, cause: &JsValue) -> JsValue {
    crate::js::set(e.unchecked_ref(), "cause", cause);
    e
}

/// An `Error` with `code: "invalid-option"` and the message
/// `invalid option: <name>` (the README's options table says why).
fn invalid(name: &str) -> JsValue {
    let mut message = String::from("invalid option: ");
    message.push_str(name);
    super::error("invalid-option", &message)
}

fn absent(v: &JsValue) -> bool {
    v.is_undefined() || v.is_null()
}

/// `signal`: absent, or an `AbortSignal`. Checked by shape (`aborted` and
/// `addEventListener`) rather than `instanceof`, so a signal from another
/// realm (an iframe) works as it does with `fetch`.
fn signal(s: &JsValue) -> Result<Option<web_sys::AbortSignal>, JsValue> {
    if absent(s) {
        return Ok(None);
    }
    let shaped = s.is_object()
        && get(s, "aborted").as_bool().is_some()
        && get(s, "addEventListener").is_function();
    if !shaped {
        return Err(invalid("signal"));
    }
    Ok(Some(s.clone().unchecked_into()))
}

/// A `urls` entry: absent, or a string resolved like the subscribe URL.
fn transport_url(v: &JsValue) -> Result<Option<String>, JsValue> {
    if absent(v) {
        return Ok(None);
    }
    match v.as_string() {
        Some(u) => super::resolve_url(&u).map(Some),
        None => Err(invalid("urls")),
    }
}

/// `events`: absent, or an array of non-empty strings that are not the
/// subscription's own event types. `message` is always delivered, so it is
/// dropped here (listed twice, a native `EventSource` would deliver each
/// message twice); so are repeats.
fn events(v: &JsValue) -> Result<Vec<String>, JsValue> {
    if absent(v) {
        return Ok(Vec::new());
    }
    if !js_sys::Array::is_array(v) {
        return Err(invalid("events"));
    }
    let mut out: Vec<String> = Vec::new();
    for x in js_sys::Array::from(v).iter() {
        let Some(name) = x.as_string().filter(|n| !n.is_empty()) else {
            return Err(invalid("events"));
        };
        if RESERVED.contains(&name.as_str()) {
            return Err(invalid("events"));
        }
        if name != "message" && !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

/// `headers`: absent, a function (called before each request), or an object
/// whose every entry is a valid header (checked now, with the browser's own
/// `Headers`, so a bad static value throws here instead of failing every
/// request).
fn checked_headers(h: JsValue) -> Result<Option<JsValue>, JsValue> {
    if absent(&h) {
        return Ok(None);
    }
    if h.is_function() {
        return Ok(Some(h));
    }
    if !h.is_object() {
        return Err(invalid("headers"));
    }
    let check = web_sys::Headers::new()
        .and_then(|headers| crate::transport::fetch::add_object(&headers, &h));
    if let Err(cause) = check {
        return Err(with_cause(invalid("headers"), &cause));
    }
    Ok(Some(h))
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
