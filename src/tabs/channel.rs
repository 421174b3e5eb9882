//! The relay between tabs: one `BroadcastChannel("tidings:" + key)` per
//! shared connection, and the wire format of what travels on it.
//!
//! Every notice of the leader's engine is posted as a plain object (a
//! structured clone, no JSON text), keyed by `k`:
//!
//! | `k` | what | fields |
//! |---|---|---|
//! | `m` | a message | `i` id, `l` lastEventId, `e` event, `d` data, `t` transport |
//! | `s` | statechange | `s` state, `r` reason, `w` delayMs?, `l` the cursor, `y` (a re-post for a newcomer) |
//! | `t` | transportchange | `t` transport, `p` previous?, `r` reason, `y` |
//! | `e` | error | `c` code, `h` status?, `w` retryInMs?, `f` fatal |
//! | `r` | reset | `r` reason |
//! | `h` | hello: a new tab asks the leader to re-post its last `t` and `s` | – |
//! | `b` | bye: the leader's page is going away (the lock passes on by itself) | – |
//!
//! Any same-origin script can post on the channel, so [`decode`] validates
//! every field (strings, names of the contract's vocabulary, finite
//! non-negative numbers) and drops anything else: no input panics.

use tidings_core::engine::{Action, ErrorCode, Message, Reason, ResetReason, State, TransportKind};
use wasm_bindgen::{JsCast, JsValue};

use crate::connection::Notice;
use crate::guard::Listener;
use crate::js::set;

/// The channel, closed (and its listener removed) on drop.
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

/// What arrives on the channel.
pub enum Wire {
    /// A notice of the leader's engine; `sync`: a re-post for a newcomer.
    Notice { notice: Notice, sync: bool },
    /// A new tab asks the leader for its last transport and state.
    Hello,
    /// The leader's page is going away.
    Bye,
}

fn obj(k: &str) -> js_sys::Object {
    let o = js_sys::Object::new();
    set(&o, "k", &JsValue::from_str(k));
    o
}

fn s(o: &js_sys::Object, key: &str, v: &str) {
    set(o, key, &JsValue::from_str(v));
}

fn n(o: &js_sys::Object, key: &str, v: Option<u64>) {
    if let Some(v) = v {
        set(o, key, &JsValue::from_f64(v as f64));
    }
}

/// `{ k: "h" }`.
pub fn hello() -> JsValue {
    obj("h").into()
}

/// `{ k: "b" }`.
pub fn bye() -> JsValue {
    obj("b").into()
}

/// A notice as posted; `cursor` is the leader's cursor (sent with states).
/// `None` for nothing to post.
pub fn encode(notice: &Notice, cursor: &str) -> Option<js_sys::Object> {
    let o;
    match notice {
        Notice::Message(m, transport) => {
            o = obj("m");
            s(&o, "i", &m.id);
            s(&o, "l", &m.last_event_id);
            s(&o, "e", &m.event);
            s(&o, "d", &m.data);
            s(&o, "t", transport);
        }
        Notice::Action(Action::State {
            state,
            reason,
            delay_ms,
        }) => {
            o = obj("s");
            s(&o, "s", state.as_str());
            s(&o, "r", reason.as_str());
            n(&o, "w", *delay_ms);
            s(&o, "l", cursor);
        }
        Notice::Action(Action::TransportChanged {
            transport,
            previous,
            reason,
        }) => {
            o = obj("t");
            s(&o, "t", transport.as_str());
            if let Some(p) = previous {
                s(&o, "p", p.as_str());
            }
            s(&o, "r", reason.as_str());
        }
        Notice::Action(Action::Error {
            code,
            status,
            retry_in_ms,
            fatal,
        }) => {
            o = obj("e");
            s(&o, "c", code.as_str());
            n(&o, "h", status.map(u64::from));
            n(&o, "w", *retry_in_ms);
            set(&o, "f", &JsValue::from_bool(*fatal));
        }
        Notice::Action(Action::Reset { reason }) => {
            o = obj("r");
            s(&o, "r", reason.as_str());
        }
        Notice::Action(_) => return None,
    }
    Some(o)
}

/// Mark a posted state or transport object as a re-post for a newcomer.
pub fn as_sync(o: &js_sys::Object) -> &js_sys::Object {
    set(o, "y", &JsValue::TRUE);
    o
}

fn get(v: &JsValue, key: &str) -> JsValue {
    crate::api::options::get(v, key)
}

fn string(v: &JsValue, key: &str) -> Option<String> {
    get(v, key).as_string()
}

/// A finite non-negative number, saturated into `u64`; `Ok(None)` when absent.
fn number(v: &JsValue, key: &str) -> Option<Option<u64>> {
    let x = get(v, key);
    if x.is_undefined() {
        return Some(None);
    }
    let f = x.as_f64().filter(|f| f.is_finite() && *f >= 0.0)?;
    Some(Some(f as u64))
}

fn named<T: Copy>(all: &[T], name: &str, as_str: fn(T) -> &'static str) -> Option<T> {
    all.iter().copied().find(|t| as_str(*t) == name)
}

fn transport(v: &JsValue, key: &str) -> Option<TransportKind> {
    TransportKind::from_name(&string(v, key)?)
}

fn state(v: &JsValue) -> Option<State> {
    const ALL: [State; 5] = [
        State::Connecting,
        State::Open,
        State::Waiting,
        State::Paused,
        State::Closed,
    ];
    named(&ALL, &string(v, "s")?, State::as_str)
}

fn reason(v: &JsValue) -> Option<Reason> {
    use Reason::*;
    const ALL: [Reason; 21] = [
        Start,
        Capability,
        Backoff,
        RetryAfter,
        RateLimit,
        ServerHint,
        BreakerOpen,
        BreakerProbe,
        BufferedStream,
        Stalled,
        OpenFailed,
        FailbackProbe,
        Hidden,
        Visible,
        Offline,
        Online,
        Frozen,
        Resumed,
        PermanentError,
        ClosedByUser,
        Aborted,
    ];
    named(&ALL, &string(v, "r")?, Reason::as_str)
}

fn code(v: &JsValue) -> Option<ErrorCode> {
    use ErrorCode::*;
    const ALL: [ErrorCode; 10] = [
        InvalidUrl,
        HttpStatus,
        NoContent,
        BadContentType,
        NetworkOrCors,
        Timeout,
        TooLarge,
        Parse,
        Auth,
        GaveUp,
    ];
    named(&ALL, &string(v, "c")?, ErrorCode::as_str)
}

/// What `v` says, or `None` when it is not one of ours (or malformed).
/// Also returns the cursor a state carries (`""` otherwise).
pub fn decode(v: &JsValue) -> Option<(Wire, String)> {
    let sync = get(v, "y").as_bool() == Some(true);
    let action = match string(v, "k")?.as_str() {
        "h" => return Some((Wire::Hello, String::new())),
        "b" => return Some((Wire::Bye, String::new())),
        "m" => {
            let t = transport(v, "t")?;
            let msg = Message {
                id: string(v, "i")?,
                last_event_id: string(v, "l")?,
                event: string(v, "e")?,
                data: string(v, "d")?,
            };
            let notice = Notice::Message(msg, t.as_str());
            return Some((Wire::Notice { notice, sync }, String::new()));
        }
        "s" => {
            let cursor = string(v, "l")?;
            let a = Action::State {
                state: state(v)?,
                reason: reason(v)?,
                delay_ms: number(v, "w")?,
            };
            return Some((
                Wire::Notice {
                    notice: Notice::Action(a),
                    sync,
                },
                cursor,
            ));
        }
        "t" => {
            let p = get(v, "p");
            Action::TransportChanged {
                transport: transport(v, "t")?,
                previous: if p.is_undefined() {
                    None
                } else {
                    Some(transport(v, "p")?)
                },
                reason: reason(v)?,
            }
        }
        "e" => Action::Error {
            code: code(v)?,
            status: match number(v, "h")? {
                Some(h) => Some(u16::try_from(h).ok()?),
                None => None,
            },
            retry_in_ms: number(v, "w")?,
            fatal: get(v, "f").as_bool()?,
        },
        "r" => Action::Reset {
            reason: match string(v, "r")?.as_str() {
                "server" => ResetReason::Server,
                "unresumable" => ResetReason::Unresumable,
                _ => return None,
            },
        },
        _ => return None,
    };
    Some((
        Wire::Notice {
            notice: Notice::Action(action),
            sync,
        },
        String::new(),
    ))
}
