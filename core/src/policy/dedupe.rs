//! Drop events already delivered: the same id with the same content.
//!
//! Across reconnects and transport switches the server may replay events the
//! app already has (resume from a cursor it rounds down, two transports
//! overlapping). Only an id the event's own block set counts: an event without
//! an `id:` line repeats the previous cursor by spec and is still a new event
//! (ARCHITECTURE.md "Defaults"). A repeat is the same id *and* the same content (the
//! event type and the UTF-8 bytes of the data, hashed): a server that lost its
//! state and restarts its ids at 1 sends new events, not repeats (seen in the
//! wild: n8n PR #33558, actor-ts issue #726). The price: a replay whose data
//! the server re-serialised differently (other JSON key order or spacing) is
//! delivered twice. Memory is bounded: the last `capacity` ids, FIFO, and
//! the first [`FIRST_KEPT`] ids seen.

use alloc::boxed::Box;
use alloc::vec::Vec;

/// Default number of recent ids remembered.
pub const DEFAULT_DEDUPE_CAPACITY: usize = 256;

/// The first ids seen (since the last [`Dedupe::clear`]) that stay
/// remembered past the capacity, oldest first: a server that ignores the
/// resume replays its history from its first event, and the replay check
/// (`engine::replay`, the engine's `REPLAY_RUN` in a row) recognises it
/// by these, however long the history was.
pub const FIRST_KEPT: usize = 3;

/// A bounded memory of recently delivered ids and what they carried.
///
/// A FIFO of (64-bit hash of the id, 64-bit hash of the content, id).
/// Lookup scans the id hashes (256 `u64` compares, tens of nanoseconds) and
/// compares the id only on a hash match. A `BTreeSet` gave O(log n) lookup but
/// cost about 5 KB of wasm (measured by `make size`), which a linear scan of
/// 256 hashes does not need. Once full, a new id takes the oldest one's
/// place (a ring after the first [`FIRST_KEPT`]): removing the oldest
/// shifted the other 255 entries, 6 KB of copying per event of a long
/// stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dedupe {
    capacity: usize,
    /// Oldest first; the first [`FIRST_KEPT`] are never evicted. A `Vec`
    /// (evicting shifts at most `capacity` entries) is fewer wasm bytes
    /// than a `VecDeque`.
    order: Vec<(u64, u64, Box<str>)>,
    /// The oldest entry of the ring once full (`FIRST_KEPT` until then).
    oldest: usize,
    dropped: u64,
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a, 64-bit, continuing from `h`: tiny, no state, no dependency; good
/// enough to pre-filter equal ids and to tell a reissued id's new content from
/// a replay (not against a hostile server, which can send any id anyway).
fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(FNV_PRIME);
    }
    h
}

/// The content hash of an event: FNV-1a 64 over the type's UTF-8 bytes, a
/// 0xFF byte (never in UTF-8, so `("ab", "c")` and `("a", "bc")` differ), and
/// the data's UTF-8 bytes. The engine calls it with the type every transport
/// normalises to (`message` when none) and the data as decoded, so a replay
/// across a transport switch hashes the same.
pub fn content_hash(event: &str, data: &str) -> u64 {
    let h = fnv1a(FNV_OFFSET, event.as_bytes());
    fnv1a(fnv1a(h, &[0xFF]), data.as_bytes())
}

/// The content of a message skipped for its size: its data was dropped as it
/// arrived (or is not hashed: it is over the limit), so a skipped id repeats
/// only a skipped id.
pub(crate) const SKIPPED_CONTENT: u64 = 0xFE;

impl Dedupe {
    /// Remember up to `capacity` ids (0 disables dedupe: everything is delivered).
    pub fn new(capacity: usize) -> Self {
        Dedupe {
            capacity,
            order: Vec::new(),
            oldest: FIRST_KEPT,
            dropped: 0,
        }
    }

    /// Decide about one event of type `event` with `data`. `own_id` is the id
    /// its own block set (`None`, or `Some("")` from a bare `id:` line that
    /// resets the cursor, is always delivered and not remembered; the content
    /// is then not even hashed). An id among the last `capacity` delivered ones
    /// with the same [`content_hash`] is a repeat: dropped (counted), returns
    /// `false`. With other content it is a new event that reuses the id: its
    /// content replaces the remembered one (same place in the order) and it
    /// returns `true`. A new id is remembered, evicting the oldest when full,
    /// and returns `true`. Neither a repeat nor a reissue refreshes the id's
    /// place in the order.
    pub fn should_deliver(&mut self, own_id: Option<&str>, event: &str, data: &str) -> bool {
        match self.key(own_id) {
            Some(id) => self.check(id, content_hash(event, data)),
            None => true,
        }
    }

    /// [`Dedupe::should_deliver`] for a message skipped for its size: whether
    /// to report it. Its content is a fixed marker, the same on every
    /// transport.
    pub fn should_report_skipped(&mut self, own_id: Option<&str>) -> bool {
        match self.key(own_id) {
            Some(id) => self.check(id, SKIPPED_CONTENT),
            None => true,
        }
    }

    /// For an event the app never gets (left out by the `events` filter, a
    /// reserved name, the heartbeat): whether it is new, so that a replay of
    /// it neither moves the cursor back nor counts as the server's news. Its
    /// `own_id` (rules of [`Dedupe::should_deliver`]) remembered with the same
    /// `content` ([`content_hash`]) is a repeat: counted as dropped, returns
    /// `false`. A remembered id with other content is new, and the remembered
    /// content stays (a heartbeat carrying the last message's id must not
    /// make a replay of that message look new). An unknown id is new and
    /// remembered, evicting the oldest when full.
    pub fn is_new_undelivered(&mut self, own_id: Option<&str>, content: u64) -> bool {
        let Some(id) = self.key(own_id) else {
            return true;
        };
        let h = fnv1a(FNV_OFFSET, id.as_bytes());
        match self.order.iter().find(|(k, _, v)| *k == h && **v == *id) {
            Some(e) if e.1 == content => {
                self.dropped = self.dropped.saturating_add(1);
                false
            }
            Some(_) => true,
            None => {
                self.remember(h, content, id);
                true
            }
        }
    }

    /// The id to remember, if dedupe applies to it.
    fn key<'a>(&self, own_id: Option<&'a str>) -> Option<&'a str> {
        own_id.filter(|id| !id.is_empty() && self.capacity > 0)
    }

    fn check(&mut self, id: &str, content: u64) -> bool {
        let h = fnv1a(FNV_OFFSET, id.as_bytes());
        if let Some(e) = self
            .order
            .iter_mut()
            .find(|(k, _, v)| *k == h && **v == *id)
        {
            if e.1 == content {
                self.dropped = self.dropped.saturating_add(1);
                return false;
            }
            // Reissued with new content: a replay now repeats this one. It
            // keeps its place in the order (no allocation, no shifting).
            e.1 = content;
            return true;
        }
        self.remember(h, content, id);
        true
    }

    /// Remember a new id (hash `h`), evicting the oldest after the first
    /// [`FIRST_KEPT`] when full.
    fn remember(&mut self, h: u64, content: u64, id: &str) {
        let entry = (h, content, Box::from(id));
        let len = self.order.len();
        if len < self.capacity + FIRST_KEPT {
            return self.order.push(entry);
        }
        if let Some(e) = self.order.get_mut(self.oldest) {
            *e = entry;
        }
        self.oldest += 1;
        if self.oldest >= len {
            self.oldest = FIRST_KEPT;
        }
    }

    /// Where `id` stands among the remembered ids, without deciding
    /// anything: below [`FIRST_KEPT`], its place among the first ids (the
    /// order they were first delivered in); past them, its slot in the ring,
    /// which says nothing of its age (the replay check, the one reader,
    /// looks for runs of the first ids only: `REPLAY_RUN` is `FIRST_KEPT`).
    pub fn position(&self, id: &str) -> Option<usize> {
        let h = fnv1a(FNV_OFFSET, id.as_bytes());
        self.order
            .iter()
            .position(|(k, _, v)| *k == h && **v == *id)
    }

    /// Duplicates dropped so far (for `stats()`).
    pub fn duplicates_dropped(&self) -> u64 {
        self.dropped
    }

    /// Ids currently remembered.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// No id remembered.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Forget every id (e.g. after a `reset`: the server's history restarted),
    /// keeping the drop count.
    pub fn clear(&mut self) {
        self.order.clear();
        self.oldest = FIRST_KEPT;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undelivered_repeats_are_dropped_and_never_replace_content() {
        let mut d = Dedupe::new(4);
        let ping = content_hash("ping", "");
        assert!(d.should_deliver(Some("5"), "message", "m"));
        // Same id, other content: new, and message 5's content stays.
        assert!(d.is_new_undelivered(Some("5"), ping));
        assert!(!d.should_deliver(Some("5"), "message", "m"));
        // An unknown id is remembered: its repeat is a duplicate.
        let news = content_hash("news", "n");
        assert!(d.is_new_undelivered(Some("6"), news));
        assert!(!d.is_new_undelivered(Some("6"), news));
        assert_eq!((d.len(), d.duplicates_dropped()), (2, 2));
        assert!(d.is_new_undelivered(None, news));
        assert!(d.is_new_undelivered(Some(""), news));
    }
    use proptest::prelude::{prop_assert, prop_assert_eq, proptest};

    /// `should_deliver` for a `message` whose data is its id (a true replay).
    fn same(d: &mut Dedupe, id: Option<&str>) -> bool {
        d.should_deliver(id, "message", id.unwrap_or("-"))
    }

    #[test]
    fn drops_repeats_keeps_idless() {
        let mut d = Dedupe::new(DEFAULT_DEDUPE_CAPACITY);
        assert!(same(&mut d, Some("1")));
        assert!(same(&mut d, Some("2")));
        assert!(!same(&mut d, Some("1")));
        assert!(same(&mut d, None));
        assert!(same(&mut d, None));
        assert!(same(&mut d, Some("")));
        assert!(same(&mut d, Some("")));
        assert_eq!((d.duplicates_dropped(), d.len()), (1, 2));
        assert_eq!(
            (d.position("1"), d.position("2"), d.position("3")),
            (Some(0), Some(1), None)
        );
    }

    #[test]
    fn reissued_ids_with_new_content_are_new_events() {
        let mut d = Dedupe::new(DEFAULT_DEDUPE_CAPACITY);
        for (id, data) in [("1", "a"), ("2", "b"), ("3", "c")] {
            assert!(d.should_deliver(Some(id), "message", data));
        }
        // The server restarted and counts from 1 again, with new events.
        for (id, data) in [("1", "x"), ("2", "y"), ("3", "z")] {
            assert!(d.should_deliver(Some(id), "message", data), "{id}");
        }
        // A replay of the new ones is a repeat; the same data under another
        // type is not.
        assert!(!d.should_deliver(Some("1"), "message", "x"));
        assert!(!d.should_deliver(Some("3"), "message", "z"));
        assert!(d.should_deliver(Some("2"), "price", "y"));
        assert!(!d.should_deliver(Some("2"), "price", "y"));
        assert_eq!((d.duplicates_dropped(), d.len()), (3, 3));
    }

    #[test]
    fn content_hash_separates_type_and_data() {
        assert_ne!(content_hash("ab", "c"), content_hash("a", "bc"));
        assert_ne!(content_hash("message", ""), content_hash("message", " "));
        assert_eq!(content_hash("message", "é"), content_hash("message", "é"));
        // FNV-1a 64 of "message", 0xFF, "hi" (computed by hand from the spec's
        // offset basis and prime, so the hash cannot drift between versions).
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in b"message".iter().chain(&[0xFF]).chain(b"hi") {
            h = (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
        assert_eq!(content_hash("message", "hi"), h);
    }

    #[test]
    fn skipped_ids_repeat_only_skipped_ones() {
        let mut d = Dedupe::new(8);
        assert!(d.should_report_skipped(Some("7")));
        assert!(!d.should_report_skipped(Some("7")));
        assert!(d.should_report_skipped(None));
        assert!(d.should_deliver(Some("7"), "message", "small now"));
        assert_eq!(d.duplicates_dropped(), 1);
    }

    #[test]
    fn forgets_oldest_beyond_capacity() {
        let mut d = Dedupe::new(3);
        for id in ["a", "b", "c", "d", "e", "f", "g"] {
            assert!(same(&mut d, Some(id)));
        }
        assert_eq!(d.len(), 3 + FIRST_KEPT);
        assert!(!same(&mut d, Some("b")));
        assert!(same(&mut d, Some("d"))); // evicted, so new again
        assert!(!same(&mut d, Some("g")));
        d.clear();
        assert!(d.is_empty());
        assert!(same(&mut d, Some("g")));
        assert_eq!(d.duplicates_dropped(), 2);
    }

    /// The first ids ever seen stay past the ring's capacity: a server that
    /// replays its whole history from the start is recognised by them
    /// (`engine::replay`), however long the history was.
    #[test]
    fn keeps_the_first_ids_beyond_capacity() {
        let mut d = Dedupe::new(2);
        for id in ["a", "b", "c", "d", "e", "f", "g"] {
            assert!(same(&mut d, Some(id)));
        }
        assert_eq!(d.len(), 2 + FIRST_KEPT);
        for (i, id) in ["a", "b", "c", "f", "g"].into_iter().enumerate() {
            assert_eq!(d.position(id), Some(i));
        }
        assert!(same(&mut d, Some("e"))); // evicted from the ring
        assert!(!same(&mut d, Some("a")));
        d.clear();
        assert!(same(&mut d, Some("a")));
    }

    #[test]
    fn is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Dedupe>();
    }

    #[test]
    fn zero_capacity_delivers_everything() {
        let mut d = Dedupe::new(0);
        assert!(same(&mut d, Some("x")));
        assert!(same(&mut d, Some("x")));
        assert!(d.should_report_skipped(Some("x")));
        assert_eq!(d.duplicates_dropped(), 0);
    }

    proptest! {
        /// Matches a naive model: "among the first `FIRST_KEPT` and the
        /// last `cap` distinct ids remembered, with the content it was last
        /// delivered with".
        #[test]
        fn matches_model(
            cap in 0usize..8,
            evs in proptest::collection::vec((proptest::option::of(0u8..12), 0u8..3), 0..200),
        ) {
            let mut d = Dedupe::new(cap);
            let mut model: Vec<(String, String)> = Vec::new();
            for (id, data) in evs {
                let id = id.map(|n| n.to_string());
                let data = data.to_string();
                let got = d.should_deliver(id.as_deref(), "message", &data);
                let want = match &id {
                    Some(s) if cap > 0 => match model.iter().position(|(m, _)| m == s) {
                        Some(i) if model[i].1 == data => false,
                        Some(i) => {
                            model[i].1 = data.clone();
                            true
                        }
                        None => {
                            model.push((s.clone(), data.clone()));
                            if model.len() > cap + FIRST_KEPT { model.remove(FIRST_KEPT); }
                            true
                        }
                    },
                    _ => true,
                };
                prop_assert_eq!(got, want);
                prop_assert!(d.len() <= cap + FIRST_KEPT);
                for (i, (m, _)) in model.iter().enumerate() {
                    let at = d.position(m);
                    prop_assert!(at == Some(i) || (i >= FIRST_KEPT && at >= Some(FIRST_KEPT)));
                }
            }
        }
    }
}
