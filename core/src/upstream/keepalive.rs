//! Which pending sends are handed to `fetch(…, { keepalive: true })` when the
//! page goes away (`pagehide`).
//!
//! The Fetch standard (§4.5 "HTTP-network-or-cache fetch", keepalive) refuses
//! a keepalive request when its body plus the bodies of every keepalive
//! request the page still has in flight exceed 64 KiB ([`KEEPALIVE_BUDGET_BYTES`];
//! Chromium's quota is the same). Only bodies count, not headers. So the
//! hand-off is a budget shared by every pending send: oldest first, each send
//! whose body fits what is left takes its share; a send that does not fit is
//! skipped (a smaller later one may still fit); a body of unknown size
//! (`FormData`) never fits. Of the sends queued behind another one of the same
//! URL (`ordered: true`), none is handed over: keepalive requests run
//! concurrently, so they could be applied out of call order, which `ordered`
//! promises never happens. Nor is a send that never went out (offline since
//! the call): it has no attempt's headers to reuse. Sans-IO: sizes in,
//! verdicts out.

use alloc::vec::Vec;

/// The keepalive quota, bytes of request body in flight at once (64 KiB).
pub const KEEPALIVE_BUDGET_BYTES: u64 = 64 * 1024;

/// One pending send, as the hand-off sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingSend {
    /// The body's size in bytes as it goes on the wire; `None` when the
    /// adapter cannot know it before sending (`FormData`).
    pub body_bytes: Option<u64>,
    /// An `ordered` send waiting behind an earlier one of its URL (not the
    /// head of its [`Ordered`](super::Ordered) queue).
    pub queued_behind: bool,
    /// An attempt of it went out (its headers were built): a send never sent
    /// (offline since the call, or queued) has no headers to reuse and is
    /// not handed over.
    pub sent: bool,
}

/// For each of `pending` (oldest first), whether it is re-issued with
/// `keepalive: true` within `budget_bytes` ([`KEEPALIVE_BUDGET_BYTES`] less
/// what the page already has in flight). The rest are abandoned.
pub fn keepalive_handoff(pending: &[PendingSend], budget_bytes: u64) -> Vec<bool> {
    let mut left = budget_bytes;
    pending
        .iter()
        .map(|p| match p.body_bytes {
            Some(n) if p.sent && !p.queued_behind && n <= left => {
                left -= n;
                true
            }
            _ => false,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sized(n: u64) -> PendingSend {
        PendingSend {
            body_bytes: Some(n),
            queued_behind: false,
            sent: true,
        }
    }

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
            keepalive_handoff(&pending, KEEPALIVE_BUDGET_BYTES),
            [true, false, true, false, true]
        );
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
                sent: false,
                ..sized(10)
            },
            sized(10),
        ];
        assert_eq!(
            keepalive_handoff(&pending, KEEPALIVE_BUDGET_BYTES),
            [false, false, false, false, true]
        );
        assert_eq!(keepalive_handoff(&[], 0), Vec::<bool>::new());
        assert_eq!(keepalive_handoff(&[sized(1)], 0), [false]);
    }
}
