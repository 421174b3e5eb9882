//! Cross-tab coordination on virtual time (docs/cross-tab.md): election, hand-over,
//! steals, the back-forward cache, the lock API missing or throwing, a late
//! joiner, forged wire messages. Steal delays are exact: 50 ms +
//! U[0, 200) from the tab's seed (seed 3 → 72 ms, seed 1 → 163 ms).

#[path = "crosstab_support.rs"]
mod support;

use support::{msg, state, Profile};
use tidings_core::crosstab::{Relay, Wire};
use tidings_core::engine::{Action, ErrorCode, Reason, ResetReason, State, TransportKind};
use tidings_core::time::MonoMs;

const A: u64 = 7;
const FAST: u64 = 3; // steals after 72 ms
const SLOW: u64 = 1; // steals after 163 ms

fn transport_changed() -> Relay {
    Relay::Action(Action::TransportChanged {
        transport: TransportKind::FetchSse,
        previous: None,
        reason: Reason::Start,
    })
}

/// Three tabs, the first leads and reports `open` with cursor "5".
fn three_tabs(seeds: [u64; 3]) -> Profile {
    let mut p = Profile::new();
    for s in seeds {
        p.open("5", s, false, true);
        p.settle();
    }
    p.emit(0, transport_changed(), "5");
    p.emit(0, state(State::Open, Reason::Start), "5");
    p.settle();
    p
}

#[test]
fn election_one_leader_runs_from_the_initial_cursor_the_others_follow() {
    let p = three_tabs([A, A, A]);
    assert_eq!(p.running(), vec![0]);
    assert_eq!(p.tabs[0].runs, vec![String::from("5")]);
    assert!(p.tabs[0].m.is_leader());
    assert_eq!(p.queue, [1, 2]);
    for i in [1, 2] {
        assert!(p.tabs[i].runs.is_empty());
        assert_eq!(p.states(i), vec![(State::Open, Reason::Start)]);
        let m = p.tabs[i].m.following();
        assert_eq!(m.map(|m| m.transport), Some(Some(TransportKind::FetchSse)));
        assert_eq!(m.map(|m| m.last_event_id.as_str()), Some("5"));
    }
    assert_eq!(p.tabs[0].m.following(), None);
}

#[test]
fn hand_over_resumes_from_the_last_seen_cursor_nothing_lost_or_repeated() {
    let mut p = three_tabs([A, A, A]);
    for n in 6..=8 {
        p.emit(0, msg(n), "8");
    }
    p.settle();
    // The leader tab closes (or crashes): the next in line takes over.
    p.kill(0);
    p.settle();
    assert_eq!(p.running(), vec![1]);
    assert_eq!(p.tabs[1].runs, vec![String::from("8")]);
    // Its engine resumes at 8; a server that replays 8 is not heard twice.
    assert!(!p.emit(1, msg(8), "8"));
    assert!(p.emit(1, msg(9), "9"));
    p.settle();
    for i in [1, 2] {
        assert_eq!(p.heard(i), vec![6, 7, 8, 9], "tab {i}");
    }
    assert_eq!(
        p.tabs[2].m.following().map(|m| m.last_event_id.as_str()),
        Some("9")
    );
}

#[test]
fn a_visible_follower_steals_from_a_hidden_leader_after_its_jittered_delay() {
    let mut p = three_tabs([A, FAST, A]);
    p.feed(2, |m, n| m.handle_visibility(n, true));
    p.now = 1000;
    p.emit(0, msg(6), "6");
    p.emit(0, state(State::Paused, Reason::Hidden), "6");
    p.settle();
    assert_eq!(p.tabs[1].timer, Some(MonoMs(1072)));
    assert_eq!(p.tabs[2].timer, None, "a hidden follower does not steal");
    p.advance_to(1071);
    assert_eq!(p.running(), vec![0]);
    p.advance_to(1072);
    assert_eq!(p.tabs[1].locks_requested, vec![false, true]);
    assert_eq!(p.running(), vec![1]);
    assert_eq!(p.tabs[1].runs, vec![String::from("6")]);
    // The old leader halted, queued again and asked for the new state.
    assert_eq!(p.tabs[0].halts, 1);
    assert_eq!(p.tabs[0].locks_requested, vec![false, false]);
    assert_eq!(p.posts.last(), Some(&(0, Wire::Hello)));
    assert!(!p.tabs[0].m.is_leader());
}

#[test]
fn a_leader_that_speaks_again_before_the_timer_is_not_stolen_from() {
    let mut p = three_tabs([A, FAST, A]);
    p.feed(2, |m, n| m.handle_visibility(n, true));
    p.emit(0, state(State::Paused, Reason::Hidden), "5");
    p.settle();
    p.advance_to(30);
    p.emit(0, state(State::Open, Reason::Visible), "5");
    p.advance_to(500);
    assert_eq!(p.tabs[1].locks_requested, vec![false]);
    assert_eq!(p.running(), vec![0]);
    // A follower that turns hidden while its steal is due does not steal.
    p.emit(0, state(State::Paused, Reason::Hidden), "5");
    p.settle();
    p.feed(1, |m, n| m.handle_visibility(n, true));
    p.advance_to(2000);
    assert_eq!(p.running(), vec![0]);
}

#[test]
fn two_followers_the_later_one_sees_the_new_leader_and_does_not_steal() {
    let mut p = three_tabs([A, FAST, SLOW]);
    p.emit(0, state(State::Paused, Reason::Hidden), "5");
    p.settle();
    assert_eq!(p.tabs[1].timer, Some(MonoMs(72)));
    assert_eq!(p.tabs[2].timer, Some(MonoMs(163)));
    p.advance_to(72);
    assert_eq!(p.running(), vec![1]);
    p.emit(1, state(State::Connecting, Reason::Start), "5");
    p.advance_to(1000);
    assert_eq!(p.tabs[2].locks_requested, vec![false]);
    assert_eq!(p.running(), vec![1]);
}

#[test]
fn two_followers_stealing_at_once_end_with_one_leader_and_no_repeat() {
    let mut p = three_tabs([A, FAST, SLOW]);
    p.emit(0, msg(6), "6");
    p.emit(0, state(State::Paused, Reason::Hidden), "6");
    p.settle();
    // Tab 1 steals at 72 but its engine says nothing before tab 2's timer.
    p.advance_to(72);
    p.emit(1, msg(7), "7");
    p.advance_to(163);
    assert_eq!(p.tabs[2].locks_requested, vec![false, true]);
    assert_eq!(p.running(), vec![2]);
    assert_eq!(p.tabs[1].halts, 1);
    assert_eq!(p.tabs[2].runs, vec![String::from("7")]);
    // Its engine replays 7 (resumed at 7? the server may repeat it): once.
    assert!(!p.emit(2, msg(7), "7"));
    p.emit(2, msg(8), "8");
    p.settle();
    for i in 0..3 {
        assert_eq!(p.heard(i), vec![6, 7, 8], "tab {i}");
    }
}

#[test]
fn a_frozen_leader_is_replaced_and_follows_when_it_resumes() {
    let mut p = three_tabs([A, FAST, A]);
    p.feed(2, |m, n| m.handle_visibility(n, true));
    p.emit(0, state(State::Paused, Reason::Frozen), "5");
    p.settle();
    p.advance_to(72);
    assert_eq!(p.tabs[1].runs, vec![String::from("5")]);
    p.emit(1, transport_changed(), "5");
    p.emit(1, state(State::Open, Reason::Start), "5");
    p.emit(1, msg(6), "6");
    p.settle();
    // Tab 0 learnt of the steal: halted, queued, said hello; it hears the
    // new leader's messages and re-posted state.
    assert_eq!(p.tabs[0].halts, 1);
    assert_eq!(p.heard(0), vec![6]);
    assert_eq!(
        p.states(0).last(),
        Some(&(State::Open, Reason::Start)),
        "the old leader's page hears the new leader's state"
    );
    assert_eq!(p.running(), vec![1]);
}

#[test]
fn back_forward_cache_leader_hands_over_at_once_and_hears_reset_when_back() {
    let mut p = three_tabs([A, A, A]);
    p.emit(0, msg(6), "6");
    p.settle();
    p.now = 500;
    p.feed(0, |m, n| m.handle_page_hide(n));
    // Bye, halted, its own page told `paused` (`frozen`), lock and channel gone.
    assert_eq!(p.posts.last(), Some(&(0, Wire::Bye)));
    assert_eq!(p.tabs[0].halts, 1);
    assert_eq!(p.states(0).last(), Some(&(State::Paused, Reason::Frozen)));
    assert!(!p.tabs[0].channel);
    p.settle();
    // The next in line took over at once (no steal), from cursor 6.
    assert_eq!(p.running(), vec![1]);
    assert_eq!(p.tabs[1].runs, vec![String::from("6")]);
    assert_eq!(p.tabs[1].locks_requested, vec![false]);
    p.emit(1, transport_changed(), "6");
    p.emit(1, state(State::Open, Reason::Start), "6");
    p.emit(1, msg(7), "7");
    p.emit(1, msg(8), "8");
    p.settle();
    assert_eq!(p.heard(0), vec![6], "in the cache: nothing arrives");
    // Back: channel, hello, queue; the leader's cursor moved on → reset.
    p.feed(0, |m, n| m.handle_page_show(n, true));
    p.settle();
    assert!(p.tabs[0].channel);
    assert_eq!(p.tabs[0].locks_requested, vec![false, false]);
    assert_eq!(p.running(), vec![1]);
    let resets = p.tabs[0]
        .told
        .iter()
        .filter(|r| {
            matches!(
                r,
                Relay::Action(Action::Reset {
                    reason: ResetReason::Unresumable
                })
            )
        })
        .count();
    assert_eq!(resets, 1);
    assert_eq!(p.states(0).last(), Some(&(State::Open, Reason::Start)));
    assert_eq!(
        p.tabs[0].m.following().map(|m| m.last_event_id.as_str()),
        Some("8")
    );
}

#[test]
fn back_from_the_cache_with_nothing_missed_hears_no_reset() {
    let mut p = three_tabs([A, A, A]);
    p.feed(2, |m, n| m.handle_page_hide(n));
    assert_eq!(p.queue, [1]);
    p.feed(2, |m, n| m.handle_page_show(n, true));
    p.settle();
    assert!(!p.tabs[2]
        .told
        .iter()
        .any(|r| matches!(r, Relay::Action(Action::Reset { .. }))));
    assert_eq!(p.queue, [1, 2]);
}

#[test]
fn a_leader_saying_bye_is_not_stolen_from() {
    let mut p = three_tabs([A, FAST, A]);
    p.emit(0, state(State::Paused, Reason::Hidden), "5");
    p.feed(0, |m, n| m.handle_close(n));
    p.kill(0);
    p.advance_to(1000);
    assert_eq!(p.tabs[1].locks_requested, vec![false], "no steal after bye");
    assert_eq!(p.running(), vec![1], "the lock passed on by itself");
}

#[test]
fn lock_api_missing_runs_alone_at_once_and_passes_notices_through() {
    let mut p = Profile::new();
    p.open("5", A, false, false);
    assert_eq!(p.tabs[0].runs, vec![String::from("5")]);
    assert!(p.posts.is_empty());
    assert!(p.tabs[0].locks_requested.is_empty());
    assert_eq!(p.tabs[0].m.following(), None);
    assert!(p.emit(0, msg(6), "6"));
    assert!(
        p.emit(0, msg(6), "6"),
        "solo: the engine's own dedupe decides"
    );
    assert!(p.posts.is_empty());
}

#[test]
fn lock_api_throwing_runs_alone_from_the_last_seen_cursor() {
    let mut p = three_tabs([A, A, A]);
    p.emit(0, msg(6), "6");
    p.settle();
    // Tab 2's next request throws (e.g. after a steal it queues again).
    p.tabs[2].lock_throws = true;
    p.feed(2, |m, n| m.handle_page_hide(n));
    p.feed(2, |m, n| m.handle_page_show(n, true));
    p.settle();
    assert_eq!(p.tabs[2].runs, vec![String::from("6")]);
    assert!(!p.tabs[2].channel);
    assert_eq!(p.tabs[2].m.following(), None);
    assert_eq!(p.running(), vec![0, 2]);
    // Alone for good: what the leader posts no longer reaches it.
    p.emit(0, msg(7), "7");
    p.settle();
    assert_eq!(p.heard(2), vec![6]);
}

#[test]
fn a_follower_joining_late_hears_the_leaders_transport_and_state_once() {
    let mut p = three_tabs([A, A, A]);
    p.emit(0, msg(6), "6");
    p.settle();
    let late = p.open("", A, false, true);
    p.settle();
    let told = &p.tabs[late].told;
    assert_eq!(told.len(), 2, "{told:?}");
    assert_eq!(told[0], transport_changed());
    assert_eq!(told[1], state(State::Open, Reason::Start));
    // The re-post carried the leader's cursor.
    let m = p.tabs[late].m.following();
    assert_eq!(m.map(|m| m.last_event_id.as_str()), Some("6"));
    // The tabs that knew already ignored the re-post.
    assert_eq!(p.states(1), vec![(State::Open, Reason::Start)]);
}

#[test]
fn forged_or_out_of_place_wire_messages_change_nothing() {
    let mut p = three_tabs([A, A, A]);
    let before = p.tabs[1].told.len();
    let forged = [
        Wire::Notice {
            notice: Relay::Action(Action::Abort(tidings_core::engine::AttemptId(1))),
            cursor: "x".into(),
            sync: false,
            index: 0,
        },
        Wire::Notice {
            notice: Relay::Action(Action::Wait { until: None }),
            cursor: "".into(),
            sync: false,
            index: 0,
        },
        // A hello to a follower is not for it.
        Wire::Hello,
    ];
    for w in forged {
        p.feed(1, |m, n| m.handle_wire(n, w));
    }
    assert_eq!(p.tabs[1].told.len(), before);
    assert_eq!(
        p.tabs[1].m.following().map(|m| m.last_event_id.as_str()),
        Some("5")
    );
    // A leader ignores another tab's state (it tells its own).
    p.feed(0, |m, n| {
        m.handle_wire(
            n,
            Wire::Notice {
                notice: state(State::Closed, Reason::PermanentError),
                cursor: "".into(),
                sync: false,
                index: 0,
            },
        )
    });
    assert_eq!(p.states(0), vec![(State::Open, Reason::Start)]);
    assert!(p.tabs[0].m.is_leader());
}

#[test]
fn a_fatal_error_of_the_leader_reaches_every_tab_and_no_tab_takes_over() {
    let mut p = three_tabs([A, A, A]);
    let err = Relay::Action(Action::Error {
        code: ErrorCode::HttpStatus,
        status: Some(404),
        retry_in_ms: None,
        fatal: true,
        id: None,
    });
    p.emit(0, err.clone(), "5");
    p.emit(0, state(State::Closed, Reason::PermanentError), "5");
    p.settle();
    for i in [1, 2] {
        assert!(p.tabs[i].told.contains(&err));
        assert_eq!(
            p.states(i).last(),
            Some(&(State::Closed, Reason::PermanentError))
        );
    }
    assert!(p.queue.is_empty(), "every follower dropped its request");
    p.feed(0, |m, n| m.handle_close(n));
    p.kill(0);
    p.settle();
    assert_eq!(p.running(), Vec::<usize>::new());
}

#[test]
fn inputs_after_close_are_ignored() {
    let mut p = three_tabs([A, A, A]);
    p.feed(1, |m, n| m.handle_close(n));
    p.kill(1);
    p.feed(1, |m, n| {
        m.handle_lock_granted(n);
        m.handle_wire(n, Wire::Hello);
        m.handle_page_show(n, true);
        m.handle_timer(n);
    });
    assert!(p.tabs[1].runs.is_empty());
    assert_eq!(p.tabs[1].timer, None);
}

#[test]
fn an_up_to_date_offset_is_where_the_next_leader_resumes() {
    // Durable Streams: a 204 from `now` names the tail without a message;
    // the followers keep that offset, so a hand-over does not re-read from
    // an older one (or from the start).
    let mut p = three_tabs([A, A, A]);
    p.emit(0, msg(6), "6");
    let up = Relay::Action(Action::UpToDate {
        last_event_id: String::from("0000_0042"),
    });
    p.emit(0, up, "0000_0042");
    p.settle();
    assert_eq!(
        p.tabs[2].m.following().map(|m| m.last_event_id.as_str()),
        Some("0000_0042")
    );
    p.kill(0);
    p.settle();
    assert_eq!(p.running(), vec![1]);
    assert_eq!(p.tabs[1].runs, vec![String::from("0000_0042")]);
}

/// Durable Streams: a tab that joins after the leader caught up hears
/// `uptodate` (after the transport and state), as a tab of its own would;
/// the tabs that heard it already do not hear it again. After a `reset`
/// (410: the stream restarts) a newcomer is not told the stale one.
#[test]
fn a_follower_joining_late_hears_uptodate_once() {
    let up = |o: &str| {
        Relay::Action(Action::UpToDate {
            last_event_id: String::from(o),
        })
    };
    let mut p = three_tabs([A, A, A]);
    p.emit(0, up("0000_0042"), "0000_0042");
    // Live after catching up: a message moves the cursor past that offset.
    p.emit(0, msg(43), "0000_0050");
    p.settle();
    let late = p.open("", A, false, true);
    p.settle();
    let told = &p.tabs[late].told;
    // The re-post names where the leader is now (it is still up to date).
    assert_eq!(
        told,
        &vec![
            transport_changed(),
            state(State::Open, Reason::Start),
            up("0000_0050")
        ]
    );
    // The newcomer would resume from there, not from the older offset.
    let m = p.tabs[late].m.following();
    assert_eq!(m.map(|m| m.last_event_id.as_str()), Some("0000_0050"));
    let ups = |p: &Profile, i: usize| {
        p.tabs[i]
            .told
            .iter()
            .filter(|r| matches!(r, Relay::Action(Action::UpToDate { .. })))
            .count()
    };
    assert_eq!((ups(&p, 0), ups(&p, 1), ups(&p, 2)), (1, 1, 1));
    p.emit(
        0,
        Relay::Action(Action::Reset {
            reason: ResetReason::Gone,
        }),
        "-1",
    );
    p.settle();
    let later = p.open("", A, false, true);
    p.settle();
    assert_eq!(ups(&p, later), 0, "{:?}", p.tabs[later].told);
}
