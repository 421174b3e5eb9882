//! [`Listeners`]: the `addEventListener` / `removeEventListener` / dispatch
//! rules of `EventTarget` (DOM §2.7), shared by `Subscription` and `Reporter`
//! (one copy of the code in the bundle).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use wasm_bindgen::JsValue;

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

/// The app's listeners of one object.
#[derive(Default)]
pub(crate) struct Listeners {
    list: RefCell<Vec<Rc<Entry>>>,
}

impl Listeners {
    /// `addEventListener(kind, listener, options)`: `listener` is a function
    /// or an object with a `handleEvent` method; `null`/`undefined` are
    /// ignored; the same listener twice for one type registers it once;
    /// `options` is a boolean (capture, meaningless here) or `{ once }`.
    /// A `TypeError` for a listener that is neither a function nor an object.
    pub fn add(&self, kind: &str, listener: JsValue, options: &JsValue) -> Result<(), JsValue> {
        let Some(once) = listener_once(&listener, options)?.as_bool() else {
            return Ok(());
        };
        let mut ls = self.list.borrow_mut();
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

    /// [`Listeners::add`] from JS: `kind` converted with `String(kind)`
    /// first ([`crate::js::to_string`]); returns it. Out of line where a
    /// reporter has listeners too: one copy for both objects.
    #[cfg_attr(feature = "report", inline(never))]
    pub fn add_js(
        &self,
        kind: &JsValue,
        listener: JsValue,
        options: &JsValue,
    ) -> Result<String, JsValue> {
        let kind = crate::js::to_string(kind)?;
        self.add(&kind, listener, options)?;
        Ok(kind)
    }

    /// [`Listeners::remove`] from JS, `kind` converted as by
    /// [`Listeners::add_js`].
    #[cfg_attr(feature = "report", inline(never))]
    pub fn remove_js(&self, kind: &JsValue, listener: &JsValue) -> Result<(), JsValue> {
        self.remove(&crate::js::to_string(kind)?, listener);
        Ok(())
    }

    /// `removeEventListener(kind, listener)`: a dispatch under way does not
    /// call it any more.
    pub fn remove(&self, kind: &str, listener: &JsValue) {
        self.retain(&|e| e.kind == kind && e.callback == *listener);
    }

    /// Remove every listener (closed: none is called again).
    pub fn clear(&self) {
        self.retain(&|_| true);
        // Its memory too: a closed object may live on until collected.
        *self.list.borrow_mut() = Vec::new();
    }

    /// Mark every listener `matches` selects removed and drop it (`dyn`: one
    /// copy of the code for its callers).
    fn retain(&self, matches: &dyn Fn(&Entry) -> bool) {
        self.list.borrow_mut().retain(|e| {
            let hit = matches(e);
            if hit {
                e.removed.set(true);
            }
            !hit
        });
    }

    /// Call every listener for `kind` with `event`, as `EventTarget`
    /// dispatches: the listeners registered when it starts, minus those
    /// removed meanwhile; a `once` listener is removed before it runs; a
    /// listener that throws is reported (`reportError`) and the others still
    /// run; nothing more once `alive()` is false. The list is copied out
    /// first so no borrow is held while user code runs (it may add, remove,
    /// close or read `stats()`).
    pub fn dispatch(&self, kind: &str, event: &JsValue, alive: &dyn Fn() -> bool) {
        // A loop, not a collected `Vec`: no iterator of its own in the wasm.
        let mut targets: Vec<Rc<Entry>> = Vec::new();
        for e in self.list.borrow().iter() {
            if e.kind == kind {
                targets.push(e.clone());
            }
        }
        for entry in targets {
            if !alive() {
                return;
            }
            if entry.removed.get() {
                continue;
            }
            if entry.once {
                self.retain(&|e| std::ptr::eq(e, &*entry));
            }
            call(&entry.callback, event);
        }
    }
}

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// `listener` and `options` checked as [`Listeners::add`] says: whether
    /// it is `once`, `undefined` for a listener to ignore, a `TypeError`
    /// thrown for one that is neither a function nor an object, what a
    /// `once` getter throws (`listenerOnce` in `boundary.js`).
    #[wasm_bindgen(js_name = listenerOnce, catch)]
    fn listener_once(listener: &JsValue, options: &JsValue) -> Result<JsValue, JsValue>;

    /// `callback(event)`, or `callback.handleEvent(event)` with `this` the
    /// object; what it throws reported as by [`report_error`]
    /// (`callListener` in `boundary.js`: one crossing per call).
    #[wasm_bindgen(js_name = callListener)]
    fn call(callback: &JsValue, event: &JsValue);

    /// What `EventTarget` does with a listener's exception: `reportError`
    /// (the page's `error` event, and the console), else `console.error`
    /// (`reportThrown` in `boundary.js`).
    #[wasm_bindgen(js_name = reportThrown)]
    pub(crate) fn report_error(thrown: &JsValue);
}
