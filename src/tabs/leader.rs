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

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// One request of `navigator.locks` for `name`, reporting to `report`
    /// (see `boundary.js`); throws without Web Locks, or as `request` does.
    /// Its handle's `abort()` releases or withdraws it.
    #[wasm_bindgen(js_name = requestLock, catch)]
    fn request_lock(
        name: &str,
        steal: bool,
        report: &JsValue,
    ) -> Result<web_sys::AbortController, JsValue>;
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
    /// `requestLock`'s handle (typed as an `AbortController` to share that
    /// import; a plain object): its `abort()` releases a held lock,
    /// withdraws a queued request, and silences `report`.
    handle: web_sys::AbortController,
    /// Called by the request's callbacks; dropped after they are silenced.
    _report: Closure<dyn FnMut(web_sys::Event)>,
}

impl Lock {
    /// Ask for the exclusive lock `name` (`steal`: take it from its holder at
    /// once). `on` hears what happens to the request, always on a later
    /// microtask (never inside the browser's callback), and never after the
    /// `Lock` is dropped. `None` without Web Locks, or when `request` throws.
    pub fn request(name: &str, steal: bool, on: impl Fn(LockEvent) + 'static) -> Option<Lock> {
        // The listener closure's type (`guard::Listener`'s): one copy of its glue.
        let report: Box<dyn FnMut(web_sys::Event)> = Box::new(move |what| {
            on(match what.unchecked_ref::<JsValue>().as_f64() {
                Some(0.0) => LockEvent::Granted,
                Some(1.0) => LockEvent::Stolen,
                _ => LockEvent::Failed,
            })
        });
        let report = Closure::wrap(report);
        let handle = request_lock(name, steal, report.as_ref()).ok()?;
        Some(Lock {
            handle,
            _report: report,
        })
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        self.handle.abort();
    }
}
