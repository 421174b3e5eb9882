//! Cross-tab on virtual time, where it meets other features:
//! `reconnect()` in a follower reaches the leader's engine (and a follower
//! queues for the lock again once a stopped leader runs again); Durable
//! Streams across a steal: two leaders delivering the same chunk, and a new
//! leader's `uptodate` at the offset every tab already heard it for, are
//! heard once in every tab.

#[path = "crosstab_support.rs"]
mod support;

use support::{state, Profile};
use tidings_core::crosstab::{CrossTab, Relay, Wire};
use tidings_core::engine::{Action, ErrorCode, Message, Reason, State, TransportKind};

const A: u64 = 7;
const FAST: u64 = 3; // steals after 72 ms

/// Three tabs with `cursor`, the first leads and reports `open`.
fn three_tabs(cursor: &str, offsets: bool, seeds: [u64; 3]) -> Profile {
    let mut p = Profile::new();
    for s in seeds {
        let m = CrossTab::new(cursor.into(), s);
        p.open_with(if offsets { m.with_offsets() } else { m }, false, true);
        p.settle();
    }
    p.emit(0, state(State::Open, Reason::Start), cursor);
    p.settle();
    p
}

fn reconnects(p: &Profile) -> Vec<u32> {
    p.tabs.iter().map(|t| t.reconnects).collect()
}

#[test]
fn reconnect_in_a_follower_is_the_leaders_engines_and_in_a_leader_its_own() {
    let mut p = three_tabs("5", false, [A, A, A]);
    p.feed(2, |m, n| m.handle_reconnect(n));
    assert_eq!(p.posts.last(), Some(&(2, Wire::Reconnect)));
    p.settle();
    assert_eq!(reconnects(&p), [1, 0, 0]);
    p.feed(0, |m, n| m.handle_reconnect(n));
    p.settle();
    assert_eq!(reconnects(&p), [2, 0, 0]);
    // A forged or stray post to a follower reconnects nothing.
    p.feed(1, |m, n| m.handle_wire(n, Wire::Reconnect));
    assert_eq!(reconnects(&p), [2, 0, 0]);
    // A tab without Web Locks runs alone: its own engine hears it.
    let solo = p.open("5", A, false, false);
    p.feed(solo, |m, n| m.handle_reconnect(n));
    p.settle();
    assert_eq!(reconnects(&p), [2, 0, 0, 1]);
}

#[test]
fn a_leader_that_gave_up_is_revived_from_a_follower_and_the_followers_queue_again() {
    let mut p = three_tabs("5", false, [A, A, A]);
    let gave_up = Relay::Action(Action::Error {
        code: ErrorCode::GaveUp,
        status: None,
        retry_in_ms: None,
        fatal: true,
        id: None,
    });
    p.emit(0, gave_up, "5");
    p.emit(0, state(State::Closed, Reason::GaveUp), "5");
    p.settle();
    // Every follower dropped its lock request: nobody would take over; a
    // tab joining now hears the re-posts and does not queue either.
    assert!(p.queue.is_empty());
    let late = p.open("5", A, false, true);
    p.settle();
    assert!(p.queue.is_empty());
    assert_eq!(p.states(late), [(State::Closed, Reason::GaveUp)]);
    // Only a state says the leader runs again (not a transport change).
    let moved = Relay::Action(Action::TransportChanged {
        transport: TransportKind::LongPoll,
        previous: None,
        reason: Reason::OpenFailed,
    });
    let wire = Wire::Notice {
        notice: moved,
        cursor: String::new(),
        sync: false,
        index: 0,
    };
    p.feed(2, |m, n| m.handle_wire(n, wire));
    p.settle();
    assert!(p.queue.is_empty());
    p.feed(1, |m, n| m.handle_reconnect(n));
    p.settle();
    assert_eq!(reconnects(&p), [1, 0, 0, 0]);
    // The leader's engine revived: its state reaches the followers, which
    // queue for the lock again.
    p.emit(0, state(State::Connecting, Reason::Reconnect), "5");
    p.settle();
    assert_eq!(p.queue, [1, 2, late]);
    for i in [1, 2] {
        let heard = p.states(i);
        assert_eq!(heard.last(), Some(&(State::Connecting, Reason::Reconnect)));
        assert_eq!(p.tabs[i].locks_requested, vec![false, false], "tab {i}");
    }
    p.kill(0);
    p.settle();
    assert_eq!(p.running(), vec![1]);
    assert_eq!(p.tabs[1].runs, vec![String::from("5")]);
}

/// A Durable Streams chunk read from `from` up to `to`, messages `first..`:
/// as the engine delivers it (the last carries `to`, the others `from`).
fn chunk(from: &str, to: &str, first: u32, n: u32) -> Vec<Relay> {
    (0..n)
        .map(|i| {
            let m = Message {
                id: String::new(),
                last_event_id: String::from(if i + 1 == n { to } else { from }),
                event: "message".into(),
                data: format!("m{}", first + i),
                binary: false,
            };
            Relay::Message(m, Some(TransportKind::LongPoll))
        })
        .collect()
}

fn emit_chunk(p: &mut Profile, tab: usize, c: &[Relay], to: &str) {
    for r in c {
        p.emit(tab, r.clone(), to);
    }
}

/// The leader (tab 0) is hidden; visible tab 1 steals. Returns with tab 1
/// granted and running, and tab 0 not yet told its lock was stolen.
fn steal_pending(p: &mut Profile, cursor: &str) {
    p.feed(2, |m, n| m.handle_visibility(n, true));
    p.now = 1000;
    p.emit(0, state(State::Paused, Reason::Hidden), cursor);
    p.settle();
    let Some(at) = p.tabs[1].timer else {
        panic!("no steal timer")
    };
    p.now = at.0;
    p.tabs[1].timer = None;
    p.feed(1, |m, n| m.handle_timer(n));
    // Hold back the old leader's `Stolen`: the overlap of a steal.
    let i = p
        .tasks
        .iter()
        .position(|t| matches!(t, support::Task::Stolen(0)));
    let Some(stolen) = i.and_then(|i| p.tasks.remove(i)) else {
        panic!("no Stolen task: {:?}", p.tasks)
    };
    p.settle();
    assert_eq!(p.running(), vec![0, 1]);
    p.tasks.push_back(stolen);
}

#[test]
fn durable_streams_two_leaders_of_a_steal_deliver_a_chunk_once_in_every_tab() {
    let mut p = three_tabs("a1", true, [A, FAST, A]);
    emit_chunk(&mut p, 0, &chunk("a1", "a4", 1, 3), "a4");
    p.settle();
    steal_pending(&mut p, "a4");
    assert_eq!(p.tabs[1].runs, vec![String::from("a4")]);
    // Both read (a4, a7] and deliver it; the old one also its next live
    // answer, which the new one reads as part of a longer chunk.
    emit_chunk(&mut p, 0, &chunk("a4", "a7", 4, 3), "a7");
    emit_chunk(&mut p, 1, &chunk("a4", "a7", 4, 3), "a7");
    emit_chunk(&mut p, 0, &chunk("a7", "a8", 7, 1), "a8");
    emit_chunk(&mut p, 1, &chunk("a7", "b2", 7, 3), "b2");
    p.settle();
    assert_eq!(p.running(), vec![1]);
    for i in 0..3 {
        assert_eq!(p.heard(i), (1..=9).collect::<Vec<_>>(), "tab {i}");
    }
}

#[test]
fn durable_streams_without_offsets_the_same_overlap_repeats() {
    // The old behaviour (no ids, no offsets): what the test above rules out.
    let mut p = three_tabs("a1", false, [A, FAST, A]);
    steal_pending(&mut p, "a1");
    emit_chunk(&mut p, 0, &chunk("a1", "a4", 1, 3), "a4");
    emit_chunk(&mut p, 1, &chunk("a1", "a4", 1, 3), "a4");
    p.settle();
    assert_eq!(p.heard(2), [1, 2, 3, 1, 2, 3]);
}

#[test]
fn durable_streams_a_new_leaders_uptodate_at_the_same_offset_is_heard_once() {
    let up = |o: &str| {
        Relay::Action(Action::UpToDate {
            last_event_id: String::from(o),
        })
    };
    let ups = |p: &Profile, i: usize| -> Vec<String> {
        p.tabs[i]
            .told
            .iter()
            .filter_map(|r| match r {
                Relay::Action(Action::UpToDate { last_event_id }) => Some(last_event_id.clone()),
                _ => None,
            })
            .collect()
    };
    let mut p = three_tabs("-1", true, [A, A, A]);
    emit_chunk(&mut p, 0, &chunk("-1", "a3", 1, 2), "a3");
    p.emit(0, up("a3"), "a3");
    p.settle();
    p.kill(0);
    p.settle();
    assert_eq!(p.tabs[1].runs, vec![String::from("a3")]);
    // The new leader catches up where every tab already was.
    assert!(!p.emit(1, up("a3"), "a3"));
    p.settle();
    // Fell behind and caught up again further on: news.
    emit_chunk(&mut p, 1, &chunk("a3", "a9", 3, 2), "a9");
    assert!(p.emit(1, up("a9"), "a9"));
    p.settle();
    for i in [1, 2] {
        assert_eq!(ups(&p, i), ["a3", "a9"], "tab {i}");
        assert_eq!(p.heard(i), [1, 2, 3, 4], "tab {i}");
    }
}

/// The leader gave up and then its tab went (its lock released, nobody
/// queued: every follower dropped its request when it heard `closed`). A
/// follower's `reconnect()` then reaches no leader: it queues for the lock
/// itself and, granted, runs from the cursor (the "try now" the app asked
/// for). After a fatal `closed` (not `gave-up`) it stays stopped, as the
/// engine's `reconnect` does nothing after a permanent error.
#[test]
fn a_follower_revives_a_connection_whose_leader_gave_up_and_went() {
    for (reason, revived) in [(Reason::GaveUp, true), (Reason::PermanentError, false)] {
        let mut p = three_tabs("5", false, [A, A, A]);
        p.emit(0, state(State::Closed, reason), "5");
        p.settle();
        assert!(p.queue.is_empty());
        p.feed(0, |m, n| m.handle_close(n));
        p.kill(0);
        p.settle();
        p.feed(1, |m, n| m.handle_reconnect(n));
        p.settle();
        let runs = if revived {
            vec![String::from("5")]
        } else {
            vec![]
        };
        assert_eq!(p.tabs[1].runs, runs, "{reason:?}");
        assert_eq!(p.running(), if revived { vec![1] } else { vec![] });
        // The other follower hears the new leader run, and queues again.
        if revived {
            p.emit(1, state(State::Connecting, Reason::Reconnect), "5");
            p.settle();
            assert_eq!(p.queue, [2]);
        }
    }
}
