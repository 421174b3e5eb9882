//! Renders an engine `Open` as a live request of the right transport, and
//! turns what the request reports into engine facts.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

#[cfg_attr(not(feature = "durable-streams"), allow(unused_imports))]
use tidings_core::engine::{
    decode_json_text, AttemptId, Config, IncomingMessage, Input as Fact, JsonView, OpenRequest,
    Protocol, ResponseHead, TransportError, TransportKind,
};
use tidings_core::keys;
use tidings_core::time::WallMs;
use wasm_bindgen::{JsCast, JsValue};

use super::{feed, Connection};
use crate::transport::eventsource::{self, NativeEventSource};
use crate::transport::fetch::{self, Fetch, Read};

/// Adapter-side options (what the engine never needs to see).
pub struct AdapterOptions {
    /// `withCredentials`.
    pub with_credentials: bool,
    /// Event types the native EventSource must listen for besides `message`:
    /// the app's `events`, the heartbeat event and `reset`.
    pub native_events: Vec<String>,
    /// The `headers` option: an object, or `(ctx) => object | Promise<object>`
    /// called before every fetch request with `{ transport, url, status? }`
    /// (`status: 401` on the one retry after a 401, to refresh a token).
    pub headers: Option<JsValue>,
    /// `debug`: log every engine decision on the console (`debug.rs`).
    pub debug: bool,
    /// `lostAfterMs` of the calm status (`calm.rs`).
    pub lost_after_ms: u64,
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
                crate::js::set(&ctx, "status", &JsValue::from_f64(401.0));
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

/// The request of the live attempt; dropping it closes/aborts it (the guards
/// are held only for their `Drop`).
#[allow(dead_code)]
#[must_use = "a guard: dropping it undoes what it holds at once"]
pub enum Live {
    /// Native EventSource, and the `fetch` probe that learns why it failed
    /// (see [`open_native`]).
    Native(AttemptId, NativeEventSource, Rc<RefCell<Option<Fetch>>>),
    /// A fetch (any of the other three transports).
    Fetch(AttemptId, Fetch),
    /// The browser refused to start it; the failure was reported.
    Failed(AttemptId),
}

impl Live {
    /// The attempt this request belongs to.
    pub fn id(&self) -> AttemptId {
        match self {
            Live::Native(id, _, _) | Live::Fetch(id, _) | Live::Failed(id) => *id,
        }
    }
}

/// Start `req`. A request the browser refuses at once (a URL the
/// `EventSource` constructor rejects, no `AbortController`) is reported to the
/// engine as a network failure on the next task, never synchronously.
pub fn open(conn: &Rc<Connection>, req: OpenRequest) -> Live {
    persist_downgrade(conn);
    let id = req.id;
    let weak = Rc::downgrade(conn);
    let started = match req.transport {
        TransportKind::EventSource => open_native(conn, weak.clone(), &req),
        kind => open_fetch(conn, weak.clone(), &req, kind),
    };
    started.unwrap_or_else(|_| {
        wasm_bindgen_futures::spawn_local(async move {
            if let Some(conn) = weak.upgrade() {
                feed(
                    &conn,
                    Fact::TransportError(id, TransportError::NetworkOrCors),
                );
            }
        });
        Live::Failed(id)
    })
}

/// A native EventSource. It hides the status and headers of a failed
/// connection, so when it fails (readyState CLOSED) before ever opening, one
/// `fetch` of the same URL learns them and reports them to the engine as the
/// attempt's response head: a 204 then stops (`no-content`), a 503 waits for
/// its `Retry-After`, a wrong content type stops (`bad-content-type`). The
/// probe is aborted as soon as its head is read, and what it saw (its head, or
/// nothing when it failed too) goes to `Engine::handle_native_probe`, which
/// decides what it means.
fn open_native(
    conn: &Connection,
    weak: Weak<Connection>,
    req: &OpenRequest,
) -> Result<Live, JsValue> {
    let id = req.id;
    let probe: Rc<RefCell<Option<Fetch>>> = Rc::new(RefCell::new(None));
    let opened = Cell::new(false);
    let url = req.url.clone();
    let with_credentials = conn.adapter.with_credentials;
    let slot = probe.clone();
    let on_fact: Rc<dyn Fn(eventsource::Fact)> = Rc::new(move |fact| {
        let Some(conn) = weak.upgrade() else { return };
        match fact {
            eventsource::Fact::Open => {
                opened.set(true);
                feed(&conn, Fact::Opened(id))
            }
            eventsource::Fact::Event {
                event,
                data,
                raw,
                last_event_id,
            } => {
                opened.set(true);
                let fact = Fact::NativeEvent {
                    id,
                    event_type: &event,
                    data: &data,
                    last_event_id: &last_event_id,
                };
                super::drive::feed_native(&conn, raw, fact)
            }
            // Failed before it ever opened: ask once with `fetch` why.
            eventsource::Fact::Error { failed: true } if !opened.get() => {
                match start_probe(weak.clone(), id, &url, with_credentials, slot.clone()) {
                    Ok(f) => *slot.borrow_mut() = Some(f),
                    Err(_) => feed(&conn, Fact::NativeProbe(id, None)),
                }
            }
            // A network error, or a stream that ended: the engine decides.
            eventsource::Fact::Error { failed } => {
                feed(&conn, Fact::TransportError(id, native_error(failed)))
            }
        }
    });
    let source = NativeEventSource::open(
        &req.url,
        conn.adapter.with_credentials,
        &conn.adapter.native_events,
        on_fact,
    )?;
    Ok(Live::Native(id, source, probe))
}

/// The fact of a native `error`: readyState CLOSED (`failed`: the browser
/// failed the connection) is a network error; CONNECTING is the browser about
/// to reestablish it, after the body ended or a network error it would retry
/// (it shows both alike; the engine decides what that means).
fn native_error(failed: bool) -> TransportError {
    if failed {
        TransportError::Network
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
    let on_fact: Rc<dyn Fn(fetch::Fact)> = Rc::new(move |fact| {
        if done.get() {
            return;
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
            fetch::Fact::Failed { aborted: true } | fetch::Fact::HeadersFailed(_) => return,
            fetch::Fact::Failed { aborted: false } | fetch::Fact::End => None,
            fetch::Fact::Chunk(_) | fetch::Fact::Text { .. } => return,
        };
        done.set(true);
        // Abort the probe's body (taken out first: the engine's answer may
        // drop the whole `Live`, slot included).
        let probe = slot.borrow_mut().take();
        drop(probe);
        let Some(conn) = weak.upgrade() else { return };
        // What the probe's answer means is the engine's to decide.
        feed(&conn, Fact::NativeProbe(id, head.as_ref()));
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
            read: Read::Stream,
            app_headers: None,
        },
        on_fact,
    )
}

fn open_fetch(
    conn: &Connection,
    weak: Weak<Connection>,
    req: &OpenRequest,
    kind: TransportKind,
) -> Result<Live, JsValue> {
    let id = req.id;
    #[cfg(feature = "durable-streams")]
    let durable = conn.with_engine(|e| e.config().protocol == Protocol::DurableStreams);
    #[cfg(not(feature = "durable-streams"))]
    let durable = false;
    let read = if kind == TransportKind::FetchSse {
        Read::Stream
    } else if durable {
        Read::Durable
    } else {
        Read::ByContentType
    };
    let on_fact: Rc<dyn Fn(fetch::Fact)> = Rc::new(move |fact| {
        if let Some(conn) = weak.upgrade() {
            report_fetch_fact(&conn, id, durable, fact);
        }
    });
    let f = Fetch::start(
        fetch::Request {
            url: &req.url,
            headers: &req.headers,
            with_credentials: conn.adapter.with_credentials,
            read,
            app_headers: app_headers(&conn.adapter, req),
        },
        on_fact,
    )?;
    Ok(Live::Fetch(id, f))
}

/// Report what a `fetch` of attempt `id` learned to the engine, as the fact
/// it is (`durable`: the Durable Streams profile, whose JSON bodies are
/// arrays of elements).
#[cfg_attr(not(feature = "durable-streams"), allow(unused_variables))]
fn report_fetch_fact(conn: &Rc<Connection>, id: AttemptId, durable: bool, fact: fetch::Fact) {
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
        fetch::Fact::Text { text, json } if durable && json => {
            let elements = crate::transport::durable::json_elements(&text);
            feed(conn, Fact::JsonChunk(id, elements))
        }
        fetch::Fact::Text { text, json } => {
            if json {
                match decode_json(&text) {
                    Some((msgs, polling_hint_ms)) => feed(
                        conn,
                        Fact::Messages {
                            id,
                            msgs,
                            polling_hint_ms,
                        },
                    ),
                    None => feed(conn, Fact::BodyResource(id, text)),
                }
            } else {
                feed(conn, Fact::BodyResource(id, text))
            }
        }
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
}

/// A JSON long-poll/poll body: the browser's `JSON.parse` checks it (no
/// JSON parser in the bundle) and the core reads the messages from the text
/// already in wasm (`tidings_core::engine::decode_json_text`: one pass, not
/// ~18 crossings per message), the parsed value only for the shape and what
/// it is unsure of. `None` when the text is not JSON or has neither shape.
fn decode_json(text: &str) -> Option<(Vec<Option<IncomingMessage>>, Option<u64>)> {
    decode_json_text(text, &Parsed(js_sys::JSON::parse(text).ok()?))
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

fn web_storage(name: &str) -> Option<JsValue> {
    let s = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str(name)).ok()?;
    (s.is_object()).then_some(s)
}

/// `sessionStorage[method](args…)`, `None` when anything throws.
fn storage_call(method: &str, args: &[&str]) -> Option<JsValue> {
    web_storage_call("sessionStorage", method, args)
}

/// `globalThis[storage][method](args…)` (`storage`: `"sessionStorage"` or
/// `"localStorage"`): `None` when the storage is missing or anything throws
/// (disabled, sandboxed, quota exceeded); else what it returned.
pub(crate) fn web_storage_call(storage: &str, method: &str, args: &[&str]) -> Option<JsValue> {
    let s = web_storage(storage)?;
    let f: js_sys::Function = js_sys::Reflect::get(&s, &JsValue::from_str(method))
        .ok()?
        .dyn_into()
        .ok()?;
    let args: js_sys::Array = args.iter().map(|a| JsValue::from_str(a)).collect();
    f.apply(&s, &args).ok()
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
