//! `subscribe()` options as the app passes them (JS names, camelCase), turned
//! into the engine's [`Config`] and the adapter's own options. Every duration
//! is a number of milliseconds and says so in its name (`…Ms`). The table with
//! defaults is in the README and in `tidings_core::engine::Config`.
//!
//! Read with `Reflect.get` rather than serde-wasm-bindgen: serde's error path
//! formats floats and links `core::fmt`, which cost about 18 KB gzip of the
//! bundle (measured with `make size`, see docs/size.md). Unknown keys are
//! ignored, so an app written against a newer version keeps working; a known
//! key with a value that is not `undefined`/`null` (the default) must be
//! right, since a typo in a value would quietly change behaviour. What is not
//! throws an `Error` with `code: "invalid-option"` (message `invalid option:
//! <name>: expected <what>, got <value> (<type>)`, see [`invalid`]) before
//! anything starts: a value of the wrong type, a mode or transport name that
//! does not exist, a negative or non-finite duration or
//! count, a `lastEventId` with U+0000, CR or LF, a getter that throws, a
//! `signal` that is not an
//! `AbortSignal`, `headers` that are neither an object nor a function (or an
//! object with an invalid header), `events`/`heartbeatEvent` names that are
//! not strings or collide with the subscription's own event types or with
//! each other. A `urls` entry that is not an http(s) URL throws `invalid-url`.

use std::cell::Cell;

use tidings_core::calm::DEFAULT_LOST_AFTER_MS;
use tidings_core::engine::{is_valid_offset, Config, Protocol, TransportKind};
use tidings_core::keys::{self, PageOptions};
use tidings_core::persist::Scope;
use tidings_core::policy::backoff::{BackoffConfig, Strategy};
use tidings_core::policy::breaker::BreakerConfig;
use tidings_core::policy::interval::{IntervalConfig, IntervalMode};
use tidings_core::sse::SseLimits;
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
    /// `url`: a function asked for the URL of every attempt (or a Promise
    /// of one); `None`: the subscribe URL (and `urls`).
    pub url: Option<JsValue>,
    /// `debug`: log every decision of the engine with its reason: `true`
    /// on the console (`console.debug`), or to the app's function
    /// `(what, details) => void`. Default off (`None`).
    pub debug: Option<JsValue>,
    /// `persist` (`"session"` / `"local"`) and `persistKey`: keep the cursor
    /// in Web Storage across reloads (`tidings_core::persist`). Default off.
    pub persist: Option<(Scope, Option<String>)>,
    /// `lostAfterMs`: down this long before `status` says so
    /// (`tidings_core::calm`). Default 5000.
    pub lost_after_ms: u64,
    /// `crossTab`: one connection across the tabs of the profile. Default
    /// `false`.
    pub cross_tab: bool,
    /// The connection these options make (`tidings_core::keys::share_key`,
    /// taken before a persisted cursor is restored into `config`, so that
    /// it names what the app asked for); `None`: never shared (credentials
    /// without `crossTab`, or unresolved; a `debug` function; the app's request).
    pub share_key: Option<String>,
    /// `body` and `resume` (a function), kept as given
    /// (`tidings_core::engine::start`).
    #[cfg(feature = "post-streams")]
    pub request: RequestValues,
}

/// The app's values of a stream it starts with its own request: what the
/// engine's `RequestStart` only names.
#[cfg(feature = "post-streams")]
#[derive(Clone, Default)]
pub struct RequestValues {
    /// `method`; `undefined`: `fetch`'s default, `GET`.
    pub method: JsValue,
    /// `body`, as `fetch` takes it; `undefined` or `null`: none.
    pub body: JsValue,
    /// `resume`: a function `(lastEventId) => ({ url, method?, body? })`,
    /// else `"replay"` or absent (never called then).
    pub resume: JsValue,
}

impl Options {
    /// Read and check `v` for `url` (already resolved by [`resolve_url`]);
    /// `undefined`/`null` give the defaults. Runs no side effect, so a throw
    /// leaves nothing behind; once every option is checked, with `crossTab`
    /// it asks a `headers` or `url` function once (`{ attempt: 0, url }`):
    /// the hash of their values is the credentials' part of the share key.
    pub fn from_js(url: &str, v: &JsValue) -> Result<Self, JsValue> {
        let mut c = Config::new(url);
        let mut o = Options {
            config: Config::new(url),
            parse: Parse::Text,
            with_credentials: false,
            seed: None,
            signal: None,
            headers: None,
            url: None,
            debug: None,
            persist: None,
            lost_after_ms: DEFAULT_LOST_AFTER_MS,
            cross_tab: false,
            share_key: None,
            #[cfg(feature = "post-streams")]
            request: RequestValues::default(),
        };
        checked(|| {
            object("options", v);
            read_into(&mut c, &mut o, v)
        })?;
        o.config = c.sanitized();
        // What neither `fetch` nor the transports can send (the core's rule).
        #[cfg(feature = "post-streams")]
        tidings_core::engine::start::check(&o.config)
            .map_err(|(key, expected)| invalid(key, expected, &get(v, key)))?;
        #[allow(unused_mut)]
        let mut page = PageOptions {
            with_credentials: o.with_credentials,
            debug: o.debug.is_some(),
            lost_after_ms: o.lost_after_ms,
            seed: o.seed,
            cross_tab: o.cross_tab,
            persist: o.persist.as_ref().map_or(0, |(scope, key)| {
                keys::persist_tag(*scope == Scope::Local, key.as_deref())
            }),
            credentials: 0,
        };
        // Credentials share a connection only with the same credentials:
        // the hash of what they resolve to now goes into the share key.
        #[cfg(feature = "cross-tab")]
        if o.cross_tab {
            let none = &JsValue::UNDEFINED;
            let (headers, url_fn) = (o.headers.as_ref(), o.url.as_ref());
            page.credentials =
                credentials_text(headers.unwrap_or(none), url_fn.unwrap_or(none), url)
                    .map_or(0, |t| keys::credentials_tag(&t));
        }
        // A `debug` function is the app's own: its connection is never
        // shared.
        if !(cfg!(feature = "debug") && o.debug.as_ref().is_some_and(JsValue::is_function)) {
            o.share_key = keys::share_key(&o.config, &page);
        }
        Ok(o)
    }
}

#[cfg(feature = "cross-tab")]
#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// What `headers` and `url` (`undefined`: not set) resolve to now, as
    /// one text (JSON of each value; a function asked once with `{ attempt:
    /// 0, url }`); `None` when neither is set, or one throws or gives a
    /// promise: such a connection is not shared (`boundary.js`).
    #[wasm_bindgen(js_name = credentialsText)]
    fn credentials_text(headers: &JsValue, url_fn: &JsValue, url: &str) -> Option<String>;
}

/// The subscription's own event types: a message event (`events`) or the
/// heartbeat event of one of these names could never be told apart (the
/// engine's list: it drops server events of these names).
const RESERVED: [&str; 7] = tidings_core::engine::RESERVED_EVENTS;

/// Every option of `v` into `c` and `o`, in this order (the first invalid
/// one is the one reported: [`fail`]).
fn read_into(c: &mut Config, o: &mut Options, v: &JsValue) {
    read_page_side(o, v);
    read_transports(c, v);
    read_cursor(c, v);
    read_headers_and_pause(c, o, v);
    read_request(c, o, v);
    read_retries(c, v);
    interval(&mut c.interval, v);
    read_deadlines(c, v)
}

/// `parse`, `withCredentials`, `debug`, `crossTab`, `seed`, `signal`, then
/// the persisted cursor and the calm status.
fn read_page_side(o: &mut Options, v: &JsValue) {
    if let Some(i) = one_of(&get(v, "parse"), "parse", &["text", "json"]) {
        o.parse = [Parse::Text, Parse::Json][i];
    }
    o.with_credentials = flag(v, "withCredentials").unwrap_or(false);
    // `true` or the app's function, kept as given; a build without the
    // debug log refuses both rather than silently ignoring them.
    let debug = get(v, "debug");
    if debug.is_function() || flag(v, "debug") == Some(true) {
        if !cfg!(feature = "debug") {
            fail(not_built("debug", "debug", &debug));
        }
        o.debug = Some(debug);
    }
    o.cross_tab = flag(v, "crossTab").unwrap_or(false);
    // A build without the part refuses it rather than silently ignoring it.
    if o.cross_tab && !cfg!(feature = "cross-tab") {
        fail(not_built("crossTab", "cross-tab", &JsValue::TRUE));
    }
    let seed = get(v, "seed");
    if !absent(&seed) {
        match seed.as_f64().filter(|s| s.is_finite()) {
            Some(s) => o.seed = Some(s as u64),
            None => fail(invalid("seed", "a finite number", &seed)),
        }
    }
    o.signal = signal(&get(v, "signal"));
    read_persist_and_status(o, v)
}

/// `persist`, `persistKey` (a non-empty string, only with `persist`),
/// `lostAfterMs`.
fn read_persist_and_status(o: &mut Options, v: &JsValue) {
    let scope = one_of(&get(v, "persist"), "persist", &["session", "local"])
        .map(|i| [Scope::Session, Scope::Local][i]);
    let key = text(v, "persistKey");
    if key
        .as_ref()
        .is_some_and(|k| k.is_empty() || scope.is_none())
    {
        let got = get(v, "persistKey");
        fail(invalid(
            "persistKey",
            "a non-empty string, with persist",
            &got,
        ));
    }
    if scope.is_some() && !cfg!(feature = "persist") {
        fail(not_built("persist", "persist", &get(v, "persist")));
    }
    #[cfg(feature = "persist")]
    {
        o.persist = scope.map(|s| (s, key));
    }
    set_ms(&mut o.lost_after_ms, v, "lostAfterMs", "");
}

/// `urls` and `transports`.
fn read_transports(c: &mut Config, v: &JsValue) {
    let urls = group(v, "urls");
    c.urls.eventsource = transport_url(&get(&urls, "eventsource"));
    c.urls.fetch_sse = transport_url(&get(&urls, "fetch-sse"));
    c.urls.long_poll = transport_url(&get(&urls, "long-poll"));
    c.urls.poll = transport_url(&get(&urls, "poll"));
    let t = get(v, "transports");
    if absent(&t) {
        return;
    }
    // A loop, not a collected `Option<Vec>`: no iterator adapters in the wasm.
    let mut kinds = Vec::new();
    if js_sys::Array::is_array(&t) {
        for x in js_sys::Array::from(&t).iter() {
            match x.as_string().and_then(|n| TransportKind::from_name(&n)) {
                Some(k) => kinds.push(k),
                None => {
                    kinds.clear();
                    break;
                }
            }
        }
    }
    if kinds.is_empty() {
        const NAMES: [&str; 4] = [
            TransportKind::ALL[0].as_str(),
            TransportKind::ALL[1].as_str(),
            TransportKind::ALL[2].as_str(),
            TransportKind::ALL[3].as_str(),
        ];
        return fail(invalid(
            "transports",
            &listed("a non-empty array of ", &NAMES),
            &t,
        ));
    }
    c.transports = kinds;
}

/// `events`, `lastEventId`, the Durable Streams options, `lastEventIdParam`,
/// `maxMessageBytes`.
fn read_cursor(c: &mut Config, v: &JsValue) {
    c.events = events(&get(v, "events"));
    if let Some(id) = text(v, "lastEventId") {
        // The core's rule for a cursor (no U+0000, CR or LF).
        if !tidings_core::engine::is_usable_event_id(&id) {
            let got = JsValue::from_str(&id);
            fail(invalid(
                "lastEventId",
                "a string without U+0000, CR or LF",
                &got,
            ));
        }
        c.last_event_id = id;
    }
    durable_streams(c, v);
    if let Some(p) = text(v, "lastEventIdParam") {
        // `""` would name no parameter: a cursor never sent.
        if p.is_empty() {
            fail(invalid(
                "lastEventIdParam",
                "a non-empty string",
                &JsValue::from_str(&p),
            ));
        }
        c.last_event_id_param = p;
    }
    if let Some(n) = number(v, "maxMessageBytes", "", "a non-negative number of bytes") {
        let n = n.min(u32::MAX as u64) as usize;
        c.sse_limits = SseLimits {
            max_line_bytes: n,
            max_event_data_bytes: n,
        };
    }
}

/// `headers`, `url`, `heartbeatEvent`, `pauseWhenHidden`.
fn read_headers_and_pause(c: &mut Config, o: &mut Options, v: &JsValue) {
    let headers = get(v, "headers");
    o.headers = checked_headers(headers);
    c.has_custom_headers = o.headers.is_some();
    let url = get(v, "url");
    if !absent(&url) {
        if !url.is_function() {
            return fail(invalid("url", "a function", &url));
        }
        c.url_function = true;
        o.url = Some(url);
    }
    if let Some(h) = text(v, "heartbeatEvent") {
        if h == "message" || RESERVED.contains(&h.as_str()) || c.events.contains(&h) {
            let not = listed("a name not in events, other than \"message\", ", &RESERVED);
            fail(invalid("heartbeatEvent", &not, &JsValue::from_str(&h)));
        }
        c.heartbeat_event = h;
    }
    let p = get(v, "pauseWhenHidden");
    if let Some(b) = p.as_bool() {
        c.pause_when_hidden = b.then_some(0);
    } else if !absent(&p) {
        if !p.is_object() {
            fail(invalid("pauseWhenHidden", "a boolean or an object", &p));
        }
        set_ms(&mut c.pause_when_hidden, &p, "afterMs", "pauseWhenHidden");
    }
}

/// `method`, `body`, `resume` (`"replay"` or a function) and `end`
/// (`{ event?, data? }`): a stream started by the app's own request
/// (`tidings_core::engine::start`).
#[cfg(feature = "post-streams")]
fn read_request(c: &mut Config, o: &mut Options, v: &JsValue) {
    use tidings_core::engine::start::{EndRule, RequestStart, Resume, StartRules};
    let method = text(v, "method");
    let body = get(v, "body");
    let resume = get(v, "resume");
    let by_function = resume.is_function();
    if !by_function {
        one_of(&resume, "resume", &["replay"]);
    }
    let end = group(v, "end");
    let end = EndRule {
        event: text(&end, "event"),
        data: text(&end, "data"),
    };
    let request = (method.is_some() || !absent(&body) || !absent(&resume)).then(|| RequestStart {
        method: method.unwrap_or_else(|| String::from("GET")),
        body: !absent(&body),
        resume: [Resume::Replay, Resume::Request][usize::from(by_function)],
    });
    if request.is_some() || end.event.is_some() || end.data.is_some() {
        c.start = Some(std::sync::Arc::new(StartRules { request, end }));
    }
    // As given: `fetch` reads them (`resume` is called only when a function).
    o.request = RequestValues {
        method: get(v, "method"),
        body,
        resume,
    };
}

/// A build without the `post-streams` feature refuses `method`, `body`,
/// `resume` and `end` ([`not_built`]).
#[cfg(not(feature = "post-streams"))]
fn read_request(_: &mut Config, _: &mut Options, v: &JsValue) {
    // A slice, not an array's `IntoIter`: no iterator of its own in the wasm.
    for &key in &["method", "body", "resume", "end"] {
        let got = get(v, key);
        if !absent(&got) {
            fail(not_built(key, "post-streams", &got));
        }
    }
}

/// `backoff`, `maxRetryAfterMs`, `breaker`.
fn read_retries(c: &mut Config, v: &JsValue) {
    let b = backoff(&mut c.backoff, v);
    set_ms(
        &mut c.backoff.healthy_after_ms,
        &b,
        "healthyAfterMs",
        "backoff",
    );
    if let Some(n) = count(&b, "maxAttempts", "backoff.maxAttempts") {
        c.backoff.max_attempts = n;
    }
    set_ms(&mut c.max_retry_after_ms, v, "maxRetryAfterMs", "");
    breaker(&mut c.breaker, v)
}

/// `breaker.failureThreshold` (`Infinity`: never opens) and
/// `breaker.cooldownMs` over `c` (`subscribe()` and `report()`).
pub(crate) fn breaker(c: &mut BreakerConfig, v: &JsValue) {
    let br = group(v, "breaker");
    if let Some(n) = count(&br, "failureThreshold", "breaker.failureThreshold") {
        c.failure_threshold = n.unwrap_or(u32::MAX);
    }
    set_ms(&mut c.cooldown_ms, &br, "cooldownMs", "breaker")
}

/// `watchdog`, `longPoll`, `fallback`.
fn read_deadlines(c: &mut Config, v: &JsValue) {
    let w = group(v, "watchdog");
    set_ms(
        &mut c.watchdog.idle_timeout_ms,
        &w,
        "idleTimeoutMs",
        "watchdog",
    );
    set_ms(
        &mut c.watchdog.first_event_timeout_ms,
        &w,
        "firstEventTimeoutMs",
        "watchdog",
    );
    let lp = group(v, "longPoll");
    set_ms(&mut c.long_poll.timeout_ms, &lp, "timeoutMs", "longPoll");
    let f = group(v, "fallback");
    if let Some(n) = count(&f, "afterFailures", "fallback.afterFailures") {
        c.fallback.after_failures = n.unwrap_or(u32::MAX);
    }
    set_ms(&mut c.fallback.remember_ms, &f, "rememberMs", "fallback");
}

/// `interval`: `mode`, `initialMs`, `minMs`, `maxMs` into `into` (shared by
/// `subscribe` and `report`).
pub(crate) fn interval(into: &mut IntervalConfig, v: &JsValue) {
    let i = group(v, "interval");
    if let Some(m) = one_of(
        &get(&i, "mode"),
        "interval.mode",
        &["exponential", "aimd", "rate-window", "fixed"],
    ) {
        into.mode = [
            IntervalMode::Exponential,
            IntervalMode::Aimd,
            IntervalMode::RateWindow,
            IntervalMode::Fixed,
        ][m];
    }
    set_ms(&mut into.initial_ms, &i, "initialMs", "interval");
    set_ms(&mut into.min_ms, &i, "minMs", "interval");
    set_ms(&mut into.max_ms, &i, "maxMs", "interval");
}

/// `backoff`: `strategy`, `baseMs`, `maxMs`, `floorMs` into `into` (shared
/// by `subscribe` and `send`); returns the group for the caller's own keys.
pub(crate) fn backoff(into: &mut BackoffConfig, v: &JsValue) -> JsValue {
    let b = group(v, "backoff");
    if let Some(i) = one_of(
        &get(&b, "strategy"),
        "backoff.strategy",
        &["full-jitter", "equal-jitter", "decorrelated", "none"],
    ) {
        into.strategy = [
            Strategy::FullJitter,
            Strategy::EqualJitter,
            Strategy::Decorrelated,
            Strategy::None,
        ][i];
    }
    set_ms(&mut into.base_ms, &b, "baseMs", "backoff");
    set_ms(&mut into.max_ms, &b, "maxMs", "backoff");
    set_ms(&mut into.floor_ms, &b, "floorMs", "backoff");
    b
}

/// `protocol`, `offset` and `live`: the Durable Streams profile starts from
/// `offset` (`"-1"`, `"now"` or a stored `Stream-Next-Offset`; `lastEventId`
/// is taken as the offset too) and reads live as `live` says (`"long-poll"`,
/// the default, or `"sse"`), or not at all (`false`): `Config::live`. An
/// offset the engine would
/// refuse from a server (see `tidings_core::engine::is_valid_offset`), or
/// `offset` or `live` without `protocol: "durable-streams"`, is
/// `invalid-option`.
fn durable_streams(c: &mut Config, v: &JsValue) {
    if !cfg!(feature = "durable-streams") {
        return no_durable_streams(v);
    }
    if let Some(i) = one_of(
        &get(v, "protocol"),
        "protocol",
        &["default", "durable-streams"],
    ) {
        c.protocol = [Protocol::Default, Protocol::DurableStreams][i];
    }
    let durable = c.protocol == Protocol::DurableStreams;
    if let Some(offset) = text(v, "offset") {
        if !durable {
            let got = JsValue::from_str(&offset);
            fail(invalid(
                "offset",
                "none without protocol \"durable-streams\"",
                &got,
            ));
        }
        c.last_event_id = offset;
    }
    #[cfg(feature = "durable-streams")]
    {
        let live = get(v, "live");
        let mode = match live.as_bool() {
            Some(false) => Some(2),
            _ => one_of(&live, "live", &["long-poll", "sse"]),
        };
        if let Some(i) = mode {
            if !durable {
                fail(invalid(
                    "live",
                    "none without protocol \"durable-streams\"",
                    &live,
                ));
            }
            use tidings_core::engine::Live;
            c.live = [Live::LongPoll, Live::Sse, Live::Off][i];
        }
    }
    if durable && !c.last_event_id.is_empty() && !is_valid_offset(&c.last_event_id, true) {
        let got = JsValue::from_str(&c.last_event_id);
        fail(invalid("offset", "\"-1\", \"now\" or a valid offset", &got));
    }
}

/// A build without the `durable-streams` feature: `protocol:
/// "durable-streams"` and any `offset` are refused ([`not_built`]),
/// `protocol: "default"` is the default. `live` is not read: it does
/// nothing without that protocol, and reading it would cost this build
/// bytes.
fn no_durable_streams(v: &JsValue) {
    let protocol = get(v, "protocol");
    let durable = one_of(&protocol, "protocol", &["default", "durable-streams"]) == Some(1);
    let offset = get(v, "offset");
    match (durable, absent(&offset)) {
        (true, _) => fail(not_built("protocol", "durable-streams", &protocol)),
        (false, false) => fail(not_built("offset", "durable-streams", &offset)),
        (false, true) => {}
    }
}

thread_local! {
    /// What the first getter that threw while reading options threw. One
    /// check after reading instead of an error branch per option keeps the
    /// reader small (it is inlined into `subscribe`; see docs/size.md).
    static THREW: Cell<Option<JsValue>> = const { Cell::new(None) };
    /// The reading's first refusal ([`fail`]).
    static FAILED: Cell<Option<JsValue>> = const { Cell::new(None) };
}

/// Run `read` (reads of app options with [`get`] and the checks of this
/// module, which [`fail`] rather than return an error: no error branch at
/// each option, see docs/size.md). A getter that threw during it comes
/// first as `invalid-option` `(a getter threw)` with the `cause`, then the
/// first refusal; else what `read` made.
pub(crate) fn checked<T>(read: impl FnOnce() -> T) -> Result<T, JsValue> {
    // Emptied first; with one caller (no upstream calls) as two takes, with
    // several as one more call of the out-of-line `refused` (smaller each).
    #[cfg(feature = "send")]
    refused();
    #[cfg(not(feature = "send"))]
    {
        THREW.with(Cell::take);
        FAILED.with(Cell::take);
    }
    let result = read();
    refused().map_or(Ok(result), Err)
}

/// What the reading refused (see [`checked`]), both records emptied. Out of
/// line with the upstream calls: once for their readers and `subscribe()`'s.
#[cfg_attr(feature = "send", inline(never))]
fn refused() -> Option<JsValue> {
    let failed = FAILED.with(Cell::take);
    match THREW.with(Cell::take) {
        Some(cause) => Some(threw(&cause)),
        None => failed,
    }
}

/// Refuse the options being read with `e` (an `invalid-option` or
/// `invalid-url` error) unless a refusal came first: the reading goes on
/// with the defaults, but [`get`] reads nothing more (no getter of the app
/// runs after the first refusal, as if the reading had stopped there).
/// Only inside [`checked`].
#[inline(never)]
pub(crate) fn fail(e: JsValue) {
    FAILED.with(|f| {
        let first = f.take().unwrap_or(e);
        f.set(Some(first));
    });
}

/// `o[key]`; `undefined` when `o` is not an object, the getter throws
/// (what it threw is kept in [`THREW`] for [`checked`] to report), or a
/// reading was refused ([`fail`]).
pub(crate) fn get(o: &JsValue, key: &str) -> JsValue {
    if !o.is_object()
        || FAILED.with(|f| {
            let e = f.take();
            let failed = e.is_some();
            f.set(e);
            failed
        })
    {
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
pub(crate) fn with_cause(e: JsValue, cause: &JsValue) -> JsValue {
    crate::js::set(e.unchecked_ref(), "cause", cause);
    e
}

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// An `Error` with `code: "invalid-option"` and the message `invalid
    /// option: <name>: expected <expected>, got <got>` (the README's options
    /// table says why). `got` is shown with its `typeof`: a string or an
    /// array as JSON (`"500" (string)`), a function by its type only,
    /// anything else as `String(got)` (`-1 (number)`, `[object Object]
    /// (object)`; an empty one by its type only); cut after 60 characters.
    /// Built in `boundary.js`: smaller there than in wasm.
    #[wasm_bindgen(js_name = invalidOption)]
    pub(crate) fn invalid(name: &str, expected: &str, got: &JsValue) -> JsValue;
}

/// `invalid-option` for an option this build was compiled without (the
/// "tidings/receive" entry, or a Rust app without the cargo `feature`),
/// naming the entry and the feature that have it: `invalid option: <key>:
/// expected none in this build; the "tidings" entry has it (feature
/// "<feature>"), got <value> (<type>)`.
pub(crate) fn not_built(key: &str, feature: &str, got: &JsValue) -> JsValue {
    let expected = [
        "none in this build; the \"tidings\" entry has it (feature \"",
        feature,
        "\")",
    ]
    .concat();
    invalid(key, &expected, got)
}

/// `invalid-option` `(a getter threw)`, with what it threw as `got` and
/// `cause`.
fn threw(cause: &JsValue) -> JsValue {
    let e = invalid("(a getter threw)", "getters that return", cause);
    with_cause(e, cause)
}

/// `prefix` and `names`, each quoted, comma-separated: an `expected` text
/// made from the lists the checks use (no copy of them in the bundle).
pub(crate) fn listed(prefix: &str, names: &[&str]) -> String {
    let mut out = String::from(prefix);
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push('"');
        out.push_str(n);
        out.push('"');
    }
    out
}

/// `expected` of a string option.
pub(crate) const STRING: &str = "a string";
/// `expected` of a duration (`…Ms`).
const MS: &str = "a non-negative number of milliseconds";
/// `expected` of a count ([`count`]).
const COUNT: &str = "a non-negative number or Infinity";
/// `expected` of a count that must not be 0.
#[cfg_attr(not(feature = "send"), allow(dead_code))]
pub(crate) const AT_LEAST_ONE: &str = "a number ≥ 1 or Infinity";

pub(crate) fn absent(v: &JsValue) -> bool {
    v.is_undefined() || v.is_null()
}

/// `signal`: absent, or an `AbortSignal`. Checked by shape (`aborted` and
/// `addEventListener`) rather than `instanceof`, so a signal from another
/// realm (an iframe) works as it does with `fetch`.
pub(crate) fn signal(s: &JsValue) -> Option<web_sys::AbortSignal> {
    if absent(s) {
        return None;
    }
    let shaped = s.is_object()
        && get(s, "aborted").as_bool().is_some()
        && get(s, "addEventListener").is_function();
    if !shaped {
        fail(invalid("signal", "an AbortSignal", s));
        return None;
    }
    Some(s.clone().unchecked_into())
}

/// A `urls` entry: absent, or a string resolved like the subscribe URL.
fn transport_url(v: &JsValue) -> Option<String> {
    if absent(v) {
        return None;
    }
    let url = match v.as_string() {
        Some(u) => resolve_url(&u),
        None => Err(invalid("urls", STRING, v)),
    };
    url.map_err(fail).ok()
}

/// `events`: absent, or an array of non-empty strings that are not the
/// subscription's own event types. `message` is always delivered, so it is
/// dropped here (listed twice, a native `EventSource` would deliver each
/// message twice); so are repeats.
fn events(v: &JsValue) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if absent(v) {
        return out;
    }
    let bad = || {
        fail(invalid(
            "events",
            &listed("an array of non-empty names other than ", &RESERVED),
            v,
        ))
    };
    if !js_sys::Array::is_array(v) {
        bad();
        return out;
    }
    for x in js_sys::Array::from(v).iter() {
        let name = x.as_string().unwrap_or_default();
        if name.is_empty() || RESERVED.contains(&name.as_str()) {
            bad();
            break;
        }
        if name != "message" && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// `headers`: absent, a function (called before each request), a `Headers`,
/// or an object whose every entry is a valid header (checked now, with the
/// browser's own `Headers`, so a bad static value throws here instead of
/// failing every request; an array is refused).
pub(crate) fn checked_headers(h: JsValue) -> Option<JsValue> {
    if absent(&h) {
        return None;
    }
    if h.is_function() {
        return Some(h);
    }
    let expected = "valid headers (an object) or a function";
    if !h.is_object() {
        fail(invalid("headers", expected, &h));
        return None;
    }
    let check = web_sys::Headers::new()
        .and_then(|headers| crate::transport::fetch::add_object(&headers, &h));
    if let Err(cause) = check {
        // What the browser's `Headers` said names the bad entry.
        fail(with_cause(invalid("headers", expected, &cause), &cause));
        return None;
    }
    Some(h)
}

/// `o[key]` when it is absent (`undefined`/`null`: the default) or an
/// object; anything else is `invalid-option` for `key`.
pub(crate) fn group(o: &JsValue, key: &str) -> JsValue {
    let g = get(o, key);
    object(key, &g);
    g
}

/// `v` (the value of `name`) is absent (the defaults) or an object;
/// anything else (a number, a string, `true`) is `invalid-option`, never
/// quietly "no options".
pub(crate) fn object(name: &str, v: &JsValue) {
    if !(absent(v) || v.is_object()) {
        fail(invalid(name, "an object", v));
    }
}

/// `o[key]`: absent (`None`), a boolean, or `invalid-option`.
pub(crate) fn flag(o: &JsValue, key: &str) -> Option<bool> {
    let v = get(o, key);
    if !absent(&v) && v.as_bool().is_none() {
        fail(invalid(key, "a boolean", &v));
    }
    v.as_bool()
}

/// `o[key]`: absent (`None`), a string, or `invalid-option`.
pub(crate) fn text(o: &JsValue, key: &str) -> Option<String> {
    let v = get(o, key);
    let s = v.as_string();
    if !absent(&v) && s.is_none() {
        fail(invalid(key, STRING, &v));
    }
    s
}

/// `v`: absent (`None`), the index of one of `names`, or `invalid-option`
/// (`name`): a typo in a mode must not quietly pick the default.
pub(crate) fn one_of(v: &JsValue, name: &str, names: &[&str]) -> Option<usize> {
    if absent(v) {
        return None;
    }
    let s = v.as_string().unwrap_or_default();
    let i = names.iter().position(|n| *n == s);
    if i.is_none() {
        fail(invalid(name, &listed("one of ", names), v));
    }
    i
}

/// `o[key]`: absent (`None`), a finite number ≥ 0 (truncated), or
/// `invalid-option` (`group.key`, or `key` for a top-level option: `group`
/// `""`).
pub(crate) fn ms_in(o: &JsValue, key: &str, group: &str) -> Option<u64> {
    number(o, key, group, MS)
}

/// `o[key]`: absent (`None`), a finite number ≥ 0 (truncated), or
/// `invalid-option` (`group.key`) saying `expected`.
fn number(o: &JsValue, key: &str, group: &str, expected: &str) -> Option<u64> {
    let v = get(o, key);
    if absent(&v) {
        return None;
    }
    let n = v.as_f64().filter(|n| n.is_finite() && *n >= 0.0);
    if n.is_none() {
        let mut name = String::from(group);
        if !group.is_empty() {
            name.push('.');
        }
        name.push_str(key);
        fail(invalid(&name, expected, &v));
    }
    n.map(|n| n as u64)
}

/// `*field` = `o[key]` as [`ms_in`] when given.
pub(crate) fn set_ms<T: From<u64>>(field: &mut T, o: &JsValue, key: &str, group: &str) {
    if let Some(n) = ms_in(o, key, group) {
        *field = n.into();
    }
}

/// `o[key]`: absent (`None`), a number ≥ 0 (truncated; `Infinity`:
/// `Some(None)`, no limit), or `invalid-option` (`name`).
pub(crate) fn count(o: &JsValue, key: &str, name: &str) -> Option<Option<u32>> {
    let v = get(o, key);
    if absent(&v) {
        return None;
    }
    match v.as_f64().filter(|n| *n >= 0.0) {
        Some(n) if n.is_finite() => Some(Some(n.min(u32::MAX as f64) as u32)),
        Some(_) => Some(None),
        None => {
            fail(invalid(name, COUNT, &v));
            None
        }
    }
}

/// `url` resolved against the page (`location.href`; in a worker its
/// `location`) by the browser's `URL` parser, as `fetch` and `EventSource`
/// would: the absolute `href` (spaces percent-encoded, whitespace around it
/// removed). Errors (`invalid-url`): it is empty (which would resolve to the
/// page itself), does not parse, its scheme is not `http:`/`https:`, or it
/// has no host.
pub(crate) fn resolve_url(url: &str) -> Result<String, JsValue> {
    match url.trim().is_empty() {
        true => None,
        false => resolve_url_js(url),
    }
    .ok_or_else(invalid_url)
}

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// `url` resolved against the page by the browser's `URL` parser: its
    /// `href`, or `None` when it does not parse, is not http(s) or has no
    /// host (`boundary.js`).
    #[wasm_bindgen(js_name = resolveUrl)]
    fn resolve_url_js(url: &str) -> Option<String>;
}

pub(crate) fn invalid_url() -> JsValue {
    crate::js::error(
        "invalid-url",
        "url must be relative, or http: or https: with a host",
    )
}
