//! Page facts (`src/lifecycle.rs`) handed to the two machines of a
//! connection: the cross-tab coordinator first (a leader leaving the page
//! halts its engine before the engine hears `pagehide`), then the engine.

use std::rc::Rc;

use tidings_core::engine::{Engine, ReconnectAnswer};
use tidings_core::time::Now;

use super::{crosstab, feed, Connection};
use crate::lifecycle::PageFact;

/// One page fact, to both machines.
pub(super) fn fact(conn: &Rc<Connection>, fact: PageFact) {
    crosstab::feed(conn, |t, now| match fact {
        PageFact::Hidden(h) => t.handle_visibility(now, h),
        PageFact::Frozen(f) => t.handle_frozen(now, f),
        PageFact::PageHide => t.handle_page_hide(now),
        PageFact::PageShow { persisted } => t.handle_page_show(now, persisted),
        PageFact::Online(_) | PageFact::Network(_) => {}
    });
    to_engine(conn, fact);
}

/// The app's "try now" (`reconnect()`, JS and Rust API alike): the
/// cross-tab coordinator says whose engine hears it (this tab's, or, in a
/// crossTab follower, the leader's: `tidings_core` `crosstab`). Returns this
/// tab's engine's answer; `Leader` in a follower, `Closed` when nothing
/// heard it.
pub fn reconnect(conn: &Rc<Connection>) -> ReconnectAnswer {
    conn.reconnected.set(match conn.follows() {
        true => ReconnectAnswer::Leader,
        false => ReconnectAnswer::Closed,
    });
    crosstab::feed(conn, |t, now| t.handle_reconnect(now));
    conn.reconnected.get()
}

/// The coordinator's `Reconnect`: this tab's engine hears "try now", with
/// what the browser says of the network now: `navigator.onLine` (the
/// `online` event can be late). The engine decides what it does
/// (`tidings_core` `engine::reconnect`).
pub(super) fn reconnect_engine(conn: &Rc<Connection>) {
    let online = crate::lifecycle::is_online();
    feed(conn, |e, now| {
        conn.reconnected.set(e.handle_reconnect(now, online))
    });
}

/// One page fact, to the engine only (also how a fresh engine learns the
/// page's current state).
pub(super) fn to_engine(conn: &Rc<Connection>, fact: PageFact) {
    feed(conn, |e, now| engine_input(e, now, fact));
}

fn engine_input(e: &mut Engine, now: Now, fact: PageFact) {
    match fact {
        PageFact::Hidden(h) => e.handle_visibility(now, h),
        PageFact::Frozen(f) => e.handle_frozen(now, f),
        PageFact::Online(o) => e.handle_online(now, o),
        PageFact::Network(hint) => e.handle_network_hint(now, hint),
        PageFact::PageHide => e.handle_frozen(now, true),
        // A first load also fires pageshow (persisted = false): only a
        // page restored from the back-forward cache was frozen.
        PageFact::PageShow { persisted } => {
            if persisted {
                e.handle_frozen(now, false)
            }
        }
    }
}
