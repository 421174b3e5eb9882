//! The connection's side of cross-tab coordination: it feeds the coordinator
//! ([`CrossTab`], in `tidings-core`) its facts — lock granted, stolen or
//! failed, a decoded channel message, the steal timer — and renders its
//! actions with the guards of `src/tabs/`. It decides nothing. A connection
//! that is not shared across tabs has a solo coordinator, which only says
//! `Run` once.

use std::rc::Rc;

use tidings_core::crosstab::{CrossTab, Relay, Support, TabAction};
use tidings_core::engine::{Config, Protocol, TransportKind};
use tidings_core::time::{MonoMs, Now};

use super::{Connection, Notice};
use crate::clock;
use crate::guard::Timer;
use crate::tabs::channel::{self, Channel};
use crate::tabs::leader::{Lock, LockEvent};

/// The browser resources of one coordinator, each a guard.
pub(crate) struct TabIo {
    /// The lock's and the channel's name; `None`: not shared across tabs.
    name: Option<String>,
    channel: Option<Channel>,
    lock: Option<Lock>,
    timer: Option<(MonoMs, Timer)>,
}

impl TabIo {
    pub(crate) fn new(name: Option<String>) -> TabIo {
        TabIo {
            name,
            channel: None,
            lock: None,
            timer: None,
        }
    }
}

/// The coordinator of a connection made of `config`: seeded per tab from
/// `crypto.getRandomValues`, never from the `seed` option (tabs given the
/// same seed must still steal at different times); Durable Streams messages
/// placed by offset (they carry no id).
pub(super) fn machine(config: &Config) -> CrossTab {
    let m = CrossTab::new(config.last_event_id.clone(), crate::clock::random_seed());
    match config.protocol {
        Protocol::DurableStreams => m.with_offsets(),
        _ => m,
    }
}

/// Start the coordinator: open the channel where this tab can coordinate,
/// then tell the machine what it has.
pub(super) fn start(conn: &Rc<Connection>) {
    let shared = conn.tab_io.borrow().name.is_some();
    let (locks, has_bc) = if shared {
        crate::tabs::supported()
    } else {
        (false, false)
    };
    let channel = locks && has_bc && open_channel(conn);
    feed(conn, |t, now| {
        t.handle_start(now, Support { locks, channel })
    });
}

/// Give the coordinator one fact (with both clocks read now), then render
/// its actions.
pub(crate) fn feed(conn: &Rc<Connection>, f: impl FnOnce(&mut CrossTab, Now)) {
    f(&mut conn.tabs.borrow_mut(), clock::now());
    drain(conn);
}

/// A notice of this tab's engine, with the engine's cursor: whether this
/// tab's subscriptions hear it (a leader also relays it: render with
/// [`drain`]).
pub(super) fn own(conn: &Connection, notice: &Notice) -> bool {
    let e = conn.engine.borrow();
    let mut tabs = conn.tabs.borrow_mut();
    match notice {
        // One delivery per notice here (`push`): batches form after this.
        Notice::Messages(ds) => ds.first().is_none_or(|d| {
            let t = TransportKind::from_name(d.transport);
            tabs.handle_own_message(&d.msg, t, e.last_event_id())
        }),
        Notice::Action(a) => tabs.handle_own_action(a, e.last_event_id()),
        Notice::HeadersFailed { .. } | Notice::Status(_) | Notice::BatchEnd => true,
    }
}

/// Render the coordinator's actions until `Wait`. The borrow of the machine
/// ends with each `poll`: rendering may tell subscribers (user JS).
pub(super) fn drain(conn: &Rc<Connection>) {
    loop {
        let action = conn.tabs.borrow_mut().poll();
        match action {
            TabAction::Wait { until } => {
                arm_timer(conn, until);
                return;
            }
            TabAction::Post(wire) => {
                let io = conn.tab_io.borrow();
                if let (Some(ch), Some(a)) = (io.channel.as_ref(), channel::encode(&wire)) {
                    ch.post(&a);
                }
            }
            TabAction::RequestLock { steal } => request_lock(conn, steal),
            TabAction::DropLock => {
                let old = conn.tab_io.borrow_mut().lock.take();
                drop(old);
            }
            TabAction::OpenChannel => {
                open_channel(conn);
            }
            TabAction::CloseChannel => {
                // Safe inside the channel's own listener (a subscription
                // closed by a listener of a relayed notice): wasm-bindgen
                // frees a closure that is running when its call returns.
                let old = conn.tab_io.borrow_mut().channel.take();
                drop(old);
            }
            TabAction::Run { cursor } => super::restart(conn, cursor),
            TabAction::Halt => super::halt(conn),
            TabAction::Reconnect => super::page::reconnect_engine(conn),
            TabAction::Tell(relay) => super::tell(conn, notice(relay)),
        }
    }
}

fn notice(relay: Relay) -> Notice {
    match relay {
        Relay::Message(msg, t) => Notice::Messages(vec![super::Delivery {
            msg,
            transport: t.map_or("", |t| t.as_str()),
            data: None,
        }]),
        Relay::Action(a) => Notice::Action(a),
    }
}

/// Open the channel; `false` when it cannot be opened.
fn open_channel(conn: &Rc<Connection>) -> bool {
    let weak = Rc::downgrade(conn);
    // Opening calls nothing back synchronously: the borrow may stay.
    let ch = conn.tab_io.borrow().name.as_deref().and_then(|name| {
        Channel::open(name, move |v| {
            let Some(conn) = weak.upgrade() else { return };
            if let Some(wire) = channel::decode(&v) {
                feed(&conn, |t, now| t.handle_wire(now, wire));
            }
        })
    });
    let opened = ch.is_some();
    let old = std::mem::replace(&mut conn.tab_io.borrow_mut().channel, ch);
    drop(old);
    opened
}

/// Request the lock (replacing the old request or hold, dropped after the
/// new one is made). A request that throws is the machine's
/// `handle_lock_failed`.
fn request_lock(conn: &Rc<Connection>, steal: bool) {
    let weak = Rc::downgrade(conn);
    // Requesting calls nothing back synchronously: the borrow may stay.
    let lock = conn.tab_io.borrow().name.as_deref().and_then(|name| {
        Lock::request(name, steal, move |event| {
            if let Some(conn) = weak.upgrade() {
                feed(&conn, |t, now| match event {
                    LockEvent::Granted => t.handle_lock_granted(now),
                    LockEvent::Stolen => t.handle_lock_stolen(now),
                    LockEvent::Failed => t.handle_lock_failed(now),
                });
            }
        })
    });
    let failed = lock.is_none();
    let old = std::mem::replace(&mut conn.tab_io.borrow_mut().lock, lock);
    drop(old);
    if failed {
        // Queued behind the actions being drained.
        conn.tabs.borrow_mut().handle_lock_failed(clock::now());
    }
}

/// The coordinator's one timer (the steal delay).
fn arm_timer(conn: &Rc<Connection>, until: Option<MonoMs>) {
    let same = conn.tab_io.borrow().timer.as_ref().map(|(t, _)| *t) == until;
    if same {
        return;
    }
    let timer = until.map(|t| {
        let weak = Rc::downgrade(conn);
        let timer = Timer::new(t.since(clock::now().mono), move || {
            if let Some(conn) = weak.upgrade() {
                let fired = conn.tab_io.borrow_mut().timer.take();
                drop(fired);
                feed(&conn, |t, now| t.handle_timer(now));
            }
        });
        (t, timer)
    });
    let old = std::mem::replace(&mut conn.tab_io.borrow_mut().timer, timer);
    drop(old);
}

/// Close: the coordinator says `bye` if it leads, drops its lock and channel;
/// the timer goes.
pub(super) fn close(conn: &Rc<Connection>) {
    feed(conn, |t, now| t.handle_close(now));
    let io = std::mem::replace(&mut *conn.tab_io.borrow_mut(), TabIo::new(None));
    drop(io);
}
