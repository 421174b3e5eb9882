//! Cross-tab role changes at their edges, on one coordinator: a lock grant
//! that arrives when no request is queued, and what a tab that leads again
//! re-posts for a newcomer.

use tidings_core::crosstab::{CrossTab, Relay, Support, TabAction, Wire};
use tidings_core::engine::{Action, Reason, State, TransportKind};
use tidings_core::time::Now;

const SHARED: Support = Support {
    locks: true,
    channel: true,
};

fn at(ms: u64) -> Now {
    Now::at(ms, 1_700_000_000_000 + ms as i64)
}

fn drain(m: &mut CrossTab) -> Vec<TabAction> {
    let mut out = Vec::new();
    loop {
        match m.poll() {
            TabAction::Wait { .. } => return out,
            a => out.push(a),
        }
    }
}

fn open(reason: Reason) -> Action {
    Action::State {
        state: State::Open,
        reason,
        delay_ms: None,
    }
}

/// A tab that leads: started shared, granted the lock at 10 ms.
fn leader() -> CrossTab {
    let mut m = CrossTab::new("5".into(), 3);
    m.handle_start(at(0), SHARED);
    let _ = drain(&mut m);
    m.handle_lock_granted(at(10));
    assert_eq!(drain(&mut m), vec![TabAction::Run { cursor: "5".into() }]);
    m
}

#[test]
fn a_grant_with_no_request_queued_is_ignored() {
    // `pagehide` withdrew the request; a grant resolving after it (the
    // browser's promise was already on its way) must not run an engine in a
    // page that is going away, nor take a lock nobody asked for.
    let mut m = CrossTab::new("5".into(), 3);
    m.handle_start(at(0), SHARED);
    let _ = drain(&mut m);
    m.handle_page_hide(at(5));
    assert_eq!(
        drain(&mut m),
        vec![TabAction::DropLock, TabAction::CloseChannel]
    );
    m.handle_lock_granted(at(6));
    assert_eq!(drain(&mut m), vec![]);
    assert!(!m.is_leader());
    // Back from the back-forward cache it queues again, and that grant runs.
    m.handle_page_show(at(100), true);
    let _ = drain(&mut m);
    m.handle_lock_granted(at(110));
    assert_eq!(drain(&mut m), vec![TabAction::Run { cursor: "5".into() }]);
}

#[test]
fn a_re_elected_leader_re_posts_only_its_new_engines_notices() {
    let mut m = leader();
    let changed = Action::TransportChanged {
        transport: TransportKind::FetchSse,
        previous: None,
        reason: Reason::Start,
    };
    m.handle_own_action(&changed, "5");
    m.handle_own_action(&open(Reason::Start), "5");
    let _ = drain(&mut m);
    // Another tab steals; later it leaves and this tab leads again.
    m.handle_lock_stolen(at(20));
    let _ = drain(&mut m);
    m.handle_lock_granted(at(30));
    assert_eq!(drain(&mut m), vec![TabAction::Run { cursor: "5".into() }]);
    // A newcomer before the new engine said anything hears nothing of the
    // old engine's reign (its `open` is not the new engine's state).
    m.handle_wire(at(31), Wire::Hello);
    assert_eq!(drain(&mut m), vec![]);
    // Once the new engine speaks, that is what a newcomer hears.
    m.handle_own_action(&open(Reason::Reconnect), "5");
    let _ = drain(&mut m);
    m.handle_wire(at(40), Wire::Hello);
    assert_eq!(
        drain(&mut m),
        vec![TabAction::Post(Wire::Notice {
            notice: Relay::Action(open(Reason::Reconnect)),
            cursor: "5".into(),
            index: 0,
            sync: true,
        })]
    );
}
