//! Renders an engine `Open` as a live request of the right transport, and
//! turns what the request reports into engine facts.

use std::rc::{Rc, Weak};

use tidings_core::engine::{
    AttemptId, IncomingMessage, OpenRequest, ResponseHead, TransportError, TransportKind,
};
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
}

/// The app's headers for `req` as a promise, calling its function if it gave
/// one. A function that throws yields a rejected promise (the request then
/// fails like a network error, and the engine backs off).
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
pub enum Live {
    /// Native EventSource.
    Native(AttemptId, NativeEventSource),
    /// A fetch (any of the other three transports).
    Fetch(AttemptId, Fetch),
    /// The browser refused to start it; the failure was reported.
    Failed(AttemptId),
}

impl Live {
    /// The attempt this request belongs to.
    pub fn id(&self) -> AttemptId {
        match self {
            Live::Native(id, _) | Live::Fetch(id, _) | Live::Failed(id) => *id,
        }
    }
}

/// Start `req`. A request the browser refuses at once (a URL the
/// `EventSource` constructor rejects, no `AbortController`) is reported to the
/// engine as a network failure on the next task, never synchronously.
pub fn open(conn: &Rc<Connection>, req: OpenRequest) -> Live {
    let id = req.id;
    let weak = Rc::downgrade(conn);
    let started = match req.transport {
        TransportKind::EventSource => open_native(conn, weak.clone(), &req),
        kind => open_fetch(conn, weak.clone(), &req, kind),
    };
    started.unwrap_or_else(|_| {
        wasm_bindgen_futures::spawn_local(async move {
            if let Some(conn) = weak.upgrade() {
                feed(&conn, |e, now| {
                    e.handle_transport_error(now, id, TransportError::NetworkOrCors)
                });
            }
        });
        Live::Failed(id)
    })
}

fn open_native(
    conn: &Connection,
    weak: Weak<Connection>,
    req: &OpenRequest,
) -> Result<Live, JsValue> {
    let id = req.id;
    let on_fact: Rc<dyn Fn(eventsource::Fact)> = Rc::new(move |fact| {
        let Some(conn) = weak.upgrade() else { return };
        match fact {
            eventsource::Fact::Open => feed(&conn, |e, now| e.handle_opened(now, id)),
            eventsource::Fact::Event {
                event,
                data,
                last_event_id,
            } => feed(&conn, |e, now| {
                e.handle_native_event(now, id, &event, &data, &last_event_id)
            }),
            // CONNECTING: a network error the browser would retry on its own
            // clock; CLOSED: an HTTP failure (status or content type). The
            // engine closes it and decides in both cases.
            eventsource::Fact::Error => feed(&conn, |e, now| {
                e.handle_transport_error(now, id, TransportError::Network)
            }),
        }
    });
    let source = NativeEventSource::open(
        &req.url,
        conn.adapter.with_credentials,
        &conn.adapter.native_events,
        on_fact,
    )?;
    Ok(Live::Native(id, source))
}

fn open_fetch(
    conn: &Connection,
    weak: Weak<Connection>,
    req: &OpenRequest,
    kind: TransportKind,
) -> Result<Live, JsValue> {
    let id = req.id;
    let read = if kind == TransportKind::FetchSse {
        Read::Stream
    } else {
        Read::ByContentType
    };
    let on_fact: Rc<dyn Fn(fetch::Fact)> = Rc::new(move |fact| {
        let Some(conn) = weak.upgrade() else { return };
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
                feed(&conn, |e, now| e.handle_response_head(now, id, &head))
            }
            fetch::Fact::Chunk(bytes) => feed(&conn, |e, now| e.handle_bytes(now, id, &bytes)),
            fetch::Fact::Text { text, json } => {
                if json {
                    match decode_json(&text) {
                        Some((msgs, hint)) => {
                            feed(&conn, |e, now| e.handle_messages(now, id, msgs, hint))
                        }
                        None => feed(&conn, |e, now| e.handle_body_resource(now, id, text)),
                    }
                } else {
                    feed(&conn, |e, now| e.handle_body_resource(now, id, text))
                }
            }
            fetch::Fact::End => feed(&conn, |e, now| e.handle_stream_end(now, id)),
            fetch::Fact::Failed { aborted } => {
                let err = if aborted {
                    TransportError::Aborted
                } else {
                    TransportError::NetworkOrCors
                };
                feed(&conn, |e, now| e.handle_transport_error(now, id, err))
            }
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

/// A JSON long-poll/poll body: an array of `{id, event?, data}`, or an
/// envelope `{messages, _polling?: {next_interval_ms}}`. Decoded with the
/// browser's `JSON.parse` (no JSON parser in the bundle). `data` that is not a
/// string is passed on as its JSON text. `None` when the body has neither shape.
fn decode_json(text: &str) -> Option<(Vec<IncomingMessage>, Option<u64>)> {
    let v = js_sys::JSON::parse(text).ok()?;
    let (list, hint) = if js_sys::Array::is_array(&v) {
        (v, None)
    } else {
        let messages = get(&v, "messages");
        if !js_sys::Array::is_array(&messages) {
            return None;
        }
        let hint = get(&get(&v, "_polling"), "next_interval_ms")
            .as_f64()
            .filter(|ms| *ms >= 0.0)
            .map(|ms| ms as u64);
        (messages, hint)
    };
    let msgs = js_sys::Array::from(&list)
        .iter()
        .map(|m| IncomingMessage {
            id: scalar(&get(&m, "id")),
            event: get(&m, "event").as_string(),
            data: {
                let d = get(&m, "data");
                d.as_string()
                    .or_else(|| js_sys::JSON::stringify(&d).ok().and_then(|s| s.as_string()))
                    .unwrap_or_default()
            },
        })
        .collect();
    Some((msgs, hint))
}

fn get(o: &JsValue, key: &str) -> JsValue {
    if !o.is_object() {
        return JsValue::UNDEFINED;
    }
    js_sys::Reflect::get(o, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// An id given as a string or a number.
fn scalar(v: &JsValue) -> Option<String> {
    v.as_string().or_else(|| {
        v.as_f64().map(|n| {
            let s: String = js_sys::Number::from(n)
                .to_string_with_radix(10)
                .map(String::from)
                .unwrap_or_default();
            s
        })
    })
}
