//! [`Subscription`]: a reader of a shared connection (`src/connection/`), as
//! the JS `Subscription` is, rendering the connection's notices as Rust
//! values: [`Message`]s on the `Stream`, the rest as [`Event`]s.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use tidings_core::calm::{Status, Subscriber};
use tidings_core::engine::{ReconnectAnswer, State, Stats, TransportKind};

use super::headers::JsHeadersFn;
use super::{Event, Message};
use crate::api::persist::{self, Persisted};
use crate::connection::{self, registry, Connection, Notice};
use crate::options::Options as Checked;

/// A live subscription: a `futures_core::Stream` of [`Message`]s that ends
/// when it is closed or stops (a fatal error, in [`Self::events`]; after
/// `gave-up`, [`Self::reconnect`] revives it and the stream yields again).
/// Messages queue until read, as on a channel: read them, or drop the
/// subscription. With `persist`, pulling the next message is what says the
/// previous one was handled (its cursor is written then).
/// Dropping it closes it; the shared connection closes with its last
/// subscription, never while another still reads it.
pub struct Subscription {
    inner: Rc<Inner>,
}

/// The [`Event`]s of a subscription ([`Subscription::events`]); ends with it.
pub struct Events {
    inner: Rc<Inner>,
}

struct Inner {
    conn: Rc<Connection>,
    key: String,
    handle: Cell<Option<u32>>,
    /// What this subscription reads of its connection's status and state
    /// (`Closed` from its `close()` on: the core's rule).
    seat: Cell<Subscriber>,
    messages: RefCell<VecDeque<Message>>,
    /// `None` until [`Subscription::events`] asks: nobody reads them before.
    events: RefCell<Option<VecDeque<Event>>>,
    message_waker: RefCell<Option<Waker>>,
    event_waker: RefCell<Option<Waker>>,
    /// The connection stopped (fatal error or `closed`; a `gave-up` one
    /// may be revived by [`Subscription::reconnect`]).
    stopped: Cell<bool>,
    /// `persist`: the cursor kept across reloads (the JS API's code).
    persist: Option<Persisted>,
    /// With `persist`: the cursor after the message handed out last, handled
    /// once the consumer pulls again (as the JS async iterator's `next()`).
    handed: RefCell<Option<String>>,
    /// `Options::headers_fn` as the JS function the connection calls.
    _headers: Option<JsHeadersFn>,
}

impl Subscription {
    pub(super) fn start(url: &str, mut options: Checked, headers: Option<JsHeadersFn>) -> Self {
        let persist = persist::open(url, &mut options);
        let (key, conn) = registry::connect(options);
        if let Some(p) = &persist {
            p.started(&conn);
        }
        let inner = Rc::new(Inner {
            conn,
            key,
            handle: Cell::new(None),
            seat: Cell::new(Subscriber::new()),
            messages: RefCell::default(),
            events: RefCell::default(),
            message_waker: RefCell::default(),
            event_waker: RefCell::default(),
            stopped: Cell::new(false),
            persist,
            handed: RefCell::default(),
            _headers: headers,
        });
        let weak = Rc::downgrade(&inner);
        let handle = inner.conn.listen(Rc::new(move |n: &Notice| {
            if let Some(inner) = weak.upgrade() {
                on_notice(&inner, n);
            }
        }));
        inner.handle.set(Some(handle));
        Subscription { inner }
    }

    /// The next message, or `None` once the subscription ended (the
    /// `Stream`'s `next`, without needing `futures-util`).
    pub async fn next(&mut self) -> Option<Message> {
        std::future::poll_fn(|cx| poll_message(&self.inner, cx)).await
    }

    /// The subscription's [`Event`]s from now on (a second stream; events
    /// before the first call are not kept). Joining a connection that is
    /// already open starts with [`Event::Open`].
    pub fn events(&self) -> Events {
        let mut events = self.inner.events.borrow_mut();
        if events.is_none() {
            let mut q = VecDeque::new();
            if self.inner.conn.state() == State::Open {
                let transport = self.inner.conn.transport_name();
                q.push_back(Event::Open { transport });
            }
            *events = Some(q);
        }
        Events {
            inner: self.inner.clone(),
        }
    }

    /// Close: no message or event comes any more (both streams end); the
    /// connection closes when this was its last subscription. Idempotent;
    /// `Drop` does it too.
    pub fn close(&self) {
        close(&self.inner);
    }

    /// The state (`Closed` once this subscription is closed).
    pub fn state(&self) -> State {
        self.inner.seat.get().state(Some(self.inner.conn.state()))
    }

    /// The transport in use or about to be tried; `None` before the engine
    /// chose one (a microtask after `subscribe`).
    pub fn transport(&self) -> Option<TransportKind> {
        TransportKind::from_name(self.inner.conn.transport_name())
    }

    /// The cursor: the last event id seen (or the initial `last_event_id`).
    pub fn last_event_id(&self) -> String {
        self.inner.conn.last_event_id()
    }

    /// The counters of the connection (JS `stats()`).
    pub fn stats(&self) -> Stats {
        self.inner.conn.with_engine(|e| e.stats())
    }

    /// The calm status (JS `status`; docs/reconnects.md, "Connection status"):
    /// `Connecting` until first established, `Connected` while a transport
    /// is open or requests are answered, `Reconnecting` / `Offline` only
    /// after `lost_after_ms` down (default 5000), `Closed` once stopped or
    /// closed. Changes come as [`Event::Status`].
    pub fn status(&self) -> Status {
        self.inner.seat.get().status(Some(self.inner.conn.status()))
    }

    /// "Try now" (JS `reconnect()`; docs/reconnects.md): what it does,
    /// and when it does nothing, is the engine's to decide (the rules:
    /// `tidings_core` `engine::reconnect`). It may revive a subscription that
    /// gave up: its streams, which ended, go on (call `next()` again).
    /// Returns what it did and why (JS: the answer's name); a closed
    /// subscription: [`ReconnectAnswer::Closed`].
    pub fn reconnect(&self) -> ReconnectAnswer {
        match self.inner.handle.get() {
            Some(_) => connection::reconnect(&self.inner.conn),
            None => ReconnectAnswer::Closed,
        }
    }
}

impl futures_core::Stream for Subscription {
    type Item = Message;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Message>> {
        poll_message(&self.inner, cx)
    }
}

impl Events {
    /// The next event, or `None` once the subscription ended (the
    /// `Stream`'s `next`, without needing `futures-util`).
    pub async fn next(&mut self) -> Option<Event> {
        std::future::poll_fn(|cx| poll_event(&self.inner, cx)).await
    }
}

impl futures_core::Stream for Events {
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        poll_event(&self.inner, cx)
    }
}

fn poll_event(inner: &Inner, cx: &mut Context<'_>) -> Poll<Option<Event>> {
    let next = inner
        .events
        .borrow_mut()
        .as_mut()
        .and_then(VecDeque::pop_front);
    match next {
        Some(e) => Poll::Ready(Some(e)),
        None if ended(inner) => Poll::Ready(None),
        None => {
            *inner.event_waker.borrow_mut() = Some(cx.waker().clone());
            Poll::Pending
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        close(&self.inner);
    }
}

fn poll_message(inner: &Inner, cx: &mut Context<'_>) -> Poll<Option<Message>> {
    pulled(inner);
    let next = inner.messages.borrow_mut().pop_front();
    match next {
        Some(m) => {
            if inner.persist.is_some() {
                *inner.handed.borrow_mut() = Some(m.last_event_id.clone());
            }
            Poll::Ready(Some(m))
        }
        None if ended(inner) => Poll::Ready(None),
        None => {
            *inner.message_waker.borrow_mut() = Some(cx.waker().clone());
            Poll::Pending
        }
    }
}

/// `persist`: the consumer pulls again, so it handled the message handed
/// out last: its cursor is written now (the JS iterator's `_handled`).
fn pulled(inner: &Inner) {
    let (Some(p), Some(_)) = (&inner.persist, inner.handle.get()) else {
        return;
    };
    let handed = inner.handed.borrow_mut().take();
    if let Some(cursor) = handed {
        p.pulled(&inner.conn, &cursor);
    }
}

fn ended(inner: &Inner) -> bool {
    inner.handle.get().is_none() || inner.stopped.get()
}

fn close(inner: &Inner) {
    let Some(handle) = inner.handle.take() else {
        return;
    };
    let mut seat = inner.seat.get();
    seat.handle_close();
    inner.seat.set(seat);
    registry::leave(&inner.key, &inner.conn, handle);
    wake(inner);
}

/// Wake both readers (the wakers are taken out first: waking may poll).
fn wake(inner: &Inner) {
    let m = inner.message_waker.borrow_mut().take();
    let e = inner.event_waker.borrow_mut().take();
    for w in [m, e].into_iter().flatten() {
        w.wake();
    }
}

/// Queue one connection notice for this subscription's readers.
fn on_notice(inner: &Inner, notice: &Notice) {
    if inner.handle.get().is_none() {
        return;
    }
    match notice {
        Notice::Messages(batch) => {
            let mut messages = inner.messages.borrow_mut();
            for d in batch {
                messages.push_back(Message::from_engine(&d.msg, d.transport));
                if let Some(p) = &inner.persist {
                    p.queued();
                }
            }
        }
        Notice::BatchEnd => {
            // `persist`: a `reset` of this batch clears the stored cursor
            // (writes come from the consumer's pulls).
            if let Some(p) = &inner.persist {
                p.flush(&inner.conn);
            }
            return;
        }
        _ => crate::api::events::render(&inner.conn, notice, &mut |e| {
            if let Some(p) = &inner.persist {
                p.on_event(&e);
            }
            if let Some(stopped) = e.stops() {
                inner.stopped.set(stopped);
            }
            if let Some(q) = inner.events.borrow_mut().as_mut() {
                q.push_back(e);
            }
        }),
    }
    wake(inner);
}
