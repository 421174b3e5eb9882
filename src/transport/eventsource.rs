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

use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::EventSource;

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
        /// `openSource`'s report array, `[data, type, lastEventId]`: its
        /// data as the browser gave it, handed to the app as is.
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
    /// `openSource`'s handle (typed as the source to share its `close`
    /// import): its `close()` closes the source and removes the listeners.
    source: EventSource,
    /// Called by the listeners; dropped after them.
    _report: Closure<dyn FnMut(web_sys::Event)>,
}

#[wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// A native `EventSource` of `url` with its listeners, reporting to
    /// `report` (see `boundary.js`); throws as its constructor does.
    #[wasm_bindgen(js_name = openSource, catch)]
    fn open_source(
        url: &str,
        with_credentials: bool,
        types: &js_sys::Array,
        report: &JsValue,
    ) -> Result<EventSource, JsValue>;
}

impl NativeEventSource {
    /// Open `url` and listen for `open`, `error`, `message` and each of `events`
    /// (`openSource` in `boundary.js`: the listeners and the `readyState`
    /// read on the JS side, one wasm closure for their reports).
    /// Errors: the constructor throws for a URL it cannot parse (`invalid-url`).
    pub fn open(
        url: &str,
        with_credentials: bool,
        events: &[String],
        on_fact: impl Fn(Fact) + 'static,
    ) -> Result<Self, JsValue> {
        let types = js_sys::Array::new();
        for name in events {
            types.push(&JsValue::from_str(name));
        }
        // The listener closure's type (`guard::Listener`'s): one copy of its glue.
        let report: Box<dyn FnMut(web_sys::Event)> = Box::new(move |fact| {
            let fact: js_sys::Array = fact.unchecked_into();
            let text = |i| fact.get(i).as_string().unwrap_or_default();
            // An event's first element is its data, a string: never 0 or 1.
            let first = fact.get(0);
            on_fact(match first.as_f64() {
                Some(0.0) => Fact::Open,
                Some(1.0) => Fact::Error {
                    failed: fact.get(1).is_truthy(),
                },
                _ => Fact::Event {
                    event: text(1),
                    data: first.as_string().unwrap_or_default(),
                    last_event_id: text(2),
                    // The data stays the app's: the report array itself
                    // goes back to JS (`messages`' `datas`).
                    raw: fact.into(),
                },
            })
        });
        let report = Closure::wrap(report);
        let source = open_source(url, with_credentials, &types, report.as_ref())?;
        Ok(NativeEventSource {
            source,
            _report: report,
        })
    }
}

impl Drop for NativeEventSource {
    fn drop(&mut self) {
        self.source.close();
    }
}
