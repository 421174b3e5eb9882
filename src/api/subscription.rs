//! `Subscription`: what `subscribe()` returns. A thin reader of a shared
//! [`Connection`]: it owns the app's listeners and renders the connection's
//! notices as JS events. `close()` (or drop) unhooks it; the connection closes
//! when its last subscription does.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use tidings_core::engine::{Action, State};
use wasm_bindgen::prelude::*;

use super::events;
use super::options::{Options, Parse};
use crate::connection::{self, registry, Connection, Notice};
use crate::guard::Listener;

/// A live subscription. Listen with `addEventListener(type, fn)` for
/// `message`, each name in `options.events`, `open`, `error`, `statechange`,
/// `transportchange` and `reset`.
#[wasm_bindgen]
pub struct Subscription {
    inner: Rc<Inner>,
}

struct Inner {
    conn: Rc<Connection>,
    key: String,
    handle: Cell<Option<u32>>,
    listeners: RefCell<Vec<(String, js_sys::Function)>>,
    parse: Parse,
    abort_listener: RefCell<Option<Listener>>,
}

impl Subscription {
    pub(super) fn start(url: &str, raw: &JsValue, options: Options) -> Subscription {
        let parse = options.parse;
        let signal = options.signal.clone();
        let (key, conn) = registry::connect(url, raw, options);
        let inner = Rc::new(Inner {
            conn,
            key,
            handle: Cell::new(None),
            listeners: RefCell::new(Vec::new()),
            parse,
            abort_listener: RefCell::new(None),
        });
        let weak = Rc::downgrade(&inner);
        let handle = inner.conn.listen(Rc::new(move |n: &Notice| {
            if let Some(inner) = weak.upgrade() {
                on_notice(&inner, n);
            }
        }));
        inner.handle.set(Some(handle));
        // Joining a connection that is already open: this subscription still
        // gets its `open`, after its listeners are added (a microtask later).
        if inner.conn.state() == State::Open {
            let weak = Rc::downgrade(&inner);
            wasm_bindgen_futures::spawn_local(async move {
                if let Some(inner) = weak.upgrade() {
                    let t = inner.conn.transport_name();
                    dispatch(&inner, "open", &events::open(t));
                }
            });
        }
        if let Some(signal) = signal {
            if signal.aborted() {
                close(&inner);
            } else {
                let weak = Rc::downgrade(&inner);
                let l = Listener::new(signal.as_ref(), "abort", move |_| {
                    if let Some(inner) = weak.upgrade() {
                        close(&inner);
                    }
                });
                *inner.abort_listener.borrow_mut() = Some(l);
            }
        }
        Subscription { inner }
    }
}

#[wasm_bindgen]
impl Subscription {
    /// Call `listener(event)` for every event of type `kind`. Adding the same
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

    /// Close the subscription: no listener is called again; the shared
    /// connection closes (request aborted, timers cancelled) when this was its
    /// last subscription. Idempotent.
    pub fn close(&self) {
        close(&self.inner);
    }

    /// The cursor: the last event id seen (or the initial `lastEventId`).
    #[wasm_bindgen(getter, js_name = lastEventId)]
    pub fn last_event_id(&self) -> String {
        self.inner.conn.last_event_id()
    }

    /// The transport in use (`"eventsource"`, `"fetch-sse"`, `"long-poll"`,
    /// `"poll"`), or `""` before the first attempt.
    #[wasm_bindgen(getter)]
    pub fn transport(&self) -> String {
        self.inner.conn.transport_name().into()
    }

    /// The state: `connecting`, `open`, `waiting`, `paused` or `closed`.
    #[wasm_bindgen(getter)]
    pub fn state(&self) -> String {
        if self.inner.handle.get().is_none() {
            return State::Closed.as_str().into();
        }
        self.inner.conn.state().as_str().into()
    }

    /// Counters: `{ requests, bytes, reconnects, notModified,
    /// duplicatesDropped, currentDelayMs, currentIntervalMs }`.
    pub fn stats(&self) -> JsValue {
        let s = self.inner.conn.with_engine(|e| e.stats());
        events::stats(&s)
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        close(&self.inner);
    }
}

fn close(inner: &Rc<Inner>) {
    let Some(handle) = inner.handle.take() else {
        return;
    };
    inner.listeners.borrow_mut().clear();
    let listener = inner.abort_listener.borrow_mut().take();
    drop(listener);
    if inner.conn.unlisten(handle) == 0 {
        registry::forget(&inner.key, &inner.conn);
        connection::close(&inner.conn);
    }
}

/// Render one connection notice as JS events for this subscription's listeners.
fn on_notice(inner: &Rc<Inner>, notice: &Notice) {
    if inner.handle.get().is_none() {
        return;
    }
    match notice {
        Notice::Message(msg, transport) => match events::message(msg, transport, inner.parse) {
            Ok(e) => dispatch(inner, &msg.event, &e),
            Err(e) => dispatch(inner, "error", &e),
        },
        Notice::Action(action) => {
            if let Action::State {
                state: State::Open, ..
            } = action
            {
                let t = inner.conn.transport_name();
                dispatch(inner, "open", &events::open(t));
            }
            if let Some((kind, e)) = events::from_action(action) {
                dispatch(inner, kind, &e);
            }
        }
    }
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
        if inner.handle.get().is_none() {
            return;
        }
        let _ = f.call1(&JsValue::NULL, event);
    }
}
