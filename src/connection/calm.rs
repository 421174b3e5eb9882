//! The calm status (`status`, `statuschange`): the core's [`Calm`] fed every
//! state change subscribers hear (this tab's engine's, or the leader tab's
//! relayed ones), and the one timer of its `lostAfterMs` deadline. Nothing
//! here decides: `tidings_core::calm` does.

use std::rc::{Rc, Weak};

use tidings_core::calm::Change;
use tidings_core::engine::Action;

use super::{tell, Connection, Notice};
use crate::clock;
use crate::guard::Timer;

/// The status change `notice` causes, if any (the timer re-armed).
pub(super) fn on_notice(conn: &Rc<Connection>, notice: &Notice) -> Option<Change> {
    let Notice::Action(Action::State { state, reason, .. }) = notice else {
        return None;
    };
    let now = clock::now().mono;
    let change = conn.calm.borrow_mut().handle_state(now, *state, *reason);
    arm(conn);
    change
}

/// One timer for the calm deadline (none when there is none).
fn arm(conn: &Rc<Connection>) {
    let deadline = conn.calm.borrow().deadline();
    let timer = deadline.map(|d| {
        let weak: Weak<Connection> = Rc::downgrade(conn);
        Timer::new(d.since(clock::now().mono), move || {
            let Some(conn) = weak.upgrade() else { return };
            let change = conn.calm.borrow_mut().handle_timer(clock::now().mono);
            arm(&conn);
            if let Some(c) = change {
                tell(&conn, Notice::Status(c));
            }
        })
    });
    let old = conn.calm_timer.replace(timer);
    drop(old);
}
