//! The solo coordinator (`crosstab::Solo`, the `CrossTab` of a build
//! without the `cross-tab` feature) answers every input sequence exactly as
//! the full coordinator does for a connection that cannot coordinate
//! (`Support` without locks or a channel): the same actions in the same
//! order, the same "heard" answers, no follower's mirror, never a leader.
#![cfg(feature = "cross-tab")]

use proptest::prelude::*;
use tidings_core::crosstab::{CrossTab, Solo, Support, TabAction, Wire};
use tidings_core::engine::{Action, Message, Reason, State, TransportKind};
use tidings_core::time::Now;

const ALONE: Support = Support {
    locks: false,
    channel: false,
};

/// One input of either coordinator.
#[derive(Clone, Debug)]
enum In {
    Start,
    Reconnect,
    Close,
    Granted,
    Stolen,
    Failed,
    Hidden(bool),
    Frozen(bool),
    PageHide,
    PageShow(bool),
    Timer,
    Hello,
    Message(u8),
    State,
}

fn input() -> impl Strategy<Value = In> {
    prop_oneof![
        Just(In::Start),
        Just(In::Reconnect),
        Just(In::Close),
        Just(In::Granted),
        Just(In::Stolen),
        Just(In::Failed),
        any::<bool>().prop_map(In::Hidden),
        any::<bool>().prop_map(In::Frozen),
        Just(In::PageHide),
        any::<bool>().prop_map(In::PageShow),
        Just(In::Timer),
        Just(In::Hello),
        any::<u8>().prop_map(In::Message),
        Just(In::State),
    ]
}

fn message(n: u8) -> Message {
    Message {
        id: n.to_string(),
        last_event_id: n.to_string(),
        event: "message".into(),
        data: String::new(),
        binary: false,
    }
}

const STATE: Action = Action::State {
    state: State::Open,
    reason: Reason::Start,
    delay_ms: None,
};

/// Feed `input` at `ms` to either machine (the same calls on both), then
/// drain it: the "heard" answer and the actions until `Wait` (included).
macro_rules! feed {
    ($m:expr, $input:expr, $ms:expr) => {{
        let m = &mut $m;
        let now = Now::at($ms, 1_700_000_000_000 + $ms as i64);
        let heard = match $input {
            In::Start => Some(m.handle_start(now, ALONE)).and(None),
            In::Reconnect => Some(m.handle_reconnect(now)).and(None),
            In::Close => Some(m.handle_close(now)).and(None),
            In::Granted => Some(m.handle_lock_granted(now)).and(None),
            In::Stolen => Some(m.handle_lock_stolen(now)).and(None),
            In::Failed => Some(m.handle_lock_failed(now)).and(None),
            In::Hidden(h) => Some(m.handle_visibility(now, *h)).and(None),
            In::Frozen(f) => Some(m.handle_frozen(now, *f)).and(None),
            In::PageHide => Some(m.handle_page_hide(now)).and(None),
            In::PageShow(p) => Some(m.handle_page_show(now, *p)).and(None),
            In::Timer => Some(m.handle_timer(now)).and(None),
            In::Hello => Some(m.handle_wire(now, Wire::Hello)).and(None),
            In::Message(n) => {
                Some(m.handle_own_message(&message(*n), Some(TransportKind::Poll), "c"))
            }
            In::State => Some(m.handle_own_action(&STATE, "c")),
        };
        let mut out = Vec::new();
        loop {
            let a = m.poll();
            let done = matches!(a, TabAction::Wait { .. });
            out.push(a);
            if done || out.len() > 20 {
                break;
            }
        }
        (heard, out, m.following().cloned(), m.is_leader())
    }};
}

proptest! {
    #[test]
    fn solo_answers_as_the_full_coordinator_without_locks_or_a_channel(
        inputs in proptest::collection::vec(input(), 0..40),
        durable in any::<bool>(),
    ) {
        let mut full = CrossTab::new("41".into(), 7);
        let mut solo = Solo::new("41".into(), 7);
        if durable {
            full = full.with_offsets();
            solo = solo.with_offsets();
        }
        for (i, input) in inputs.iter().enumerate() {
            let ms = 1_000 + 100 * i as u64;
            prop_assert_eq!(feed!(solo, input, ms), feed!(full, input, ms), "input {} {:?}", i, input);
        }
    }
}

#[test]
fn solo_runs_from_the_cursor_once_and_hands_reconnect_to_its_engine_until_closed() {
    let mut solo = Solo::new("41".into(), 7);
    let (_, start, _, _) = feed!(solo, &In::Start, 10);
    let run = TabAction::Run {
        cursor: "41".into(),
    };
    assert_eq!(start, [run, TabAction::Wait { until: None }]);
    let (_, again, _, _) = feed!(solo, &In::Start, 20);
    assert_eq!(again, [TabAction::Wait { until: None }]);
    let (heard, _, _, _) = feed!(solo, &In::Message(3), 30);
    assert_eq!(heard, Some(true));
    let (_, r, _, _) = feed!(solo, &In::Reconnect, 40);
    assert_eq!(r, [TabAction::Reconnect, TabAction::Wait { until: None }]);
    feed!(solo, &In::Close, 50);
    let (_, after, _, _) = feed!(solo, &In::Reconnect, 60);
    assert_eq!(after, [TabAction::Wait { until: None }]);
}
