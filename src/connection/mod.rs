//! The drive loop: one [`Engine`] per connection. Transports and page events
//! report facts ([`feed`]); the loop drains the engine's actions, renders them
//! (open or abort a request, arm the one timer) and queues what subscribers
//! must hear. Nothing here decides anything: every policy is in the engine.
//!
//! Re-entrancy: user listeners run only after the engine borrow is released
//! and the actions are drained. A listener that calls `close()` or subscribes
//! again only feeds the engine; the loop that is already running picks the
//! new actions up (`driving` guards against a nested loop).

mod calm;
mod crosstab;
mod debug;
mod live;
mod page;
pub mod registry;

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::{Rc, Weak};

use tidings_core::crosstab::{CrossTab, Mirror};
use tidings_core::engine::{Action, Capabilities, Config, Engine, ErrorCode};
use tidings_core::time::{MonoMs, Now};

use crate::clock;
use crate::guard::Timer;
use crate::lifecycle::{self, Lifecycle};
pub(crate) use live::web_storage_call;
pub use live::AdapterOptions;
use live::Live;
pub use page::reconnect;

/// One message for subscribers: what the engine delivered, the name of the
/// transport it came over, and the browser's own data value when it has one.
pub struct Delivery {
    /// The message.
    pub msg: tidings_core::engine::Message,
    /// The transport's name (`""`: unknown, a relayed message without one).
    pub transport: &'static str,
    /// A native `EventSource` event's `data` as the browser gave it: the app
    /// gets this value instead of `msg.data` crossing back out of wasm (the
    /// engine read a copy; issue 19).
    pub data: Option<wasm_bindgen::JsValue>,
}

/// What subscribers are told, in order (rendered to JS events by the API layer).
pub enum Notice {
    /// Messages (`message` or named events), in order: consecutive
    /// deliveries are told as one batch, so the API layer crosses to JS once
    /// per batch rather than once per message (issue 19).
    Messages(Vec<Delivery>),
    /// Any other engine action worth telling: `Open`-state, errors, state and
    /// transport changes, resets.
    Action(Action),
    /// The engine's `headers` error (the app's `headers` failed; see
    /// `Engine::handle_headers_failed`), with what the app's function threw
    /// or the `TypeError` of an invalid header: a JS value the engine cannot
    /// hold, so the adapter keeps it until the engine's error comes.
    HeadersFailed {
        /// What was thrown.
        cause: wasm_bindgen::JsValue,
        /// The engine's delay before the retry, ms.
        retry_in_ms: Option<u64>,
    },
    /// The calm status changed (`statuschange`; `calm.rs`).
    Status(tidings_core::calm::Change),
    /// The notices of one fact were told: the end of a delivered batch
    /// (`persist` writes then). Told to subscribers only.
    BatchEnd,
}

/// A subscriber's callback for the connection's notices.
pub type NoticeFn = Rc<dyn Fn(&Notice)>;

/// One engine, its live request, its timer, and who listens.
pub struct Connection {
    engine: RefCell<Engine>,
    live: RefCell<Option<Live>>,
    /// The one JS timer and the deadline it fires at; `None` when none is
    /// armed or it has fired.
    timer: RefCell<Option<(MonoMs, Timer)>>,
    driving: Cell<bool>,
    outbox: RefCell<VecDeque<Notice>>,
    /// The data value of the native `EventSource` event being fed (see
    /// [`Delivery::data`]); taken by its `Deliver`.
    native_data: RefCell<Option<wasm_bindgen::JsValue>>,
    /// What the app's `headers` threw for the attempt the engine was last
    /// told about (`handle_headers_failed`), until its error is rendered.
    headers_cause: RefCell<Option<wasm_bindgen::JsValue>>,
    listeners: RefCell<Vec<(u32, NoticeFn)>>,
    next_listener: Cell<u32>,
    adapter: AdapterOptions,
    /// Set once the connection was closed; every later fact is ignored.
    closed: Cell<bool>,
    /// Counts facts fed, so the loop notices facts fed by listeners.
    fed: Cell<u64>,
    /// Page lifecycle listeners (visibility, online, freeze, bfcache), for
    /// the connection's life; their facts go to both machines (`page.rs`).
    lifecycle: RefCell<Option<Lifecycle>>,
    /// The cross-tab coordinator (`crossTab`; a solo one otherwise) and the
    /// guards that render its actions (`crosstab.rs`).
    tabs: RefCell<CrossTab>,
    tab_io: RefCell<crosstab::TabIo>,
    /// What a fresh engine is made of (`Run` from a cursor, `Halt`).
    config: Config,
    seed: u64,
    caps: Capabilities,
    /// The calm status (`calm.rs`); its deadline shares `timer`.
    calm: RefCell<tidings_core::calm::Calm>,
    /// The answer of the `reconnect()` being handled (`page::reconnect`).
    reconnected: Cell<tidings_core::engine::ReconnectAnswer>,
}

impl Connection {
    /// Create and start a connection. `share`: the cross-tab name
    /// (`crossTab`; `src/tabs/`), `None` for a connection of this tab only.
    /// Facts start flowing from the browser's task queue; nothing is called
    /// synchronously from here but the two machines.
    pub fn start(
        config: Config,
        seed: u64,
        adapter: AdapterOptions,
        caps: Capabilities,
        share: Option<String>,
    ) -> Rc<Self> {
        let conn = Rc::new(Connection {
            engine: RefCell::new(Engine::new(config.clone(), seed)),
            live: RefCell::new(None),
            timer: RefCell::new(None),
            driving: Cell::new(false),
            outbox: RefCell::new(VecDeque::new()),
            native_data: RefCell::new(None),
            headers_cause: RefCell::new(None),
            listeners: RefCell::new(Vec::new()),
            next_listener: Cell::new(0),
            closed: Cell::new(false),
            fed: Cell::new(0),
            lifecycle: RefCell::new(None),
            tabs: RefCell::new(crosstab::machine(&config)),
            tab_io: RefCell::new(crosstab::TabIo::new(share)),
            calm: RefCell::new(tidings_core::calm::Calm::new(adapter.lost_after_ms)),
            reconnected: Cell::new(tidings_core::engine::ReconnectAnswer::Closed),
            config,
            seed,
            caps,
            adapter,
        });
        let weak = Rc::downgrade(&conn);
        let watch = Lifecycle::watch(Rc::new(move |f| {
            if let Some(conn) = weak.upgrade() {
                page::fact(&conn, f)
            }
        }));
        *conn.lifecycle.borrow_mut() = Some(watch);
        lifecycle::current(&|f| page::fact(&conn, f));
        crosstab::start(&conn);
        conn
    }

    /// Whether the connection has stopped for good (closed by the app or by a
    /// fatal error): a new subscription must not join it.
    pub fn is_stopped(&self) -> bool {
        self.closed.get() || self.state() == tidings_core::engine::State::Closed
    }

    /// What the page sees of the connection: the leader tab's, as the
    /// coordinator knows it, while this tab follows one; else its own
    /// engine's.
    fn view<R>(&self, leader: impl FnOnce(&Mirror) -> R, own: impl FnOnce(&Engine) -> R) -> R {
        match self.tabs.borrow().following() {
            Some(m) => leader(m),
            None => own(&self.engine.borrow()),
        }
    }

    /// Whether this tab follows another tab's connection (`crossTab`): it
    /// does not acknowledge deliveries (`ack`), the leader does.
    pub fn follows(&self) -> bool {
        self.tabs.borrow().following().is_some()
    }

    /// The state.
    pub fn state(&self) -> tidings_core::engine::State {
        self.view(|m| m.state, |e| e.state())
    }

    /// The transport name: `""` before the engine chose one, and for good
    /// when it stopped before choosing (see `Engine::transport`).
    pub fn transport_name(&self) -> &'static str {
        let t = self.view(|m| m.transport, |e| e.transport());
        t.map(|t| t.as_str()).unwrap_or("")
    }

    /// The calm status (`connecting`, `connected`, `reconnecting`,
    /// `offline`, `closed`).
    pub fn status(&self) -> tidings_core::calm::Status {
        self.calm.borrow().status()
    }

    /// The cursor.
    pub fn last_event_id(&self) -> String {
        self.view(|m| m.last_event_id.clone(), |e| e.last_event_id().into())
    }

    /// `debug: true`: log `details` as `what` (an event the API layer made,
    /// such as a `parse` error).
    pub fn debug_log(&self, what: &str, details: &wasm_bindgen::JsValue) {
        if self.adapter.debug {
            debug::console_debug("[tidings]", what, details);
        }
    }

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

    /// Read engine state (never while a listener runs with a borrow held:
    /// the borrow ends with `f`).
    pub fn with_engine<R>(&self, f: impl FnOnce(&Engine) -> R) -> R {
        f(&self.engine.borrow())
    }
}

/// Start `conn`'s engine: the page's state first (a page that starts hidden
/// or offline must not send a request), then `handle_start`.
fn run(conn: &Rc<Connection>) {
    lifecycle::current(&|f| page::to_engine(conn, f));
    // Start on a microtask, like `EventSource`: the app adds its listeners
    // right after `subscribe()` returns, and must still hear everything,
    // including a fatal error at start (bad URL, no usable transport).
    let weak = Rc::downgrade(conn);
    let caps = conn.caps;
    wasm_bindgen_futures::spawn_local(async move {
        if let Some(conn) = weak.upgrade() {
            feed(&conn, |e, now| e.handle_start(now, caps));
        }
    });
}

/// Stop driving `conn`'s engine without telling anyone (the coordinator's
/// `Halt`: a leader that lost its lock or left the page): the live request
/// is aborted, the timer goes, and an engine that is not started replaces
/// the running one.
fn halt(conn: &Rc<Connection>) {
    halt_with(conn, None);
}

/// [`halt`], the new engine starting from `cursor` when given.
fn halt_with(conn: &Rc<Connection>, cursor: Option<String>) {
    // The app's configured start stays in the config (a Durable Streams 410
    // restarts from it); the cursor is only where this engine resumes.
    let config = conn.config.clone();
    let engine = match cursor {
        Some(c) => Engine::resuming(config, conn.seed, &c),
        None => Engine::new(config, conn.seed),
    };
    let live = conn.live.borrow_mut().take();
    let timer = conn.timer.borrow_mut().take();
    let old = std::mem::replace(&mut *conn.engine.borrow_mut(), engine);
    drop((live, timer, old));
}

/// The coordinator's `Run`: a fresh engine from `cursor`, started.
fn restart(conn: &Rc<Connection>, cursor: String) {
    if conn.closed.get() {
        return;
    }
    halt_with(conn, Some(cursor));
    run(conn);
}

/// Tell subscribers `notice` (one relayed from the leader tab), through the
/// same queue and re-entrancy rules as the engine's own notices.
fn tell(conn: &Rc<Connection>, notice: Notice) {
    if conn.closed.get() {
        return;
    }
    enqueue(conn, notice);
    conn.fed.set(conn.fed.get().wrapping_add(1));
    drive(conn);
}

/// Queue `notice` for subscribers, followed by the status change it
/// causes, if any; messages join a batch of messages queued just before them.
fn enqueue(conn: &Connection, mut notice: Notice) {
    let change = calm::on_notice(conn, &notice);
    let mut outbox = conn.outbox.borrow_mut();
    if let (Notice::Messages(more), Some(Notice::Messages(batch))) =
        (&mut notice, outbox.back_mut())
    {
        batch.append(more);
    } else {
        outbox.push_back(notice);
    }
    if let Some(c) = change {
        outbox.push_back(Notice::Status(c));
    }
}

/// Feed a native `EventSource` event with `data`, the browser's own value of
/// the data the engine reads a copy of: its delivery carries this value (the
/// event is fed from the browser's task queue, never from inside a drive, so
/// the `Deliver` it causes is rendered before this returns).
pub fn feed_native(
    conn: &Rc<Connection>,
    data: wasm_bindgen::JsValue,
    f: impl FnOnce(&mut Engine, Now),
) {
    *conn.native_data.borrow_mut() = Some(data);
    feed(conn, f);
    let unused = conn.native_data.take();
    drop(unused);
}

/// Close the connection for good: the engine is told, the live request is
/// aborted, the timer is cancelled. The cross-tab coordinator goes first (a
/// leader says `bye`, its lock is released for the next tab, and nothing
/// more is relayed).
pub fn close(conn: &Rc<Connection>) {
    if conn.closed.get() {
        return;
    }
    crosstab::close(conn);
    feed(conn, |e, now| e.handle_close(now));
    conn.closed.set(true);
    let live = conn.live.borrow_mut().take();
    let timer = conn.timer.borrow_mut().take();
    let lifecycle = conn.lifecycle.borrow_mut().take();
    drop((live, timer, lifecycle));
}

/// Give the engine one fact (with both clocks read now), then drive.
pub fn feed(conn: &Rc<Connection>, f: impl FnOnce(&mut Engine, Now)) {
    if conn.closed.get() {
        return;
    }
    f(&mut conn.engine.borrow_mut(), clock::now());
    conn.fed.set(conn.fed.get().wrapping_add(1));
    drive(conn);
}

/// Drain the engine's actions, then tell subscribers. Runs at most once at a
/// time; a nested call (from a listener) returns at once and its actions are
/// drained by the running loop.
fn drive(conn: &Rc<Connection>) {
    if conn.driving.replace(true) {
        return;
    }
    loop {
        loop {
            // The borrow ends with this statement: rendering an action may
            // start JS work, which must not find the engine borrowed.
            let action = conn.engine.borrow_mut().poll();
            if !render(conn, action) {
                break;
            }
        }
        let fed_before = conn.fed.get();
        tell_subscribers(conn);
        // A listener may have fed the engine meanwhile (e.g. `close()`):
        // drain again so its actions are rendered.
        if conn.fed.get() == fed_before {
            break;
        }
    }
    conn.driving.set(false);
}

/// Carry out one engine action, or queue it for subscribers; `false` after
/// the `Wait` that ends a drain.
fn render(conn: &Rc<Connection>, action: Action) -> bool {
    if conn.adapter.debug {
        debug::log(&action);
    }
    match action {
        Action::Wait { until } => {
            arm_timer(conn, until);
            return false;
        }
        Action::Open(req) => {
            let live = live::open(conn, req);
            let old = conn.live.borrow_mut().replace(live);
            drop(old);
        }
        Action::Abort(id) => {
            let matches = conn.live.borrow().as_ref().is_some_and(|l| l.id() == id);
            if matches {
                let old = conn.live.borrow_mut().take();
                drop(old);
            }
        }
        // For the debug log only (logged above): nothing to render.
        Action::Note(_) | Action::Ignored { .. } => {}
        Action::Deliver(msg) => {
            let transport = conn.engine.borrow().transport();
            let data = match transport {
                Some(tidings_core::engine::TransportKind::EventSource) => conn.native_data.take(),
                _ => None,
            };
            let transport = transport.map_or("", |t| t.as_str());
            let d = Delivery {
                msg,
                transport,
                data,
            };
            push(conn, Notice::Messages(vec![d]));
        }
        Action::Error {
            code: ErrorCode::Headers,
            retry_in_ms,
            ..
        } => {
            let cause = conn.headers_cause.take().unwrap_or_default();
            push(conn, Notice::HeadersFailed { cause, retry_in_ms });
        }
        other => push(conn, Notice::Action(other)),
    }
    true
}

/// Tell subscribers, one notice at a time, with no borrow held.
fn tell_subscribers(conn: &Rc<Connection>) {
    let mut told = false;
    loop {
        let next = conn.outbox.borrow_mut().pop_front();
        // Notices were told: end the batch with `BatchEnd` (once).
        let notice = match next {
            Some(n) => n,
            None if std::mem::take(&mut told) => Notice::BatchEnd,
            None => break,
        };
        told |= !matches!(notice, Notice::BatchEnd);
        let targets: Vec<NoticeFn> = conn
            .listeners
            .borrow()
            .iter()
            .map(|(_, f)| f.clone())
            .collect();
        for f in targets {
            f(&notice);
        }
    }
}

/// Queue an engine notice for subscribers, after the coordinator's actions
/// for it (a leader relays it to the other tabs); not when the coordinator
/// says this tab already delivered it.
fn push(conn: &Rc<Connection>, notice: Notice) {
    let fresh = crosstab::own(conn, &notice);
    crosstab::drain(conn);
    if fresh {
        enqueue(conn, notice);
    }
}

/// One timer for the engine's next deadline (clamped to 2^31−1 ms by `Timer`).
///
/// A timer that is armed and fires no later than `until` is kept: on the hot
/// path every byte or event moves the idle deadline later, and replacing the
/// timer each time (`clearTimeout`, a new closure, `setTimeout`) cost about 6 %
/// of a native-event profile (docs/bench.md). The kept timer may fire before
/// the deadline; the engine then finds nothing due and hands out the same
/// `until` again, which arms a new one. Never late: an earlier `until`
/// replaces it, `None` cancels it.
fn arm_timer(conn: &Rc<Connection>, until: Option<MonoMs>) {
    // The calm status's `lostAfterMs` deadline shares the timer.
    let until = [until, calm::deadline(conn)].into_iter().flatten().min();
    let keep = match (until, conn.timer.borrow().as_ref()) {
        (Some(t), Some((armed, _))) => *armed <= t,
        _ => false,
    };
    if keep {
        return;
    }
    let timer = until.map(|t| {
        let delay_ms = t.since(clock::now().mono);
        let weak: Weak<Connection> = Rc::downgrade(conn);
        let timer = Timer::new(delay_ms, move || {
            if let Some(conn) = weak.upgrade() {
                // Fired: a later `Wait` must arm a new one (taken out first,
                // dropped after the borrow ends, as a replaced timer always was).
                let fired = conn.timer.borrow_mut().take();
                drop(fired);
                calm::on_timer(&conn);
                feed(&conn, |e, now| e.handle_timer(now));
            }
        });
        (t, timer)
    });
    let old = std::mem::replace(&mut *conn.timer.borrow_mut(), timer);
    drop(old);
}
