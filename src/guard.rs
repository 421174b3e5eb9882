//! Guards that own a JS side effect and undo it on drop. No `Closure::forget`:
//! every listener and timer tidings creates is removed when its guard goes.

use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;
use web_sys::EventTarget;

/// What a guarded JS function reports to: the listener's closure type, so
/// its glue is in the bundle once.
#[cfg(feature = "send")]
pub type Report = Box<dyn FnMut(web_sys::Event)>;

/// A JS task that reports to one wasm closure (an upstream attempt, a
/// reporter's task calls): the JS function that started it returned a
/// handle whose `abort()` stops it and silences the reports, called on drop
/// before the closure goes.
#[cfg(feature = "send")]
#[must_use = "a guard: dropping it undoes what it holds at once"]
pub struct JsTask {
    /// The JS function's handle (typed as an `AbortController` to share
    /// that import; a plain object, or the request's own controller).
    handle: web_sys::AbortController,
    /// Where it reports; dropped after the abort.
    _report: Closure<dyn FnMut(web_sys::Event)>,
}

#[cfg(feature = "send")]
impl JsTask {
    /// Wrap `report` and hand it to `start` (the JS function that starts
    /// the task and returns its handle). Errors: what `start` threw.
    pub fn start(
        report: Report,
        start: impl FnOnce(&JsValue) -> Result<web_sys::AbortController, JsValue>,
    ) -> Result<JsTask, JsValue> {
        let report = Closure::wrap(report);
        let handle = start(report.as_ref())?;
        Ok(JsTask {
            handle,
            _report: report,
        })
    }

    /// The JS function's handle, for a call of its own.
    #[cfg(feature = "report")]
    pub fn handle(&self) -> &JsValue {
        &self.handle
    }
}

#[cfg(feature = "send")]
impl Drop for JsTask {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

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
    /// `setTimeout(f, ms)`, or `queueMicrotask` for a negative `ms`; the
    /// handle's `abort()` clears it (`boundary.js`).
    fn after(ms: i32, f: &JsValue) -> web_sys::AbortController;
}

impl Timer {
    /// Call `f` once after `delay_ms` milliseconds.
    pub fn new(delay_ms: u64, f: impl FnOnce() + 'static) -> Self {
        Timer::at(tidings_core::time::clamp_timer_ms(delay_ms) as i32, f)
    }

    /// Call `f` once on a microtask (`queueMicrotask`): after the running
    /// call returns, before the browser's next task, as a resolved promise
    /// would; no `wasm_bindgen_futures` task queue for it.
    pub fn soon(f: impl FnOnce() + 'static) -> Self {
        Timer::at(-1, f)
    }

    /// `after(ms, f)`: a negative `ms` is a microtask.
    fn at(ms: i32, f: impl FnOnce() + 'static) -> Self {
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
