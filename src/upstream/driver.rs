//! One drive loop for the upstream machines (a send's `Sender`, the
//! `Appender`, the `Reporter`, a subscription's `AckBatcher`; each a core
//! [`Machine`]): feed an input with both clocks read now, drain the
//! machine's actions while it is borrowed, carry them out after the borrow
//! ends (so nothing they trigger, app code included, finds the machine
//! borrowed), then arm the one timer for its `Wait`. Each adapter says what
//! its machine's actions do ([`Drive`]); the attempt (`request::start`) and
//! the timer are carried out here once, over a `dyn` [`Slots`] owner,
//! instead of once per adapter in the bundle (README "Size"). The slots themselves ([`Live`]) and the
//! timer's input ([`Machine::TIMER`]) are here too: [`Slots`] is implemented
//! once for every [`Drive`], so an adapter writes only its own reply.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use tidings_core::machine::Machine;
use tidings_core::time::{MonoMs, Now};
use tidings_core::upstream::Issue;
use web_sys::Headers;

use super::request::{self, Attempt, Reply, Request};
use crate::clock;
use crate::guard::Timer;

/// Which request a reply answers: the adapter's id for it (send: unused,
/// appender: the request, reporter: the report) and its attempt number.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Tag {
    /// The adapter's id.
    pub id: u64,
    /// The attempt number (the `headers` function's `attempt`).
    pub attempt: u32,
}

/// What every upstream adapter owns for the loop: its live attempt (at
/// most one: the machines' rule), its one timer and what its last attempt
/// sent.
#[derive(Default)]
pub struct Live {
    attempt: RefCell<Option<(Tag, Attempt)>>,
    timer: RefCell<Option<Timer>>,
    /// A call on a microtask ([`soon`]): the start, a reply that could not
    /// wait for an attempt.
    soon: RefCell<Option<Timer>>,
    /// The last attempt that went out, for the `pagehide` hand-off
    /// (`page.rs`).
    pub sent: RefCell<Option<Sent>>,
}

/// An attempt that went out: re-issued as it was with `keepalive: true` at
/// `pagehide` (the app's `headers` function is not called again).
pub struct Sent {
    /// When it went out: its age for the keepalive budget.
    pub at: MonoMs,
    /// What it sent: URL, body, credentials.
    pub req: Rc<Request>,
    /// Its method.
    pub method: String,
    /// The headers it sent, the machine's included.
    pub headers: Headers,
}

/// An adapter as the attempt and the timer see it (`dyn`, so they exist
/// once in the bundle): implemented for every [`Drive`] below, never by
/// hand.
pub trait Slots {
    /// Its live attempt and timer.
    fn held(&self) -> &Live;
    /// The timer fired (its slot is already empty).
    fn fired(self: Rc<Self>);
    /// The attempt `tag` replied (never while the machine is borrowed).
    fn replied(self: Rc<Self>, tag: Tag, reply: Reply);
    /// Whether the work of [`Live::sent`] is still unsettled.
    fn owes(&self) -> bool;
    /// The page went online or offline ([`Drive::online`]).
    fn went_online(self: Rc<Self>, on: bool);
}

/// An adapter: its machine, its [`Live`] slots and what its actions and
/// replies do.
pub trait Drive: Sized + 'static {
    /// Its machine.
    type M: Machine + 'static;
    /// Actions drained per fact at most: a bound against a machine bug
    /// that never says `Wait`.
    const MAX_ACTIONS: usize = usize::MAX;
    /// Its machine, borrowed only inside [`feed`].
    fn machine(&self) -> &RefCell<Self::M>;
    /// Its live attempt and timer.
    fn live(&self) -> &Live;
    /// Whether facts still matter (`false` once settled or closed).
    fn open(&self) -> bool {
        true
    }
    /// Carry out one action (the machine is not borrowed).
    fn act(self: &Rc<Self>, now: Now, action: <Self::M as Machine>::Action);
    /// The attempt `tag` replied: feed what it means.
    fn reply(self: Rc<Self>, tag: Tag, reply: Reply);
    /// Whether the work of its last attempt sent ([`Live::sent`]) is still
    /// unsettled (default: while [`Drive::open`]).
    fn owes(&self) -> bool {
        self.open()
    }
    /// After every [`feed`] (the reporter forgets its listeners once closed).
    fn fed(&self) {}
    /// The page went online or offline, for an adapter `page.rs` holds
    /// (the appender; a reporter hears it from its lifecycle watcher).
    fn online(self: Rc<Self>, _on: bool) {}
}

impl<D: Drive> Slots for D {
    fn held(&self) -> &Live {
        self.live()
    }

    fn fired(self: Rc<Self>) {
        feed(&self, <D::M as Machine>::TIMER);
    }

    fn replied(self: Rc<Self>, tag: Tag, reply: Reply) {
        self.reply(tag, reply);
    }

    fn owes(&self) -> bool {
        Drive::owes(self)
    }

    fn went_online(self: Rc<Self>, on: bool) {
        self.online(on);
    }
}

/// Feed one fact, then carry out what the machine drained and arm the
/// timer for its `Wait` (not once the adapter closed). Nothing when the
/// adapter is not [`Drive::open`].
pub fn feed<D: Drive>(d: &Rc<D>, fact: <D::M as Machine>::Input<'static>) {
    if !d.open() {
        d.fed();
        return;
    }
    let now = clock::now();
    let mut actions = Vec::new();
    let mut until = None;
    {
        let mut m = d.machine().borrow_mut();
        m.handle(now, fact);
        for _ in 0..D::MAX_ACTIONS {
            match m.next() {
                Ok(a) => actions.push(a),
                Err(u) => {
                    until = u;
                    break;
                }
            }
        }
    }
    for a in actions {
        d.act(now, a);
    }
    if d.open() {
        let d: Rc<dyn Slots> = d.clone();
        arm_timer(&d, now.mono, until);
    }
    d.fed();
}

/// One timer for `until` (`None`: none); the one it replaces is dropped
/// (cancelled) after the slot's borrow ends.
fn arm_timer(d: &Rc<dyn Slots>, now: MonoMs, until: Option<MonoMs>) {
    let timer = until.map(|t| {
        let weak = Rc::downgrade(d);
        Timer::new(t.since(now), move || {
            if let Some(d) = weak.upgrade() {
                let fired = d.held().timer.borrow_mut().take();
                drop(fired);
                d.fired();
            }
        })
    });
    let old = std::mem::replace(&mut *d.held().timer.borrow_mut(), timer);
    drop(old);
}

/// Start `issue` (the machine's attempt: its method, extra headers and
/// answer cap) of `req` as attempt `tag`; its reply comes back through
/// [`Slots::replied`] from the task queue. Without `AbortController` (a
/// very old browser) the reply is [`Reply::NotStarted`], from the task queue
/// as every reply is.
pub fn issue(d: &Rc<dyn Slots>, req: &Rc<Request>, tag: Tag, issue: Issue) {
    let sent_to = Rc::downgrade(d);
    let replied_to = Rc::downgrade(d);
    let started = request::start(
        req,
        issue,
        move |r: &Rc<Request>, method: String, headers: &Headers| {
            if let Some(d) = sent_to.upgrade() {
                *d.held().sent.borrow_mut() = Some(Sent {
                    at: clock::now().mono,
                    req: Rc::clone(r),
                    method,
                    headers: headers.clone(),
                });
            }
        },
        move |reply| reply_to(&replied_to, tag, reply),
    );
    match started {
        Ok(attempt) => *d.held().attempt.borrow_mut() = Some((tag, attempt)),
        Err(_) => not_started(d, tag),
    }
}

/// Reply [`Reply::NotStarted`] to `tag` from the task queue, as every reply
/// comes (an attempt that could not start).
pub fn not_started(d: &Rc<dyn Slots>, tag: Tag) {
    let weak = Rc::downgrade(d);
    soon(
        &**d,
        Box::new(move || reply_to(&weak, tag, Reply::NotStarted)),
    );
}

/// Call `f` on a microtask, not from here (held by `d`: cancelled if it
/// goes first; one at a time, a later call replacing an earlier one that
/// has not run). Out of line: one copy for every caller.
#[inline(never)]
pub fn soon(d: &dyn Slots, f: Box<dyn FnOnce()>) {
    let old = d.held().soon.borrow_mut().replace(Timer::soon(f));
    drop(old);
}

fn reply_to(d: &Weak<dyn Slots>, tag: Tag, reply: Reply) {
    if let Some(d) = d.upgrade() {
        d.replied(tag, reply);
    }
}

/// Abort the live attempt (any, or only `tag`'s): taken from its slot
/// first, dropped (aborted) after the borrow ends.
pub fn abort(d: &dyn Slots, tag: Option<Tag>) {
    let live = d
        .held()
        .attempt
        .borrow_mut()
        .take_if(|(t, _)| tag.is_none_or(|tag| tag == *t));
    drop(live);
}

/// Drop the live attempt and the timer (settled or closed for good).
pub fn release(d: &dyn Slots) {
    let held = d.held();
    let dropped = (
        held.attempt.borrow_mut().take(),
        held.timer.borrow_mut().take(),
    );
    drop(dropped);
}
