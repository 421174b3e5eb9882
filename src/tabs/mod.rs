//! `crossTab: true`: one connection per URL + options across every tab of a
//! browser profile (real-world case BC-20: the six-connections-per-host limit
//! of HTTP/1.1, exhausted by many tabs each holding their own stream).
//!
//! - Election (`leader.rs`): every tab with the connection asks for the Web
//!   Lock `"tidings:" + key`; the one holding it is the leader and runs the
//!   real [`Connection`] (engine, request, lifecycle). The others queue. A
//!   closed or crashed tab releases its lock, and the browser grants it to the
//!   next tab in the queue.
//! - Relay (`channel.rs`): the leader posts every notice of its engine on
//!   `BroadcastChannel("tidings:" + key)`; followers run no request and tell
//!   their subscriptions what they receive. A newcomer posts `hello`, and the
//!   leader re-posts its last transport and state.
//! - Hand-over without a gap or a duplicate: every tab remembers the last
//!   cursor it saw (messages carry `lastEventId`, states carry the leader's
//!   cursor); a new leader starts its engine from it, and every tab drops a
//!   message whose id it already delivered (a ring of the last 64 ids), which
//!   covers the moment two leaders overlap.
//! - Visibility: a hidden leader pauses (`pauseWhenHidden`), which would
//!   pause every tab. So a visible follower that hears the leader report
//!   `paused` for `hidden` or `frozen` (or becomes visible while it does)
//!   steals the lock (`{ steal: true }`) after a random 0–200 ms (so that
//!   several visible tabs rarely steal at once); the tab that lost the lock
//!   stops its request and queues again as a follower.
//! - Without Web Locks or `BroadcastChannel` the connection is an ordinary
//!   per-tab one (the registry still shares it within the tab).
//!
//! The [`Tab`] is owned by its connection and dropped when it closes: the
//! channel is closed, the lock released or withdrawn, the timer and the
//! listener removed.

mod channel;
mod leader;

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use tidings_core::engine::{
    Action, Capabilities, Config, Engine, Reason, ResetReason, State, TransportKind,
};

use crate::connection::{self, AdapterOptions, Connection, Notice};
use crate::guard::{Listener, Timer};
use channel::{Channel, Wire};
use leader::Lock;
use tidings_core::policy::dedupe::Dedupe;

/// How many delivered message ids a tab remembers to drop a repeat.
const SEEN: usize = 64;
/// How long a visible follower waits before it steals from a hidden leader:
/// at least `STEAL_AFTER_MS` (a leader tab that is closing says `bye` right
/// after its `paused`, and the lock passes to the next tab in the queue
/// without a steal), plus up to `STEAL_JITTER_MS` so that several visible
/// tabs rarely steal at once.
const STEAL_AFTER_MS: f64 = 50.0;
const STEAL_JITTER_MS: f64 = 200.0;

/// What a follower knows of the leader's connection.
#[derive(Clone)]
pub struct Mirror {
    pub state: State,
    pub reason: Reason,
    pub transport: Option<TransportKind>,
    pub last_event_id: String,
}

/// This tab's part in one cross-tab connection.
pub struct Tab {
    name: String,
    conn: Weak<Connection>,
    /// To start an engine when this tab becomes the leader.
    config: Config,
    seed: u64,
    caps: Capabilities,
    leader: Cell<bool>,
    mirror: RefCell<Mirror>,
    /// The engine's own dedupe policy, over what this tab delivered.
    seen: RefCell<Dedupe>,
    /// The leader's last transport change and state, re-posted for a
    /// newcomer.
    last_t: RefCell<Option<Notice>>,
    last_s: RefCell<Option<Notice>>,
    steal_due: Cell<bool>,
    steal_timer: RefCell<Option<Timer>>,
    /// The leader said `bye` (its page is going away): no steal until a
    /// leader speaks again.
    leader_gone: Cell<bool>,
    /// Back from the back-forward cache: the cursor this tab had when it
    /// was hidden, until the leader reports where the connection is now.
    restored_from: RefCell<Option<String>>,
    channel: RefCell<Option<Channel>>,
    lock: RefCell<Option<Lock>>,
    listeners: RefCell<Vec<Listener>>,
}

/// A connection for `url` shared across tabs under `key` (the registry's
/// share key); an ordinary one when Web Locks or `BroadcastChannel` is
/// missing.
pub fn start(
    url: &str,
    key: &str,
    config: Config,
    seed: u64,
    adapter: AdapterOptions,
    caps: Capabilities,
) -> Rc<Connection> {
    let global = js_sys::global();
    let has_bc = js_sys::Reflect::has(&global, &"BroadcastChannel".into()).unwrap_or(false);
    if leader::manager().is_none() || !has_bc {
        return Connection::start(config, seed, adapter, caps);
    }
    // Relative URLs resolve differently on different pages: the name uses
    // the absolute one.
    let mut name = String::from("tidings:");
    name.push_str(&absolute(url));
    name.push_str(key.get(url.len()..).unwrap_or(key));
    let conn = Connection::idle(Engine::new(config.clone(), seed), adapter);
    let tab = Rc::new(Tab {
        name,
        conn: Rc::downgrade(&conn),
        mirror: RefCell::new(Mirror {
            state: State::Connecting,
            reason: Reason::Start,
            transport: None,
            last_event_id: config.last_event_id.clone(),
        }),
        config,
        seed,
        caps,
        leader: Cell::new(false),
        seen: RefCell::new(Dedupe::new(SEEN)),
        last_t: RefCell::new(None),
        last_s: RefCell::new(None),
        steal_due: Cell::new(false),
        steal_timer: RefCell::new(None),
        leader_gone: Cell::new(false),
        restored_from: RefCell::new(None),
        channel: RefCell::new(None),
        lock: RefCell::new(None),
        listeners: RefCell::new(Vec::new()),
    });
    if !open_channel(&tab) {
        connection::run(&conn, caps);
        return conn;
    }
    // Registered before the leader's lifecycle listeners, so `pagehide`
    // reaches this tab's coordinator first.
    let on = |target: &web_sys::EventTarget, kind: &str, f: fn(&Rc<Tab>, &web_sys::Event)| {
        let weak = Rc::downgrade(&tab);
        Listener::new(target, kind, move |e| {
            if let Some(tab) = weak.upgrade() {
                f(&tab, &e)
            }
        })
    };
    let mut listeners = Vec::new();
    if let Some(w) = web_sys::window() {
        if let Some(doc) = w.document() {
            listeners.push(on(doc.as_ref(), "visibilitychange", |tab, _| {
                consider_steal(tab)
            }));
        }
        listeners.push(on(w.as_ref(), "pagehide", |tab, _| leave(tab)));
        listeners.push(on(w.as_ref(), "pageshow", |tab, e| {
            let persisted = js_sys::Reflect::get(e, &"persisted".into())
                .ok()
                .and_then(|p| p.as_bool())
                .unwrap_or(false);
            if persisted {
                rejoin(tab)
            }
        }));
    }
    *tab.listeners.borrow_mut() = listeners;
    *conn.tab.borrow_mut() = Some(tab.clone());
    queue(&tab, false);
    conn
}

/// Open the channel and say `hello`; `false` when it cannot be opened.
fn open_channel(tab: &Rc<Tab>) -> bool {
    let weak = Rc::downgrade(tab);
    let Some(ch) = Channel::open(&tab.name, move |v| {
        if let Some(tab) = weak.upgrade() {
            on_wire(&tab, &v);
        }
    }) else {
        return false;
    };
    ch.post(&channel::hello());
    *tab.channel.borrow_mut() = Some(ch);
    true
}

/// The leader's state as this tab last heard it, while this tab follows.
pub fn following(conn: &Connection) -> Option<Mirror> {
    let tab = conn.tab.borrow();
    let tab = tab.as_ref().filter(|t| !t.leader.get())?;
    let m = tab.mirror.borrow().clone();
    Some(m)
}

/// A notice of this tab's engine: posted to the other tabs when this tab
/// leads. Returns whether to tell this tab's subscribers (`false`: a message
/// already delivered here).
pub fn relay(conn: &Connection, notice: &Notice) -> bool {
    let Some(tab) = conn.tab.borrow().clone() else {
        return true;
    };
    if !tab.leader.get() {
        return true;
    }
    let cursor = conn.with_engine(|e| String::from(e.last_event_id()));
    let fresh = tab.note(notice, &cursor);
    if let Some(a) = channel::encode(notice, &cursor, false) {
        if let Some(ch) = tab.channel.borrow().as_ref() {
            ch.post(&a);
        }
    }
    if let Notice::Action(a @ (Action::State { .. } | Action::TransportChanged { .. })) = notice {
        let slot = match a {
            Action::State { .. } => &tab.last_s,
            _ => &tab.last_t,
        };
        *slot.borrow_mut() = Some(Notice::Action(a.clone()));
    }
    fresh
}

impl Tab {
    /// Update what this tab knows from `notice` (`cursor`: the one a state
    /// carries). `false` for a message whose id was already delivered here.
    fn note(&self, notice: &Notice, cursor: &str) -> bool {
        let mut m = self.mirror.borrow_mut();
        match notice {
            Notice::Message(msg, transport) => {
                if !self
                    .seen
                    .borrow_mut()
                    .should_deliver(Some(&msg.id), &msg.event, &msg.data)
                {
                    return false;
                }
                m.last_event_id.clone_from(&msg.last_event_id);
                m.transport = TransportKind::from_name(transport);
            }
            Notice::Action(Action::State { state, reason, .. }) => {
                self.leader_gone.set(false);
                m.state = *state;
                m.reason = *reason;
                if !cursor.is_empty() {
                    m.last_event_id = cursor.into();
                }
            }
            Notice::Action(Action::TransportChanged { transport, .. }) => {
                m.transport = Some(*transport);
            }
            Notice::Action(Action::Reset { .. }) => self.seen.borrow_mut().clear(),
            // Durable Streams: an offset reached without a message (a 204
            // from `now` names the tail) is where a new leader resumes.
            Notice::Action(Action::UpToDate { last_event_id }) => {
                m.last_event_id.clone_from(last_event_id);
            }
            Notice::Action(_) | Notice::HeadersFailed(_) => {}
        }
        true
    }

    /// A re-post for a newcomer that says nothing new to this tab.
    fn known(&self, notice: &Notice) -> bool {
        let m = self.mirror.borrow();
        match notice {
            Notice::Action(Action::State { state, .. }) => m.state == *state,
            Notice::Action(Action::TransportChanged { transport, .. }) => {
                m.transport == Some(*transport)
            }
            _ => false,
        }
    }

    fn leader_paused_hidden(&self) -> bool {
        let m = self.mirror.borrow();
        !self.leader_gone.get()
            && m.state == State::Paused
            && matches!(m.reason, Reason::Hidden | Reason::Frozen)
    }
}

impl Drop for Tab {
    /// The connection closed (its last subscription in this tab): a leader
    /// says `bye` so no follower steals while the lock passes on by itself.
    fn drop(&mut self) {
        if self.leader.get() {
            if let Some(ch) = self.channel.borrow().as_ref() {
                ch.post(&channel::bye());
            }
        }
    }
}

/// Something arrived on the channel.
fn on_wire(tab: &Rc<Tab>, v: &wasm_bindgen::JsValue) {
    let Some((wire, cursor)) = channel::decode(v) else {
        return;
    };
    let Some(conn) = tab.conn.upgrade() else {
        return;
    };
    let (notice, sync) = match wire {
        Wire::Bye => {
            if !tab.leader.get() {
                tab.leader_gone.set(true);
                cancel_steal(tab);
            }
            return;
        }
        Wire::Hello => {
            if tab.leader.get() {
                let cursor = conn.with_engine(|e| String::from(e.last_event_id()));
                let ch = tab.channel.borrow();
                let Some(ch) = ch.as_ref() else { return };
                for slot in [&tab.last_t, &tab.last_s] {
                    let encoded = slot
                        .borrow()
                        .as_ref()
                        .and_then(|n| channel::encode(n, &cursor, true));
                    if let Some(a) = encoded {
                        ch.post(&a);
                    }
                }
            }
            return;
        }
        Wire::Notice { notice, sync } => (notice, sync),
    };
    // A leader tells its own state; a message from a second leader (the
    // moment a steal overlaps) is still news when this tab has not seen it.
    if tab.leader.get() && !matches!(notice, Notice::Message(..)) {
        return;
    }
    // Back from the back-forward cache: when the leader's cursor moved on
    // meanwhile, this tab missed what was relayed (nobody keeps it), which
    // its subscriptions hear as a `reset` (`unresumable`): refetch.
    if matches!(notice, Notice::Action(Action::State { .. })) {
        let before = tab.restored_from.borrow_mut().take();
        if before.is_some_and(|c| c != cursor) {
            let reset = Action::Reset {
                reason: ResetReason::Unresumable,
            };
            connection::tell(&conn, Notice::Action(reset));
        }
    }
    if sync && tab.known(&notice) {
        return;
    }
    if !tab.note(&notice, &cursor) {
        return;
    }
    let closed = matches!(
        notice,
        Notice::Action(Action::State {
            state: State::Closed,
            ..
        })
    );
    connection::tell(&conn, notice);
    if closed {
        // The leader stopped for good (a fatal error): never take over.
        let lock = tab.lock.borrow_mut().take();
        drop(lock);
    } else {
        consider_steal(tab);
    }
}

/// Queue for the lock (`steal`: take it now).
fn queue(tab: &Rc<Tab>, steal: bool) {
    let (g, l) = (Rc::downgrade(tab), Rc::downgrade(tab));
    let lock = Lock::request(
        &tab.name,
        steal,
        move || {
            if let Some(tab) = g.upgrade() {
                promote(&tab);
            }
        },
        move |held| {
            if let Some(tab) = l.upgrade() {
                if held {
                    demote(&tab)
                } else {
                    go_alone(&tab)
                }
            }
        },
    );
    let failed = lock.is_none();
    let old = tab.lock.replace(lock);
    drop(old);
    if failed {
        go_alone(tab);
    }
}

/// Web Locks refused this tab (a sandboxed frame, an opaque origin): stop
/// coordinating and run an ordinary per-tab connection.
fn go_alone(tab: &Rc<Tab>) {
    let Some(conn) = tab.conn.upgrade() else {
        return;
    };
    let Some(me) = conn.tab.borrow_mut().take() else {
        return;
    };
    let mut config = tab.config.clone();
    config.last_event_id = tab.mirror.borrow().last_event_id.clone();
    let leader = tab.leader.get();
    // Dropped on the next microtask: this may run inside one of its own
    // listeners or lock callbacks.
    wasm_bindgen_futures::spawn_local(async move { drop(me) });
    if !leader {
        connection::restart(&conn, Engine::new(config, tab.seed), tab.caps);
    }
}

/// This tab holds the lock: run the connection from the last cursor seen.
fn promote(tab: &Rc<Tab>) {
    let Some(conn) = tab.conn.upgrade() else {
        return;
    };
    if tab.leader.get() || conn.is_stopped() {
        return;
    }
    let mut config = tab.config.clone();
    config.last_event_id = tab.mirror.borrow().last_event_id.clone();
    tab.leader.set(true);
    // Its own engine resumes from the cursor: the server fills any gap.
    tab.restored_from.borrow_mut().take();
    cancel_steal(tab);
    connection::restart(&conn, Engine::new(config, tab.seed), tab.caps);
}

/// The lock was stolen: stop the request and follow, queued again.
fn demote(tab: &Rc<Tab>) {
    let Some(conn) = tab.conn.upgrade() else {
        return;
    };
    if !tab.leader.replace(false) {
        return;
    }
    connection::halt(&conn, Engine::new(tab.config.clone(), tab.seed));
    queue(tab, false);
    // What the new leader said while this tab still led was not for this
    // tab's subscriptions: ask for its transport and state again.
    if let Some(ch) = tab.channel.borrow().as_ref() {
        ch.post(&channel::hello());
    }
}

/// The visibility rule: a visible follower takes over from a leader that
/// paused because it is hidden or frozen, after a random 0–200 ms.
fn consider_steal(tab: &Rc<Tab>) {
    if tab.leader.get() || tab.steal_due.get() || hidden() || !tab.leader_paused_hidden() {
        return;
    }
    tab.steal_due.set(true);
    let weak = Rc::downgrade(tab);
    let delay = (STEAL_AFTER_MS + js_sys::Math::random() * STEAL_JITTER_MS) as u64;
    let timer = Timer::new(delay, move || {
        let Some(tab) = weak.upgrade() else { return };
        tab.steal_due.set(false);
        // Another tab may have taken over meanwhile.
        if !tab.leader.get() && !hidden() && tab.leader_paused_hidden() {
            queue(&tab, true);
        }
    });
    let old = tab.steal_timer.replace(Some(timer));
    drop(old);
}

fn cancel_steal(tab: &Tab) {
    tab.steal_due.set(false);
    let old = tab.steal_timer.borrow_mut().take();
    drop(old);
}

/// `pagehide` (the tab closes, navigates, or enters the back-forward cache):
/// a leader says `bye`, stops its request and releases the lock at once, so
/// the next tab in the queue takes over without waiting for a steal; a
/// follower withdraws from the queue (a frozen page must not be granted the
/// lock). Its subscriptions hear `paused` (`frozen`). The channel closes too:
/// Chromium evicts a cached page whose `BroadcastChannel` receives a message,
/// or that holds or waits for a Web Lock.
fn leave(tab: &Rc<Tab>) {
    let Some(conn) = tab.conn.upgrade() else {
        return;
    };
    cancel_steal(tab);
    if tab.leader.replace(false) {
        if let Some(ch) = tab.channel.borrow().as_ref() {
            ch.post(&channel::bye());
        }
        connection::halt(&conn, Engine::new(tab.config.clone(), tab.seed));
        let paused = Notice::Action(Action::State {
            state: State::Paused,
            reason: Reason::Frozen,
            delay_ms: None,
        });
        tab.note(&paused, "");
        connection::tell(&conn, paused);
    }
    let lock = tab.lock.borrow_mut().take();
    let channel = tab.channel.borrow_mut().take();
    drop((lock, channel));
}

/// `pageshow` from the back-forward cache: open the channel again (asking
/// the leader for its state) and queue for the lock.
fn rejoin(tab: &Rc<Tab>) {
    let cursor = tab.mirror.borrow().last_event_id.clone();
    *tab.restored_from.borrow_mut() = Some(cursor);
    if tab.channel.borrow().is_none() {
        open_channel(tab);
    }
    if tab.lock.borrow().is_none() {
        queue(tab, false);
    }
}

fn hidden() -> bool {
    web_sys::window()
        .and_then(|w| w.document())
        .is_some_and(|d| d.hidden())
}

/// `url` resolved against the page (as given when that fails).
fn absolute(url: &str) -> String {
    let base = js_sys::Reflect::get(&js_sys::global(), &"location".into())
        .ok()
        .and_then(|l| js_sys::Reflect::get(&l, &"href".into()).ok())
        .and_then(|h| h.as_string());
    base.and_then(|b| web_sys::Url::new_with_base(url, &b).ok())
        .map(|u| u.href())
        .unwrap_or_else(|| url.into())
}
