//! The JS objects of [`Event`]s, as listeners receive them (plain,
//! structured-cloneable objects with a `type`; README "Events and errors"),
//! and the JS `Error` of an error code. Below the connection (ARCHITECTURE.md
//! "Layers"), so the debug log and the reporter render actions with them too.

use tidings_core::engine::ErrorCode;
use wasm_bindgen::{JsCast, JsValue};

use super::{Error, Event};
use crate::js::{name, set};

fn object(kind: &'static str) -> js_sys::Object {
    let o = js_sys::Object::new();
    set(&o, "type", &name(kind));
    o
}

pub(crate) fn num(n: u64) -> JsValue {
    JsValue::from_f64(n as f64)
}

/// An `Error` with `type: "error"`, `code`, `status?`, `retryInMs?`, `fatal`.
pub fn error(
    code: &str,
    message: &str,
    status: Option<u16>,
    retry_in_ms: Option<u64>,
    fatal: bool,
) -> JsValue {
    let e = crate::js::error(code, message);
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

/// The JS event type and object of `e` (README "API": `open`,
/// `statechange`, `transportchange`, `error`, `reset`, `uptodate`,
/// `statuschange`). `cause`: what the app's `headers` threw, for an error
/// with code `headers` (a JS value, not part of the [`Event`]). `url`: the
/// URL an error concerns, named at the end of its message (none if empty).
pub fn to_js(e: &Event, cause: Option<&JsValue>, url: &str) -> (&'static str, JsValue) {
    let (kind, o) = match e {
        Event::Error(e) => return ("error", error_event(e, cause, url)),
        Event::Open { transport } => {
            let o = object("open");
            set(&o, "transport", &name(transport));
            ("open", o)
        }
        Event::State {
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
            ("statechange", o)
        }
        Event::Transport {
            transport,
            previous,
            reason,
        } => {
            let o = object("transportchange");
            set(&o, "transport", &name(transport.as_str()));
            let previous = previous.map(|p| name(p.as_str()));
            set(&o, "previous", &previous.unwrap_or(JsValue::NULL));
            set(&o, "reason", &name(reason.as_str()));
            ("transportchange", o)
        }
        Event::Reset { reason } => {
            let o = object("reset");
            set(&o, "reason", &name(reason.as_str()));
            ("reset", o)
        }
        Event::UpToDate { last_event_id } => {
            let o = object("uptodate");
            set(&o, "lastEventId", &JsValue::from_str(last_event_id));
            ("uptodate", o)
        }
        Event::Status { status, reason } => {
            let o = object("statuschange");
            set(&o, "status", &name(status.as_str()));
            set(&o, "reason", &name(reason.as_str()));
            ("statuschange", o)
        }
    };
    (kind, o.into())
}

/// The JS event type and object for an engine action other than `Deliver`
/// (`statechange`, `transportchange`, `error`, `reset`, `uptodate`); `None`
/// for actions the app does not see (the debug log, the reporter's events).
/// `url` as for [`to_js`].
pub fn from_action(a: &tidings_core::engine::Action, url: &str) -> Option<(&'static str, JsValue)> {
    super::from_action(a).map(|e| to_js(&e, None, url))
}

/// The `error` event of a connection error: an `Error` with `code`,
/// `status?`, `retryInMs?`, `fatal`, `id?` (`too-large`) and `cause?`
/// (`headers`). Only [`Error::Connection`] is an event.
fn error_event(e: &Error, cause: Option<&JsValue>, url: &str) -> JsValue {
    let Error::Connection {
        code,
        status,
        retry_in_ms,
        fatal,
        id,
    } = e
    else {
        return error(e.code(), "", None, None, false);
    };
    let mut says = String::from(says(*code, retry_in_ms.is_some()));
    // The status that made it, in the message as in `send()`'s.
    if let (ErrorCode::HttpStatus | ErrorCode::Auth, Some(s)) = (code, status) {
        says.push(' ');
        tidings_core::wire::push_decimal(&mut says, u64::from(*s));
    }
    crate::js::push_url(&mut says, url);
    let js = error(code.as_str(), &says, *status, *retry_in_ms, *fatal);
    let o: &js_sys::Object = js.unchecked_ref();
    if let Some(id) = id {
        set(o, "id", &JsValue::from_str(id));
    }
    if let (ErrorCode::Headers, Some(cause)) = (code, cause) {
        set(o, "cause", cause);
    }
    js
}

/// `error.message`: one short line per code, followed by the status for
/// `http-status` (`unusable HTTP status 503`) and `auth` (`refused: HTTP
/// 401`) (`retrying`: the error has a
/// `retryInMs`, which for `resume-ignored` means "moving to a transport that
/// sends the header").
fn says(code: ErrorCode, retrying: bool) -> &'static str {
    match code {
        ErrorCode::InvalidUrl => "invalid url",
        ErrorCode::HttpStatus | ErrorCode::Conflict | ErrorCode::StreamClosed => {
            "unusable HTTP status"
        }
        ErrorCode::NoContent => "204: the server said stop",
        ErrorCode::BadContentType => "wrong Content-Type",
        ErrorCode::NetworkOrCors => "network error or CORS refusal",
        ErrorCode::Timeout => "no answer, or a silent stream",
        ErrorCode::TooLarge => "message over maxMessageBytes skipped",
        ErrorCode::Parse => "message data is not JSON, or a body not valid for its type",
        ErrorCode::Auth => "refused: HTTP",
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
