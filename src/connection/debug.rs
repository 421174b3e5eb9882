//! `debug: true`: every decision of the engine on the console, as it is
//! rendered, with its reason: `console.debug("[tidings]", what, details)`.
//! `debug: (what, details) => void`: the same entries (the same objects) to
//! that function instead of the console, called with no engine state
//! borrowed; what it throws is reported (`reportError`) and the connection
//! goes on.
//!
//! `what` is one of `open` (`{ attempt, transport, url, headers }`: the
//! request as the engine asked for it, before the app's own headers are
//! added), `head` (`{ attempt, status }`: a fetch response's status, as it
//! arrives), `end` (`{ attempt }`: a fetch response's body is all in; a body read
//! whole logs it before its `deliver`s), `abort`
//! (`{ attempt }`), `deliver` (`{ id, event, lastEventId }`),
//! `ignore` (`{ id, event }`: a server event named like one of the
//! subscription's own events, `open`, `error`, `statechange` or
//! `transportchange`, dropped; `{ id, event, reason: "not-in-events" }`: the
//! first event of a type neither `message` nor in `events`, dropped, once
//! per type),
//! `wait` (`{ delayMs }`: the one timer armed), `note` (`{ note }`: a
//! decision with no event of its own, such as `silent-stream-kept`: an
//! `eventsource` stream with nowhere else to go kept open past
//! `watchdog.firstEventTimeoutMs`, or `reconnect: <answer>`: what the app's
//! `reconnect()` did and why, as it returned), `statechange`,
//! `transportchange`, `error` and `reset` (the event objects listeners get,
//! with `reason`, `delayMs`, `retryInMs`, `code`), `warn` (`{ event, message
//! }`: a listener added for a type the subscription never dispatches, as
//! the `console.warn` says it). `parse` errors are made by
//! the API layer, which logs them as `error` through
//! [`Connection::debug_log`](super::Connection::debug_log). Message data is
//! not logged: it can be large and private.

use tidings_core::engine::{Action, Input};
use tidings_core::time::MonoMs;
use wasm_bindgen::JsValue;

use crate::clock;
use crate::js::set;

/// Write one entry to `to`: the app's `debug` function (what it throws is
/// reported, the connection goes on), else the console.
pub(super) use crate::js::debug_log as emit;

fn num(n: u64) -> JsValue {
    JsValue::from_f64(n as f64)
}

/// Log the facts of a request the engine's actions do not show, as they
/// arrive: its response head's status (`head`) and its body's end (`end`:
/// a stream ended, or a body read whole is in, before its deliveries).
pub(super) fn fact(to: &JsValue, fact: &Input<'_>) {
    let o = js_sys::Object::new();
    let what = match fact {
        Input::ResponseHead(id, head) => {
            set(&o, "status", &num(u64::from(head.status)));
            set(&o, "attempt", &num(id.0));
            "head"
        }
        Input::StreamEnd(id)
        | Input::Messages { id, .. }
        | Input::BodyResource(id, _)
        | Input::JsonChunk(id, _) => {
            set(&o, "attempt", &num(id.0));
            "end"
        }
        _ => return,
    };
    emit(to, what, &o);
}

/// Log `action` to `to` (called by the drive loop before it renders the
/// action, with no borrow held).
pub fn log(to: &JsValue, action: &Action) {
    let o = js_sys::Object::new();
    let what = match action {
        Action::Open(req) => {
            set(&o, "attempt", &num(req.id.0));
            set(&o, "transport", &JsValue::from_str(req.transport.as_str()));
            set(&o, "url", &JsValue::from_str(&req.url));
            let headers = js_sys::Object::new();
            for (k, v) in &req.headers {
                crate::js::set_dyn(&headers, k, &JsValue::from_str(v));
            }
            set(&o, "headers", &headers);
            "open"
        }
        Action::Abort(id) => {
            set(&o, "attempt", &num(id.0));
            "abort"
        }
        Action::Deliver(m) => {
            set(&o, "id", &JsValue::from_str(&m.id));
            set(&o, "event", &JsValue::from_str(&m.event));
            set(&o, "lastEventId", &JsValue::from_str(&m.last_event_id));
            "deliver"
        }
        Action::Note(note) => {
            set(&o, "note", &JsValue::from_str(note.as_str()));
            "note"
        }
        Action::Ignored {
            event,
            id,
            filtered,
        } => {
            set(&o, "id", &JsValue::from_str(id));
            set(&o, "event", &JsValue::from_str(event));
            if *filtered {
                set(&o, "reason", &JsValue::from_str("not-in-events"));
            }
            "ignore"
        }
        Action::Wait { until: None } => return,
        Action::Wait { until: Some(t) } => {
            set(&o, "delayMs", &num(wait_ms(*t)));
            "wait"
        }
        other => match crate::event::js::from_action(other, "") {
            Some((what, details)) => {
                emit(to, what, &details);
                return;
            }
            None => return,
        },
    };
    emit(to, what, &o);
}

fn wait_ms(until: MonoMs) -> u64 {
    until.since(clock::now().mono)
}
