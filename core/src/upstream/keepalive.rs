//! Which pending upstream requests are handed to `fetch(…, { keepalive: true
//! })` when the page goes away (`pagehide`): sends, reports (a
//! [`Reporter`](super::Reporter)'s report) and append batches (an
//! [`Appender`](super::Appender)'s request) still waiting for their answer or
//! their retry.
//!
//! The Fetch standard (§4.5 "HTTP-network-or-cache fetch", keepalive) refuses
//! a keepalive request when its body plus the bodies of every keepalive
//! request the page still has in flight exceed 64 KiB ([`KEEPALIVE_BUDGET_BYTES`];
//! Chromium's quota is the same). Only bodies count, not headers. So the
//! hand-off is a budget shared by every pending request of every kind: oldest
//! first (by when the last attempt of each went out), each whose body fits what is left
//! takes its share; one that does not fit is skipped (a smaller later one may
//! still fit); a body of unknown size (`FormData`) never fits. Of the sends
//! queued behind another one of the same URL (`ordered: true`), none is
//! handed over: keepalive requests run concurrently, so they could be applied
//! out of call order, which `ordered` promises never happens. Nor is a
//! request that never went out (offline since the call, a report or append
//! still queued): it has no attempt's headers to reuse. Sans-IO: sizes and
//! times in, verdicts out.

use alloc::vec;
use alloc::vec::Vec;

use crate::time::MonoMs;

/// The keepalive quota, bytes of request body in flight at once (64 KiB).
pub const KEEPALIVE_BUDGET_BYTES: u64 = 64 * 1024;

/// One pending request (a send, a report or an append batch), as the
/// hand-off sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingSend {
    /// The body's size in bytes as it goes on the wire; `None` when the
    /// adapter cannot know it before sending (`FormData`).
    pub body_bytes: Option<u64>,
    /// An `ordered` send waiting behind an earlier one of its URL (not the
    /// head of its [`Ordered`](super::Ordered) queue).
    pub queued_behind: bool,
    /// When its last attempt went out (monotonic ms): the age the budget is
    /// shared by. `None`: never sent (offline since the call, or queued), so
    /// no headers to reuse: not handed over.
    pub sent: Option<MonoMs>,
}

/// For each of `pending`, whether it is re-issued with `keepalive: true`
/// within `budget_bytes` ([`KEEPALIVE_BUDGET_BYTES`] less what the page
/// already has in flight), taken oldest first ([`PendingSend::sent`]; equal
/// times in the order given). The rest are abandoned.
pub fn keepalive_handoff(pending: &[PendingSend], budget_bytes: u64) -> Vec<bool> {
    let mut done = vec![false; pending.len()];
    let mut go = vec![false; pending.len()];
    let mut left = budget_bytes;
    while let Some(i) = oldest(pending, &done) {
        done[i] = true;
        let p = &pending[i];
        match p.body_bytes {
            Some(n) if !p.queued_behind && n <= left => {
                left -= n;
                go[i] = true;
            }
            _ => {}
        }
    }
    go
}

/// The oldest sent one of `pending` not `done` (the first of equal times):
/// a scan per pick, no sort in the bundle; the pending requests of one page
/// are few.
fn oldest(pending: &[PendingSend], done: &[bool]) -> Option<usize> {
    let mut best: Option<(MonoMs, usize)> = None;
    for (i, (p, done)) in pending.iter().zip(done).enumerate() {
        if let (false, Some(at)) = (*done, p.sent) {
            if best.is_none_or(|(b, _)| at < b) {
                best = Some((at, i));
            }
        }
    }
    best.map(|(_, i)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sent at `at` ms with a body of `n` bytes.
    fn sized_at(n: u64, at: u64) -> PendingSend {
        PendingSend {
            body_bytes: Some(n),
            queued_behind: false,
            sent: Some(MonoMs(at)),
        }
    }

    fn sized(n: u64) -> PendingSend {
        sized_at(n, 0)
    }

    const B: u64 = KEEPALIVE_BUDGET_BYTES;

    #[test]
    fn oldest_first_within_the_shared_budget() {
        let pending = [
            sized(40_000),
            sized(30_000), // 40 000 + 30 000 > 65 536: skipped
            sized(25_536), // exactly fills the budget
            sized(1),
            sized(0), // an empty body always fits
        ];
        assert_eq!(
            keepalive_handoff(&pending, B),
            [true, false, true, false, true]
        );
    }

    #[test]
    fn the_budget_edges() {
        assert_eq!(B, 65_536);
        // One body of exactly the budget goes; one byte more never does.
        assert_eq!(keepalive_handoff(&[sized(B)], B), [true]);
        assert_eq!(keepalive_handoff(&[sized(B + 1)], B), [false]);
        // One bigger than the budget leaves it whole to the next ones.
        assert_eq!(
            keepalive_handoff(&[sized(B + 1), sized(B)], B),
            [false, true]
        );
        // What the page already has in flight is not the hand-off's.
        assert_eq!(keepalive_handoff(&[sized(B)], B - 1), [false]);
    }

    #[test]
    fn many_small_ones_fill_the_budget_oldest_first() {
        // 100 of 1 000 bytes sent 1 ms apart, listed newest first: the 65
        // oldest go (65 000 bytes), then a 536-byte one still fits.
        let mut pending: Vec<PendingSend> = (0..100).rev().map(|at| sized_at(1_000, at)).collect();
        pending.push(sized_at(536, 1_000));
        pending.push(sized_at(1, 1_001));
        let go = keepalive_handoff(&pending, B);
        let sent: Vec<u64> = (0..100).filter(|&at| go[99 - at as usize]).collect();
        assert_eq!(sent, (0..65).collect::<Vec<u64>>());
        assert_eq!(go[100..], [true, false]);
    }

    #[test]
    fn mixed_kinds_share_one_budget_by_age() {
        // As the adapter lists them: the sends, then each reporter's report,
        // then each appender's batch; the budget goes by when each first
        // went out, not by kind.
        let send = sized_at(30_000, 300);
        let report = sized_at(30_000, 100);
        let append = sized_at(30_000, 200);
        let late_report = sized_at(5_536, 400);
        assert_eq!(
            keepalive_handoff(&[send, report, append, late_report], B),
            [false, true, true, true]
        );
        // Equal times: in the order given.
        let (a, b) = (sized_at(40_000, 7), sized_at(40_000, 7));
        assert_eq!(keepalive_handoff(&[a, b], B), [true, false]);
    }

    #[test]
    fn unknown_sizes_unsent_and_queued_ordered_sends_are_abandoned() {
        let pending = [
            PendingSend {
                body_bytes: None,
                ..sized(0)
            },
            PendingSend {
                queued_behind: true,
                ..sized(10)
            },
            sized(65_537),
            PendingSend {
                sent: None,
                ..sized(10)
            },
            sized(10),
        ];
        assert_eq!(
            keepalive_handoff(&pending, B),
            [false, false, false, false, true]
        );
        assert_eq!(keepalive_handoff(&[], 0), Vec::<bool>::new());
        assert_eq!(keepalive_handoff(&[sized(1)], 0), [false]);
    }
}
