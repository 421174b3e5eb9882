//! Durable Streams across tabs: where a message sits in the stream, so a tab
//! that hears the same chunk from two leaders (the moment a steal overlaps)
//! delivers it once. Its messages carry no id, so the id dedupe cannot help;
//! their offsets can.
//!
//! The engine delivers a chunk read from offset `from` up to its
//! `Stream-Next-Offset` `to` as n messages: the first n − 1 carry `from` as
//! their `lastEventId`, the last carries `to`, and the engine's cursor is
//! `to` once the chunk is delivered (`engine/durable.rs`). The leader posts
//! each message with its cursor and, for the first n − 1, their index after
//! `from` ([`Stamp`]). So a message's place is "i messages after `from`"
//! or "the one just before `to`", and a tab that remembers how many messages
//! it had delivered when it passed each offset ([`Positions`]) can tell a
//! repeat even when the two leaders read chunks with different boundaries
//! (one read `(X, Y]`, the other `(X, Z]` after another append).
//!
//! Offsets are compared as bytes, sentinels (`-1`, `now`) before any real one
//! (the engine's rule). A message placed before the last offsets this tab
//! remembers ([`REMEMBERED_OFFSETS`]) is a repeat; one placed past all of
//! them is new.

use alloc::string::String;
use alloc::vec::Vec;

use crate::engine::offset_advances;

/// How many offsets a tab remembers with its delivery count.
pub const REMEMBERED_OFFSETS: usize = 16;

/// The leader's side: the index of each message of a chunk after its start.
#[derive(Clone, Debug, Default)]
pub(super) struct Stamp {
    /// The start offset of the chunk being delivered, and how many of its
    /// messages were stamped.
    run: Option<(String, u32)>,
}

impl Stamp {
    /// The index to post with a message (`0` for a chunk's last message:
    /// its `lastEventId` is the leader's cursor).
    pub(super) fn index(&mut self, last_event_id: &str, cursor: &str) -> u32 {
        if last_event_id == cursor {
            self.run = None;
            return 0;
        }
        match &mut self.run {
            Some((from, n)) if from == last_event_id => {
                *n = n.saturating_add(1);
                *n
            }
            _ => {
                self.run = Some((String::from(last_event_id), 0));
                0
            }
        }
    }
}

/// A tab's side: how many messages it had delivered when it passed each of
/// the last offsets it saw.
#[derive(Clone, Debug, Default)]
pub(super) struct Positions {
    /// Oldest first (a `Vec`: 16 entries, and no `VecDeque` of these in
    /// the wasm).
    known: Vec<(String, u64)>,
    /// Messages delivered here (the next one's position).
    next: u64,
}

impl Positions {
    /// Positions for a tab starting at `start` (the configured offset).
    pub(super) fn new(start: &str) -> Positions {
        let mut p = Positions::default();
        p.reached(start);
        p
    }

    fn count_at(&self, offset: &str) -> Option<u64> {
        self.known
            .iter()
            .find(|(o, _)| o == offset)
            .map(|(_, n)| *n)
    }

    /// `offset` is past every offset remembered (or none is).
    fn ahead(&self, offset: &str) -> bool {
        self.known.iter().all(|(o, _)| offset_advances(o, offset))
    }

    fn remember(&mut self, offset: &str, count: u64) {
        if self.known.len() == REMEMBERED_OFFSETS {
            self.known.remove(0);
        }
        self.known.push((String::from(offset), count));
    }

    /// An offset this tab reached with no message (`uptodate` after a 204,
    /// the cursor a state carries): where the next messages start.
    pub(super) fn reached(&mut self, offset: &str) {
        if !offset.is_empty() && self.count_at(offset).is_none() && self.ahead(offset) {
            self.remember(offset, self.next);
        }
    }

    /// Whether a message is new here (and remember it). `last_event_id`:
    /// the message's; `cursor`: the leader's after its chunk (`""`: unknown,
    /// the message is taken as its chunk's last); `index`: its place after
    /// its `lastEventId` when it is not its chunk's last.
    pub(super) fn deliver(&mut self, last_event_id: &str, cursor: &str, index: u32) -> bool {
        let last = cursor.is_empty() || cursor == last_event_id;
        let at = self.count_at(last_event_id);
        let position = match (at, last) {
            // The one just before an offset passed already: a repeat.
            (Some(n), true) => n.checked_sub(1),
            (Some(n), false) => Some(n.saturating_add(u64::from(index))),
            (None, _) if self.ahead(last_event_id) => Some(self.next),
            // Before the offsets remembered: delivered long ago.
            (None, _) => None,
        };
        let Some(position) = position.filter(|p| *p >= self.next) else {
            return false;
        };
        if at.is_none() && !last {
            self.remember(last_event_id, position.saturating_sub(u64::from(index)));
        }
        self.next = position.saturating_add(1);
        if at.is_none() && last {
            self.remember(last_event_id, self.next);
        }
        true
    }

    /// A `reset`: the stream restarts, no offset seen so far places anything.
    pub(super) fn clear(&mut self) {
        self.known.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk from `from` to `to` of `n` messages, as (lastEventId, cursor,
    /// index) the leader posts (`Stamp`).
    fn chunk(stamp: &mut Stamp, from: &str, to: &str, n: u32) -> alloc::vec::Vec<(String, u32)> {
        (0..n)
            .map(|i| {
                let l = if i + 1 == n { to } else { from };
                (String::from(l), stamp.index(l, to))
            })
            .collect()
    }

    fn deliver(p: &mut Positions, to: &str, c: &[(String, u32)]) -> alloc::vec::Vec<bool> {
        c.iter().map(|(l, i)| p.deliver(l, to, *i)).collect()
    }

    #[test]
    fn stamps_count_after_the_chunk_start() {
        let mut s = Stamp::default();
        let c = chunk(&mut s, "-1", "a5", 3);
        assert_eq!(c, [("-1".into(), 0), ("-1".into(), 1), ("a5".into(), 0)]);
        let c = chunk(&mut s, "a5", "a7", 2);
        assert_eq!(c, [("a5".into(), 0), ("a7".into(), 0)]);
    }

    #[test]
    fn the_same_chunk_twice_is_delivered_once() {
        let (mut s, mut p) = (Stamp::default(), Positions::new("a1"));
        let c = chunk(&mut s, "a1", "a4", 3);
        assert_eq!(deliver(&mut p, "a4", &c), [true; 3]);
        assert_eq!(deliver(&mut p, "a4", &c), [false; 3]);
        let d = chunk(&mut s, "a4", "a6", 1);
        assert_eq!(deliver(&mut p, "a6", &d), [true]);
        // An older chunk again, after a newer one.
        assert_eq!(deliver(&mut p, "a4", &c), [false; 3]);
    }

    #[test]
    fn chunks_with_other_boundaries_deliver_only_what_is_new() {
        let (mut s, mut p) = (Stamp::default(), Positions::new("a1"));
        // One leader read (a1, a3]: 2 messages; the other (a1, a5]: 4.
        let short = chunk(&mut s, "a1", "a3", 2);
        let long = chunk(&mut s, "a1", "a5", 4);
        assert_eq!(deliver(&mut p, "a3", &short), [true, true]);
        assert_eq!(deliver(&mut p, "a5", &long), [false, false, true, true]);
        // Then the first leader's next read (a3, a5]: nothing new.
        let rest = chunk(&mut s, "a3", "a5", 2);
        assert_eq!(deliver(&mut p, "a5", &rest), [false, false]);
        assert_eq!(p.next, 4);
    }

    #[test]
    fn a_long_stream_remembers_only_the_last_offsets() {
        let mut p = Positions::new("-1");
        let offset = |n: u32| alloc::format!("a{n:04}");
        for n in 1..=100 {
            assert!(p.deliver(&offset(n), &offset(n), 0));
        }
        assert_eq!(p.known.len(), REMEMBERED_OFFSETS);
        assert_eq!(p.next, 100);
        // Older than every offset remembered: a repeat all the same.
        assert!(!p.deliver(&offset(3), &offset(4), 0));
        assert!(!p.deliver(&offset(100), &offset(100), 0));
        assert!(p.deliver(&offset(100), &offset(101), 0));
    }

    #[test]
    fn an_offset_reached_without_a_message_places_the_next_chunk() {
        let mut p = Positions::new("now");
        p.reached("b9");
        assert!(p.deliver("b9", "c2", 0));
        assert!(p.deliver("c2", "c2", 0));
        assert!(!p.deliver("b9", "c2", 0));
        // Before everything remembered: dropped; after a reset: new.
        assert!(!p.deliver("a0", "a1", 0));
        p.clear();
        assert!(p.deliver("-1", "a1", 0));
    }
}
