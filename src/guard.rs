//! Guards that own a JS side effect and undo it on drop. No `Closure::forget`:
//! every listener and timer tidings creates is removed when its guard goes.

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::EventTarget;

/// An event listener registered on `target` for `kind`; removed on drop.
#[must_use = "a guard: dropping it undoes what it holds at once"]
pub struct Listener {
    target: EventTarget,
    kind: String,
    closure: Closure<dyn FnMut(web_sys::Event)>,
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
        // A failure here means the target is not an EventTarget at all; the
        // listener then simply never fires, which the engine's watchdog notices.
        let _ = target.add_event_listener_with_callback(kind, closure.as_ref().unchecked_ref());
        Listener {
            target: target.clone(),
            kind: kind.into(),
            closure,
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self
            .target
            .remove_event_listener_with_callback(&self.kind, self.closure.as_ref().unchecked_ref());
    }
}

/// A one-shot timer (`setTimeout`); cancelled on drop. Waits are clamped to
/// 2^31−1 ms, the largest delay `setTimeout` honours.
#[must_use = "a guard: dropping it undoes what it holds at once"]
pub struct Timer {
    _inner: gloo_timers::callback::Timeout,
}

impl Timer {
    /// Call `f` once after `delay_ms` milliseconds.
    pub fn new(delay_ms: u64, f: impl FnOnce() + 'static) -> Self {
        let ms = tidings_core::time::clamp_timer_ms(delay_ms) as u32;
        Timer {
            _inner: gloo_timers::callback::Timeout::new(ms, f),
        }
    }
}
