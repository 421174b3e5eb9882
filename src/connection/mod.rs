//! The driver of one connection: its [`Session`] (in `tidings-core`) decides
//! everything; this module reports facts to it ([`feed`]: transports, page
//! events, the cross-tab lock and channel, the one timer) and carries out
//! what it asks (`drive.rs`: open or abort a request, cross-tab IO, tell
//! subscribers, arm the one timer).
//!
//! Re-entrancy: user listeners run only while no machine is borrowed. A
//! listener that calls `close()` or subscribes again only feeds the
//! session; the loop that is already running renders the new actions
//! (`driving` guards against a nested loop).

#[cfg(feature = "cross-tab")]
mod crosstab;
#[cfg(feature = "debug")]
mod debug;
mod drive;
mod live;
mod notice;
pub mod registry;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use tidings_core::engine::{Capabilities, Config, Engine, ReconnectAnswer, State};
use tidings_core::session::{Input, Session};
use tidings_core::time::MonoMs;

use crate::guard::Timer;
use crate::lifecycle::{self, Lifecycle};
use drive::feed;
#[cfg(feature = "persist")]
pub(crate) use live::web_storage_call;
pub use live::AdapterOptions;
use live::Live;
pub use notice::{Delivery, Notice, NoticeFn};

/// One session, its live request, its one timer, and who listens.
pub struct Connection {
    session: RefCell<Session>,
    /// The live request, and the one the engine keeps beside it
    /// (`OpenRequest::beside`).
    live: RefCell<[Option<Live>; 2]>,
    /// The one JS timer and the deadline it fires at.
    timer: RefCell<Option<(MonoMs, Timer)>>,
    driving: Cell<bool>,
    /// The data value of the native `EventSource` event being fed (see
    /// [`Delivery::data`]); taken by its own delivery.
    native_data: RefCell<Option<wasm_bindgen::JsValue>>,
    /// What the app's `headers` threw, until its error is told.
    headers_cause: RefCell<Option<wasm_bindgen::JsValue>>,
    listeners: RefCell<Vec<(u32, NoticeFn)>>,
    next_listener: Cell<u32>,
    adapter: AdapterOptions,
    /// Page lifecycle listeners, for the connection's life.
    lifecycle: RefCell<Option<Lifecycle>>,
    /// The microtask that starts the session (cancelled if the connection
    /// goes first).
    starting: RefCell<Option<Timer>>,
    /// The cross-tab lock and channel (`crosstab.rs`).
    #[cfg(feature = "cross-tab")]
    tab_io: RefCell<crosstab::TabIo>,
}

impl Connection {
    /// Create and start a connection. `share`: the cross-tab name
    /// (`crossTab`; `src/tabs/`), `None` for a connection of this tab only
    /// (always, without the `cross-tab` feature).
    /// The page's state is reported now; the session starts on a microtask,
    /// like `EventSource`: the app adds its listeners right after
    /// `subscribe()` returns and must still hear everything, including a
    /// fatal error at start (bad URL, no usable transport).
    pub fn start(
        config: Config,
        seed: u64,
        adapter: AdapterOptions,
        caps: Capabilities,
        share: Option<String>,
    ) -> Rc<Self> {
        let tab_seed = crate::clock::random_seed();
        let session = Session::new(config, seed, tab_seed, adapter.lost_after_ms);
        let conn = Rc::new(Connection {
            session: RefCell::new(
                session.with_debug(cfg!(feature = "debug") && adapter.debug.is_some()),
            ),
            live: RefCell::default(),
            timer: RefCell::new(None),
            driving: Cell::new(false),
            native_data: RefCell::new(None),
            headers_cause: RefCell::new(None),
            listeners: RefCell::new(Vec::new()),
            next_listener: Cell::new(0),
            lifecycle: RefCell::new(None),
            starting: RefCell::new(None),
            #[cfg(feature = "cross-tab")]
            tab_io: RefCell::new(crosstab::TabIo::new(share)),
            adapter,
        });
        let weak = Rc::downgrade(&conn);
        let watch = Lifecycle::watch(Rc::new(move |f| {
            if let Some(conn) = weak.upgrade() {
                handle(&conn, Input::Page(f))
            }
        }));
        *conn.lifecycle.borrow_mut() = Some(watch);
        #[cfg(feature = "cross-tab")]
        let support = crosstab::support(&conn);
        #[cfg(not(feature = "cross-tab"))]
        let support = {
            drop(share);
            tidings_core::crosstab::Support {
                locks: false,
                channel: false,
            }
        };
        let weak = Rc::downgrade(&conn);
        let start = Timer::soon(move || {
            if let Some(conn) = weak.upgrade() {
                handle(&conn, Input::Start { caps, support });
            }
        });
        *conn.starting.borrow_mut() = Some(start);
        conn
    }

    /// Whether the connection has stopped for good (closed by the app or by a
    /// fatal error): a new subscription must not join it.
    pub fn is_stopped(&self) -> bool {
        self.session.borrow().is_stopped()
    }

    /// Whether this tab follows another tab's connection (`crossTab`): it
    /// does not acknowledge deliveries (`ack`), the leader does.
    pub fn follows(&self) -> bool {
        self.session.borrow().follows()
    }

    /// The state the page sees (the leader tab's while this tab follows).
    pub fn state(&self) -> State {
        self.session.borrow().state()
    }

    /// The transport name the page sees: `""` before one was chosen, and
    /// for good when it stopped before choosing.
    pub fn transport_name(&self) -> &'static str {
        let t = self.session.borrow().transport();
        t.map_or("", |t| t.as_str())
    }

    /// The calm status (`connecting`, `connected`, `reconnecting`,
    /// `offline`, `closed`).
    pub fn status(&self) -> tidings_core::calm::Status {
        self.session.borrow().status()
    }

    /// The cursor the page sees.
    pub fn last_event_id(&self) -> String {
        self.session.borrow().last_event_id().into()
    }

    /// Read this tab's engine (the borrow ends with `f`).
    pub fn with_engine<R>(&self, f: impl FnOnce(&Engine) -> R) -> R {
        f(self.session.borrow().engine())
    }
}

/// The app's "try now" (`reconnect()`, JS and Rust API alike), with
/// `navigator.onLine` now (the `online` event can be late). Returns this
/// tab's engine's answer; `Leader` in a follower, `Closed` when nothing
/// heard it.
pub fn reconnect(conn: &Rc<Connection>) -> ReconnectAnswer {
    let online = lifecycle::is_online();
    handle(conn, Input::Reconnect { online });
    conn.session.borrow().reconnected()
}

/// Close the connection for good: the session closes (the coordinator
/// first, then the engine); the live request, the timer and the page
/// listeners go.
pub fn close(conn: &Rc<Connection>) {
    if conn.session.borrow().is_closed() {
        return;
    }
    handle(conn, Input::Close);
    let live = std::mem::take(&mut *conn.live.borrow_mut());
    let timer = conn.timer.borrow_mut().take();
    let lifecycle = conn.lifecycle.borrow_mut().take();
    // The channel and lock requested before the session started are the
    // driver's own: the session's close cannot ask for them to go.
    #[cfg(feature = "cross-tab")]
    let tabs = std::mem::replace(&mut *conn.tab_io.borrow_mut(), crosstab::TabIo::new(None));
    #[cfg(not(feature = "cross-tab"))]
    let tabs = ();
    drop((live, timer, lifecycle, tabs));
}

/// Give the session one fact (with both clocks read now), then drive.
fn handle(conn: &Rc<Connection>, input: Input<'_>) {
    conn.session.borrow_mut().handle(crate::clock::now(), input);
    drive::drive(conn);
}
