//! [`Options`]: the Rust builder for `subscribe` options, with the JS option
//! names in snake case and the same defaults (docs/options.md).
//!
//! Durations are `u64` milliseconds in `_ms` setters, not `Duration`: the
//! engine, the JS API, the README table and the debug log all speak
//! milliseconds, so a value reads the same everywhere, and a negative
//! duration cannot be written at all. The builder checks nothing itself:
//! [`subscribe`](super::subscribe) renders it to the JS options object and
//! reads that through the JS API's own checks (`src/options.rs`), so both APIs
//! accept and refuse exactly the same options, and two subscriptions with the
//! same options share one connection whichever API made them.

use std::future::Future;

use tidings_core::engine::{Protocol, TransportKind};
use tidings_core::persist::Scope;
use tidings_core::policy::backoff::Strategy;
use tidings_core::policy::interval::IntervalMode;
use wasm_bindgen::JsValue;

use super::headers::{HeadersFn, JsHeadersFn};
use super::{HeadersContext, HeadersResult};

/// One option value, as JS would have passed it.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Text(String),
    Number(f64),
    Flag(bool),
    List(Vec<String>),
}

/// `subscribe` options. Every setter takes the JS option of the same name
/// (`backoff_base_ms` is `backoff.baseMs`); what is not set keeps the JS
/// default. Checked when [`subscribe`](super::subscribe) is called: a value
/// the JS API would refuse is [`Error::InvalidOption`](super::Error) there.
///
/// ```no_run
/// use tidings::{Options, TransportKind};
/// let options = Options::new()
///     .events(["price"])
///     .transports(&[TransportKind::FetchSse, TransportKind::LongPoll])
///     .header("Authorization", "Bearer abc")
///     .backoff_base_ms(1_000)
///     .last_event_id("42");
/// let sub = tidings::subscribe("/updates", options)?;
/// # Ok::<(), tidings::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options {
    /// `(group, key, value)`; group `""` is a top-level option.
    entries: Vec<(&'static str, String, Value)>,
    headers: Vec<(String, String)>,
    headers_fn: Option<HeadersFn>,
}

macro_rules! ms_setters {
    ($($(#[$doc:meta])* $fn:ident => $group:literal . $key:literal;)*) => {$(
        $(#[$doc])*
        #[must_use]
        pub fn $fn(self, ms: u64) -> Self {
            self.set($group, $key, Value::Number(ms as f64))
        }
    )*};
}

impl Options {
    /// The defaults (the docs/options.md).
    pub fn new() -> Self {
        Self::default()
    }

    fn set(mut self, group: &'static str, key: &str, value: Value) -> Self {
        self.entries.retain(|(g, k, _)| !(*g == group && k == key));
        self.entries.push((group, key.into(), value));
        self
    }

    /// `events`: named event types delivered besides `message` (default none).
    #[must_use]
    pub fn events<S: Into<String>>(self, names: impl IntoIterator<Item = S>) -> Self {
        let names = names.into_iter().map(Into::into).collect();
        self.set("", "events", Value::List(names))
    }

    /// `transports`: preference order (default all four, `eventsource` first).
    #[must_use]
    pub fn transports(self, kinds: &[TransportKind]) -> Self {
        let names = kinds.iter().map(|k| k.as_str().to_string()).collect();
        self.set("", "transports", Value::List(names))
    }

    /// `urls[transport]`: another endpoint for one transport (default: the
    /// subscribe URL).
    #[must_use]
    pub fn url_for(self, transport: TransportKind, url: &str) -> Self {
        self.set("urls", transport.as_str(), Value::Text(url.into()))
    }

    /// `lastEventId`: the initial cursor (default `""`).
    #[must_use]
    pub fn last_event_id(self, id: &str) -> Self {
        self.set("", "lastEventId", Value::Text(id.into()))
    }

    /// `lastEventIdParam`: the query parameter for the cursor (default
    /// `"lastEventId"`; nchan: `"last_event_id"`).
    #[must_use]
    pub fn last_event_id_param(self, name: &str) -> Self {
        self.set("", "lastEventIdParam", Value::Text(name.into()))
    }

    /// `method`: the method of the request that starts the stream (a POST
    /// with a prompt; default `"GET"`). With `method`, `body` or `resume`
    /// the stream goes over `fetch-sse` or `long-poll` only and is never
    /// shared; a method `fetch` refuses is `Error::InvalidOption`
    /// (docs/post-streams.md). Needs the `post-streams` feature.
    #[must_use]
    pub fn method(self, method: &str) -> Self {
        self.set("", "method", Value::Text(method.into()))
    }

    /// `body`: the request body, sent once with every attempt (not with
    /// `GET` or `HEAD`). Needs the `post-streams` feature.
    #[must_use]
    pub fn body(self, body: &str) -> Self {
        self.set("", "body", Value::Text(body.into()))
    }

    /// `resume: "replay"` (the default): after a cut, the same request again
    /// with the cursor. Needs the `post-streams` feature.
    #[must_use]
    pub fn resume_replay(self) -> Self {
        self.set("", "resume", Value::Text("replay".into()))
    }

    /// `end.event`: an event of this type ends the stream: not delivered,
    /// the subscription closes (`stream-closed`). Needs the `post-streams`
    /// feature.
    #[must_use]
    pub fn end_event(self, event: &str) -> Self {
        self.set("end", "event", Value::Text(event.into()))
    }

    /// `end.data`: an event with exactly this data (`"[DONE]"`) ends the
    /// stream, as [`end_event`](Self::end_event); with both, it must match
    /// both. Needs the `post-streams` feature.
    #[must_use]
    pub fn end_data(self, data: &str) -> Self {
        self.set("end", "data", Value::Text(data.into()))
    }

    /// `heartbeatEvent` (default `"heartbeat"`).
    #[must_use]
    pub fn heartbeat_event(self, name: &str) -> Self {
        self.set("", "heartbeatEvent", Value::Text(name.into()))
    }

    /// One entry of `headers` (fetch transports only; rules out
    /// `eventsource` and connection sharing, as in JS).
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// `headers` as a function: called before every connection attempt
    /// with its [`HeadersContext`]; its future's pairs are that attempt's
    /// headers (a fresh token per attempt). Replaces any
    /// [`header`](Self::header) entries; fetch transports only, no sharing,
    /// as in JS. An `Err` fails that attempt with code `headers`
    /// ([`Event::Error`](super::Event::Error)), retried after the backoff as
    /// in JS.
    #[must_use]
    pub fn headers_fn<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(HeadersContext) -> Fut + 'static,
        Fut: Future<Output = HeadersResult> + 'static,
    {
        self.headers_fn = Some(HeadersFn::new(f));
        self
    }

    /// `withCredentials` (default `false`).
    #[must_use]
    pub fn with_credentials(self, on: bool) -> Self {
        self.set("", "withCredentials", Value::Flag(on))
    }

    /// `crossTab`: one connection for every tab of the profile (default `false`).
    /// `true` needs the `cross-tab` cargo feature (default on); without it
    /// `subscribe` fails with `invalid-option` (`crossTab`).
    #[must_use]
    pub fn cross_tab(self, on: bool) -> Self {
        self.set("", "crossTab", Value::Flag(on))
    }

    /// `debug`: log every decision on the console (default `false`).
    /// `true` needs the `debug` cargo feature (default on); without it
    /// `subscribe` fails with `invalid-option` (`debug`).
    #[must_use]
    pub fn debug(self, on: bool) -> Self {
        self.set("", "debug", Value::Flag(on))
    }

    /// `seed`: seeds the jitter PRNG (default random). Up to 2^53 exactly.
    #[must_use]
    pub fn seed(self, seed: u64) -> Self {
        self.set("", "seed", Value::Number(seed as f64))
    }

    /// `pauseWhenHidden: false`, or `true` (the default).
    #[must_use]
    pub fn pause_when_hidden(self, on: bool) -> Self {
        self.set("", "pauseWhenHidden", Value::Flag(on))
    }

    /// `backoff.strategy` (default full jitter).
    #[must_use]
    pub fn backoff_strategy(self, s: Strategy) -> Self {
        let name = match s {
            Strategy::FullJitter => "full-jitter",
            Strategy::EqualJitter => "equal-jitter",
            Strategy::Decorrelated => "decorrelated",
            Strategy::None => "none",
        };
        self.set("backoff", "strategy", Value::Text(name.into()))
    }

    /// `backoff.maxAttempts` (default unlimited).
    #[must_use]
    pub fn backoff_max_attempts(self, n: u32) -> Self {
        self.set("backoff", "maxAttempts", Value::Number(f64::from(n)))
    }

    /// `breaker.failureThreshold` (default 5).
    #[must_use]
    pub fn breaker_failure_threshold(self, n: u32) -> Self {
        self.set("breaker", "failureThreshold", Value::Number(f64::from(n)))
    }

    /// `fallback.afterFailures` (default 2).
    #[must_use]
    pub fn fallback_after_failures(self, n: u32) -> Self {
        self.set("fallback", "afterFailures", Value::Number(f64::from(n)))
    }

    /// `interval.mode` (default exponential).
    #[must_use]
    pub fn interval_mode(self, m: IntervalMode) -> Self {
        let name = match m {
            IntervalMode::Exponential => "exponential",
            IntervalMode::Aimd => "aimd",
            IntervalMode::RateWindow => "rate-window",
            IntervalMode::Fixed => "fixed",
        };
        self.set("interval", "mode", Value::Text(name.into()))
    }

    /// `maxMessageBytes`: larger messages are skipped with a `too-large` error.
    #[must_use]
    pub fn max_message_bytes(self, n: u64) -> Self {
        self.set("", "maxMessageBytes", Value::Number(n as f64))
    }

    /// `protocol` (default [`Protocol::Default`]). [`Protocol::DurableStreams`]
    /// needs the `durable-streams` cargo feature (default on); without it
    /// `subscribe` fails with `invalid-option` (`protocol`).
    #[must_use]
    pub fn protocol(self, p: Protocol) -> Self {
        self.set("", "protocol", Value::Text(p.as_str().into()))
    }

    /// `offset`: the Durable Streams start offset (`"-1"`, `"now"`, or a
    /// stored `Stream-Next-Offset`); needs [`Protocol::DurableStreams`].
    #[must_use]
    pub fn offset(self, offset: &str) -> Self {
        self.set("", "offset", Value::Text(offset.into()))
    }

    /// `live: "sse"` (`true`) or `"long-poll"` (`false`, the default): how a
    /// Durable Streams subscription reads once caught up (PROTOCOL.md §5.8
    /// SSE over `fetch-sse`, or §5.7 long-poll); needs
    /// [`Protocol::DurableStreams`], else `invalid-option` (`live`).
    #[must_use]
    pub fn live_sse(self, sse: bool) -> Self {
        let live = if sse { "sse" } else { "long-poll" };
        self.set("", "live", Value::Text(live.into()))
    }

    /// `live: false`: a Durable Streams read to the tail and no further:
    /// `uptodate`, then state `closed` with reason `up-to-date` (no live
    /// request); needs [`Protocol::DurableStreams`], else `invalid-option`
    /// (`live`). Replaces [`Options::live_sse`].
    #[must_use]
    pub fn catch_up_only(self) -> Self {
        self.set("", "live", Value::Flag(false))
    }

    /// `persist`: keep the cursor in `sessionStorage` ([`Scope::Session`])
    /// or `localStorage` ([`Scope::Local`]) across reloads, restored here at
    /// `subscribe` (unless [`Options::last_event_id`] / [`Options::offset`]
    /// gives one) and written when the app pulls the next message; a `reset`
    /// removes it (docs/resume.md). Default off. Needs the `persist` cargo
    /// feature (default on); without it `subscribe` fails with
    /// `invalid-option` (`persist`).
    #[must_use]
    pub fn persist(self, scope: Scope) -> Self {
        let name = match scope {
            Scope::Session => "session",
            Scope::Local => "local",
        };
        self.set("", "persist", Value::Text(name.into()))
    }

    /// `persistKey`: the storage key's name (`tidings:cursor:<key>`) instead
    /// of a hash of the URL and `events`, for a URL that changes between
    /// loads. Non-empty, and only with [`Options::persist`]; else
    /// `invalid-option` (`persistKey`).
    #[must_use]
    pub fn persist_key(self, key: &str) -> Self {
        self.set("", "persistKey", Value::Text(key.into()))
    }

    ms_setters! {
        /// `lostAfterMs`: how long the connection must be down before
        /// [`Subscription::status`](super::Subscription::status) says
        /// `Reconnecting`/`Offline` (default 5000, docs/reconnects.md, "Connection status").
        lost_after_ms => ""."lostAfterMs";
        /// `pauseWhenHidden.afterMs`: pause this long after the page hides (default 0).
        pause_when_hidden_after_ms => "pauseWhenHidden"."afterMs";
        /// `backoff.baseMs` (default 500).
        backoff_base_ms => "backoff"."baseMs";
        /// `backoff.maxMs` (default 60000).
        backoff_max_ms => "backoff"."maxMs";
        /// `backoff.floorMs` (default 1000).
        backoff_floor_ms => "backoff"."floorMs";
        /// `backoff.healthyAfterMs` (default 10000).
        backoff_healthy_after_ms => "backoff"."healthyAfterMs";
        /// `maxRetryAfterMs` (default 300000).
        max_retry_after_ms => ""."maxRetryAfterMs";
        /// `breaker.cooldownMs` (default 30000).
        breaker_cooldown_ms => "breaker"."cooldownMs";
        /// `interval.initialMs` (default 5000).
        interval_initial_ms => "interval"."initialMs";
        /// `interval.minMs` (default 1000).
        interval_min_ms => "interval"."minMs";
        /// `interval.maxMs` (default 300000).
        interval_max_ms => "interval"."maxMs";
        /// `watchdog.idleTimeoutMs` (default 45000).
        watchdog_idle_timeout_ms => "watchdog"."idleTimeoutMs";
        /// `watchdog.firstEventTimeoutMs` (default 15000).
        watchdog_first_event_timeout_ms => "watchdog"."firstEventTimeoutMs";
        /// `longPoll.timeoutMs` (default 35000).
        long_poll_timeout_ms => "longPoll"."timeoutMs";
        /// `fallback.rememberMs` (default 600000).
        fallback_remember_ms => "fallback"."rememberMs";
    }

    /// The JS options object these options stand for (what the JS API
    /// reads), and the `headers` function's closure, which the subscription
    /// keeps for as long as it may be called.
    pub(crate) fn to_js(&self) -> (JsValue, Option<JsHeadersFn>) {
        let root = js_sys::Object::new();
        for (group, key, value) in &self.entries {
            let target = match *group {
                "" => root.clone(),
                g => child(&root, g),
            };
            set(&target, key, &render(value));
        }
        if let Some(f) = &self.headers_fn {
            let c = f.to_js();
            set(&root, "headers", c.as_ref());
            return (root.into(), Some(c));
        }
        if !self.headers.is_empty() {
            let h = child(&root, "headers");
            for (name, value) in &self.headers {
                set(&h, name, &JsValue::from_str(value));
            }
        }
        (root.into(), None)
    }
}

/// `o[key]` as an object, created when missing (or set to a flag, as
/// `pauseWhenHidden` may be: the group wins).
fn child(o: &js_sys::Object, key: &str) -> js_sys::Object {
    let v = js_sys::Reflect::get(o, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED);
    if v.is_object() {
        return v.into();
    }
    let c = js_sys::Object::new();
    set(o, key, &c);
    c
}

fn set(o: &js_sys::Object, key: &str, value: &JsValue) {
    crate::js::set_dyn(o, key, value);
}

fn render(v: &Value) -> JsValue {
    match v {
        Value::Text(s) => JsValue::from_str(s),
        Value::Number(n) => JsValue::from_f64(*n),
        Value::Flag(b) => JsValue::from_bool(*b),
        Value::List(l) => l
            .iter()
            .map(|s| JsValue::from_str(s))
            .collect::<js_sys::Array>()
            .into(),
    }
}
