//! The one drive loop of a connection: drain the session's actions and
//! carry each out; the `Wait` that ends a drain arms the one timer.

use std::rc::{Rc, Weak};

use tidings_core::engine::{self, Action, AttemptId, ErrorCode, TransportKind};
use tidings_core::session::{Input, SessionAction};
use tidings_core::time::MonoMs;

#[cfg(feature = "cross-tab")]
use super::crosstab;
#[cfg(feature = "debug")]
use super::debug;
use super::{live, Connection, Delivery, Notice, NoticeFn};
use crate::clock;
use crate::guard::Timer;

/// Feed one fact about this tab's engine's request, then drive. Out of
/// line with the debug log: inlined at each of its call sites, its debug
/// check costs bytes.
#[cfg_attr(feature = "debug", inline(never))]
pub fn feed(conn: &Rc<Connection>, fact: engine::Input<'_>) {
    #[cfg(feature = "debug")]
    if let Some(to) = &conn.adapter.debug {
        debug::fact(to, &fact);
    }
    super::handle(conn, Input::Engine(fact));
}

/// Feed a native `EventSource` event with `data`, the browser's report of it
/// (`[data, type, lastEventId]`, whose data the engine reads a copy of): its
/// delivery carries this value (the event is fed from the browser's task
/// queue, never from inside a drive, so the delivery it causes is rendered
/// before this returns).
pub fn feed_native(conn: &Rc<Connection>, data: wasm_bindgen::JsValue, fact: engine::Input<'_>) {
    *conn.native_data.borrow_mut() = Some(data);
    feed(conn, fact);
    let unused = conn.native_data.take();
    drop(unused);
}

/// Drain the session's actions. Runs at most once at a time; a nested call
/// (a listener feeding the session) returns at once, and the running loop
/// renders what its fact caused.
pub(super) fn drive(conn: &Rc<Connection>) {
    if conn.driving.replace(true) {
        return;
    }
    loop {
        // The borrow ends with this statement: rendering may run user JS,
        // which must not find the session borrowed.
        let action = conn.session.borrow_mut().poll();
        if !render(conn, action) {
            break;
        }
    }
    conn.driving.set(false);
}

/// Carry out one action; `false` after the `Wait` that ends a drain.
fn render(conn: &Rc<Connection>, action: SessionAction) -> bool {
    let notice = match action {
        SessionAction::Wait { until } => {
            #[cfg(feature = "debug")]
            if let Some(to) = &conn.adapter.debug {
                debug::log(to, &Action::Wait { until });
            }
            arm_timer(conn, until);
            return false;
        }
        // Only asked for with `debug` (`Session::with_debug`).
        SessionAction::Debug(_a) => {
            #[cfg(feature = "debug")]
            if let Some(to) = &conn.adapter.debug {
                debug::log(to, &_a);
            }
            return true;
        }
        SessionAction::Open(req) => {
            let slot = usize::from(req.beside);
            let live = live::open(conn, req);
            let old = conn.live.borrow_mut()[slot].replace(live);
            drop(old);
            return true;
        }
        SessionAction::Abort(id) => {
            abort(conn, id);
            return true;
        }
        SessionAction::Probe(id) => {
            live::probe(conn, id);
            return true;
        }
        SessionAction::Messages(ds) => Notice::Messages(deliveries(conn, ds)),
        SessionAction::Tell(Action::Error {
            code: ErrorCode::Headers,
            retry_in_ms,
            ..
        }) => {
            let cause = conn.headers_cause.take().unwrap_or_default();
            Notice::HeadersFailed { cause, retry_in_ms }
        }
        SessionAction::Tell(a) => Notice::Action(a),
        SessionAction::Status(c) => Notice::Status(c),
        SessionAction::BatchEnd => Notice::BatchEnd,
        // Only asked for with a cross-tab name (`crossTab`).
        _tab_io => {
            #[cfg(feature = "cross-tab")]
            crosstab::render(conn, _tab_io);
            return true;
        }
    };
    tell(conn, &notice);
    true
}

/// Abort the request of attempt `id` (live or beside), if it is still out;
/// dropped after the borrow ends.
fn abort(conn: &Connection, id: AttemptId) {
    let old = conn
        .live
        .borrow_mut()
        .iter_mut()
        .find(|l| l.as_ref().is_some_and(|l| l.id() == id))
        .and_then(Option::take);
    drop(old);
}

/// A delivery as subscribers get it: this tab's own native `EventSource`
/// delivery carries the browser's data value of the event being fed.
fn delivery(conn: &Connection, d: tidings_core::session::Delivery) -> Delivery {
    let data = match (d.own, d.transport) {
        (true, Some(TransportKind::EventSource)) => conn.native_data.take(),
        _ => None,
    };
    Delivery {
        msg: d.msg,
        transport: d.transport.map_or("", |t| t.as_str()),
        data,
    }
}

/// A batch of the session's deliveries as the subscribers get them (a loop,
/// not a collected `Vec`: no iterator of its own in the wasm).
fn deliveries(conn: &Connection, ds: Vec<tidings_core::session::Delivery>) -> Vec<Delivery> {
    let mut out = Vec::with_capacity(ds.len());
    for d in ds {
        out.push(delivery(conn, d));
    }
    out
}

/// Tell every subscriber `notice`, with no borrow held.
fn tell(conn: &Connection, notice: &Notice) {
    let mut targets: Vec<NoticeFn> = Vec::new();
    for (_, f) in conn.listeners.borrow().iter() {
        targets.push(f.clone());
    }
    for f in targets {
        f(notice);
    }
}

/// One timer for the session's next deadline (clamped to 2^31−1 ms by
/// `Timer`).
///
/// A timer that is armed and fires no later than `until` is kept: on the hot
/// path every byte or event moves the idle deadline later, and replacing the
/// timer each time (`clearTimeout`, a new closure, `setTimeout`) cost about 6 %
/// of a native-event profile (docs/bench.md). The kept timer may fire before
/// the deadline; the session then finds nothing due and hands out the same
/// `until` again, which arms a new one. Never late: an earlier `until`
/// replaces it, `None` cancels it.
fn arm_timer(conn: &Rc<Connection>, until: Option<MonoMs>) {
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
                // dropped after the borrow ends, as a replaced timer is).
                let fired = conn.timer.borrow_mut().take();
                drop(fired);
                super::handle(&conn, Input::Timer);
            }
        });
        (t, timer)
    });
    let old = std::mem::replace(&mut *conn.timer.borrow_mut(), timer);
    drop(old);
}
