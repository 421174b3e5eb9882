//! Renders an engine `Open` as a live request of the right transport, and
//! turns what the request reports into engine facts.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use tidings_core::engine::{
    json_body, AttemptId, BodyRead, Config, Input as Fact, JsonView, OpenRequest, ResponseHead,
    TransportError, TransportKind,
};
use tidings_core::keys;
use tidings_core::time::WallMs;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use super::{feed, Connection};
use crate::transport::eventsource::{self, NativeEventSource};
use crate::transport::fetch::{self, Fetch};

/// Adapter-side options (what the engine never needs to see).
pub struct AdapterOptions {
    /// `withCredentials`.
    pub with_credentials: bool,
    /// Event types the native EventSource must listen for besides `message`:
    /// the app's `events`, the heartbeat event and `reset`.
    pub native_events: Vec<String>,
    /// The `headers` option: an object, or `(ctx) => object | Promise<object>`
    /// called before every fetch request with `{ transport, url, status? }`
    /// (`status`: 401 or 403 on the one retry after a refusal, to refresh a
    /// token).
    pub headers: Option<JsValue>,
    /// The `url` option: `(ctx) => string | Promise<string>`, asked for the
    /// URL of every attempt with `{ attempt, status, cursor, transport, url }`.
    pub url: Option<JsValue>,
    /// `debug`: log every engine decision (`debug.rs`): `true` (on the
    /// console) or the app's function; `None`: off.
    pub debug: Option<JsValue>,
    /// `lostAfterMs` of the calm status (`calm.rs`).
    pub lost_after_ms: u64,
    /// `method`, `body` and the `resume` function.
    #[cfg(feature = "post-streams")]
    pub request: crate::options::RequestValues,
}

/// The app's headers for `req` as a promise, calling its function if it gave
/// one. A function that throws yields a rejected promise; the fetch then
/// reports `HeadersFailed` (see [`open_fetch`]).
fn app_headers(adapter: &AdapterOptions, req: &OpenRequest) -> Option<js_sys::Promise> {
    let h = adapter.headers.as_ref()?;
    let value = match h.dyn_ref::<js_sys::Function>() {
        Some(f) => {
            let ctx = js_sys::Object::new();
            crate::js::set(
                &ctx,
                "transport",
                &JsValue::from_str(req.transport.as_str()),
            );
            crate::js::set(&ctx, "url", &JsValue::from_str(&req.url));
            if req.refresh_auth {
                crate::js::set(&ctx, "status", &status(req));
            }
            match f.call1(&JsValue::NULL, &ctx) {
                Ok(v) => v,
                Err(e) => return Some(js_sys::Promise::reject(&e)),
            }
        }
        None => h.clone(),
    };
    Some(js_sys::Promise::resolve(&value))
}

/// The previous answer's status of `req`, or `null`.
fn status(req: &OpenRequest) -> JsValue {
    req.status.map_or(JsValue::NULL, JsValue::from)
}

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// The URL of an attempt, told to `report` (`[url]`, or `[, error]`
    /// for what it threw) a microtask later at the earliest: the app's `url`
    /// function (`f`, or `undefined`: `url` as given) asked with `{ attempt,
    /// status, cursor, transport, url }` (`status` and `cursor` `null` when
    /// none), a URL object taken as its string. The handle's `abort()`
    /// silences `report`.
    #[wasm_bindgen(js_name = attemptUrl)]
    fn attempt_url(
        f: &JsValue,
        attempt: u32,
        status: Option<u16>,
        cursor: &str,
        transport: &str,
        url: &str,
        report: &JsValue,
    ) -> web_sys::AbortController;
}

/// An attempt's URL being asked for ([`open`]): its answer starts the
/// request, unless this was dropped first.
#[must_use = "a guard: dropping it undoes what it holds at once"]
pub struct Asking {
    /// `attemptUrl`'s handle (typed as an `AbortController` to share that
    /// import; a plain object): its `abort()` silences the answer.
    handle: web_sys::AbortController,
    /// Called with the answer; dropped after it is silenced.
    _report: Closure<dyn FnMut(web_sys::Event)>,
}

impl Drop for Asking {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

/// The request of the live attempt; dropping it closes/aborts it (the guards
/// are held only for their `Drop`).
#[allow(dead_code)]
#[must_use = "a guard: dropping it undoes what it holds at once"]
pub enum Live {
    /// Native EventSource, its URL, and the `fetch` probe that learns why it
    /// failed (see [`probe`]).
    Native(
        AttemptId,
        NativeEventSource,
        String,
        Rc<RefCell<Option<Fetch>>>,
    ),
    /// A fetch (any of the other three transports).
    Fetch(AttemptId, Fetch),
    /// Waiting for its URL ([`open`]), or refused by the browser at once
    /// (its failure reported).
    Pending(AttemptId, Asking),
}

impl Live {
    /// The attempt this request belongs to.
    pub fn id(&self) -> AttemptId {
        match self {
            Live::Native(id, ..) | Live::Fetch(id, _) | Live::Pending(id, _) => *id,
        }
    }
}

/// Start `req` once its URL is known: the subscribe URL, or what the app's
/// `url` function returns for it. Until then the attempt is
/// [`Live::Pending`]; the request starts if it is still the live one (a
/// microtask later without a function). A URL that failed is the engine's
/// `HeadersFailed`, as the `headers` function's failure is; a request the
/// browser refuses at once (a URL the `EventSource` constructor rejects, no
/// `AbortController`) a network failure: both reported from that task,
/// never synchronously.
pub fn open(conn: &Rc<Connection>, req: OpenRequest) -> Live {
    persist_downgrade(conn);
    let id = req.id;
    let (status, transport, subscribe_url) = (req.status, req.transport, req.url.clone());
    let weak = Rc::downgrade(conn);
    let mut req = Some(req);
    // The listener closure's type (`guard::Listener`'s): one copy of its glue.
    let report: Box<dyn FnMut(web_sys::Event)> = Box::new(move |answer| {
        let answer: js_sys::Array = answer.unchecked_into();
        let url = match answer.length() {
            1 => match answer.get(0).as_string() {
                Some(u) => crate::options::resolve_url(&u),
                None => Err(crate::options::invalid_url()),
            },
            _ => Err(answer.get(1)),
        };
        if let (Some(conn), Some(req)) = (weak.upgrade(), req.take()) {
            start(&conn, req, url);
        }
    });
    let report = Closure::wrap(report);
    let handle = attempt_url(
        conn.adapter.url.as_ref().unwrap_or(&JsValue::UNDEFINED),
        id.0 as u32,
        status,
        &conn.last_event_id(),
        transport.as_str(),
        &subscribe_url,
        report.as_ref(),
    );
    Live::Pending(
        id,
        Asking {
            handle,
            _report: report,
        },
    )
}

/// Start `req` at its `url` if it is still the live attempt; a URL that
/// failed is the engine's `HeadersFailed`, a request the browser refuses
/// at once a network failure.
fn start(conn: &Rc<Connection>, mut req: OpenRequest, url: Result<String, JsValue>) {
    let id = req.id;
    let slot = usize::from(req.beside);
    if !matches!(conn.live.borrow()[slot], Some(Live::Pending(p, _)) if p == id) {
        return;
    }
    let fact = match url {
        Ok(url) => {
            req.url = url;
            let weak = Rc::downgrade(conn);
            let started = match req.transport {
                TransportKind::EventSource => open_native(conn, weak, &req),
                _ => open_fetch(conn, weak, &req),
            };
            match started {
                Ok(live) => {
                    conn.live.borrow_mut()[slot] = Some(live);
                    return;
                }
                Err(_) => Fact::TransportError(id, TransportError::NetworkOrCors),
            }
        }
        Err(e) => {
            *conn.headers_cause.borrow_mut() = Some(e);
            Fact::HeadersFailed(id)
        }
    };
    feed(conn, fact);
}

/// A native EventSource; every fact it shows goes to the engine, which asks
/// for the status probe ([`probe`]) when it failed before it opened.
fn open_native(
    conn: &Connection,
    weak: Weak<Connection>,
    req: &OpenRequest,
) -> Result<Live, JsValue> {
    let id = req.id;
    let on_fact = move |fact| {
        let Some(conn) = weak.upgrade() else { return };
        match fact {
            eventsource::Fact::Open => feed(&conn, Fact::Opened(id)),
            eventsource::Fact::Event {
                event,
                data,
                raw,
                last_event_id,
            } => {
                let fact = Fact::NativeEvent {
                    id,
                    event_type: &event,
                    data: &data,
                    last_event_id: &last_event_id,
                };
                super::drive::feed_native(&conn, raw, fact)
            }
            // Failed, a network error, or a stream that ended: the engine
            // decides (and may ask for the probe).
            eventsource::Fact::Error { failed } => {
                feed(&conn, Fact::TransportError(id, native_error(failed)))
            }
        }
    };
    let source = NativeEventSource::open(
        &req.url,
        conn.adapter.with_credentials,
        &conn.adapter.native_events,
        on_fact,
    )?;
    let probe = Rc::new(RefCell::new(None));
    Ok(Live::Native(id, source, req.url.clone(), probe))
}

/// The engine's `Probe` of native attempt `id`, if it is still the live one:
/// one `fetch` of its URL learns the status and headers the browser hid. Its
/// head (or nothing, when it failed too) goes to the engine as
/// `Fact::NativeProbe`, whose verdict it is.
pub fn probe(conn: &Rc<Connection>, id: AttemptId) {
    let target = match conn.live.borrow()[0].as_ref() {
        Some(Live::Native(live, _, url, slot)) if *live == id => Some((url.clone(), slot.clone())),
        _ => None,
    };
    let Some((url, slot)) = target else { return };
    let weak = Rc::downgrade(conn);
    let with_credentials = conn.adapter.with_credentials;
    match start_probe(weak, id, &url, with_credentials, slot.clone()) {
        Ok(f) => *slot.borrow_mut() = Some(f),
        Err(_) => feed(conn, Fact::NativeProbe(id, None)),
    }
}

/// The fact of a native `error`: readyState CLOSED (`failed`: the browser
/// failed the connection); CONNECTING is the browser about to reestablish
/// it, after the body ended or a network error it would retry (it shows both
/// alike; the engine decides what each means).
fn native_error(failed: bool) -> TransportError {
    if failed {
        TransportError::NativeFailed
    } else {
        TransportError::NativeReconnecting
    }
}

/// The one `fetch` that learns the status and headers a failed native
/// EventSource hid. Reports one fact for attempt `id`, then aborts itself.
/// It sends `Accept: text/event-stream` as the EventSource did (CORS-safelisted,
/// no preflight): servers such as nchan answer 403 to an event-stream location
/// without it, which the engine would take for a permanent `auth` failure.
fn start_probe(
    weak: Weak<Connection>,
    id: AttemptId,
    url: &str,
    with_credentials: bool,
    slot: Rc<RefCell<Option<Fetch>>>,
) -> Result<Fetch, JsValue> {
    let done = Cell::new(false);
    let on_fact: fetch::OnFact = Rc::new(move |fact| {
        if done.get() {
            return BodyRead::Chunks;
        }
        let head = match fact {
            fetch::Fact::Head {
                status,
                content_type,
                headers,
            } => Some(ResponseHead {
                status,
                content_type,
                headers,
            }),
            fetch::Fact::Failed { aborted: false } | fetch::Fact::End => None,
            _ => return BodyRead::Chunks,
        };
        done.set(true);
        // Abort the probe's body (taken out first: the engine's answer may
        // drop the whole `Live`, slot included).
        let probe = slot.borrow_mut().take();
        drop(probe);
        if let Some(conn) = weak.upgrade() {
            // What the probe's answer means is the engine's to decide.
            feed(&conn, Fact::NativeProbe(id, head.as_ref()));
        }
        BodyRead::Chunks
    });
    let accept = [(
        String::from("Accept"),
        String::from(tidings_core::engine::ACCEPT_EVENT_STREAM),
    )];
    Fetch::start(
        fetch::Request {
            url,
            headers: &accept,
            with_credentials,
            app_headers: None,
            #[cfg(feature = "post-streams")]
            method: JsValue::UNDEFINED,
            #[cfg(feature = "post-streams")]
            body: JsValue::UNDEFINED,
        },
        on_fact,
    )
}

fn open_fetch(
    conn: &Connection,
    weak: Weak<Connection>,
    req: &OpenRequest,
) -> Result<Live, JsValue> {
    let id = req.id;
    let on_fact: fetch::OnFact = Rc::new(move |fact| match weak.upgrade() {
        Some(conn) => report_fetch_fact(&conn, id, fact),
        None => BodyRead::Chunks,
    });
    #[cfg(feature = "post-streams")]
    let (url, method, body, app_headers) = match app_request(conn, req) {
        Ok((url, method, body)) => (url, method, body, app_headers(&conn.adapter, req)),
        // The app's `resume` failed: reported as its `headers` failing is.
        Err(e) => {
            let failed = Some(js_sys::Promise::reject(&e));
            (
                String::new(),
                JsValue::UNDEFINED,
                JsValue::UNDEFINED,
                failed,
            )
        }
    };
    let f = Fetch::start(
        fetch::Request {
            #[cfg(feature = "post-streams")]
            url: &url,
            #[cfg(not(feature = "post-streams"))]
            url: &req.url,
            headers: &req.headers,
            with_credentials: conn.adapter.with_credentials,
            #[cfg(feature = "post-streams")]
            app_headers,
            #[cfg(not(feature = "post-streams"))]
            app_headers: app_headers(&conn.adapter, req),
            #[cfg(feature = "post-streams")]
            method,
            #[cfg(feature = "post-streams")]
            body,
        },
        on_fact,
    )?;
    Ok(Live::Fetch(id, f))
}

/// The URL, method and body of `req` (`tidings_core::engine::start`): a
/// `GET` of its URL, the app's request, or what the app's `resume` function
/// returns for the cursor (`{ url, method?, body? }`, the cursor also where
/// it always goes). What that function throws, or an answer without a
/// string `url`, is the error.
#[cfg(feature = "post-streams")]
fn app_request(
    conn: &Connection,
    req: &OpenRequest,
) -> Result<(String, JsValue, JsValue), JsValue> {
    use tidings_core::engine::start::Start;
    let values = &conn.adapter.request;
    let undefined = JsValue::UNDEFINED;
    Ok(match &req.start {
        Start::Get => (req.url.clone(), undefined.clone(), undefined),
        Start::Request => (req.url.clone(), values.method.clone(), values.body.clone()),
        Start::Resume => {
            let f: &js_sys::Function = values.resume.unchecked_ref();
            let cursor = JsValue::from(conn.last_event_id());
            let r = f.call1(&JsValue::NULL, &cursor)?;
            let get = |key| crate::options::get(&r, key);
            let url = get("url");
            (url.as_string().ok_or(url)?, get("method"), get("body"))
        }
    })
}

/// Report what a `fetch` of attempt `id` learned to the engine, as the fact
/// it is (a body read whole, as the engine said to read it); then the
/// engine's answer to how the body is read.
fn report_fetch_fact(conn: &Rc<Connection>, id: AttemptId, fact: fetch::Fact) -> BodyRead {
    match fact {
        fetch::Fact::Head {
            status,
            content_type,
            headers,
        } => {
            let head = ResponseHead {
                status,
                content_type,
                headers,
            };
            feed(conn, Fact::ResponseHead(id, &head))
        }
        fetch::Fact::Chunk(bytes) => feed(conn, Fact::Bytes(id, &bytes)),
        #[cfg(feature = "durable-streams")]
        fetch::Fact::Text(text, BodyRead::JsonArray) => {
            let elements = crate::transport::durable::json_elements(&text);
            feed(conn, Fact::JsonChunk(id, elements))
        }
        // The browser's `JSON.parse` checks it (no JSON parser in the
        // bundle); the core reads the messages from the text already in wasm
        // (one pass, not ~18 crossings per message), the parsed value only
        // for the shape and what it is unsure of, and decides what it is.
        fetch::Fact::Text(text, BodyRead::Json) => {
            let value = js_sys::JSON::parse(&text).ok().map(Parsed);
            feed(conn, json_body(id, text, value.as_ref()))
        }
        fetch::Fact::Text(text, _) => feed(conn, Fact::BodyResource(id, text)),
        fetch::Fact::End => feed(conn, Fact::StreamEnd(id)),
        // The app's own failure (a token refresh that failed, a bad
        // value): the engine decides; what was thrown waits for its
        // `headers` error.
        fetch::Fact::HeadersFailed(err) => {
            *conn.headers_cause.borrow_mut() = Some(err);
            feed(conn, Fact::HeadersFailed(id))
        }
        fetch::Fact::Failed { aborted } => {
            let err = if aborted {
                TransportError::Aborted
            } else {
                TransportError::NetworkOrCors
            };
            feed(conn, Fact::TransportError(id, err))
        }
    }
    conn.with_engine(|e| e.body_read(id))
}

/// A value from `JSON.parse`, read as JS reads it.
struct Parsed(JsValue);

impl JsonView for Parsed {
    fn is_array(&self) -> bool {
        js_sys::Array::is_array(&self.0)
    }
    fn is_object(&self) -> bool {
        self.0.is_object() && !self.is_array()
    }
    fn get(&self, key: &str) -> Self {
        if !self.0.is_object() {
            return Parsed(JsValue::UNDEFINED);
        }
        Parsed(js_sys::Reflect::get(&self.0, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED))
    }
    fn length(&self) -> u32 {
        self.0.unchecked_ref::<js_sys::Array>().length()
    }
    fn at(&self, i: u32) -> Self {
        Parsed(self.0.unchecked_ref::<js_sys::Array>().get(i))
    }
    fn as_string(&self) -> Option<String> {
        self.0.as_string()
    }
    fn as_f64(&self) -> Option<f64> {
        self.0.as_f64()
    }
    fn number_text(&self) -> Option<String> {
        let n = self.0.as_f64()?;
        js_sys::Number::from(n)
            .to_string_with_radix(10)
            .ok()
            .map(String::from)
    }
    fn stringify(&self) -> Option<String> {
        js_sys::JSON::stringify(&self.0)
            .ok()
            .and_then(|s| s.as_string())
    }
}

// ----- remembered downgrades ----------------------------------------------
//
// A downgrade (`eventsource` skipped for `fetch-sse`, streams skipped for
// `long-poll`, or only `poll`) is remembered for `fallback.rememberMs` in
// `sessionStorage`, so a reload in the same tab does not repeat the failed
// attempts: the engine hands it out (`Engine::downgrade`) and takes it back
// as `Config::downgrade`. Its key and record are the core's
// (`tidings_core::keys`: a hash of the endpoints, never the URL). Written
// before every request (a switch always starts one); read when a connection
// is created. `sessionStorage` is reached through `Reflect`: missing
// (workers) or throwing (storage disabled, sandboxed frames) means "nothing
// remembered".

/// `sessionStorage[method](args…)`, `None` when anything throws.
fn storage_call(method: &str, args: &[&str]) -> Option<JsValue> {
    web_storage_call("sessionStorage", method, args)
}

/// `globalThis[storage][method](args…)` (`storage`: `"sessionStorage"` or
/// `"localStorage"`; one or two `args`): `None` when the storage is missing
/// or anything throws (disabled, sandboxed, quota exceeded); else what it
/// returned. Called by `storage` in `boundary.js`: one crossing instead of
/// the storage, its method and an argument array looked up from wasm.
pub(crate) fn web_storage_call(storage: &str, method: &str, args: &[&str]) -> Option<JsValue> {
    let key = args.first().copied().unwrap_or_default();
    let done = storage_js(storage, method, key, args.get(1).copied());
    (done.as_bool() != Some(false)).then_some(done)
}

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// `globalThis[name][method](key)`, or `(key, value)` with a value: what
    /// it returned, or `false` when it threw (`boundary.js`).
    #[wasm_bindgen(js_name = storage)]
    fn storage_js(name: &str, method: &str, key: &str, value: Option<&str>) -> JsValue;
}

/// The downgrade remembered for `config`'s endpoints in this tab's
/// `sessionStorage`, to seed `Config::downgrade` (the engine ignores it once
/// its time has passed).
pub(crate) fn stored_downgrade(config: &Config) -> Option<(TransportKind, WallMs)> {
    let v = storage_call("getItem", &[&keys::downgrade_key(config)])?.as_string()?;
    keys::parse_downgrade(&v)
}

/// Write the engine's remembered downgrade (or remove it once there is
/// none), when it differs from what is stored.
fn persist_downgrade(conn: &Connection) {
    let (key, downgrade) = conn.with_engine(|e| (keys::downgrade_key(e.config()), e.downgrade()));
    let record = downgrade.map(|(t, until)| keys::downgrade_record(t, until));
    if storage_call("getItem", &[&key]).and_then(|v| v.as_string()) == record {
        return;
    }
    match record {
        Some(v) => storage_call("setItem", &[&key, &v]),
        None => storage_call("removeItem", &[&key]),
    };
}
