//! Page lifecycle facts: visibility, connectivity, freezing and the
//! back-forward cache, and network hints. This module only reports them (to a
//! callback: it knows no connection); the connection hands each to the
//! engine and to the cross-tab coordinator, which decide (pause, resume at
//! once, stretch intervals, steal, hand over).
//!
//! Listeners (each owned by a [`Listener`] guard, removed on drop):
//! - `document` `visibilitychange` → hidden / visible (HTML §6.2 page visibility);
//! - `window` `offline` / `online` (HTML §8.10 `navigator.onLine`);
//! - `document` `freeze` / `resume` (Page Lifecycle API);
//! - `window` `pagehide` / `pageshow`: the engine treats leaving the page for
//!   the back-forward cache as frozen, and `pageshow` with `persisted` as
//!   resumed; the cross-tab coordinator hands over and rejoins.
//!   Only these two are used (never `unload`/`beforeunload`), so the page
//!   stays eligible for the back-forward cache;
//! - `navigator.connection` `change` (Network Information API, where present).

use std::rc::Rc;

use tidings_core::engine::{EffectiveType, NetworkHint};
use wasm_bindgen::{JsCast, JsValue};

use crate::guard::Listener;

pub use tidings_core::session::PageFact;

/// Where page facts go.
pub type Report = Rc<dyn Fn(PageFact)>;

/// The lifecycle listeners of one connection.
#[must_use = "a guard: dropping it undoes what it holds at once"]
pub struct Lifecycle {
    _listeners: Vec<Listener>,
}

/// Report the page's current state: hidden, offline (each only when so),
/// and the network hint where the browser has one.
pub fn current(report: &dyn Fn(PageFact)) {
    if page_hidden() {
        report(PageFact::Hidden(true));
    }
    if !is_online() {
        report(PageFact::Online(false));
    }
    if navigator_get(&["connection"]).is_object() {
        report(PageFact::Network(network_hint()));
    }
}

/// `navigator.onLine` now (`true` when unknown).
pub fn is_online() -> bool {
    navigator_get(&["onLine"]).as_bool().unwrap_or(true)
}

/// `document.hidden` (`false` outside a window).
fn page_hidden() -> bool {
    web_sys::window()
        .and_then(|w| w.document())
        .is_some_and(|d| d.hidden())
}

impl Lifecycle {
    /// Listen for changes. Outside a window (a worker) only the network hint
    /// and `online`/`offline` on the global scope are watched.
    pub fn watch(report: Report) -> Lifecycle {
        let mut listeners = Vec::new();
        let window = web_sys::window();
        let on =
            |target: &web_sys::EventTarget, kind: &str, fact: fn(&web_sys::Event) -> PageFact| {
                let r = report.clone();
                Listener::new(target, kind, move |e| r(fact(&e)))
            };
        if let Some(doc) = window.as_ref().and_then(|w| w.document()) {
            listeners.push(on(doc.as_ref(), "visibilitychange", |_| {
                PageFact::Hidden(page_hidden())
            }));
            listeners.push(on(doc.as_ref(), "freeze", |_| PageFact::Frozen(true)));
            listeners.push(on(doc.as_ref(), "resume", |_| PageFact::Frozen(false)));
        }
        let global: web_sys::EventTarget = js_sys::global().unchecked_into();
        listeners.push(on(&global, "offline", |_| PageFact::Online(false)));
        listeners.push(on(&global, "online", |_| PageFact::Online(true)));
        if window.is_some() {
            listeners.push(on(&global, "pagehide", |_| PageFact::PageHide));
            listeners.push(on(&global, "pageshow", |e| PageFact::PageShow {
                persisted: js_sys::Reflect::get(e, &"persisted".into())
                    .ok()
                    .and_then(|p| p.as_bool())
                    .unwrap_or(false),
            }));
        }
        let connection = navigator_get(&["connection"]);
        if connection.is_object() {
            let target: web_sys::EventTarget = connection.unchecked_into();
            listeners.push(on(&target, "change", |_| PageFact::Network(network_hint())));
        }
        Lifecycle {
            _listeners: listeners,
        }
    }
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
