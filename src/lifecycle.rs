//! Page lifecycle facts: visibility, connectivity, freezing and the
//! back-forward cache, and network hints. This module only reports them (to a
//! callback: it knows no connection); the connection hands each to the
//! engine and to the cross-tab coordinator, which decide (pause, resume at
//! once, stretch intervals, steal, hand over).
//!
//! The listeners (`watchPage` in `src/boundary.js`: one crossing and one
//! wasm closure for all of them, the browser calls on the JS side; removed
//! when the [`Lifecycle`] guard drops):
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
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

pub use tidings_core::session::PageFact;

/// Where page facts go.
pub type Report = Rc<dyn Fn(PageFact)>;

/// The lifecycle listeners of one connection (or reporter).
#[must_use = "a guard: dropping it undoes what it holds at once"]
pub struct Lifecycle {
    /// `watchPage`'s handle: its `abort()` removes the listeners (typed as
    /// an `AbortController` to share that import; it is a plain object).
    listeners: web_sys::AbortController,
    /// Called by the listeners; dropped after them.
    _report: Closure<dyn FnMut(web_sys::Event)>,
}

impl Drop for Lifecycle {
    fn drop(&mut self) {
        self.listeners.abort();
    }
}

#[wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// Add the lifecycle listeners calling `report` with a fact's code, then
    /// report the page as it is now; returns what removes them.
    #[wasm_bindgen(js_name = watchPage)]
    fn watch_page(report: &JsValue) -> web_sys::AbortController;

    /// `navigator.onLine`, `undefined` when it cannot be read (a `JsValue`:
    /// an import with nothing to convert would take the whole snippet
    /// module into the bundle).
    #[wasm_bindgen(js_name = onLine)]
    fn on_line() -> JsValue;
}

/// `navigator.onLine` now (`true` when unknown).
pub fn is_online() -> bool {
    on_line().as_bool().unwrap_or(true)
}

impl Lifecycle {
    /// Report the page's current state (hidden, offline: each only when so,
    /// and the network hint where the browser has one), then every change.
    /// Outside a window (a worker) only the network hint and
    /// `online`/`offline` on the global scope are watched.
    pub fn watch(report: Report) -> Lifecycle {
        // The listener closure's type (`guard::Listener`'s): one copy of its
        // glue. The event is the fact's code, or `navigator.connection`
        // (`watchPage`).
        let on: Box<dyn FnMut(web_sys::Event)> = Box::new(move |code| {
            let Some(code) = code.unchecked_ref::<JsValue>().as_f64() else {
                return report(PageFact::Network(network_hint(&code)));
            };
            let code = code as u32;
            let on = code & 1 == 1;
            report(match code >> 1 {
                0 => PageFact::Hidden(on),
                1 => PageFact::Frozen(on),
                2 => PageFact::Online(on),
                3 => PageFact::PageShow { persisted: on },
                _ => PageFact::PageHide,
            })
        });
        let report = Closure::wrap(on);
        Lifecycle {
            listeners: watch_page(report.as_ref()),
            _report: report,
        }
    }
}

/// `o[key]`; `undefined` when `o` is not an object or the getter throws.
fn field(o: &JsValue, key: &str) -> JsValue {
    if !o.is_object() {
        return JsValue::UNDEFINED;
    }
    js_sys::Reflect::get(o, &JsValue::from_str(key)).unwrap_or_default()
}

/// `navigator.connection` (`c`) as an engine hint: `rtt` (ms), `saveData`,
/// `effectiveType`.
fn network_hint(c: &JsValue) -> NetworkHint {
    NetworkHint {
        rtt_ms: field(c, "rtt")
            .as_f64()
            .filter(|r| r.is_finite() && *r >= 0.0)
            .map(|r| r as u64),
        save_data: field(c, "saveData").as_bool().unwrap_or(false),
        effective_type: field(c, "effectiveType")
            .as_string()
            .and_then(|t| EffectiveType::from_name(&t)),
    }
}
