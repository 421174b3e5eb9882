//! The sends of this page: who is pending (in call order), the `ordered`
//! queue of each URL, and the page listeners every pending send needs:
//! `online`/`offline` (reported to each send's machine and each held
//! appender's) and `pagehide` (the keepalive hand-off, decided by the core's
//! `keepalive_handoff`), which also covers the reporters and appenders
//! `hold` holds. The listeners are
//! added by the first send, reporter or appender, and removed when a send
//! settles and no send is pending and no held reporter or appender lives.
//!
//! `pagehide` (HTML "unloading documents"; `unload` is never used, so the page
//! stays eligible for the back-forward cache): every pending send, report
//! and append request the core picks is re-issued at once with `fetch(…, {
//! keepalive: true })`, the same key (or producer headers) and the headers
//! its last attempt sent; how many it left out is one debug line
//! (`console.debug("[tidings]", "pagehide", notSent)`, a number). The promises stay pending: if
//! the page is gone they never settle (nothing is left to run them); if it
//! was only put in the back-forward cache (`persisted`) and comes back, every
//! send goes on where it was, and its next attempt gets the server's replay
//! of whatever the keepalive copy applied (the same key: applied once).

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use tidings_core::upstream::{
    keepalive_handoff, ordered_key, Ordered, PendingSend, SendInput, KEEPALIVE_BUDGET_BYTES,
};
use wasm_bindgen::prelude::*;

use super::driver::Slots;
use super::task::{self, Task};
use crate::guard::Listener;

struct Page {
    /// Pending sends, in call order.
    tasks: Vec<Rc<Task>>,
    /// `ordered` sends per URL (its `ordered_key`: no fragment), by task
    /// address.
    ordered: Vec<(String, Ordered<usize>)>,
    /// The reporters and appenders (their requests are handed over too).
    held: Vec<Weak<dyn Slots>>,
    listeners: Vec<Listener>,
}

thread_local! {
    // A `const` initializer: no lazy-init check at each of the eight uses.
    static PAGE: RefCell<Page> = const {
        RefCell::new(Page {
            tasks: Vec::new(),
            ordered: Vec::new(),
            held: Vec::new(),
            listeners: Vec::new(),
        })
    };
}

fn id(task: &Task) -> usize {
    task as *const Task as usize
}

/// Hand `d`'s requests over at `pagehide` too (a reporter, an appender),
/// while it lives.
#[cfg(any(feature = "append", feature = "report"))]
pub fn hold(d: &Rc<dyn Slots>) {
    listening();
    PAGE.with(|p| p.borrow_mut().held.push(Rc::downgrade(d)));
}

/// Register `task`; `true` when it may start now (not queued behind an
/// earlier `ordered` send of its URL).
pub fn add(task: &Rc<Task>) -> bool {
    listening();
    PAGE.with(|p| {
        let mut p = p.borrow_mut();
        p.tasks.push(Rc::clone(task));
        if !task.ordered {
            return true;
        }
        let url = ordered_key(&task.req.url);
        let i = match p.ordered.iter().position(|(u, _)| u == url) {
            Some(i) => i,
            None => {
                p.ordered.push((url.into(), Ordered::new()));
                p.ordered.len() - 1
            }
        };
        p.ordered[i].1.push(id(task))
    })
}

/// The page listeners, unless they are there.
fn listening() {
    // Listeners are added outside the borrow: `addEventListener` may be the
    // app's (patched), and may call `send()` again.
    if PAGE.with(|p| p.borrow().listeners.is_empty()) {
        let mut fresh = listen();
        PAGE.with(|p| {
            let mut p = p.borrow_mut();
            if p.listeners.is_empty() {
                std::mem::swap(&mut p.listeners, &mut fresh);
            }
        });
        // A nested send listened first: this set goes (outside the borrow).
        drop(fresh);
    }
}

/// `task` settled: forget it, start the next `ordered` send of its URL (from
/// a microtask), and remove the page listeners when nothing is pending nor
/// held.
pub fn forget(task: &Task) {
    let (next, idle) = PAGE.with(|p| {
        let mut p = p.borrow_mut();
        p.tasks.retain(|t| id(t) != id(task));
        let mut next = None;
        let url = ordered_key(&task.req.url);
        if let Some(i) = p.ordered.iter().position(|(u, _)| u == url) {
            let head = p.ordered[i].1.remove(&id(task)).copied();
            next = head.and_then(|h| p.tasks.iter().find(|t| id(t) == h).cloned());
            if p.ordered[i].1.is_empty() {
                p.ordered.swap_remove(i);
            }
        }
        p.held.retain(|d| d.strong_count() > 0);
        let idle = match p.tasks.is_empty() && p.held.is_empty() {
            true => std::mem::take(&mut p.listeners),
            false => Vec::new(),
        };
        (next, idle)
    });
    // Dropped outside the borrow (one of them may be the running listener).
    drop(idle);
    // Started from the task queue, not from here: the next send may settle
    // at once (its deadline passed while it waited), which would start the
    // one after it, and so on: one stack frame chain per queued send
    // overflowed the wasm stack with a few thousand of them.
    if let Some(next) = next {
        let weak = Rc::downgrade(&next);
        let start = move || {
            if let Some(next) = weak.upgrade() {
                task::feed(&next, SendInput::Start)
            }
        };
        super::driver::soon(&*next, Box::new(start));
    }
}

/// The pending sends, in call order (cloned: feeding one may settle it).
fn pending() -> Vec<Rc<Task>> {
    PAGE.with(|p| p.borrow().tasks.clone())
}

fn listen() -> Vec<Listener> {
    let global = crate::js::global();
    let mut out = vec![
        Listener::new(&global, "online", |_| online(true)),
        Listener::new(&global, "offline", |_| online(false)),
    ];
    if crate::js::in_window() {
        out.push(Listener::new(&global, "pagehide", |_| pagehide()));
    }
    out
}

fn online(on: bool) {
    for t in pending() {
        task::feed(&t, SendInput::Online(on));
    }
    let held = PAGE.with(|p| p.borrow().held.clone());
    for d in &held {
        if let Some(d) = d.upgrade() {
            d.went_online(on);
        }
    }
}

/// The keepalive hand-off: the core picks, the adapter re-issues. Every
/// pending send (in call order), then every held reporter's and appender's
/// last request sent; the core orders them by age.
fn pagehide() {
    let held = PAGE.with(|p| p.borrow().held.clone());
    let (mut all, mut facts) = (Vec::new(), Vec::new());
    let mut add = |d: Rc<dyn Slots>, queued_behind: bool| {
        if d.owes() {
            let (body_bytes, sent) = match &*d.held().sent.borrow() {
                Some(s) => (s.req.body_bytes, Some(s.at)),
                None => (None, None),
            };
            facts.push(PendingSend {
                body_bytes,
                queued_behind,
                sent,
            });
            all.push(d);
        }
    };
    for t in pending() {
        let behind = t.ordered && !is_head(&t);
        add(t, behind);
    }
    for d in &held {
        if let Some(d) = d.upgrade() {
            add(d, false);
        }
    }
    let verdicts = keepalive_handoff(&facts, KEEPALIVE_BUDGET_BYTES);
    let mut not_sent = 0u32;
    for (d, go) in all.iter().zip(verdicts) {
        match (go, d.held().sent.borrow().as_ref()) {
            (true, Some(s)) => super::request::keepalive(&s.req, &s.method, &s.headers),
            _ => not_sent += 1,
        }
    }
    if not_sent > 0 {
        crate::js::debug_log(&JsValue::UNDEFINED, "pagehide", &JsValue::from(not_sent));
    }
}

fn is_head(task: &Task) -> bool {
    PAGE.with(|p| {
        for (_, q) in &p.borrow().ordered {
            if q.head() == Some(&id(task)) {
                return true;
            }
        }
        false
    })
}
