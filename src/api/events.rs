//! The JS event objects listeners receive (plain, structured-cloneable
//! objects with a `type`). Shapes are those of the API contract in README.

use tidings_core::engine::{Action, ErrorCode, Message, Stats};
use wasm_bindgen::{JsCast, JsValue};

use super::options::Parse;
use crate::js::{name, set};

fn object(kind: &'static str) -> js_sys::Object {
    let o = js_sys::Object::new();
    set(&o, "type", &name(kind));
    o
}

fn num(n: u64) -> JsValue {
    JsValue::from_f64(n as f64)
}

/// `{ type, id, lastEventId, event, data, transport }`; with `parse: "json"`
/// the data is `JSON.parse`d, and a failure is an `error` event (code `parse`)
/// returned as `Err`.
pub fn message(m: &Message, transport: &'static str, parse: Parse) -> Result<JsValue, JsValue> {
    let data = match parse {
        // Bytes stay bytes whatever `parse` says (one char per byte).
        _ if m.binary => {
            let bytes: Vec<u8> = m.data.chars().map(|c| c as u8).collect();
            js_sys::Uint8Array::from(&bytes[..]).into()
        }
        Parse::Text => JsValue::from_str(&m.data),
        Parse::Json => js_sys::JSON::parse(&m.data).map_err(|_| {
            // Which message was dropped (its data may be large or private).
            let e = error("parse", "message data is not JSON", None, None, false);
            let o: &js_sys::Object = wasm_bindgen::JsCast::unchecked_ref(&e);
            set(o, "id", &JsValue::from_str(&m.id));
            set(o, "event", &JsValue::from_str(&m.event));
            set(o, "lastEventId", &JsValue::from_str(&m.last_event_id));
            e
        })?,
    };
    // Per message only the values cross as new strings (the event name once
    // for `type` and `event`); the keys and the transport name are cached.
    let o = js_sys::Object::new();
    let event = JsValue::from_str(&m.event);
    set(&o, "type", &event);
    set(&o, "id", &JsValue::from_str(&m.id));
    set(&o, "lastEventId", &JsValue::from_str(&m.last_event_id));
    set(&o, "event", &event);
    set(&o, "data", &data);
    set(&o, "transport", &name(transport));
    Ok(o.into())
}

/// `{ type: "statuschange", status, reason }`.
pub fn status(status: tidings_core::calm::Status, reason: tidings_core::engine::Reason) -> JsValue {
    let o = object("statuschange");
    set(&o, "status", &name(status.as_str()));
    set(&o, "reason", &name(reason.as_str()));
    o.into()
}

/// `{ type: "open", transport }`.
pub fn open(transport: &'static str) -> JsValue {
    let o = object("open");
    set(&o, "transport", &name(transport));
    o.into()
}

/// An `Error` with `type: "error"`, `code`, `status?`, `retryInMs?`, `fatal`.
pub fn error(
    code: &str,
    message: &str,
    status: Option<u16>,
    retry_in_ms: Option<u64>,
    fatal: bool,
) -> JsValue {
    let e = super::error(code, message);
    let o: &js_sys::Object = wasm_bindgen::JsCast::unchecked_ref(&e);
    set(o, "type", &JsValue::from_str("error"));
    if let Some(s) = status {
        set(o, "status", &num(u64::from(s)));
    }
    if let Some(ms) = retry_in_ms {
        set(o, "retryInMs", &num(ms));
    }
    set(o, "fatal", &JsValue::from_bool(fatal));
    e
}

/// `error` with code `headers`: the app's `headers` failed (`cause`: what it
/// threw, or the `TypeError` of an invalid header); retried in `retry_in_ms`.
pub fn headers_error(cause: &JsValue, retry_in_ms: Option<u64>) -> JsValue {
    let e = error(
        "headers",
        says(ErrorCode::Headers, true),
        None,
        retry_in_ms,
        false,
    );
    set(wasm_bindgen::JsCast::unchecked_ref(&e), "cause", cause);
    e
}

/// The event type and object for an engine action other than `Deliver`
/// (`statechange`, `transportchange`, `error`, `reset`); `None` for actions
/// the app does not see.
pub fn from_action(a: &Action) -> Option<(&'static str, JsValue)> {
    match a {
        Action::State {
            state,
            reason,
            delay_ms,
        } => {
            let o = object("statechange");
            set(&o, "state", &name(state.as_str()));
            set(&o, "reason", &name(reason.as_str()));
            if let Some(ms) = delay_ms {
                set(&o, "delayMs", &num(*ms));
            }
            Some(("statechange", o.into()))
        }
        Action::TransportChanged {
            transport,
            previous,
            reason,
        } => {
            let o = object("transportchange");
            set(&o, "transport", &name(transport.as_str()));
            set(
                &o,
                "previous",
                &previous.map(|p| name(p.as_str())).unwrap_or(JsValue::NULL),
            );
            set(&o, "reason", &name(reason.as_str()));
            Some(("transportchange", o.into()))
        }
        Action::Error {
            code,
            status,
            retry_in_ms,
            fatal,
            id,
        } => {
            let says = says(*code, retry_in_ms.is_some());
            let e = error(code.as_str(), says, *status, *retry_in_ms, *fatal);
            if let Some(id) = id {
                set(e.unchecked_ref(), "id", &JsValue::from_str(id));
            }
            Some(("error", e))
        }
        Action::Reset { reason } => {
            let o = object("reset");
            set(&o, "reason", &name(reason.as_str()));
            Some(("reset", o.into()))
        }
        Action::UpToDate { last_event_id } => {
            let o = object("uptodate");
            set(&o, "lastEventId", &JsValue::from_str(last_event_id));
            Some(("uptodate", o.into()))
        }
        _ => None,
    }
}

/// `error.message`: one short line per code (`retrying`: the error has a
/// `retryInMs`, which for `resume-ignored` means "moving to a transport that
/// sends the header").
fn says(code: ErrorCode, retrying: bool) -> &'static str {
    match code {
        ErrorCode::InvalidUrl => "invalid url",
        ErrorCode::HttpStatus => "unusable HTTP status",
        ErrorCode::NoContent => "204: the server said stop",
        ErrorCode::BadContentType => "wrong Content-Type",
        ErrorCode::NetworkOrCors => "network error or CORS refusal",
        ErrorCode::Timeout => "no answer, or a silent stream",
        ErrorCode::TooLarge => "message over maxMessageBytes skipped",
        ErrorCode::Parse => "message data is not JSON, or a body not valid for its type",
        ErrorCode::Auth => "refused (401/403)",
        ErrorCode::GaveUp => "gave up: maxAttempts, or no usable transport",
        ErrorCode::Headers => "the headers option failed",
        ErrorCode::ResumeIgnored if retrying => {
            "the server ignored the cursor in the query (lastEventIdParam) and replayed \
             old events; switching to a transport that sends Last-Event-ID"
        }
        ErrorCode::ResumeIgnored => {
            "the server ignored the cursor in the query (lastEventIdParam) and replayed \
             old events; no usable transport sends Last-Event-ID: staying, replays are dropped"
        }
    }
}

/// `stats()`.
pub fn stats(s: &Stats) -> JsValue {
    let o = js_sys::Object::new();
    set(&o, "requests", &num(s.requests));
    set(&o, "bytes", &num(s.bytes));
    set(&o, "reconnects", &num(s.reconnects));
    set(&o, "notModified", &num(s.not_modified));
    set(&o, "duplicatesDropped", &num(s.duplicates_dropped));
    set(&o, "currentDelayMs", &num(s.current_delay_ms));
    set(&o, "currentIntervalMs", &num(s.current_interval_ms));
    o.into()
}
