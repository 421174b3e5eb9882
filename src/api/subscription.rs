//! `Subscription`: what `subscribe()` returns. A thin reader of a shared
//! [`Connection`]: it owns the app's listeners and renders the connection's
//! notices as JS events. `close()` (or drop) unhooks it; the connection closes
//! when its last subscription does.

use std::cell::RefCell;
use std::rc::Rc;

use tidings_core::calm::Subscriber;
use tidings_core::engine::State;
use wasm_bindgen::prelude::*;

use super::events;
use super::persist::{self, Persisted};
use crate::connection::{self, registry, Connection, Delivery, Notice};
use crate::event::{self, Event};
use crate::guard::{Listener, Timer};
use crate::options::{Options, Parse};
use crate::target::Listeners;

/// A live subscription. Listen with `addEventListener(type, fn)` for
/// `message`, each name in `options.events`, `open`, `error`, `statechange`,
/// `transportchange` and `reset`.
#[wasm_bindgen]
pub struct Subscription {
    inner: Rc<Inner>,
}

/// What the JS object keeps: a closed subscription lives on until its JS
/// object is collected (wasm-bindgen's `FinalizationRegistry`), so it keeps
/// only what its getters read, about 60 bytes: the open part is freed at
/// `close()` (334 bytes each before: 10,000 subscribe/close rounds grew the
/// wasm memory by 192 KB between collections, docs/bench.md).
struct Inner {
    /// The open part while subscribed; `None` once closed.
    open: RefCell<Option<Rc<Open>>>,
    /// What the getters read once closed.
    closed: RefCell<Closed>,
    listeners: Listeners,
}

/// A subscription while it is subscribed.
struct Open {
    conn: Rc<Connection>,
    /// The connection's share key.
    key: String,
    handle: u32,
    /// The types a listener was added for that this subscription never
    /// dispatches, warned about once each ([`warn_if_never`]).
    warned: RefCell<Vec<String>>,
    parse: Parse,
    abort_listener: RefCell<Option<Listener>>,
    /// The microtask that tells a subscription joining an open connection
    /// its `open`.
    opening: RefCell<Option<Timer>>,
    /// `persist`: the cursor kept across reloads.
    persist: Option<Persisted>,
    /// `ack`: delivery ACKs of the messages dispatched here.
    #[cfg_attr(not(feature = "send"), allow(dead_code))]
    ack: Ack,
}

/// `ack` (docs/upstream.md, "Delivery ACKs"), with the `send` feature that
/// posts the batches.
#[cfg(feature = "send")]
pub(crate) type Ack = Option<Rc<crate::upstream::ack::Acker>>;
/// Without the `send` feature `ack` is not read.
#[cfg(not(feature = "send"))]
pub(crate) type Ack = ();

/// A closed subscription's last view of its connection (`stats` as the JS
/// object `stats()` returns: 4 bytes here instead of 56).
#[derive(Default)]
struct Closed {
    last_event_id: String,
    transport: &'static str,
    stats: JsValue,
}

impl Inner {
    /// The open part, while subscribed (no borrow is held after this).
    fn open(&self) -> Option<Rc<Open>> {
        self.open.borrow().clone()
    }

    /// The connection, while subscribed.
    fn conn(&self) -> Option<Rc<Connection>> {
        self.open().map(|o| o.conn.clone())
    }

    fn is_open(&self) -> bool {
        self.open.borrow().is_some()
    }
}

impl Subscription {
    pub(super) fn start(url: &str, mut options: Options, ack: Ack) -> Subscription {
        let parse = options.parse;
        let signal = options.signal.clone();
        let persist = persist::open(url, &mut options);
        let (key, conn) = registry::connect(options);
        if let Some(p) = &persist {
            p.started(&conn);
        }
        let inner = Rc::new(Inner {
            open: RefCell::new(None),
            closed: RefCell::default(),
            listeners: Listeners::default(),
        });
        let weak = Rc::downgrade(&inner);
        let handle = conn.listen(Rc::new(move |n: &Notice| {
            if let Some(inner) = weak.upgrade() {
                on_notice(&inner, n);
            }
        }));
        let open = Rc::new(Open {
            conn,
            key,
            handle,
            warned: RefCell::new(Vec::new()),
            parse,
            abort_listener: RefCell::new(None),
            opening: RefCell::new(None),
            persist,
            ack,
        });
        *inner.open.borrow_mut() = Some(open.clone());
        // Joining a connection that is already open: this subscription still
        // gets its `open`, after its listeners are added (a microtask later).
        if open.conn.state() == State::Open {
            let weak = Rc::downgrade(&inner);
            let timer = Timer::soon(move || {
                if let Some(inner) = weak.upgrade() {
                    let transport = inner.conn().map_or("", |c| c.transport_name());
                    let (kind, e) = event::js::to_js(&Event::Open { transport }, None, "");
                    dispatch(&inner, kind, &e);
                }
            });
            *open.opening.borrow_mut() = Some(timer);
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
                *open.abort_listener.borrow_mut() = Some(l);
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
        let kind = self.inner.listeners.add_js(&kind, listener, &options)?;
        warn_if_never(&self.inner, &kind);
        Ok(())
    }

    /// Remove a listener added with `addEventListener`; a dispatch under way
    /// does not call it any more. `type` is converted with `String(type)`.
    #[wasm_bindgen(js_name = removeEventListener)]
    pub fn remove_event_listener_js(
        &self,
        kind: JsValue,
        listener: JsValue,
    ) -> Result<(), JsValue> {
        self.inner.listeners.remove_js(&kind, &listener)
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
        self.inner.listeners.add(kind, listener, &options)?;
        warn_if_never(&self.inner, kind);
        Ok(())
    }

    /// [`Subscription::remove_event_listener_js`] for Rust callers.
    pub fn remove_event_listener(&self, kind: &str, listener: JsValue) {
        self.inner.listeners.remove(kind, &listener);
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
    /// A JS string (no string return through the glue: smaller).
    #[wasm_bindgen(getter, js_name = lastEventId)]
    pub fn last_event_id_js(&self) -> JsValue {
        JsValue::from_str(&self.last_event_id())
    }

    /// The transport in use or about to be tried (`"eventsource"`,
    /// `"fetch-sse"`, `"long-poll"`, `"poll"`): the one the engine chose
    /// last. `""` until it chose one, which is a microtask after `subscribe`,
    /// and for good when it stopped before choosing (no usable transport).
    #[wasm_bindgen(getter, js_name = transport)]
    pub fn transport_js(&self) -> JsValue {
        crate::js::name(self.transport())
    }

    /// The calm status: `connecting`, `connected`, `reconnecting`,
    /// `offline` or `closed` (docs/reconnects.md, "Connection status"; `statuschange`).
    #[wasm_bindgen(getter)]
    pub fn status(&self) -> JsValue {
        let connection = self.inner.conn().map(|c| c.status());
        crate::js::name(Subscriber::new().status(connection).as_str())
    }

    /// "Try now" (docs/reconnects.md): what it does, and when it does
    /// nothing, is the engine's to decide (the rules: `tidings_core`
    /// `engine::reconnect`). Returns why, the engine's answer's name
    /// (`"now"`, `"breaker-probe"`, `"retry-after"`, …); a closed
    /// subscription: `"closed"`.
    pub fn reconnect(&self) -> JsValue {
        let answer = match self.inner.conn() {
            Some(c) => connection::reconnect(&c),
            None => tidings_core::engine::ReconnectAnswer::Closed,
        };
        crate::js::name(answer.as_str())
    }

    /// For the package's async iterator: `cursor` is that of the message the
    /// consumer handled (it pulled the next one); without it, an iterator
    /// started, and from now on only its pulls say what was handled.
    /// `cursor` is a string or `undefined` (a `JsValue`: no optional string
    /// through the glue).
    #[wasm_bindgen(js_name = _handled)]
    pub fn handled(&self, cursor: JsValue) {
        let Some(open) = self.inner.open() else {
            return;
        };
        if let Some(p) = &open.persist {
            match cursor.as_string() {
                Some(cursor) => p.pulled(&open.conn, &cursor),
                None => p.iterate(),
            }
        }
    }

    /// The state: `connecting`, `open`, `waiting`, `paused` or `closed`.
    #[wasm_bindgen(getter, js_name = state)]
    pub fn state_js(&self) -> JsValue {
        crate::js::name(self.state_name())
    }

    /// Counters: `{ requests, bytes, reconnects, notModified,
    /// duplicatesDropped, currentDelayMs, currentIntervalMs }`; once closed,
    /// the same object each call.
    pub fn stats(&self) -> JsValue {
        match self.inner.conn() {
            Some(c) => events::stats(&c.with_engine(|e| e.stats())),
            None => self.inner.closed.borrow().stats.clone(),
        }
    }
}

impl Subscription {
    /// [`Subscription::last_event_id_js`] for Rust callers.
    pub fn last_event_id(&self) -> String {
        match self.inner.conn() {
            Some(c) => c.last_event_id(),
            None => self.inner.closed.borrow().last_event_id.clone(),
        }
    }

    /// [`Subscription::transport_js`] for Rust callers.
    pub fn transport(&self) -> &'static str {
        // The engine's (the leader's with `crossTab`): the one source.
        match self.inner.conn() {
            Some(c) => c.transport_name(),
            None => self.inner.closed.borrow().transport,
        }
    }

    /// [`Subscription::state_js`] for Rust callers.
    pub fn state(&self) -> String {
        self.state_name().into()
    }

    fn state_name(&self) -> &'static str {
        let connection = self.inner.conn().map(|c| c.state());
        Subscriber::new().state(connection).as_str()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        close(&self.inner);
    }
}

/// Close: the open part goes (its connection left, closed when this was its
/// last subscription); what the getters read stays.
fn close(inner: &Inner) {
    let Some(open) = inner.open.take() else {
        return;
    };
    inner.listeners.clear();
    let listener = open.abort_listener.take();
    drop(listener);
    #[cfg(feature = "send")]
    if let Some(a) = &open.ack {
        crate::upstream::ack::close(a);
    }
    let conn = &open.conn;
    registry::leave(&open.key, conn, open.handle);
    *inner.closed.borrow_mut() = Closed {
        last_event_id: conn.last_event_id(),
        transport: conn.transport_name(),
        stats: events::stats(&conn.with_engine(|e| e.stats())),
    };
}

/// The app receives message `id` (it is being dispatched to its listeners):
/// report it to `ack`, with whether this tab holds the connection (a
/// `crossTab` follower does not acknowledge: the leader did).
#[cfg(feature = "send")]
fn received(open: &Open, id: &str) {
    if let Some(a) = &open.ack {
        crate::upstream::ack::received(a, id, !open.conn.follows());
    }
}

#[cfg(not(feature = "send"))]
fn received(_: &Open, _: &str) {}

/// Render one connection notice as JS events for this subscription's
/// listeners.
fn on_notice(inner: &Inner, notice: &Notice) {
    let Some(open) = inner.open() else { return };
    // `persist`: a listener that closes the subscription mid-batch never
    // hears its `BatchEnd`; what it handled before (and the message it
    // closed on) is written now, as the tab it was delivered in (a closed
    // connection follows no tab any more: a `crossTab` follower must not
    // write then either).
    let follows = open.persist.is_some() && open.conn.follows();
    render(inner, &open, notice);
    if let (Some(p), false) = (&open.persist, inner.is_open()) {
        p.flush_as(&open.conn, follows);
    }
}

/// [`on_notice`] for an open subscription.
fn render(inner: &Inner, open: &Open, notice: &Notice) {
    match notice {
        Notice::Messages(batch) => {
            for run in batch.chunk_by(|a, b| a.transport == b.transport) {
                deliver(inner, open, run);
            }
        }
        Notice::BatchEnd => {
            if let Some(p) = &open.persist {
                p.flush(&open.conn);
            }
        }
        _ => {
            let conn = &open.conn;
            let cause = match notice {
                Notice::HeadersFailed { cause, .. } => Some(cause),
                _ => None,
            };
            events::render(conn, notice, &mut |e| {
                if let Some(p) = &open.persist {
                    p.on_event(&e);
                }
                let (kind, e) = conn.with_engine(|g| event::js::to_js(&e, cause, &g.config().url));
                dispatch(inner, kind, &e);
            });
        }
    }
}

/// Dispatch a run of messages of one transport: their objects are built in
/// one crossing (`events::messages`), then each is dispatched in order; none
/// once a listener closed the subscription.
fn deliver(inner: &Inner, open: &Open, run: &[Delivery]) {
    let objects = events::messages(run, open.parse);
    for (i, d) in run.iter().enumerate() {
        if !inner.is_open() {
            return;
        }
        let o = objects.get(i as u32);
        if o.is_undefined() {
            let e = events::parse_error(&d.msg);
            open.conn.debug_log("error", &e);
            dispatch(inner, "error", &e);
        } else {
            // Told to `ack` before the listeners run: one that closes the
            // subscription ends `ack` (its pending ids are posted then), and
            // the message it closed on was dispatched too.
            received(open, &d.msg.id);
            dispatch(inner, &d.msg.event, &o);
            if let Some(p) = &open.persist {
                p.handled(&d.msg.last_event_id);
            }
        }
    }
}

/// A listener for a type this subscription never dispatches (neither
/// `message`, nor in `events`, nor one of its own: the core's
/// `Config::dispatches`) would wait in silence: one `console.warn` saying
/// how to fix it, and with `debug` a `warn` line (`{ event, message }`),
/// once per type.
fn warn_if_never(inner: &Inner, kind: &str) {
    let Some(open) = inner.open() else { return };
    let c = &open.conn;
    let mut warned = open.warned.borrow_mut();
    if c.with_engine(|e| e.config().dispatches(kind)) || warned.iter().any(|k| k == kind) {
        return;
    }
    warned.push(kind.into());
    // No borrow while the console runs: a page may wrap it.
    drop(warned);
    c.debug_log("warn", &never_dispatched(kind));
}

#[wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// `console.warn("[tidings]", message)` for a listener of `kind`, which
    /// is never dispatched; returns `{ event, message }` for the debug log.
    #[wasm_bindgen(js_name = neverDispatched)]
    fn never_dispatched(kind: &str) -> JsValue;
}

/// Dispatch `event` to this subscription's listeners for `kind` (none once
/// it is closed).
fn dispatch(inner: &Inner, kind: &str, event: &JsValue) {
    inner.listeners.dispatch(kind, event, &|| inner.is_open());
}
