//! The deadlines of the live attempt (BC-14, BC-15; ARCHITECTURE.md "watchdog.*",
//! "longPoll.timeoutMs").
//!
//! Every deadline is computed from the attempt's recorded times, never from a
//! timer's own schedule: a timer that fires late compares "now" against the
//! time of the last byte (BC-14 V5), and a deadline of 0 ms means "disabled"
//! (BC-14 V4).
//!
//! | transport | before open / head | opened, nothing yet | after a byte / event |
//! |---|---|---|---|
//! | `fetch-sse` | first byte: start + firstEvent, and connect: start + idle (a Durable Streams catch-up read once its head came: idle: last byte + idle) | first byte: open + firstEvent, and idle: open + idle | idle: last byte + idle |
//! | `eventsource` | first event: start + firstEvent, and connect: start + idle (Firefox gives a held stream no `open`) | first event: open + firstEvent (comments are invisible, so a comment-only stream looks buffered: the selector tries `fetch-sse` next; with no other transport usable, none after it: `quiet`) | idle: last event + idle |
//! | `long-poll` | hold: start + longPoll.timeout | same | same |
//! | `poll` | request: last activity + idle | same | same |
//!
//! A stream whose news probe found the server quiet (`news_probe`) has no
//! first-event deadline.

use super::config::{TransportKind, WatchdogConfig};
use super::state::Attempt;
use crate::time::{MonoMs, Now, WallMs};

/// Which deadline expired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Expiry {
    /// No response head / `open` in time: an open that failed.
    Connect,
    /// No byte (or native event) before the first-event deadline: buffered
    /// stream. On `fetch-sse` it runs from the head, or from the request
    /// while no head came: Firefox resolves a streaming `fetch` only at the
    /// first body byte, so a held body shows there as no head at all, and the
    /// verdict must not depend on the head to be the same on every engine.
    /// On `eventsource` likewise from `open`, or from the request while no
    /// `open` came (Firefox fires none behind a held body either).
    FirstByte,
    /// Silent past the idle timeout: stalled.
    Idle,
    /// The long-poll client timeout.
    Hold,
    /// A poll request took too long.
    Request,
}

/// The next deadline of `attempt`, if any.
pub(crate) fn deadline(
    attempt: &Attempt,
    watchdog: &WatchdogConfig,
    long_poll_timeout_ms: u64,
) -> Option<(MonoMs, Expiry)> {
    let idle = nonzero(watchdog.idle_timeout_ms);
    let first = nonzero(watchdog.first_event_timeout_ms).filter(|_| !attempt.quiet);
    let last = attempt.last_activity.mono;
    let kept = attempt.native().is_some_and(|n| n.silence_kept);
    match (attempt.transport, attempt.opened_at) {
        (TransportKind::LongPoll, _) => {
            nonzero(long_poll_timeout_ms).map(|t| (attempt.started.plus(t), Expiry::Hold))
        }
        (TransportKind::Poll, _) => idle.map(|t| (last.plus(t), Expiry::Request)),
        // A Durable Streams catch-up read on `fetch-sse` (SSE mode): its
        // head came and its body is read, silent at most `idle`.
        #[cfg(feature = "durable-streams")]
        (TransportKind::FetchSse, None) if attempt.status.is_some() => {
            idle.map(|t| (last.plus(t), Expiry::Idle))
        }
        // No head / `open` yet: the first-event deadline from the request,
        // unless the connect deadline comes first (an idle of 0, `None`,
        // never does) or a native stream was kept at it (`engine::quiet`).
        (TransportKind::FetchSse | TransportKind::EventSource, None)
            if first.is_some() && first <= idle.or(first) && !kept =>
        {
            first.map(|t| (attempt.started.plus(t), Expiry::FirstByte))
        }
        (_, None) => idle.map(|t| (attempt.started.plus(t), Expiry::Connect)),
        (TransportKind::FetchSse, Some(opened)) if attempt.bytes == 0 => {
            let by_first = first.map(|t| (opened.plus(t), Expiry::FirstByte));
            let by_idle = idle.map(|t| (opened.plus(t), Expiry::Idle));
            match (by_first, by_idle) {
                (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
                (a, b) => a.or(b),
            }
        }
        (TransportKind::EventSource, Some(opened)) if !attempt.saw_event() => first
            .filter(|_| !kept)
            .map(|t| (opened.plus(t), Expiry::FirstByte)),
        (_, Some(_)) => idle.map(|t| (last.plus(t), Expiry::Idle)),
    }
}

/// Whether `attempt`'s deadline has passed at `now` on either clock: by the
/// monotonic clock, or by the wall clock measured from the last activity (a
/// device whose monotonic clock stood still while it slept).
pub(crate) fn overdue(
    attempt: &Attempt,
    watchdog: &WatchdogConfig,
    long_poll_timeout_ms: u64,
    now: Now,
) -> Option<Expiry> {
    let (at, kind) = deadline(attempt, watchdog, long_poll_timeout_ms)?;
    let last = attempt.last_activity;
    let allowance = at.0.saturating_sub(last.mono.0);
    let wall_deadline = WallMs(
        last.wall
            .0
            .saturating_add(i64::try_from(allowance).unwrap_or(i64::MAX)),
    );
    (now.mono >= at || now.wall >= wall_deadline).then_some(kind)
}

fn nonzero(ms: u64) -> Option<u64> {
    (ms > 0).then_some(ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::action::Reason;
    use crate::engine::input::AttemptId;

    fn attempt(t: TransportKind) -> Attempt {
        Attempt::new(AttemptId(1), t, Reason::Start, Now::at(1000, 5000), false)
    }

    const W: WatchdogConfig = WatchdogConfig {
        idle_timeout_ms: 45_000,
        first_event_timeout_ms: 15_000,
    };

    #[test]
    fn fetch_sse_phases() {
        let mut a = attempt(TransportKind::FetchSse);
        // No head yet (Firefox shows none before the first body byte): the
        // first-event deadline runs from the request.
        assert_eq!(
            deadline(&a, &W, 0),
            Some((MonoMs(16_000), Expiry::FirstByte))
        );
        let no_first = WatchdogConfig {
            first_event_timeout_ms: 0,
            ..W
        };
        assert_eq!(
            deadline(&a, &no_first, 0),
            Some((MonoMs(46_000), Expiry::Connect))
        );
        a.opened_at = Some(MonoMs(2000));
        assert_eq!(
            deadline(&a, &W, 0),
            Some((MonoMs(17_000), Expiry::FirstByte))
        );
        a.bytes = 3;
        a.last_activity = Now::at(3000, 7000);
        assert_eq!(deadline(&a, &W, 0), Some((MonoMs(48_000), Expiry::Idle)));
        // 0 disables (BC-14 V4).
        let off = WatchdogConfig {
            idle_timeout_ms: 0,
            first_event_timeout_ms: 0,
        };
        assert_eq!(deadline(&a, &off, 0), None);
        a.bytes = 0;
        let only_idle = WatchdogConfig {
            first_event_timeout_ms: 0,
            ..W
        };
        assert_eq!(
            deadline(&a, &only_idle, 0),
            Some((MonoMs(47_000), Expiry::Idle))
        );
    }

    #[test]
    fn eventsource_waits_for_an_event() {
        let mut a = attempt(TransportKind::EventSource);
        // No `open` yet (Firefox behind a held body): from the request.
        assert_eq!(
            deadline(&a, &W, 0),
            Some((MonoMs(16_000), Expiry::FirstByte))
        );
        a.opened_at = Some(MonoMs(1500));
        assert_eq!(
            deadline(&a, &W, 0),
            Some((MonoMs(16_500), Expiry::FirstByte))
        );
        let no_first = WatchdogConfig {
            first_event_timeout_ms: 0,
            ..W
        };
        assert_eq!(deadline(&a, &no_first, 0), None);
        if let Some(n) = a.native_mut() {
            n.silence_kept = true;
        }
        assert_eq!(deadline(&a, &W, 0), None);
        if let Some(n) = a.native_mut() {
            n.saw_event = true;
        }
        a.last_activity = Now::at(9000, 0);
        assert_eq!(deadline(&a, &W, 0), Some((MonoMs(54_000), Expiry::Idle)));
    }

    #[test]
    fn long_poll_and_poll() {
        let a = attempt(TransportKind::LongPoll);
        assert_eq!(
            deadline(&a, &W, 35_000),
            Some((MonoMs(36_000), Expiry::Hold))
        );
        assert_eq!(deadline(&a, &W, 0), None);
        let p = attempt(TransportKind::Poll);
        assert_eq!(
            deadline(&p, &W, 35_000),
            Some((MonoMs(46_000), Expiry::Request))
        );
    }

    #[test]
    fn overdue_by_either_clock() {
        let mut a = attempt(TransportKind::FetchSse);
        a.opened_at = Some(MonoMs(1000));
        a.bytes = 1;
        // Monotonic clock stood still, wall clock moved an hour.
        assert_eq!(
            overdue(&a, &W, 0, Now::at(1001, 3_605_000)),
            Some(Expiry::Idle)
        );
        assert_eq!(overdue(&a, &W, 0, Now::at(1001, 6000)), None);
        assert_eq!(
            overdue(&a, &W, 0, Now::at(46_000, 6000)),
            Some(Expiry::Idle)
        );
    }
}
