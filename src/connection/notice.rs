//! What subscribers of a connection are told ([`Notice`]), rendered to JS
//! events and Rust events by the API layers.

use std::rc::Rc;

use tidings_core::engine;

use super::Connection;

/// One message for subscribers: what the engine delivered, the name of the
/// transport it came over, and the browser's own data value when it has one.
pub struct Delivery {
    /// The message.
    pub msg: engine::Message,
    /// The transport's name (`""`: unknown, a relayed message without one).
    pub transport: &'static str,
    /// A native `EventSource` event as the browser gave it: `openSource`'s
    /// report array, `[data, type, lastEventId]` (`boundary.js`). The app
    /// gets its data instead of `msg.data` crossing back out of wasm (the
    /// engine read a copy).
    pub data: Option<wasm_bindgen::JsValue>,
}

/// What subscribers are told, in order (rendered to JS events by the API layer).
pub enum Notice {
    /// Messages (`message` or named events), in order: consecutive
    /// deliveries are told as one batch, so the API layer crosses to JS once
    /// per batch rather than once per message.
    Messages(Vec<Delivery>),
    /// Any other engine action worth telling: `Open`-state, errors, state and
    /// transport changes, resets.
    Action(engine::Action),
    /// The engine's `headers` error (the app's `headers` failed), with what
    /// the app's function threw or the `TypeError` of an invalid header: a
    /// JS value the core cannot hold, so the driver keeps it until the
    /// session tells the error.
    HeadersFailed {
        /// What was thrown.
        cause: wasm_bindgen::JsValue,
        /// The engine's delay before the retry, ms.
        retry_in_ms: Option<u64>,
    },
    /// The calm status changed (`statuschange`).
    Status(tidings_core::calm::Change),
    /// The notices of one fact were told: the end of a delivered batch
    /// (`persist` writes then).
    BatchEnd,
}

/// A subscriber's callback for the connection's notices.
pub type NoticeFn = Rc<dyn Fn(&Notice)>;

impl Connection {
    /// Add a subscriber callback; returns its handle for [`Connection::unlisten`].
    pub fn listen(&self, f: NoticeFn) -> u32 {
        let id = self.next_listener.get();
        self.next_listener.set(id.wrapping_add(1));
        self.listeners.borrow_mut().push((id, f));
        id
    }

    /// Remove a subscriber; returns how many remain.
    pub fn unlisten(&self, id: u32) -> usize {
        let mut ls = self.listeners.borrow_mut();
        ls.retain(|(i, _)| *i != id);
        ls.len()
    }

    /// With `debug`: log `details` as `what` (an event the API layer made,
    /// such as a `parse` error).
    pub fn debug_log(&self, what: &str, details: &wasm_bindgen::JsValue) {
        #[cfg(feature = "debug")]
        if let Some(to) = &self.adapter.debug {
            super::debug::emit(to, what, details);
        }
        #[cfg(not(feature = "debug"))]
        let _ = (what, details);
    }
}
