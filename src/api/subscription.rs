//! `Subscription`: what `subscribe()` returns. Owns its transport and the
//! app's listeners; `close()` (or drop) releases every JS resource it holds.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use tidings_core::rng::Rng;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::options::{Options, Parse};
use crate::guard::Timer;
use crate::message::Message;
use crate::transport::eventsource::{Fact, NativeEventSource};
use crate::transport::with_query;

/// A live subscription. Listen with `addEventListener("message", fn)`.
#[wasm_bindgen]
pub struct Subscription {
    inner: Rc<Inner>,
}

struct Inner {
    url: String,
    options: Options,
    state: RefCell<State>,
    listeners: RefCell<Vec<(String, js_sys::Function)>>,
}

struct State {
    cursor: String,
    closed: bool,
    attempts: u32,
    rng: Rng,
    source: Option<NativeEventSource>,
    retry: Option<Timer>,
}

impl Subscription {
    pub(super) fn start(url: &str, options: Options) -> Result<Subscription, JsValue> {
        let seed = match options.seed {
            Some(s) => s as u64,
            None => random_seed(),
        };
        let inner = Rc::new(Inner {
            url: url.into(),
            state: RefCell::new(State {
                cursor: options.last_event_id.clone(),
                closed: false,
                attempts: 0,
                rng: Rng::new(seed),
                source: None,
                retry: None,
            }),
            options,
            listeners: RefCell::new(Vec::new()),
        });
        connect(&inner)?;
        Ok(Subscription { inner })
    }
}

#[wasm_bindgen]
impl Subscription {
    /// Call `listener(event)` for every event of type `kind` (`"message"`, a
    /// named event from `options.events`, `"open"`, `"error"`). Adding the same
    /// function twice for one type registers it once, as on `EventTarget`.
    #[wasm_bindgen(js_name = addEventListener)]
    pub fn add_event_listener(&self, kind: &str, listener: js_sys::Function) {
        let mut ls = self.inner.listeners.borrow_mut();
        if !ls.iter().any(|(k, f)| k == kind && *f == listener) {
            ls.push((kind.into(), listener));
        }
    }

    /// Remove a listener added with `addEventListener`.
    #[wasm_bindgen(js_name = removeEventListener)]
    pub fn remove_event_listener(&self, kind: &str, listener: &js_sys::Function) {
        self.inner
            .listeners
            .borrow_mut()
            .retain(|(k, f)| !(k == kind && f == listener));
    }

    /// Close the subscription: the connection is closed, pending retries are
    /// cancelled and no listener is called again. Idempotent.
    pub fn close(&self) {
        let (source, retry) = {
            let mut s = self.inner.state.borrow_mut();
            s.closed = true;
            (s.source.take(), s.retry.take())
        };
        // Dropped outside the borrow: dropping closes the EventSource and
        // removes its listeners.
        drop((source, retry));
        self.inner.listeners.borrow_mut().clear();
    }

    /// The cursor: the last event id seen (or the initial `lastEventId`).
    #[wasm_bindgen(getter, js_name = lastEventId)]
    pub fn last_event_id(&self) -> String {
        self.inner.state.borrow().cursor.clone()
    }

    /// The transport in use (`"eventsource"`).
    #[wasm_bindgen(getter)]
    pub fn transport(&self) -> String {
        "eventsource".into()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.close();
    }
}

/// Open the native EventSource with the cursor in the query.
fn connect(inner: &Rc<Inner>) -> Result<(), JsValue> {
    let url = {
        let s = inner.state.borrow();
        if s.cursor.is_empty() {
            inner.url.clone()
        } else {
            with_query(&inner.url, inner.options.cursor_param(), &s.cursor)
        }
    };
    let weak = Rc::downgrade(inner);
    let on_fact: Rc<dyn Fn(Fact)> = Rc::new(move |fact| on_fact(&weak, fact));
    let source = NativeEventSource::open(
        &url,
        inner.options.with_credentials,
        &inner.options.events,
        on_fact,
    )
    .map_err(|_| super::error("invalid-url", "EventSource rejected the url"))?;
    inner.state.borrow_mut().source = Some(source);
    Ok(())
}

fn on_fact(weak: &Weak<Inner>, fact: Fact) {
    let Some(inner) = weak.upgrade() else { return };
    if inner.state.borrow().closed {
        return;
    }
    match fact {
        Fact::Open => {
            inner.state.borrow_mut().attempts = 0;
            let o = js_sys::Object::new();
            crate::message::set(&o, "type", &"open".into());
            crate::message::set(&o, "transport", &"eventsource".into());
            dispatch(&inner, "open", &o.into());
        }
        Fact::Event {
            event,
            data,
            last_event_id,
        } => {
            inner.state.borrow_mut().cursor = last_event_id.clone();
            let data = match inner.options.parse {
                Parse::Text => JsValue::from_str(&data),
                Parse::Json => match js_sys::JSON::parse(&data) {
                    Ok(v) => v,
                    Err(_) => {
                        dispatch(&inner, "error", &super::error("parse", "data is not JSON"));
                        return;
                    }
                },
            };
            let msg = Message {
                id: last_event_id.clone(),
                last_event_id,
                event,
                data,
                transport: "eventsource",
            };
            let kind = msg.event.clone();
            dispatch(&inner, &kind, &msg.to_js());
        }
        // Either readyState: the browser's own retry (CONNECTING) ignores
        // backoff, and CLOSED (an HTTP failure) never retries; we close and
        // decide ourselves in both cases.
        Fact::Error { closed } => {
            let delay_ms = schedule_reconnect(&inner);
            let code = if closed {
                "http-status"
            } else {
                "network-or-cors"
            };
            let e = super::error(code, "the EventSource failed");
            let o: &js_sys::Object = e.unchecked_ref();
            crate::message::set(o, "fatal", &JsValue::FALSE);
            crate::message::set(o, "retryInMs", &JsValue::from_f64(delay_ms as f64));
            dispatch(&inner, "error", &e);
        }
    }
}

/// Close the native source and reconnect after floor + full jitter, so the
/// browser's own fixed-interval retry never hammers a struggling server.
/// (The engine of `tidings-core` replaces this fixed policy.)
fn schedule_reconnect(inner: &Rc<Inner>) -> u64 {
    let delay_ms = {
        let mut s = inner.state.borrow_mut();
        s.attempts = s.attempts.saturating_add(1);
        let floor = inner.options.floor_ms.unwrap_or(1000.0).max(0.0) as u64;
        let base = inner.options.base_ms.unwrap_or(500.0).max(0.0) as u64;
        let cap = inner.options.max_ms.unwrap_or(60_000.0).max(0.0) as u64;
        let step = base.saturating_mul(1u64 << s.attempts.min(30)).min(cap);
        floor.saturating_add(s.rng.below(step.saturating_add(1)))
    };
    let old = inner.state.borrow_mut().source.take();
    drop(old);
    let weak = Rc::downgrade(inner);
    let timer = Timer::new(delay_ms, move || {
        if let Some(inner) = weak.upgrade() {
            if !inner.state.borrow().closed {
                let _ = connect(&inner);
            }
        }
    });
    inner.state.borrow_mut().retry = Some(timer);
    delay_ms
}

/// Call every listener for `kind` with `event`. Listeners are copied out first
/// so no borrow is held while user code runs (it may call `close()`).
fn dispatch(inner: &Inner, kind: &str, event: &JsValue) {
    let targets: Vec<js_sys::Function> = inner
        .listeners
        .borrow()
        .iter()
        .filter(|(k, _)| k == kind)
        .map(|(_, f)| f.clone())
        .collect();
    for f in targets {
        if inner.state.borrow().closed {
            return;
        }
        let _ = f.call1(&JsValue::NULL, event);
    }
}

/// 64 random bits from `crypto.getRandomValues` (via getrandom); a fixed
/// fallback only if the browser has no crypto (jitter then still spreads by seed of time).
fn random_seed() -> u64 {
    let mut b = [0u8; 8];
    if getrandom::fill(&mut b).is_err() {
        return js_sys::Date::now() as u64;
    }
    u64::from_le_bytes(b)
}
