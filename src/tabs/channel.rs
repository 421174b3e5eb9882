//! The relay between tabs: one `BroadcastChannel` per shared connection,
//! named by its share key, and the wire format of what travels on it.
//!
//! Every notice of the leader's engine is posted as a plain array (a
//! structured clone, no JSON text), its kind first; names are the contract's
//! vocabulary (an object with a key per field measured the same size):
//!
//! | kind | what | then |
//! |---|---|---|
//! | `m` | a message | transport, id, lastEventId, event, data, binary (bytes as U+0000–U+00FF), the leader's cursor, index in its chunk (Durable Streams) |
//! | `u` | uptodate (Durable Streams) | sync, the offset reached |
//! | `s` | statechange | sync, state, reason, the leader's cursor, delayMs? |
//! | `t` | transportchange | sync, transport, reason, previous? |
//! | `e` | error | code, fatal, status (or `null`), retryInMs? |
//! | `r` | reset | reason |
//! | `h` | hello: a new tab asks the leader to re-post its last `t`, `s` and `u` | – |
//! | `b` | bye: the leader's page is going away (the lock passes on by itself) | – |
//! | `c` | reconnect: a follower's app called `reconnect()`; the leader's engine decides | – |
//!
//! `sync` is `true` on a re-post for a newcomer (a tab that already knows it
//! ignores it).
//!
//! Any same-origin script can post on the channel, so [`decode`] validates
//! every field (strings, names of the contract's vocabulary, finite
//! non-negative numbers) and drops anything else: no input panics. The
//! rules are the core's (`tidings_core::crosstab::wire`, fuzzed natively).

use js_sys::Array;
use tidings_core::crosstab::wire::{self, WireFields};
use tidings_core::crosstab::{Relay, Wire};
use tidings_core::engine::{Action, Message, TransportKind};
use wasm_bindgen::{JsCast, JsValue};

use crate::guard::Listener;

/// The channel, closed (and its listener removed) on drop.
#[must_use = "a guard: dropping it undoes what it holds at once"]
pub struct Channel {
    bc: web_sys::BroadcastChannel,
    _listener: Listener,
}

impl Channel {
    /// Open `name`; `on_message` gets each message's `data`. `None` without
    /// `BroadcastChannel`.
    pub fn open(name: &str, on_message: impl Fn(JsValue) + 'static) -> Option<Channel> {
        let bc = web_sys::BroadcastChannel::new(name).ok()?;
        let listener = Listener::new(bc.as_ref(), "message", move |e| {
            let data = e
                .dyn_ref::<web_sys::MessageEvent>()
                .map(|m| m.data())
                .unwrap_or_default();
            on_message(data)
        });
        Some(Channel {
            bc,
            _listener: listener,
        })
    }

    /// Post `v` to every other tab on the channel (a failure — a closed
    /// channel — is nobody's business: the other tabs time nothing out on it).
    pub fn post(&self, v: &JsValue) {
        let _ = self.bc.post_message(v);
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        self.bc.close();
    }
}

fn array(k: &str) -> Array {
    Array::of1(&JsValue::from_str(k))
}

fn push(a: &Array, v: &str) {
    a.push(&JsValue::from_str(v));
}

fn push_n(a: &Array, v: Option<u64>) {
    if let Some(v) = v {
        a.push(&JsValue::from_f64(v as f64));
    }
}

/// `wire` as posted. `None` for a notice that never travels (the machine
/// posts none).
pub fn encode(wire: &Wire) -> Option<Array> {
    match wire {
        Wire::Hello => Some(array("h")),
        Wire::Bye => Some(array("b")),
        Wire::Reconnect => Some(array("c")),
        Wire::Notice {
            notice: Relay::Message(m, transport),
            cursor,
            index,
            ..
        } => Some(encode_message(m, *transport, cursor, *index)),
        Wire::Notice {
            notice: Relay::Action(action),
            cursor,
            sync,
            ..
        } => encode_action(action, cursor, *sync),
    }
}

fn encode_message(m: &Message, transport: Option<TransportKind>, cursor: &str, i: u32) -> Array {
    let a = array("m");
    push(&a, transport.map_or("", |t| t.as_str()));
    push(&a, &m.id);
    push(&a, &m.last_event_id);
    push(&a, &m.event);
    push(&a, &m.data);
    a.push(&JsValue::from_bool(m.binary));
    push(&a, cursor);
    push_n(&a, Some(u64::from(i)));
    a
}

fn encode_action(action: &Action, cursor: &str, sync: bool) -> Option<Array> {
    let a;
    match action {
        Action::UpToDate { last_event_id } => {
            a = array("u");
            a.push(&JsValue::from_bool(sync));
            push(&a, last_event_id);
        }
        Action::State {
            state,
            reason,
            delay_ms,
        } => {
            a = array("s");
            a.push(&JsValue::from_bool(sync));
            push(&a, state.as_str());
            push(&a, reason.as_str());
            push(&a, cursor);
            push_n(&a, *delay_ms);
        }
        Action::TransportChanged {
            transport,
            previous,
            reason,
        } => {
            a = array("t");
            a.push(&JsValue::from_bool(sync));
            push(&a, transport.as_str());
            push(&a, reason.as_str());
            if let Some(p) = previous {
                push(&a, p.as_str());
            }
        }
        Action::Error { .. } => a = encode_error(action),
        Action::Reset { reason } => {
            a = array("r");
            push(&a, reason.as_str());
        }
        _ => return None,
    }
    Some(a)
}

/// `["e", code, fatal, status|null, retryInMs|null, id?]`: every optional
/// field before the last keeps its place.
fn encode_error(action: &Action) -> Array {
    let a = array("e");
    if let Action::Error {
        code,
        status,
        retry_in_ms,
        fatal,
        id,
    } = action
    {
        push(&a, code.as_str());
        a.push(&JsValue::from_bool(*fatal));
        a.push(&status.map_or(JsValue::NULL, |s| JsValue::from_f64(f64::from(s))));
        a.push(&retry_in_ms.map_or(JsValue::NULL, |ms| JsValue::from_f64(ms as f64)));
        if let Some(id) = id {
            push(&a, id);
        }
    }
    a
}

/// The posted value as [`WireFields`]: the validation rules are the core's
/// (`tidings_core::crosstab::wire`), fuzzed natively.
struct Posted<'a>(&'a JsValue);

impl Posted<'_> {
    fn get(&self, i: u32) -> JsValue {
        self.0.unchecked_ref::<Array>().get(i)
    }
}

impl WireFields for Posted<'_> {
    fn is_array(&self) -> bool {
        Array::is_array(self.0)
    }
    fn string(&self, i: u32) -> Option<String> {
        self.get(i).as_string()
    }
    fn number(&self, i: u32) -> Option<f64> {
        self.get(i).as_f64()
    }
    fn boolean(&self, i: u32) -> Option<bool> {
        self.get(i).as_bool()
    }
    fn is_undefined(&self, i: u32) -> bool {
        self.get(i).is_undefined()
    }
    fn is_null(&self, i: u32) -> bool {
        self.get(i).is_null()
    }
}

/// What `v` says, or `None` when it is not one of ours (or malformed). A
/// notice's cursor is the one a state carries (`""` otherwise).
pub fn decode(v: &JsValue) -> Option<Wire> {
    wire::decode(&Posted(v))
}
