//! The connection's cross-tab resources: the Web Lock and the
//! `BroadcastChannel` (guards of `src/tabs/`). It renders the session's
//! cross-tab actions and reports their facts (lock granted, stolen or
//! failed, a decoded channel message) back. It decides nothing.

use std::rc::Rc;

use tidings_core::crosstab::Support;
use tidings_core::session::{Input, SessionAction, TabFact};

use super::{handle, Connection};
use crate::tabs::channel::{self, Channel};
use crate::tabs::leader::{Lock, LockEvent};

/// The browser resources of one connection's coordinator, each a guard.
pub(crate) struct TabIo {
    /// The lock's and the channel's name; `None`: not shared across tabs.
    name: Option<String>,
    channel: Option<Channel>,
    lock: Option<Lock>,
}

impl TabIo {
    pub(crate) fn new(name: Option<String>) -> TabIo {
        TabIo {
            name,
            channel: None,
            lock: None,
        }
    }
}

/// What this tab can coordinate with: Web Locks and a channel, opened now
/// (none for a connection of this tab only).
pub(super) fn support(conn: &Rc<Connection>) -> Support {
    let shared = conn.tab_io.borrow().name.is_some();
    let (locks, has_bc) = match shared {
        true => crate::tabs::supported(),
        false => (false, false),
    };
    let channel = locks && has_bc && open_channel(conn);
    Support { locks, channel }
}

/// Carry out one cross-tab action of the session.
pub(super) fn render(conn: &Rc<Connection>, action: SessionAction) {
    match action {
        SessionAction::Post(wire) => {
            let io = conn.tab_io.borrow();
            if let (Some(ch), Some(a)) = (io.channel.as_ref(), channel::encode(&wire)) {
                ch.post(&a);
            }
        }
        SessionAction::RequestLock { steal } => request_lock(conn, steal),
        SessionAction::DropLock => {
            let old = conn.tab_io.borrow_mut().lock.take();
            drop(old);
        }
        SessionAction::OpenChannel => {
            open_channel(conn);
        }
        SessionAction::CloseChannel => {
            // Safe inside the channel's own listener (a subscription
            // closed by a listener of a relayed notice): wasm-bindgen
            // frees a closure that is running when its call returns.
            let old = conn.tab_io.borrow_mut().channel.take();
            drop(old);
        }
        _ => {}
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
                handle(&conn, Input::Tab(TabFact::Wire(wire)));
            }
        })
    });
    let opened = ch.is_some();
    let old = std::mem::replace(&mut conn.tab_io.borrow_mut().channel, ch);
    drop(old);
    opened
}

/// Request the lock (replacing the old request or hold, dropped after the
/// new one is made). A request that throws is reported as failed, queued
/// behind the actions being drained.
fn request_lock(conn: &Rc<Connection>, steal: bool) {
    let weak = Rc::downgrade(conn);
    // Requesting calls nothing back synchronously: the borrow may stay.
    let lock = conn.tab_io.borrow().name.as_deref().and_then(|name| {
        Lock::request(name, steal, move |event| {
            if let Some(conn) = weak.upgrade() {
                let fact = match event {
                    LockEvent::Granted => TabFact::LockGranted,
                    LockEvent::Stolen => TabFact::LockStolen,
                    LockEvent::Failed => TabFact::LockFailed,
                };
                handle(&conn, Input::Tab(fact));
            }
        })
    });
    let failed = lock.is_none();
    let old = std::mem::replace(&mut conn.tab_io.borrow_mut().lock, lock);
    drop(old);
    if failed {
        handle(conn, Input::Tab(TabFact::LockFailed));
    }
}
