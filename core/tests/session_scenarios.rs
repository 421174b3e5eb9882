//! The session machine on virtual time: one connection in one tab, its
//! engine, cross-tab coordinator and calm status composed by
//! `tidings_core::session`. Exact numbers: engine seed 7, tab seed 3
//! (steals after 72 ms), `fetch-sse` only.

use tidings_core::calm::Status;
use tidings_core::crosstab::{Relay, Support, Wire};
use tidings_core::engine::{
    self, Action, Capabilities, Config, Message, Reason, ReconnectAnswer, ResponseHead, State,
    TransportError, TransportKind,
};
use tidings_core::session::{Delivery, Input, PageFact, Session, SessionAction, TabFact};
use tidings_core::time::{MonoMs, Now};

const WALL0: i64 = 1_700_000_000_000;
const SHARED: Support = Support {
    locks: true,
    channel: true,
};
const ALONE: Support = Support {
    locks: false,
    channel: false,
};

fn at(ms: u64) -> Now {
    Now::at(ms, WALL0 + ms as i64)
}

fn session(lost_after_ms: u64) -> Session {
    let mut config = Config::new("/updates");
    config.transports = vec![TransportKind::FetchSse];
    config.last_event_id = "3".into();
    Session::new(config, 7, 3, lost_after_ms)
}

/// Drain until `Wait`: the actions, and the deadline.
fn drain(s: &mut Session) -> (Vec<SessionAction>, Option<u64>) {
    let mut out = Vec::new();
    loop {
        match s.poll() {
            SessionAction::Wait { until } => return (out, until.map(|t| t.0)),
            a => out.push(a),
        }
    }
}

fn feed(s: &mut Session, ms: u64, input: Input<'_>) -> (Vec<SessionAction>, Option<u64>) {
    s.handle(at(ms), input);
    drain(s)
}

fn opened(actions: &[SessionAction]) -> Vec<engine::OpenRequest> {
    actions
        .iter()
        .filter_map(|a| match a {
            SessionAction::Open(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

fn resumed_from(req: &engine::OpenRequest) -> Option<&str> {
    req.headers
        .iter()
        .find(|(k, _)| k == "Last-Event-ID")
        .map(|(_, v)| v.as_str())
}

fn state(state: State, reason: Reason) -> Action {
    Action::State {
        state,
        reason,
        delay_ms: None,
    }
}

fn msg(n: u32) -> Message {
    Message {
        id: n.to_string(),
        last_event_id: n.to_string(),
        event: "message".into(),
        data: format!("m{n}"),
        binary: false,
    }
}

fn notice(relay: Relay, cursor: &str) -> Input<'static> {
    Input::Tab(TabFact::Wire(Wire::Notice {
        notice: relay,
        cursor: cursor.into(),
        index: 0,
        sync: false,
    }))
}

/// Deliveries' ids per `Messages` batch.
fn batches(actions: &[SessionAction]) -> Vec<Vec<String>> {
    actions
        .iter()
        .filter_map(|a| match a {
            SessionAction::Messages(ds) => Some(ds.iter().map(|d| d.msg.id.clone()).collect()),
            _ => None,
        })
        .collect()
}

/// A tab alone, open at 30 ms on attempt 1 from cursor "3".
fn open_alone(lost_after_ms: u64) -> Session {
    let mut s = session(lost_after_ms);
    let (a, _) = feed(
        &mut s,
        0,
        Input::Start {
            caps: Capabilities::ALL,
            support: ALONE,
        },
    );
    let req = &opened(&a)[0];
    assert_eq!(resumed_from(req), Some("3"));
    let head = ResponseHead::event_stream();
    let (_, _) = feed(
        &mut s,
        30,
        Input::Engine(engine::Input::ResponseHead(req.id, &head)),
    );
    assert_eq!(s.state(), State::Open);
    s
}

/// A tab that leads: started shared, granted the lock at 10 ms, open at 30 ms.
fn leader() -> (Session, engine::AttemptId) {
    let mut s = session(5000);
    let (a, _) = feed(
        &mut s,
        0,
        Input::Start {
            caps: Capabilities::ALL,
            support: SHARED,
        },
    );
    assert_eq!(
        a,
        vec![
            SessionAction::Post(Box::new(Wire::Hello)),
            SessionAction::RequestLock { steal: false }
        ]
    );
    let (a, _) = feed(&mut s, 10, Input::Tab(TabFact::LockGranted));
    let id = opened(&a)[0].id;
    let head = ResponseHead::event_stream();
    let _ = feed(
        &mut s,
        30,
        Input::Engine(engine::Input::ResponseHead(id, &head)),
    );
    assert_eq!(s.state(), State::Open);
    (s, id)
}

#[test]
fn a_follower_sees_the_leaders_mirror_not_its_idle_engine() {
    let mut s = session(5000);
    let _ = feed(
        &mut s,
        0,
        Input::Start {
            caps: Capabilities::ALL,
            support: SHARED,
        },
    );
    let t = Action::TransportChanged {
        transport: TransportKind::LongPoll,
        previous: None,
        reason: Reason::Start,
    };
    let _ = feed(&mut s, 5, notice(Relay::Action(t.clone()), "9"));
    let (a, _) = feed(
        &mut s,
        6,
        notice(Relay::Action(state(State::Open, Reason::Start)), "9"),
    );
    assert!(s.follows());
    assert_eq!(s.state(), State::Open);
    assert_eq!(s.transport(), Some(TransportKind::LongPoll));
    assert_eq!(s.last_event_id(), "9");
    assert_eq!(s.engine().state(), State::Connecting);
    assert_eq!(s.engine().last_event_id(), "3");
    assert_eq!(
        a,
        vec![
            SessionAction::Tell(state(State::Open, Reason::Start)),
            SessionAction::Status((Status::Connected, Reason::Start)),
            SessionAction::BatchEnd,
        ]
    );
    assert_eq!(s.status(), Status::Connected);
}

#[test]
fn a_leaders_own_delivery_is_relayed_and_told_once() {
    let (mut s, id) = leader();
    let (a, _) = feed(
        &mut s,
        40,
        Input::Engine(engine::Input::Bytes(id, b"id: 4\ndata: m4\n\n")),
    );
    let posts: Vec<_> = a
        .iter()
        .filter(|a| matches!(a, SessionAction::Post(w) if matches!(**w, Wire::Notice { .. })))
        .collect();
    assert_eq!(posts.len(), 1);
    assert_eq!(batches(&a), vec![vec!["4".to_string()]]);
    let SessionAction::Messages(ds) = &a[a.len() - 2] else {
        panic!("{a:?}")
    };
    assert_eq!(
        ds[0],
        Delivery {
            msg: msg(4),
            transport: Some(TransportKind::FetchSse),
            own: true
        }
    );
    assert_eq!(a.last(), Some(&SessionAction::BatchEnd));
    // The other leader of a steal relays the same message: not told again.
    let relay = Relay::Message(msg(4), Some(TransportKind::FetchSse));
    let (a, _) = feed(&mut s, 41, notice(relay, "4"));
    assert_eq!(batches(&a), Vec::<Vec<String>>::new());
}

#[test]
fn halt_then_run_swaps_the_engine_and_resumes_from_the_cursor() {
    let (mut s, id) = leader();
    let _ = feed(
        &mut s,
        40,
        Input::Engine(engine::Input::Bytes(id, b"id: 4\ndata: m4\n\n")),
    );
    let (a, _) = feed(&mut s, 50, Input::Tab(TabFact::LockStolen));
    assert!(a.contains(&SessionAction::Abort(id)), "{a:?}");
    assert!(opened(&a).is_empty());
    assert_eq!(s.engine().live_attempt(), None);
    assert_eq!(s.engine().state(), State::Connecting);
    let (a, _) = feed(&mut s, 60, Input::Tab(TabFact::LockGranted));
    let reqs = opened(&a);
    assert_eq!(reqs.len(), 1);
    assert_eq!(resumed_from(&reqs[0]), Some("4"));
    assert_eq!(reqs[0].id, engine::AttemptId(1));
}

#[test]
fn page_hide_reaches_the_coordinator_before_the_engine() {
    let (mut s, id) = leader();
    let (a, until) = feed(&mut s, 40, Input::Page(PageFact::PageHide));
    // The leader hands over first: `bye`, its engine halted (the request
    // aborted without a notice of its own to relay), lock and channel gone.
    assert_eq!(
        a[..4],
        [
            SessionAction::Post(Box::new(Wire::Bye)),
            SessionAction::Abort(id),
            SessionAction::DropLock,
            SessionAction::CloseChannel,
        ],
        "{a:?}"
    );
    assert!(!a
        .iter()
        .any(|a| matches!(a, SessionAction::Post(w) if matches!(**w, Wire::Notice { .. }))));
    assert_eq!(until, None);
}

#[test]
fn the_engine_and_calm_deadlines_merge_into_one_wait() {
    // The stream fails at 100 ms: the engine's retry and the calm status's
    // `lostAfterMs` deadline share the one `Wait`, the earliest.
    let mut s = open_alone(60_000);
    let (_, engine_retry) = feed(
        &mut s,
        100,
        Input::Engine(engine::Input::TransportError(
            engine::AttemptId(1),
            TransportError::Network,
        )),
    );
    assert_eq!(engine_retry, Some(1295));
    let mut s = open_alone(300);
    let (_, until) = feed(
        &mut s,
        100,
        Input::Engine(engine::Input::TransportError(
            engine::AttemptId(1),
            TransportError::Network,
        )),
    );
    assert_eq!(until, Some(400));
    let (a, _) = feed(&mut s, 400, Input::Timer);
    assert!(
        a.contains(&SessionAction::Status((
            Status::Reconnecting,
            Reason::Backoff
        ))),
        "{a:?}"
    );
}

#[test]
fn the_steal_deadline_is_the_wait_and_its_timer_steals() {
    let mut s = session(5000);
    let _ = feed(
        &mut s,
        0,
        Input::Start {
            caps: Capabilities::ALL,
            support: SHARED,
        },
    );
    let paused = Action::State {
        state: State::Paused,
        reason: Reason::Hidden,
        delay_ms: None,
    };
    let (_, until) = feed(&mut s, 100, notice(Relay::Action(paused), "3"));
    assert_eq!(until, Some(172));
    let (a, until) = feed(&mut s, 172, Input::Timer);
    assert_eq!(a, vec![SessionAction::RequestLock { steal: true }]);
    assert_eq!(until, None);
}

#[test]
fn consecutive_deliveries_form_one_batch_then_batch_end() {
    let mut s = open_alone(5000);
    let id = engine::AttemptId(1);
    assert_eq!(s.engine().live_attempt(), Some(id));
    let body = b"id: 4\ndata: a\n\nid: 5\ndata: b\n\nid: 6\ndata: c\n\n";
    let (a, _) = feed(&mut s, 40, Input::Engine(engine::Input::Bytes(id, body)));
    assert_eq!(
        batches(&a),
        vec![vec!["4".to_string(), "5".into(), "6".into()]]
    );
    assert_eq!(a.len(), 2, "{a:?}");
    assert_eq!(a[1], SessionAction::BatchEnd);
    // Nothing told: no `BatchEnd`.
    let (a, _) = feed(
        &mut s,
        41,
        Input::Engine(engine::Input::Bytes(id, b": ping\n\n")),
    );
    assert_eq!(a, vec![]);
}

#[test]
fn close_tells_the_coordinator_first_then_the_engine_then_ignores_everything() {
    let (mut s, id) = leader();
    let (a, until) = feed(&mut s, 40, Input::Close);
    assert_eq!(
        a,
        vec![
            SessionAction::Post(Box::new(Wire::Bye)),
            SessionAction::DropLock,
            SessionAction::CloseChannel,
            SessionAction::Abort(id),
            SessionAction::Tell(state(State::Closed, Reason::ClosedByUser)),
            SessionAction::Status((Status::Closed, Reason::ClosedByUser)),
            SessionAction::BatchEnd,
        ]
    );
    assert_eq!(until, None);
    assert!(s.is_stopped());
    let (a, until) = feed(&mut s, 50, Input::Tab(TabFact::LockGranted));
    assert_eq!((a, until), (vec![], None));
    let (a, _) = feed(&mut s, 60, Input::Reconnect { online: true });
    assert_eq!(a, vec![]);
    assert_eq!(s.reconnected(), ReconnectAnswer::Closed);
}

#[test]
fn reconnect_is_the_leaders_in_a_follower_the_engines_otherwise() {
    let mut s = session(5000);
    let _ = feed(
        &mut s,
        0,
        Input::Start {
            caps: Capabilities::ALL,
            support: SHARED,
        },
    );
    let (a, _) = feed(&mut s, 10, Input::Reconnect { online: true });
    assert_eq!(a, vec![SessionAction::Post(Box::new(Wire::Reconnect))]);
    assert_eq!(s.reconnected(), ReconnectAnswer::Leader);
    let mut s = open_alone(5000);
    let _ = feed(&mut s, 40, Input::Reconnect { online: true });
    assert_eq!(s.reconnected(), ReconnectAnswer::AlreadyOpen);
}

#[test]
fn a_fresh_engine_learns_the_page_state_remembered_before_its_run() {
    let mut s = session(5000);
    let _ = feed(&mut s, 0, Input::Page(PageFact::Hidden(true)));
    let (a, _) = feed(
        &mut s,
        0,
        Input::Start {
            caps: Capabilities::ALL,
            support: ALONE,
        },
    );
    assert!(opened(&a).is_empty(), "{a:?}");
    assert_eq!(s.state(), State::Paused);
    let (a, _) = feed(&mut s, 20, Input::Page(PageFact::Hidden(false)));
    assert_eq!(opened(&a).len(), 1);
}

#[test]
fn nothing_but_page_facts_before_start() {
    let mut s = session(5000);
    let (a, until) = feed(&mut s, 0, Input::Timer);
    assert_eq!((a, until), (vec![], None));
    let _ = feed(&mut s, 1, Input::Tab(TabFact::LockGranted));
    assert_eq!(s.engine().live_attempt(), None);
    let _ = MonoMs(0);
}

#[test]
fn a_followers_reconnect_post_reaches_the_leaders_engine() {
    let (mut s, id) = leader();
    let error = Input::Engine(engine::Input::TransportError(id, TransportError::Network));
    let (a, until) = feed(&mut s, 100, error);
    assert!(opened(&a).is_empty());
    assert_eq!(until, Some(1295));
    let (a, _) = feed(&mut s, 200, Input::Tab(TabFact::Wire(Wire::Reconnect)));
    let reqs = opened(&a);
    assert_eq!(reqs.len(), 1, "{a:?}");
    assert_eq!(reqs[0].id, engine::AttemptId(2));
    assert_eq!(s.reconnected(), ReconnectAnswer::Now);
}

#[test]
fn the_apps_headers_failure_is_told_here_and_never_relayed() {
    let (mut s, id) = leader();
    let (a, _) = feed(&mut s, 40, Input::Engine(engine::Input::HeadersFailed(id)));
    let relayed_errors = a.iter().filter(|a| {
        matches!(
            a,
            SessionAction::Post(w) if matches!(
                **w,
                Wire::Notice {
                    notice: Relay::Action(Action::Error { .. }),
                    ..
                }
            )
        )
    });
    assert_eq!(relayed_errors.count(), 0, "{a:?}");
    let told = a.iter().filter(|a| {
        matches!(
            a,
            SessionAction::Tell(Action::Error {
                code: engine::ErrorCode::Headers,
                ..
            })
        )
    });
    assert_eq!(told.count(), 1, "{a:?}");
}

#[test]
fn a_close_before_the_start_means_it_never_starts() {
    let mut s = session(5000);
    let _ = feed(&mut s, 0, Input::Close);
    assert!(s.is_closed());
    let start = Input::Start {
        caps: Capabilities::ALL,
        support: SHARED,
    };
    let (a, until) = feed(&mut s, 1, start);
    assert!(opened(&a).is_empty(), "{a:?}");
    let asked_for_a_lock = a
        .iter()
        .any(|a| matches!(a, SessionAction::RequestLock { .. }));
    assert!(!asked_for_a_lock, "{a:?}");
    assert_eq!(until, None);
    assert_eq!(s.engine().live_attempt(), None);
}

/// The engine's status probe of a native `EventSource` that failed before it
/// opened is this tab's own work: handed to the adapter as
/// `SessionAction::Probe`, never posted to other tabs nor told to
/// subscribers.
#[test]
fn a_native_probe_is_the_adapters_work_never_relayed() {
    let mut config = Config::new("/updates");
    config.transports = vec![TransportKind::EventSource];
    let mut s = Session::new(config, 7, 3, 5000);
    let start = Input::Start {
        caps: Capabilities::ALL,
        support: SHARED,
    };
    let _ = feed(&mut s, 0, start);
    let (a, _) = feed(&mut s, 10, Input::Tab(TabFact::LockGranted));
    let id = opened(&a)[0].id;
    let failed = engine::Input::TransportError(id, engine::TransportError::NativeFailed);
    let (a, _) = feed(&mut s, 20, Input::Engine(failed));
    assert_eq!(a, vec![SessionAction::Probe(id)]);
}

#[test]
fn an_input_read_before_an_earlier_one_happens_at_the_latest_time_seen() {
    // The timer fires at 10 000 ms; a transport error whose clock was read
    // at 100 ms is handled after it. The calm status's `lostAfterMs` (300)
    // counts from 10 000, and no `Wait` asks for a time already past.
    let mut s = open_alone(300);
    let (_, until) = feed(&mut s, 10_000, Input::Timer);
    assert_eq!(until, Some(45_030), "the open stream's watchdog");
    let (_, until) = feed(
        &mut s,
        100,
        Input::Engine(engine::Input::TransportError(
            engine::AttemptId(1),
            TransportError::Network,
        )),
    );
    assert_eq!(until, Some(10_300));
    let (a, _) = feed(&mut s, 10_299, Input::Timer);
    assert!(
        !a.iter().any(|a| matches!(a, SessionAction::Status(_))),
        "{a:?}"
    );
}
