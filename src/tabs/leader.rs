//! The Web Locks election: `navigator.locks.request(name, options, callback)`.
//! The tab whose callback runs holds the lock until the promise the callback
//! returned resolves, or until the tab goes away (the browser releases a
//! closed tab's locks, which is what makes the hand-over work after a crash).
//! `{ steal: true }` takes the lock from its holder at once; the holder's
//! `request()` promise then rejects with an `AbortError`, which is how it
//! learns it is no longer the leader.
//!
//! A [`Lock`] owns everything: dropping it releases a held lock (resolves the
//! callback's promise) and withdraws a queued request (its `AbortSignal`).

use std::cell::Cell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen]
extern "C" {
    /// `navigator.locks` (web-sys has it only behind `web_sys_unstable_apis`).
    type LockManager;
    #[wasm_bindgen(method, catch)]
    fn request(
        this: &LockManager,
        name: &str,
        options: &JsValue,
        callback: &js_sys::Function,
    ) -> Result<js_sys::Promise, JsValue>;
}

/// What happens to a lock request.
#[derive(Clone, Copy)]
pub enum LockEvent {
    /// This tab holds the lock.
    Granted,
    /// Another tab took it with `{ steal: true }`.
    Stolen,
    /// The request failed before it was ever granted (e.g. a `SecurityError`).
    Failed,
}

/// A lock request, queued or granted. Dropping it releases or withdraws it.
#[must_use = "a guard: dropping it undoes what it holds at once"]
pub struct Lock {
    _callback: Closure<dyn FnMut(JsValue) -> JsValue>,
    alive: Rc<Cell<bool>>,
    release: Option<js_sys::Function>,
    abort: Option<web_sys::AbortController>,
}

/// `navigator.locks`, when this browser has Web Locks.
pub fn manager() -> Option<JsValue> {
    let nav = js_sys::Reflect::get(&js_sys::global(), &"navigator".into()).ok()?;
    let locks = js_sys::Reflect::get(&nav, &"locks".into()).ok()?;
    locks.is_object().then_some(locks)
}

impl Lock {
    /// Ask for the exclusive lock `name` (`steal`: take it from its holder at
    /// once). `on` hears what happens to the request, always on a later
    /// microtask (never inside the browser's callback), and never after the
    /// `Lock` is dropped. `None` without Web Locks, or when `request` throws.
    pub fn request(name: &str, steal: bool, on: impl Fn(LockEvent) + 'static) -> Option<Lock> {
        let locks: LockManager = manager()?.unchecked_into();
        let options = js_sys::Object::new();
        // A stealing request is granted at once, and the spec forbids a
        // `signal` with `steal`; a queued one can be withdrawn.
        let abort = if steal {
            crate::js::set(&options, "steal", &JsValue::TRUE);
            None
        } else {
            let c = web_sys::AbortController::new().ok()?;
            crate::js::set(&options, "signal", &c.signal());
            Some(c)
        };
        let mut release = None;
        let held = js_sys::Promise::new(&mut |resolve, _| release = Some(resolve));
        // `alive` turns false when the `Lock` is dropped, so a callback or a
        // rejection arriving afterwards does nothing.
        let alive = Rc::new(Cell::new(true));
        let holding = Rc::new(Cell::new(false));
        let on = Rc::new(on);
        let (a, h, g) = (alive.clone(), holding.clone(), on.clone());
        let callback = Closure::<dyn FnMut(JsValue) -> JsValue>::new(move |_lock| {
            if a.get() {
                h.set(true);
                let (a, g) = (a.clone(), g.clone());
                crate::js::spawn(Box::pin(async move {
                    if a.get() {
                        g(LockEvent::Granted);
                    }
                }));
            }
            held.clone().into()
        });
        let promise = locks
            .request(name, &options, callback.as_ref().unchecked_ref())
            .ok()?;
        let a = alive.clone();
        crate::js::spawn(Box::pin(async move {
            // Rejected: withdrawn (our own abort: `alive` is false by then),
            // stolen, or failed.
            let rejected = wasm_bindgen_futures::JsFuture::from(promise).await.is_err();
            if rejected && a.get() {
                on(if holding.get() {
                    LockEvent::Stolen
                } else {
                    LockEvent::Failed
                });
            }
        }));
        Some(Lock {
            _callback: callback,
            alive,
            release,
            abort,
        })
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        self.alive.set(false);
        if let Some(resolve) = self.release.take() {
            let _ = resolve.call0(&JsValue::UNDEFINED);
        }
        if let Some(c) = self.abort.take() {
            c.abort();
        }
    }
}
