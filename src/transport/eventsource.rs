//! `eventsource`: the browser's native `EventSource`.
//!
//! It hides status, headers and comments, and reconnects by itself. We only
//! report what it tells us (open, each event, error with `readyState`) and close
//! it on error, so reconnects happen under tidings' backoff with the cursor in
//! the query (a new native instance cannot send `Last-Event-ID`).
//!
//! The server's `retry:` is therefore not honoured on this transport. No
//! browser API exposes it: `EventSource` has only `url`, `withCredentials` and
//! `readyState`, and a `retry:` line sets the instance's hidden reconnection
//! time without dispatching anything (WHATWG HTML §9.2.6). Letting the browser
//! reconnect on that clock instead would bypass `backoff.floorMs`, the cap,
//! the pause while hidden or offline, and crossTab (and `retry: 0` would
//! hammer), so reconnects wait tidings' backoff (docs/transports.md, the
//! transport table).
//!
//! The server's `event: open` / `event: error` are dispatched to the same
//! listeners as the browser's own `open` and `error`: the server's are a
//! `MessageEvent` and are reported as events (the engine drops them), the
//! browser's a plain `Event`.

use std::rc::Rc;

use wasm_bindgen::JsCast;
use web_sys::{EventSource, EventSourceInit, MessageEvent};

use crate::guard::Listener;

/// What a native EventSource reported.
pub enum Fact {
    /// `open` fired as a plain `Event` (a server `event: open` is a
    /// [`Fact::Event`]).
    Open,
    /// An event arrived: (type, data, lastEventId as the browser tracks it).
    Event {
        /// Event type (`message` or a named type).
        event: String,
        /// The data string (the engine's copy).
        data: String,
        /// The data as the browser gave it, handed to the app as is.
        raw: wasm_bindgen::JsValue,
        /// The browser's last event ID string after this event.
        last_event_id: String,
    },
    /// `error` fired as a plain `Event` (the browser's own failure; a server
    /// `event: error` is an [`Fact::Event`]). Whatever the `readyState`, the source is closed before
    /// this is reported (the browser must not reconnect on its own clock: a
    /// stream that ended is reopened under tidings' backoff) and the engine
    /// decides.
    Error {
        /// `readyState` was CLOSED: the browser failed the connection (an
        /// HTTP status other than 200, a wrong content type, CORS). CONNECTING
        /// means a network error or a stream that ended, which the browser
        /// would have retried by itself.
        failed: bool,
    },
}

/// An open native EventSource and its listeners; closed and unhooked on drop.
#[must_use = "a guard: dropping it undoes what it holds at once"]
pub struct NativeEventSource {
    source: EventSource,
    _listeners: Vec<Listener>,
}

impl NativeEventSource {
    /// Open `url` and listen for `open`, `error`, `message` and each of `events`.
    /// Errors: the constructor throws for a URL it cannot parse (`invalid-url`).
    pub fn open(
        url: &str,
        with_credentials: bool,
        events: &[String],
        on_fact: Rc<dyn Fn(Fact)>,
    ) -> Result<Self, wasm_bindgen::JsValue> {
        let init = EventSourceInit::new();
        init.set_with_credentials(with_credentials);
        let source = EventSource::new_with_event_source_init_dict(url, &init)?;
        let target: &web_sys::EventTarget = source.as_ref();
        let mut listeners = Vec::with_capacity(events.len() + 3);

        // The server's `event: open` / `event: error` reach these listeners
        // too, as a `MessageEvent`; the browser's own are a plain `Event`.
        // The server's are events like any other (the engine drops them).
        let f = on_fact.clone();
        listeners.push(Listener::new(target, "open", move |e| {
            match message(&e, "open") {
                Some(fact) => f(fact),
                None => f(Fact::Open),
            }
        }));
        let f = on_fact.clone();
        let es = source.clone();
        listeners.push(Listener::new(target, "error", move |e| {
            if let Some(fact) = message(&e, "error") {
                return f(fact);
            }
            let failed = es.ready_state() == EventSource::CLOSED;
            es.close();
            f(Fact::Error { failed })
        }));
        let names = core::iter::once("message").chain(events.iter().map(String::as_str));
        for name in names {
            let f = on_fact.clone();
            let kind = String::from(name);
            listeners.push(Listener::new(target, name, move |e| {
                if let Some(fact) = message(&e, &kind) {
                    f(fact)
                }
            }));
        }
        Ok(NativeEventSource {
            source,
            _listeners: listeners,
        })
    }
}

/// The fact for a server event (a `MessageEvent`) of type `kind` (the
/// listener's own: the event's `type` need not cross); `None` for anything
/// else. Only `open` and `error` also reach a listener as the browser's plain
/// `Event`; every other type is only ever a `MessageEvent` (WHATWG HTML
/// §9.2.6), so its type check (one crossing per event) is skipped.
fn message(e: &web_sys::Event, kind: &str) -> Option<Fact> {
    let m: &MessageEvent = match kind {
        "open" | "error" => e.dyn_ref()?,
        _ => e.unchecked_ref(),
    };
    let raw = m.data();
    Some(Fact::Event {
        event: String::from(kind),
        data: raw.as_string().unwrap_or_default(),
        raw,
        last_event_id: m.last_event_id(),
    })
}

impl Drop for NativeEventSource {
    fn drop(&mut self) {
        self.source.close();
    }
}
