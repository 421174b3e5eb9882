//! `Subscription`: what `subscribe()` returns. A thin reader of a shared
//! [`Connection`]: it owns the app's listeners and renders the connection's
//! notices as JS events. `close()` (or drop) unhooks it; the connection closes
//! when its last subscription does.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use tidings_core::engine::{Action, State};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

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
    listeners: RefCell<Vec<Rc<Entry>>>,
    parse: Parse,
    abort_listener: RefCell<Option<Listener>>,
}

/// One `addEventListener` registration, as `EventTarget` keeps them.
struct Entry {
    kind: String,
    /// A function, or an object whose `handleEvent` is looked up at each call.
    callback: JsValue,
    once: bool,
    /// Set by `removeEventListener` (and before a `once` listener runs), so a
    /// dispatch already under way skips it.
    removed: Cell<bool>,
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
                    dispatch(&inner, "open", &events::open(inner.conn.transport_name()));
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
    /// Call `listener(event)` for every event of type `kind`, as
    /// `EventTarget` does: `listener` is a function or an object with a
    /// `handleEvent` method; `null`/`undefined` are ignored; adding the same
    /// listener twice for one type registers it once; `options` is a boolean
    /// (capture, meaningless here) or `{ once }`. Throws a `TypeError` for a
    /// listener that is neither a function nor an object.
    ///
    /// `type` is converted with `String(type)` as on `EventTarget`.
    #[wasm_bindgen(js_name = addEventListener)]
    pub fn add_event_listener_js(
        &self,
        kind: JsValue,
        listener: JsValue,
        options: JsValue,
    ) -> Result<(), JsValue> {
        self.add_event_listener(&crate::js::to_string(&kind)?, listener, options)
    }

    /// Remove a listener added with `addEventListener`; a dispatch under way
    /// does not call it any more. `type` is converted with `String(type)`.
    #[wasm_bindgen(js_name = removeEventListener)]
    pub fn remove_event_listener_js(
        &self,
        kind: JsValue,
        listener: JsValue,
    ) -> Result<(), JsValue> {
        self.remove_event_listener(&crate::js::to_string(&kind)?, listener);
        Ok(())
    }
}

impl Subscription {
    /// [`Subscription::add_event_listener_js`] for Rust callers.
    pub fn add_event_listener(
        &self,
        kind: &str,
        listener: JsValue,
        options: JsValue,
    ) -> Result<(), JsValue> {
        if listener.is_undefined() || listener.is_null() {
            return Ok(());
        }
        if !listener.is_function() && !listener.is_object() {
            return Err(js_sys::TypeError::new("listener must be a function or an object").into());
        }
        let once = options.is_object()
            && js_sys::Reflect::get(&options, &JsValue::from_str("once"))?.is_truthy();
        let mut ls = self.inner.listeners.borrow_mut();
        if !ls.iter().any(|e| e.kind == kind && e.callback == listener) {
            ls.push(Rc::new(Entry {
                kind: kind.into(),
                callback: listener,
                once,
                removed: Cell::new(false),
            }));
        }
        Ok(())
    }

    /// [`Subscription::remove_event_listener_js`] for Rust callers.
    pub fn remove_event_listener(&self, kind: &str, listener: JsValue) {
        remove(&self.inner, &|e| e.kind == kind && e.callback == listener);
    }
}

#[wasm_bindgen]
impl Subscription {
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

    /// The transport in use or about to be tried (`"eventsource"`,
    /// `"fetch-sse"`, `"long-poll"`, `"poll"`): the one the engine chose
    /// last. `""` until it chose one, which is a microtask after `subscribe`,
    /// and for good when it stopped before choosing (no usable transport).
    #[wasm_bindgen(getter)]
    pub fn transport(&self) -> String {
        // The engine's (the leader's with `crossTab`): the one source.
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
    remove(inner, &|_| true);
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
            Err(e) => {
                inner.conn.debug_log("error", &e);
                dispatch(inner, "error", &e)
            }
        },
        Notice::HeadersFailed { cause, retry_in_ms } => {
            dispatch(inner, "error", &events::headers_error(cause, *retry_in_ms));
        }
        Notice::Action(action) => {
            if let Action::State {
                state: State::Open, ..
            } = action
            {
                dispatch(inner, "open", &events::open(inner.conn.transport_name()));
            }
            if let Some((kind, e)) = events::from_action(action) {
                dispatch(inner, kind, &e);
            }
        }
    }
}

/// Mark every listener `matches` selects removed and drop it (`dyn`: one
/// copy of the code for its three callers).
fn remove(inner: &Inner, matches: &dyn Fn(&Entry) -> bool) {
    inner.listeners.borrow_mut().retain(|e| {
        let hit = matches(e);
        if hit {
            e.removed.set(true);
        }
        !hit
    });
}

/// Call every listener for `kind` with `event`, as `EventTarget` dispatches:
/// the listeners registered when it starts, minus those removed meanwhile;
/// a `once` listener is removed before it runs; a listener that throws is
/// reported (`reportError`) and the others still run. The list is copied out
/// first so no borrow is held while user code runs (it may add, remove,
/// `close()` or read `stats()`).
fn dispatch(inner: &Inner, kind: &str, event: &JsValue) {
    let targets: Vec<Rc<Entry>> = inner
        .listeners
        .borrow()
        .iter()
        .filter(|e| e.kind == kind)
        .cloned()
        .collect();
    for entry in targets {
        if inner.handle.get().is_none() {
            return;
        }
        if entry.removed.get() {
            continue;
        }
        if entry.once {
            remove(inner, &|e| std::ptr::eq(e, &*entry));
        }
        if let Err(thrown) = call(&entry.callback, event) {
            report_error(&thrown);
        }
    }
}

/// `callback(event)`, or `callback.handleEvent(event)` with `this` the object.
fn call(callback: &JsValue, event: &JsValue) -> Result<JsValue, JsValue> {
    if let Some(f) = callback.dyn_ref::<js_sys::Function>() {
        return f.call1(&JsValue::NULL, event);
    }
    let handle = js_sys::Reflect::get(callback, &JsValue::from_str("handleEvent"))?;
    match handle.dyn_ref::<js_sys::Function>() {
        Some(f) => f.call1(callback, event),
        None => Err(js_sys::TypeError::new("listener.handleEvent is not a function").into()),
    }
}

/// What `EventTarget` does with a listener's exception: `reportError`
/// (the page's `error` event, and the console), else `console.error`.
fn report_error(thrown: &JsValue) {
    let global: JsValue = js_sys::global().into();
    let report = js_sys::Reflect::get(&global, &JsValue::from_str("reportError"))
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    let reported = report.is_some_and(|f| f.call1(&global, thrown).is_ok());
    if !reported {
        web_sys::console::error_1(thrown);
    }
}
