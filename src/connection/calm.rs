//! The calm status (`status`, `statuschange`): the core's `Calm` fed every
//! state change subscribers hear (this tab's engine's, or the leader tab's
//! relayed ones), and its `lostAfterMs` deadline when due. Nothing here
//! decides: `tidings_core::calm` does.

use tidings_core::calm::Change;
use tidings_core::engine::Action;

use super::{Connection, Notice};
use crate::clock;

/// The status change `notice` causes, if any. Its deadline joins the
/// engine's in the connection's one timer (`arm_timer`, at the `Wait` that
/// ends every drain).
pub(super) fn on_notice(conn: &Connection, notice: &Notice) -> Option<Change> {
    let Notice::Action(Action::State { state, reason, .. }) = notice else {
        return None;
    };
    let now = clock::now().mono;
    conn.calm.borrow_mut().handle_state(now, *state, *reason)
}

/// The one timer fired: a due `lostAfterMs` deadline becomes a status
/// notice, told with the engine's own (the caller feeds the engine next).
pub(super) fn on_timer(conn: &Connection) {
    let change = conn.calm.borrow_mut().handle_timer(clock::now().mono);
    if let Some(c) = change {
        conn.outbox.borrow_mut().push_back(Notice::Status(c));
    }
}

/// The calm deadline, for the connection's timer.
pub(super) fn deadline(conn: &Connection) -> Option<tidings_core::time::MonoMs> {
    conn.calm.borrow().deadline()
}
