//! `persist`: the cursor kept in `sessionStorage` / `localStorage` across
//! reloads. The policy (key, restore, what is written when, `reset`,
//! `crossTab` followers, failures) is `tidings_core::persist`; this file only
//! reads and writes the storage and reports its failure (one debug-log line).

use std::cell::{Cell, RefCell};

use tidings_core::engine::Protocol;
use tidings_core::persist::{self, Op, Persist, Scope};
use wasm_bindgen::JsValue;

use crate::connection::{web_storage_call, Connection};
use crate::event::Event;
use crate::options::Options;

/// One subscription's persisted cursor.
pub(crate) struct Persisted {
    key: String,
    storage: &'static str,
    policy: RefCell<Persist>,
    /// An async iterator reads the subscription: its pulls say what the app
    /// handled, not the dispatch to listeners.
    iterated: Cell<bool>,
    /// The read at `subscribe` failed: log it once the connection exists.
    read_failed: Cell<bool>,
}

/// For `options.persist`: read the stored cursor and start from it (unless
/// the app gave one, see `persist::restore`).
pub(crate) fn open(url: &str, options: &mut Options) -> Option<Persisted> {
    let (scope, persist_key) = options.persist.clone()?;
    let c = &mut options.config;
    let key = persist::storage_key(url, &c.events, persist_key.as_deref());
    let storage = match scope {
        Scope::Session => "sessionStorage",
        Scope::Local => "localStorage",
    };
    let read = web_storage_call(storage, "getItem", &[&key]);
    let stored = read.as_ref().and_then(JsValue::as_string);
    let durable = c.protocol == Protocol::DurableStreams;
    if let Some(cursor) = persist::restore(&c.last_event_id, stored.as_deref(), durable) {
        c.last_event_id = String::from(cursor);
    }
    let mut policy = Persist::new(scope, stored);
    if read.is_none() {
        policy.failed();
    }
    Some(Persisted {
        key,
        storage,
        policy: RefCell::new(policy),
        iterated: Cell::new(false),
        read_failed: Cell::new(read.is_none()),
    })
}

impl Persisted {
    /// After `subscribe` connected: report a failed read (the one line).
    pub fn started(&self, conn: &Connection) {
        if self.read_failed.take() {
            log(conn, self.storage);
        }
    }

    /// The listeners handled a message with this cursor after it (written
    /// at the end of the batch, [`Persisted::flush`]); once an iterator
    /// reads the subscription, the message was only queued for it.
    pub fn handled(&self, cursor: &str) {
        match self.iterated.get() {
            true => self.policy.borrow_mut().queued(),
            false => self.policy.borrow_mut().handled(cursor),
        }
    }

    /// A pulling reader started (the JS async iterator): from now on only
    /// its pulls say what was handled.
    pub fn iterate(&self) {
        self.iterated.set(true);
    }

    /// A message was queued for a pulling reader (the Rust `Stream`).
    #[cfg(feature = "rust")]
    pub fn queued(&self) {
        self.policy.borrow_mut().queued();
    }

    /// The reader's pull: the consumer handled the next message of its
    /// queue, with this cursor after it (`Persist::pulled`: not one queued
    /// before a `reset`). Written at once: one pull is one message anyway.
    pub fn pulled(&self, conn: &Connection, cursor: &str) {
        self.iterated.set(true);
        self.policy.borrow_mut().pulled(cursor);
        self.flush(conn);
    }

    /// An event of the subscription: a `reset` removes the stored cursor
    /// (at the end of the batch).
    pub fn on_event(&self, e: &Event) {
        if let Event::Reset { .. } = e {
            self.policy.borrow_mut().reset();
        }
    }

    /// The end of a delivered batch: carry out what the policy says. (One
    /// copy in the bundle: it has two callers.)
    pub fn flush(&self, conn: &Connection) {
        self.flush_as(conn, conn.follows());
    }

    /// [`Persisted::flush`] for a tab that `follows` another's connection
    /// or not (read before a `close()` that ends the following).
    #[inline(never)]
    pub fn flush_as(&self, conn: &Connection, follows: bool) {
        if !self.policy.borrow().is_pending() {
            return;
        }
        let op = self.policy.borrow_mut().take(follows);
        let done = match op {
            None => return,
            Some(Op::Write(c)) => web_storage_call(self.storage, "setItem", &[&self.key, &c]),
            Some(Op::Clear) => web_storage_call(self.storage, "removeItem", &[&self.key]),
        };
        if done.is_none() && self.policy.borrow_mut().failed() {
            log(conn, self.storage);
        }
    }
}

/// The one debug-log line of a storage that is missing, full or refused.
fn log(conn: &Connection, storage: &str) {
    let mut says = String::from(storage);
    says.push_str(" unavailable (missing, full or refused): the cursor is not persisted");
    conn.debug_log("persist", &JsValue::from_str(&says));
}
