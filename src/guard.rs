//! Guards that own a JS side effect and undo it on drop. No `Closure::forget`:
//! every listener and timer tidings creates is removed when its guard goes.

use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;
use web_sys::EventTarget;

/// An event listener registered on `target` for `kind`; removed on drop.
#[must_use = "a guard: dropping it undoes what it holds at once"]
pub struct Listener {
    /// `listen`'s handle (typed as an `AbortController` to share that
    /// import; a plain object): its `abort()` removes the listener.
    handle: web_sys::AbortController,
    /// The listener; dropped after it is removed.
    _closure: Closure<dyn FnMut(web_sys::Event)>,
}

#[wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// Add `f` as a listener of `target` for `kind`; the handle's `abort()`
    /// removes it (`boundary.js`).
    fn listen(target: &EventTarget, kind: &str, f: &JsValue) -> web_sys::AbortController;
}

impl Listener {
    /// Register `f` on `target` for events of type `kind`.
    pub fn new(target: &EventTarget, kind: &str, f: impl FnMut(web_sys::Event) + 'static) -> Self {
        Listener::boxed(target, kind, Box::new(f))
    }

    /// [`Listener::new`] for a boxed `f`, out of line: each caller only
    /// boxes its closure, and the closure's export and the registration are
    /// in the bundle once instead of inlined at every caller.
    #[inline(never)]
    fn boxed(target: &EventTarget, kind: &str, f: Box<dyn FnMut(web_sys::Event)>) -> Self {
        let closure = Closure::wrap(f);
        Listener {
            handle: listen(target, kind, closure.as_ref()),
            _closure: closure,
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

/// A one-shot timer (`setTimeout`); cancelled on drop. Waits are clamped to
/// 2^31−1 ms, the largest delay `setTimeout` honours.
#[must_use = "a guard: dropping it undoes what it holds at once"]
pub struct Timer {
    /// `after`'s handle (typed as an `AbortController` to share that
    /// import; a plain object): its `abort()` clears the timeout.
    handle: web_sys::AbortController,
    /// Called once by the timeout; dropped after it is cleared.
    _closure: Closure<dyn FnMut(web_sys::Event)>,
}

#[wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// `setTimeout(f, ms)`; the handle's `abort()` clears it (`boundary.js`).
    fn after(ms: u32, f: &JsValue) -> web_sys::AbortController;
}

impl Timer {
    /// Call `f` once after `delay_ms` milliseconds.
    pub fn new(delay_ms: u64, f: impl FnOnce() + 'static) -> Self {
        let ms = tidings_core::time::clamp_timer_ms(delay_ms) as u32;
        let mut f = Some(f);
        // The listener closure's type (`Listener`'s): one copy of its glue.
        let fire: Box<dyn FnMut(web_sys::Event)> = Box::new(move |_| {
            if let Some(f) = f.take() {
                f()
            }
        });
        let closure = Closure::wrap(fire);
        Timer {
            handle: after(ms, closure.as_ref()),
            _closure: closure,
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        self.handle.abort();
    }
}
