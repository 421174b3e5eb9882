//! A resume the server did not honour, seen in its ids.
//!
//! A server that ignores the cursor it was sent (it read another carrier, or
//! none) and goes on from "now" skips the events published while the client
//! was away, and nothing in the answer says so. Where the server numbers its
//! events with consecutive integer ids, the ids tell: the attempt resumed
//! from `N`, and the first new id after it is `M > N + 1`. The numbering must
//! be shown consecutive first, so that servers whose integer ids leave holes
//! by design (a shared counter, database keys) are never accused: either
//! the two ids delivered before the cursor were consecutive and the last of
//! them is the cursor, or (no such history: after a reload with `persist`,
//! a crossTab hand-over) the id after `M` is `M + 1`. Then
//! `Reset { Gap }` is raised once for that jump, after the events are
//! delivered; the app refetches what it missed. Ids that are not decimal
//! integers (nchan's `<time>:<tag>`, UUIDs), a jump before any resume, and
//! the Durable Streams profile (offsets, not ids) are never judged; nor is
//! any jump once the ids jumped where no resume was judged (holes by
//! design): within one stream or answer, or from one answer to the next of
//! a request transport (a request right after an answer goes on with the
//! numbering; only one after a failure resumes); nor the jump after a
//! server `reset` event (announced).
//! Events skipped for their size count like delivered ones. A numbering
//! with holes that happened to look consecutive can still be taken for a
//! skip: the price is one refetch.

use super::action::{Action, ResetReason};
use super::Engine;
use crate::wire::parse_decimal;

/// What the ids seen so far say about the numbering.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct GapWatch {
    /// The last new integer id, and whether it followed its predecessor.
    last: Option<u64>,
    consecutive: bool,
    /// The live attempt resumed from this integer cursor (until its first
    /// new id).
    resumed_from: Option<u64>,
    /// The first id after a jump with no history to judge it by: the next
    /// id decides.
    suspect: Option<u64>,
    /// The ids jumped where no resume was judged (within one stream, or
    /// from one `long-poll` answer to the next): the numbering has holes by
    /// design, and no later jump is judged.
    holes: bool,
}

impl GapWatch {
    /// A new attempt starts from `cursor`. `continuing`: a request cycle
    /// right after an answer (`long-poll`, `poll`), which goes on with the
    /// numbering (a pending judgement stays pending); any other attempt is a
    /// resume after a break.
    pub fn on_attempt(&mut self, cursor: &str, continuing: bool) {
        if continuing {
            return;
        }
        self.resumed_from = parse_decimal(cursor.as_bytes());
        self.suspect = None;
    }

    /// A new event (not a repeat) with its own non-empty `id`: whether it
    /// proves a gap.
    pub fn on_id(&mut self, id: &str) -> bool {
        let n = parse_decimal(id.as_bytes());
        // A repeat of the last id or of the cursor (a heartbeat that carries
        // it) says nothing about the numbering.
        if n.is_some() && (n == self.last || n == self.resumed_from) {
            return false;
        }
        let resumed = self.resumed_from.take();
        if let (None, Some(l), Some(m)) = (resumed, self.last, n) {
            self.holes |= m > l.saturating_add(1);
        }
        let gap = match (n, resumed, self.suspect.take()) {
            (Some(m), Some(from), _) if m > from.saturating_add(1) => {
                let shown = self.consecutive && self.last == Some(from);
                if !shown {
                    self.suspect = Some(m);
                }
                shown
            }
            (Some(m), None, Some(first)) => m == first.saturating_add(1),
            _ => false,
        };
        self.consecutive =
            matches!((self.last, n), (Some(l), Some(m)) if Some(m) == l.checked_add(1));
        self.last = n;
        gap && !self.holes
    }
}

impl Engine {
    /// A new attempt: watch its ids when it resumes from an integer cursor
    /// (`continuing`: see [`GapWatch::on_attempt`]).
    pub(crate) fn watch_gap(&mut self, continuing: bool) {
        if self.profile().gaps_by_id() {
            self.gap.on_attempt(self.parser.last_event_id(), continuing);
        }
    }

    /// A new event with its own id `id` (`""`: none) is taken (delivered,
    /// or left out by the `events` filter): whether it proves a gap. The
    /// caller raises it ([`Engine::raise_gap`]) after the event's delivery.
    pub(crate) fn gap_in(&mut self, id: &str) -> bool {
        !id.is_empty() && self.profile().gaps_by_id() && self.gap.on_id(id)
    }

    /// The server's history restarted (a `reset` event): what the ids said
    /// so far says nothing about the ones to come.
    pub(crate) fn forget_numbering(&mut self) {
        self.gap = GapWatch::default();
    }

    /// `Reset { Gap }`.
    pub(crate) fn raise_gap(&mut self) {
        self.actions.push_back(Action::Reset {
            reason: ResetReason::Gap,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::GapWatch;

    fn run(history: &[&str], cursor: &str, after: &[&str]) -> Vec<bool> {
        let mut w = GapWatch::default();
        for id in history {
            assert!(!w.on_id(id), "no resume yet: {id}");
        }
        w.on_attempt(cursor, false);
        after.iter().map(|id| w.on_id(id)).collect()
    }

    #[test]
    fn a_consecutive_history_proves_the_jump_at_once() {
        // The trace: 27, 28, 29, then 32 after the stream ended.
        assert_eq!(run(&["27", "28", "29"], "29", &["32", "33"]), [true, false]);
        // Honoured: 30 first.
        assert_eq!(
            run(&["27", "28", "29"], "29", &["30", "31"]),
            [false, false]
        );
        // One id of history is not a numbering: the next id decides.
        assert_eq!(run(&["29"], "29", &["32", "33"]), [false, true]);
    }

    #[test]
    fn without_history_the_next_id_decides() {
        // Reload with persist / crossTab hand-over: cursor only.
        assert_eq!(run(&[], "29", &["40", "41", "42"]), [false, true, false]);
        // Holes by design (a shared counter): never accused.
        assert_eq!(run(&[], "29", &["40", "45", "46"]), [false, false, false]);
        assert_eq!(
            run(&["10", "14", "15"], "20", &["25", "30"]),
            [false, false]
        );
    }

    #[test]
    fn a_jump_within_an_attempt_means_holes_by_design() {
        // 10 → 14 in one stream: 15 → 20 across the resume is not judged.
        assert_eq!(
            run(&["10", "14", "15"], "15", &["20", "21"]),
            [false, false]
        );
        // Without history: 40, 45 shows the holes; the next resume too.
        let mut w = GapWatch::default();
        w.on_attempt("29", false);
        assert_eq!([w.on_id("40"), w.on_id("45")], [false, false]);
        w.on_attempt("45", false);
        assert_eq!([w.on_id("50"), w.on_id("51")], [false, false]);
        // A jump across a resume is no hole: the next one is still judged.
        let mut w = GapWatch::default();
        w.on_attempt("", false);
        assert_eq!([w.on_id("1"), w.on_id("2")], [false, false]);
        w.on_attempt("2", false);
        assert_eq!([w.on_id("5"), w.on_id("6")], [true, false]);
        w.on_attempt("6", false);
        assert_eq!([w.on_id("9")], [true]);
    }

    #[test]
    fn a_request_after_an_answer_continues_the_numbering() {
        let mut w = GapWatch::default();
        w.on_attempt("", false);
        assert_eq!([w.on_id("100"), w.on_id("101")], [false, false]);
        // The next long-poll: a jump is a hole, not a gap.
        w.on_attempt("101", true);
        assert_eq!([w.on_id("107")], [false]);
        w.on_attempt("107", false);
        assert_eq!([w.on_id("110"), w.on_id("111")], [false, false]);
        // After a reload: the jump, then a "no news" answer, then the next
        // id in the next answer decides.
        let mut w = GapWatch::default();
        w.on_attempt("29", false);
        assert!(!w.on_id("40"));
        w.on_attempt("40", true);
        w.on_attempt("40", true);
        assert!(w.on_id("41"));
    }

    #[test]
    fn a_repeated_id_is_no_step() {
        // The cursor repeated first (a heartbeat carrying it), then the jump.
        assert_eq!(run(&["28", "29"], "29", &["29", "32"]), [false, true]);
        assert_eq!(run(&[], "29", &["29", "40", "41"]), [false, false, true]);
        // Repeats within a stream keep it consecutive.
        assert_eq!(run(&["28", "28", "29", "29"], "29", &["31"]), [true]);
    }

    #[test]
    fn only_integer_ids_after_a_resume_are_judged() {
        // A jump with no resume in between is the server's own numbering.
        assert_eq!(
            run(&["1", "2", "3", "9", "10"], "", &["20", "21"]),
            [false, false]
        );
        // Not integers: nchan ids, a cursor that is no number.
        assert_eq!(run(&["1:1", "1:2"], "1:2", &["5:1", "5:2"]), [false, false]);
        assert_eq!(run(&["1", "2"], "abc", &["9", "10"]), [false, false]);
        // A server that restarted its ids (lower) is not a gap.
        assert_eq!(run(&["7", "8"], "8", &["1", "2"]), [false, false]);
        // u64::MAX does not overflow.
        let max = u64::MAX.to_string();
        assert_eq!(run(&[], &max, &["1", "2"]), [false, false]);
    }
}
