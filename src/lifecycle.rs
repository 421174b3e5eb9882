//! Page lifecycle facts for the engine: visibility, connectivity, freezing
//! and the back-forward cache, and network hints. The adapter only reports
//! them; what to do (pause, resume at once, stretch intervals) is the
//! engine's decision (`Engine::handle_visibility` and friends).
//!
//! Listeners (each owned by a [`Listener`] guard, removed on drop):
//! - `document` `visibilitychange` → hidden / visible (HTML §6.2 page visibility);
//! - `window` `offline` / `online` (HTML §8.10 `navigator.onLine`);
//! - `document` `freeze` / `resume` (Page Lifecycle API);
//! - `window` `pagehide` / `pageshow`: leaving the page for the back-forward
//!   cache is treated as frozen, and `pageshow` with `persisted` as resumed.
//!   Only these two are used (never `unload`/`beforeunload`), so the page
//!   stays eligible for the back-forward cache;
//! - `navigator.connection` `change` (Network Information API, where present).

use std::rc::{Rc, Weak};

use tidings_core::engine::{EffectiveType, NetworkHint};
use wasm_bindgen::{JsCast, JsValue};

use crate::connection::{feed, Connection};
use crate::guard::Listener;

/// The lifecycle listeners of one connection.
pub struct Lifecycle {
    _listeners: Vec<Listener>,
}

impl Lifecycle {
    /// Report the current state to the engine (hidden, offline, network
    /// hint) and listen for changes. Outside a window (a worker) only the
    /// network hint and `online`/`offline` on the global scope are watched.
    pub fn watch(conn: &Rc<Connection>) -> Lifecycle {
        let mut listeners = Vec::new();
        let window = web_sys::window();
        let document = window.as_ref().and_then(|w| w.document());

        if let Some(doc) = &document {
            if doc.hidden() {
                feed(conn, |e, now| e.handle_visibility(now, true));
            }
            let d = doc.clone();
            listeners.push(on(conn, doc.as_ref(), "visibilitychange", move |e, now| {
                e.handle_visibility(now, d.hidden())
            }));
            listeners.push(on(conn, doc.as_ref(), "freeze", |e, now| {
                e.handle_frozen(now, true)
            }));
            listeners.push(on(conn, doc.as_ref(), "resume", |e, now| {
                e.handle_frozen(now, false)
            }));
        }
        let global: web_sys::EventTarget = js_sys::global().unchecked_into();
        if !navigator_get(&["onLine"]).as_bool().unwrap_or(true) {
            feed(conn, |e, now| e.handle_online(now, false));
        }
        listeners.push(on(conn, &global, "offline", |e, now| {
            e.handle_online(now, false)
        }));
        listeners.push(on(conn, &global, "online", |e, now| {
            e.handle_online(now, true)
        }));
        if window.is_some() {
            listeners.push(on(conn, &global, "pagehide", |e, now| {
                e.handle_frozen(now, true)
            }));
            listeners.push(on_event(conn, &global, "pageshow", |e, now, ev| {
                // A first load also fires pageshow (persisted = false): only a
                // page restored from the back-forward cache was frozen.
                let persisted = js_sys::Reflect::get(ev, &"persisted".into())
                    .ok()
                    .and_then(|p| p.as_bool())
                    .unwrap_or(false);
                if persisted {
                    e.handle_frozen(now, false)
                }
            }));
        }
        let connection = navigator_get(&["connection"]);
        if connection.is_object() {
            feed(conn, |e, now| e.handle_network_hint(now, network_hint()));
            let target: web_sys::EventTarget = connection.unchecked_into();
            listeners.push(on(conn, &target, "change", |e, now| {
                e.handle_network_hint(now, network_hint())
            }));
        }
        Lifecycle {
            _listeners: listeners,
        }
    }
}

/// A listener that feeds one fact to the connection's engine.
fn on(
    conn: &Rc<Connection>,
    target: &web_sys::EventTarget,
    kind: &str,
    fact: impl Fn(&mut tidings_core::engine::Engine, tidings_core::time::Now) + 'static,
) -> Listener {
    let weak: Weak<Connection> = Rc::downgrade(conn);
    Listener::new(target, kind, move |_| {
        if let Some(conn) = weak.upgrade() {
            feed(&conn, |e, now| fact(e, now));
        }
    })
}

/// Like [`on`], with the event at hand.
fn on_event(
    conn: &Rc<Connection>,
    target: &web_sys::EventTarget,
    kind: &str,
    fact: impl Fn(&mut tidings_core::engine::Engine, tidings_core::time::Now, &JsValue) + 'static,
) -> Listener {
    let weak: Weak<Connection> = Rc::downgrade(conn);
    Listener::new(target, kind, move |ev| {
        if let Some(conn) = weak.upgrade() {
            feed(&conn, |e, now| fact(e, now, ev.as_ref()));
        }
    })
}

/// `navigator.a.b…`, `undefined` when any step is missing.
fn navigator_get(path: &[&str]) -> JsValue {
    let mut v = js_sys::Reflect::get(&js_sys::global(), &"navigator".into()).unwrap_or_default();
    for key in path {
        if !v.is_object() {
            return JsValue::UNDEFINED;
        }
        v = js_sys::Reflect::get(&v, &JsValue::from_str(key)).unwrap_or_default();
    }
    v
}

/// `navigator.connection` as an engine hint: `rtt` (ms), `saveData`,
/// `effectiveType`.
fn network_hint() -> NetworkHint {
    NetworkHint {
        rtt_ms: navigator_get(&["connection", "rtt"])
            .as_f64()
            .filter(|r| r.is_finite() && *r >= 0.0)
            .map(|r| r as u64),
        save_data: navigator_get(&["connection", "saveData"])
            .as_bool()
            .unwrap_or(false),
        effective_type: navigator_get(&["connection", "effectiveType"])
            .as_string()
            .and_then(|t| EffectiveType::from_name(&t)),
    }
}
