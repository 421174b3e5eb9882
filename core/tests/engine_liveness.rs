//! Liveness and limits through the engine: BC-14 (heartbeat / idle timeout
//! semantics), BC-15 (a buffering proxy holds the stream → long-poll), BC-16
//! (a huge line or endless event: dropped without buffering, `too-large`).
//! Data copied from the real-world failure list. (Skipping one oversize event
//! and going on: `engine_too_large.rs`.)

#[path = "engine_support.rs"]
mod support;

use support::*;
use tidings_core::engine::{Action, Config, ErrorCode, Reason, ResponseHead, State, TransportKind};
use tidings_core::sse::SseLimits;

/// BC-14: idle timeout H = 15 s for all variants.
fn bc14_config(transport: TransportKind) -> Config {
    let mut c = Config::new("/stream");
    c.transports = vec![transport];
    c.watchdog.idle_timeout_ms = 15_000;
    c
}

/// V1 FSSE: bare `:` comment lines every 10 s are liveness (bytes count).
#[test]
fn bc14_v1_fetch_comments_keep_alive() {
    let mut sim = Sim::new(bc14_config(TransportKind::FetchSse), 1);
    let o = the_open(&sim.start());
    sim.head(o.id, ResponseHead::event_stream());
    for _ in 0..12 {
        sim.run_for(10_000);
        sim.bytes(o.id, b":\n");
    }
    assert_eq!(
        (sim.opens().len(), aborts(&sim).len(), sim.delivered().len()),
        (1, 0, 0)
    );
}

/// V1 NATIVE: comments never reach JS; the idle watchdog does not run until
/// a message or heartbeat event arrives. Only the first-event deadline does
/// (with it disabled, a comment-only server is never recycled). With a named
/// heartbeat event, the heartbeats keep it alive and are never delivered.
#[test]
fn bc14_v1_native_no_watchdog_without_events() {
    let mut config = bc14_config(TransportKind::EventSource);
    config.watchdog.first_event_timeout_ms = 0;
    let mut sim = Sim::new(config, 1);
    let o = the_open(&sim.start());
    sim.opened(o.id);
    sim.run_for(120_000);
    assert_eq!((sim.opens().len(), aborts(&sim).len()), (1, 0));

    let mut sim = Sim::new(bc14_config(TransportKind::EventSource), 1);
    let o = the_open(&sim.start());
    sim.opened(o.id);
    for _ in 0..12 {
        sim.run_for(10_000);
        sim.native(o.id, "heartbeat", "", "");
    }
    assert_eq!(
        (sim.opens().len(), aborts(&sim).len(), sim.delivered().len()),
        (1, 0, 0)
    );
    // Once heartbeats stop, the stream is dead after H.
    let t = sim.now.mono.0;
    sim.run_for(20_000);
    assert_eq!(aborts(&sim), [t + 15_000]);
}

/// V2: a 40 KiB event written as 1 KiB slices every second: bytes, not
/// events, reset the timer; one event at t = 40 s.
#[test]
fn bc14_v2_bytes_reset_the_timer() {
    let mut sim = Sim::new(bc14_config(TransportKind::FetchSse), 2);
    let o = the_open(&sim.start());
    sim.head(o.id, ResponseHead::event_stream());
    let mut body = b"data: ".to_vec();
    body.resize(40 * 1024 - 2, b'x');
    body.extend_from_slice(b"\n\n");
    for slice in body.chunks(1024) {
        sim.run_for(1000);
        sim.bytes(o.id, slice);
    }
    let got = sim.find(|a| match a {
        Action::Deliver(m) => Some(m.data.len()),
        _ => None,
    });
    assert_eq!(got, [(40_000, 40 * 1024 - 8)]);
    assert_eq!((sim.opens().len(), aborts(&sim).len()), (1, 0));
}

/// V3: one event then silence: aborted at exactly t = 15.0 s (the deadline
/// is computed from the last byte, not a polling interval), reason
/// `stalled`, then the normal reconnect delay.
#[test]
fn bc14_v3_stall_detected_on_time() {
    let mut sim = Sim::new(bc14_config(TransportKind::FetchSse), 3);
    let o = the_open(&sim.start());
    sim.stream(o.id, b"data: a\n\n");
    let acts = sim.run_for(16_500);
    assert_eq!(aborts(&sim), [15_000]);
    assert_eq!(
        errors(&acts),
        [Action::Error {
            code: ErrorCode::Timeout,
            status: None,
            retry_in_ms: Some(1700),
            fatal: false,
            id: None,
        }]
    );
    // Open 15 s with a byte: healthy, so the fleet-wide spread floor + U[0, floor).
    assert_eq!(
        states(&acts),
        [(State::Waiting, Reason::Stalled, Some(1700))]
    );
    sim.must_open(10_000);
    assert_eq!(sim.last_open_at, 16_700);
}

/// V4: a timeout of 0 means disabled, not "default".
#[test]
fn bc14_v4_zero_disables() {
    let mut config = bc14_config(TransportKind::FetchSse);
    config.watchdog.idle_timeout_ms = 0;
    let mut sim = Sim::new(config, 4);
    let o = the_open(&sim.start());
    sim.stream(o.id, b"data: a\n\n");
    sim.run_for(120_000);
    assert_eq!((sim.opens().len(), aborts(&sim).len()), (1, 0));
    assert_eq!(sim.wait, None);
}

/// V5: hidden tab (pausing disabled) whose timers fire up to a minute late
/// (Chrome's intensive throttling), events every 10 s: a late timer compares
/// "now" with the last byte, so nothing is torn down.
#[test]
fn bc14_v5_late_timers_compare_with_the_last_byte() {
    let mut config = bc14_config(TransportKind::FetchSse);
    config.pause_when_hidden = None;
    let mut sim = Sim::new(config, 5);
    let o = the_open(&sim.start());
    sim.head(o.id, ResponseHead::event_stream());
    sim.visibility(true);
    for step in 1..=48 {
        // 8 minutes in 10 s steps; the timer only fires on whole minutes.
        sim.now = sim.now.plus_ms(10_000);
        sim.bytes(o.id, b"data: x\n\n");
        if step % 6 == 0 {
            sim.engine.handle_timer(sim.now);
            sim.drain();
        }
    }
    assert_eq!((sim.opens().len(), aborts(&sim).len()), (1, 0));
    assert_eq!(sim.delivered().len(), 48);
}

/// BC-15 origin: event N (id N) at t = N s.
fn bc15_body(from: u64, to: u64) -> Vec<u8> {
    let mut b = Vec::new();
    for n in from..=to {
        b.extend_from_slice(format!("id: {n}\ndata: tick {n}\n\n: hb\n\n").as_bytes());
    }
    b
}

/// BC-15: the proxy forwards headers at once but holds the body. Attempts 1
/// and 2 each get headers and 0 bytes and are aborted at the first-event
/// deadline (45 s after their head, the default: three
/// 15-second pings); then the transport changes to long-poll
/// (reason `buffered-stream`) and events arrive with continuous ids, no gap,
/// no duplicate (the long-poll server here also replays the cursor's own event,
/// which dedupe drops). After `remember_ms` the preferred transport is probed,
/// still held, and the client returns to long-poll.
#[test]
fn bc15_buffering_proxy_moves_to_long_poll() {
    let mut sim = Sim::new(fetch_sse_config(), 15);
    let mut o = the_open(&sim.start());
    let mut aborted_at = vec![];
    for attempt in 1..=2 {
        assert_eq!(o.transport, TransportKind::FetchSse, "attempt {attempt}");
        sim.run_for(50);
        sim.head(o.id, ResponseHead::event_stream());
        let head_at = sim.now.mono.0;
        sim.run_for(45_000);
        aborted_at.push(aborts(&sim).last().copied().unwrap_or(0) - head_at);
        o = sim.must_open(120_000);
    }
    assert_eq!(aborted_at, [45_000, 45_000]);
    // What detecting the proxy costs with the defaults: the first long-poll
    // request goes out 93.1 s after the start (2 × (50 ms + 45 s) + 3044 ms
    // of backoff, seed 15), where the old 15 s deadline cost 33.1 s.
    assert_eq!(sim.last_open_at, 2 * (50 + 45_000) + 3044);
    let changes = sim.find(|a| match a {
        Action::TransportChanged {
            transport,
            previous,
            reason,
        } => Some((*transport, *previous, *reason)),
        _ => None,
    });
    assert_eq!(changes.len(), 2);
    assert_eq!(
        changes[1].1,
        (
            TransportKind::LongPoll,
            Some(TransportKind::FetchSse),
            Reason::BufferedStream
        )
    );
    assert_eq!(o.transport, TransportKind::LongPoll);
    assert_eq!(
        sim.engine.downgrade().map(|d| d.0),
        Some(TransportKind::LongPoll)
    );

    // Long-poll: answer with everything after the cursor, replaying the
    // cursor's own event; hold when nothing is new.
    let mut lp = o;
    for _ in 0..40 {
        let cursor: u64 = header(&lp, "Last-Event-ID")
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let newest = sim.now.mono.0 / 1000;
        if newest <= cursor {
            sim.run_until((cursor + 1) * 1000);
        }
        let newest = sim.now.mono.0 / 1000;
        sim.head(lp.id, ResponseHead::event_stream());
        sim.bytes(lp.id, &bc15_body(cursor.max(1), newest));
        sim.end(lp.id);
        lp = sim.must_open(1000);
    }
    let ids: Vec<u64> = sim
        .delivered()
        .iter()
        .filter_map(|m| m.id.parse().ok())
        .collect();
    let want: Vec<u64> = (1..=ids.len() as u64).collect();
    assert_eq!(ids, want, "continuous, no gap, no duplicate");
    assert!(ids.len() >= 40);
    assert_eq!(sim.engine.stats().duplicates_dropped, 39);

    // Ten minutes after the downgrade the preferred transport is probed; the
    // proxy still holds it, so back to long-poll and remembered again.
    let (_, until) = sim
        .engine
        .downgrade()
        .unwrap_or((TransportKind::Poll, Default::default()));
    let mut probed = None;
    for _ in 0..1000 {
        if sim.now.wall >= until {
            break;
        }
        sim.run_for(30_000);
        sim.head(lp.id, ResponseHead::new(204));
        lp = sim.must_open(5_000);
    }
    if lp.transport != TransportKind::FetchSse {
        sim.head(lp.id, ResponseHead::new(204));
        lp = sim.must_open(5_000);
    }
    if lp.transport == TransportKind::FetchSse {
        probed = Some(lp.id);
        sim.head(lp.id, ResponseHead::event_stream());
        sim.run_for(45_000);
    }
    assert!(probed.is_some(), "probe");
    let tail: Vec<_> = changes_after(&sim, until.0 - WALL0);
    assert_eq!(
        tail,
        [
            (TransportKind::FetchSse, Reason::FailbackProbe),
            (TransportKind::LongPoll, Reason::BufferedStream)
        ]
    );
    let next = sim.must_open(1000);
    assert_eq!(next.transport, TransportKind::LongPoll);
}

/// The buffering verdict needs no response head: Firefox (153) resolves a
/// streaming `fetch` only at the first body byte, so behind a proxy that
/// holds the body the adapter never reports a head, where Chromium and
/// WebKit report one at once. With the defaults (first event 45 s, idle
/// 45 s) both views of the same held stream are `buffered-stream`, 45 s
/// after the head or, without one, after the request, and the second such
/// attempt moves to long-poll; no `open-failed` evidence in either.
#[test]
fn a_held_stream_is_buffered_with_or_without_its_head() {
    let mut seen = vec![];
    for with_head in [true, false] {
        let mut sim = Sim::new(fetch_sse_config(), 15);
        let mut o = the_open(&sim.start());
        let mut aborted_after = vec![];
        for _ in 0..2 {
            assert_eq!(o.transport, TransportKind::FetchSse);
            let started = sim.now.mono.0;
            sim.run_for(50);
            if with_head {
                sim.head(o.id, ResponseHead::event_stream());
            }
            sim.run_for(45_000);
            aborted_after.push(aborts(&sim).last().copied().unwrap_or(0) - started);
            o = sim.must_open(120_000);
        }
        let verdicts = sim.find(|a| match a {
            Action::State {
                state: State::Waiting,
                reason,
                ..
            } => Some(*reason),
            _ => None,
        });
        let moved = sim.find(|a| match a {
            Action::TransportChanged {
                transport, reason, ..
            } => Some((*transport, *reason)),
            _ => None,
        });
        let verdicts: Vec<Reason> = verdicts.into_iter().map(|(_, r)| r).collect();
        seen.push((aborted_after, verdicts, moved[1].1, o.transport));
    }
    let buffered = vec![Reason::BufferedStream, Reason::BufferedStream];
    let long_poll = (TransportKind::LongPoll, Reason::BufferedStream);
    assert_eq!(
        seen,
        [
            (
                vec![45_050, 45_050],
                buffered.clone(),
                long_poll,
                TransportKind::LongPoll
            ),
            (
                vec![45_000, 45_000],
                buffered,
                long_poll,
                TransportKind::LongPoll
            ),
        ]
    );
}

fn changes_after(sim: &Sim, t: i64) -> Vec<(TransportKind, Reason)> {
    sim.find(|a| match a {
        Action::TransportChanged {
            transport, reason, ..
        } => Some((*transport, *reason)),
        _ => None,
    })
    .into_iter()
    .filter(|(at, _)| *at as i64 >= t)
    .map(|(_, c)| c)
    .collect()
}

/// BC-15 failback success: when the probe's first byte arrives, the
/// preferred transport is restored and the downgrade forgotten.
#[test]
fn bc15_failback_probe_restores() {
    let mut config = fetch_sse_config();
    config.downgrade = Some((
        TransportKind::LongPoll,
        tidings_core::time::WallMs(WALL0 + 60_000),
    ));
    let mut sim = Sim::new(config, 1);
    let mut o = the_open(&sim.start());
    assert_eq!(o.transport, TransportKind::LongPoll);
    while o.transport == TransportKind::LongPoll {
        sim.run_for(30_000);
        sim.head(o.id, ResponseHead::new(204));
        o = sim.must_open(1000);
    }
    assert_eq!(sim.last_open_at, 60_132);
    sim.head(o.id, ResponseHead::event_stream());
    sim.bytes(o.id, b": hello\n\n");
    assert_eq!(sim.engine.downgrade(), None);
    assert_eq!(sim.engine.transport(), Some(TransportKind::FetchSse));
}

/// BC-15 ONE-LATE: every event arrives one event late; bytes keep flowing,
/// so no watchdog fires and nothing changes; each event once.
#[test]
fn bc15_one_late_changes_nothing() {
    let mut sim = Sim::new(fetch_sse_config(), 1);
    let o = the_open(&sim.start());
    sim.head(o.id, ResponseHead::event_stream());
    for n in 1..=120 {
        sim.run_for(1000);
        sim.bytes(o.id, &bc15_body(n, n));
    }
    let ids: Vec<u64> = sim
        .delivered()
        .iter()
        .filter_map(|m| m.id.parse().ok())
        .collect();
    assert_eq!(ids, (1..=120).collect::<Vec<_>>());
    assert_eq!((sim.opens().len(), aborts(&sim).len()), (1, 0));
}

fn transport_changes(sim: &Sim) -> Vec<(u64, TransportKind, TransportKind, Reason)> {
    sim.find(|a| match a {
        Action::TransportChanged {
            transport,
            previous: Some(previous),
            reason,
        } => Some((*transport, *previous, *reason)),
        _ => None,
    })
    .into_iter()
    .map(|(t, (to, from, r))| (t, to, from, r))
    .collect()
}

/// A native stream that opens and shows no event for
/// `watchdog.firstEventTimeoutMs` (1.5 s here): `buffered-stream` (a `timeout`
/// error), and after two such attempts `fetch-sse` (not yet long-poll: the
/// native stream cannot tell comments from a buffering proxy). A server that
/// only sends comments then stays on `fetch-sse`.
#[test]
fn native_silent_after_open_is_buffered_then_fetch_sse() {
    let mut config = Config::new("/stream");
    config.watchdog.first_event_timeout_ms = 1500;
    let mut sim = Sim::new(config, 1);
    let mut o = the_open(&sim.start());
    let mut opened_at = vec![];
    for _ in 0..2 {
        assert_eq!(o.transport, TransportKind::EventSource);
        sim.run_for(20);
        sim.opened(o.id);
        opened_at.push(sim.now.mono.0);
        o = sim.must_open(60_000);
    }
    let errs: Vec<(u64, ErrorCode, Option<u64>)> = sim
        .find(|a| match a {
            Action::Error {
                code, retry_in_ms, ..
            } => Some((*code, *retry_in_ms)),
            _ => None,
        })
        .into_iter()
        .map(|(t, (c, r))| (t, c, r))
        .collect();
    let waits: Vec<(u64, State, Reason)> = sim
        .find(|a| match a {
            Action::State { state, reason, .. } => Some((*state, *reason)),
            _ => None,
        })
        .into_iter()
        .map(|(t, (s, r))| (t, s, r))
        .collect();
    assert_eq!(opened_at, [20, 2823]);
    assert_eq!(aborts(&sim), [1520, 4323]);
    assert_eq!(
        errs,
        [
            (1520, ErrorCode::Timeout, Some(1283)),
            (4323, ErrorCode::Timeout, Some(1746))
        ]
    );
    assert_eq!(
        waits,
        [
            (0, State::Connecting, Reason::Start),
            (20, State::Open, Reason::Start),
            (1520, State::Waiting, Reason::BufferedStream),
            (2803, State::Connecting, Reason::BufferedStream),
            (2823, State::Open, Reason::BufferedStream),
            (4323, State::Waiting, Reason::BufferedStream),
            (6069, State::Connecting, Reason::BufferedStream),
        ]
    );
    assert_eq!(
        transport_changes(&sim),
        [(
            4323,
            TransportKind::FetchSse,
            TransportKind::EventSource,
            Reason::BufferedStream
        )]
    );
    assert_eq!(sim.last_open_at, 6069);
    assert_eq!(o.transport, TransportKind::FetchSse);
    // Comments keep fetch-sse alive: no more aborts, no more changes.
    sim.head(o.id, ResponseHead::event_stream());
    for _ in 0..10 {
        sim.run_for(1000);
        sim.bytes(o.id, b": hb\n\n");
    }
    assert_eq!(sim.engine.transport(), Some(TransportKind::FetchSse));
    assert_eq!(
        sim.engine.downgrade().map(|d| d.0),
        Some(TransportKind::FetchSse)
    );
    assert_eq!((aborts(&sim).len(), transport_changes(&sim).len()), (2, 1));
}

/// The same behind a real buffering proxy: `fetch-sse` gets its head and no
/// byte either, so after two more `buffered-stream` attempts it is long-poll.
/// One event before the deadline is enough for the native stream to stay.
#[test]
fn native_buffered_then_fetch_sse_buffered_then_long_poll() {
    let mut config = Config::new("/stream");
    config.watchdog.first_event_timeout_ms = 1500;
    let mut sim = Sim::new(config.clone(), 1);
    let mut o = the_open(&sim.start());
    for _ in 0..4 {
        sim.run_for(20);
        if o.transport == TransportKind::EventSource {
            sim.opened(o.id);
        } else {
            sim.head(o.id, ResponseHead::event_stream());
        }
        o = sim.must_open(60_000);
    }
    let changes: Vec<_> = transport_changes(&sim)
        .into_iter()
        .map(|(_, to, from, r)| (to, from, r))
        .collect();
    assert_eq!(
        changes,
        [
            (
                TransportKind::FetchSse,
                TransportKind::EventSource,
                Reason::BufferedStream
            ),
            (
                TransportKind::LongPoll,
                TransportKind::FetchSse,
                Reason::BufferedStream
            ),
        ]
    );
    assert_eq!(o.transport, TransportKind::LongPoll);
    assert_eq!(
        sim.engine.downgrade().map(|d| d.0),
        Some(TransportKind::LongPoll)
    );

    // The server's heartbeat event at open: no deadline, no change.
    let mut sim = Sim::new(config, 1);
    let o = the_open(&sim.start());
    sim.run_for(20);
    sim.opened(o.id);
    sim.run_for(1499);
    sim.native(o.id, "heartbeat", "", "");
    sim.run_for(40_000);
    assert_eq!((sim.opens().len(), aborts(&sim).len()), (1, 0));
}

/// BC-15 NATIVE on every engine: Firefox gives a native `EventSource` behind
/// a proxy that holds the body no `open` either, so the first-event deadline
/// runs from the request while no `open` came, and the verdict is the same
/// with or without it: `buffered-stream` at `firstEventTimeoutMs`, twice, then
/// `fetch-sse`. Alone (no other transport usable) the stream is kept at that
/// deadline, and the connect deadline (`idleTimeoutMs` from the request)
/// still ends a stream that never opens.
#[test]
fn a_held_native_stream_is_buffered_with_or_without_its_open() {
    let mut config = Config::new("/stream");
    config.watchdog.first_event_timeout_ms = 1500;
    config.watchdog.idle_timeout_ms = 5000;
    let mut seen = vec![];
    for with_open in [true, false] {
        let mut sim = Sim::new(config.clone(), 1);
        let mut o = the_open(&sim.start());
        let mut aborted_after = vec![];
        for i in 0..2 {
            assert_eq!(o.transport, TransportKind::EventSource);
            let started = sim.now.mono.0;
            sim.run_for(20);
            if with_open {
                sim.opened(o.id);
            }
            sim.run_for(1500);
            aborted_after.push(aborts(&sim).get(i).map(|t| t - started));
            o = sim.must_open(60_000);
        }
        let verdicts: Vec<Reason> = sim
            .find(|a| match a {
                Action::State {
                    state: State::Waiting,
                    reason,
                    ..
                } => Some(*reason),
                _ => None,
            })
            .into_iter()
            .map(|(_, r)| r)
            .collect();
        let moved: Vec<_> = transport_changes(&sim)
            .into_iter()
            .map(|(_, to, from, r)| (to, from, r))
            .collect();
        seen.push((aborted_after, verdicts, moved, o.transport));
    }
    let buffered = vec![Reason::BufferedStream, Reason::BufferedStream];
    let moved = vec![(
        TransportKind::FetchSse,
        TransportKind::EventSource,
        Reason::BufferedStream,
    )];
    assert_eq!(
        seen,
        [
            (
                vec![Some(1520), Some(1520)],
                buffered.clone(),
                moved.clone(),
                TransportKind::FetchSse
            ),
            (
                vec![Some(1500), Some(1500)],
                buffered,
                moved,
                TransportKind::FetchSse
            ),
        ]
    );

    // Alone: kept at the first-event deadline, ended by the connect deadline.
    let mut alone = config;
    alone.transports = vec![TransportKind::EventSource];
    let mut sim = Sim::new(alone, 1);
    sim.start();
    sim.run_for(6000);
    let verdicts = waiting(&sim.log.iter().map(|(_, a)| a.clone()).collect::<Vec<_>>());
    assert_eq!(aborts(&sim), [5000]);
    assert_eq!(verdicts.first().map(|v| v.0), Some(Reason::Stalled));
}

/// BC-15 NATIVE-SAFARI: Safari fires `open` only with the first byte (20 s
/// after the headers); the first message counts as connected and no timeout
/// fires before its configured value (idle 45 s before open).
#[test]
fn bc15_native_safari_late_open() {
    let mut sim = Sim::new(Config::new("/stream"), 1);
    let o = the_open(&sim.start());
    sim.run_for(20_000);
    let acts = sim.native(o.id, "message", "first", "1");
    assert_eq!(states(&acts), [(State::Open, Reason::Start, None)]);
    sim.opened(o.id);
    assert_eq!(sim.delivered().len(), 1);
    assert!(aborts(&sim).is_empty());
    // Nothing at all: the connect timeout fires at 45 s, not before.
    let mut sim = Sim::new(Config::new("/stream"), 1);
    sim.start();
    sim.run_for(60_000);
    assert_eq!(aborts(&sim), [45_000]);
}

/// BC-16 V1: `data: ` then 64 KiB of `x` per write, never a newline: past
/// 1 MiB the line is dropped as it arrives (never buffered), the request is
/// not aborted (the bytes are liveness), nothing is delivered; when the body
/// ends, the event being skipped is reported as `too-large` (not fatal) and
/// the stream reconnects like any short stream, under backoff.
#[test]
fn bc16_v1_endless_line() {
    let mut sim = Sim::new(fetch_sse_config(), 16);
    let o = the_open(&sim.start());
    sim.head(o.id, ResponseHead::event_stream());
    sim.bytes(o.id, b"data: ");
    let chunk = vec![b'x'; 64 * 1024];
    for _ in 0..1024 {
        sim.run_for(8);
        assert!(sim.bytes(o.id, &chunk).is_empty());
    }
    assert!(aborts(&sim).is_empty());
    assert!(sim.delivered().is_empty());
    let acts = sim.end(o.id);
    assert_eq!(
        errors(&acts),
        [Action::Error {
            code: ErrorCode::TooLarge,
            status: None,
            retry_in_ms: None,
            fatal: false,
            id: Some(String::new()),
        }]
    );
    let t = sim.now.mono.0;
    sim.must_open(10_000);
    assert_eq!(sim.last_open_at - t, 1183);
}

/// BC-16 V2: `data:\n` forever: the LF each line appends counts toward the
/// cap; past it the data is dropped, so memory stays bounded while the lines
/// keep coming, and nothing is delivered or aborted.
#[test]
fn bc16_v2_endless_empty_data_lines() {
    let mut sim = Sim::new(fetch_sse_config(), 16);
    let o = the_open(&sim.start());
    sim.head(o.id, ResponseHead::event_stream());
    let chunk = b"data:\n".repeat(10_000);
    for _ in 0..200 {
        sim.bytes(o.id, &chunk);
    }
    assert!(aborts(&sim).is_empty());
    assert!(sim.delivered().is_empty());
    // The blank line ends the block: one skipped event, then business as usual.
    let acts = sim.bytes(o.id, b"\ndata: next\n\n");
    assert_eq!(errors(&acts).len(), 1);
    assert_eq!(data(&acts), ["next"]);
}

/// BC-16 V3: with the cap raised to 4 MiB a legitimate 2 MiB line is one event.
#[test]
fn bc16_v3_raised_cap() {
    let mut config = fetch_sse_config();
    config.sse_limits = SseLimits {
        max_line_bytes: 4 << 20,
        max_event_data_bytes: 4 << 20,
    };
    let mut sim = Sim::new(config, 16);
    let o = the_open(&sim.start());
    sim.head(o.id, ResponseHead::event_stream());
    let mut body = b"data: ".to_vec();
    body.resize(6 + 2_097_152, b'y');
    body.extend_from_slice(b"\n\n");
    for c in body.chunks(64 * 1024) {
        sim.bytes(o.id, c);
    }
    let lens: Vec<usize> = sim.delivered().iter().map(|m| m.data.len()).collect();
    assert_eq!(lens, [2_097_152]);
    assert!(aborts(&sim).is_empty());
}
