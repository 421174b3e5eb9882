//! Drop events already delivered, by their own id.
//!
//! Across reconnects and transport switches the server may replay events the
//! app already has (resume from a cursor it rounds down, two transports
//! overlapping). Only an id the event's own block set counts: an event without
//! an `id:` line repeats the previous cursor by spec and is still a new event
//! (DESIGN.md "Defaults"). Memory is bounded: the last `capacity` ids, FIFO.

use alloc::boxed::Box;
use alloc::collections::VecDeque;

/// Default number of recent ids remembered.
pub const DEFAULT_DEDUPE_CAPACITY: usize = 256;

/// A bounded memory of recently delivered ids.
///
/// A FIFO ring of (64-bit hash, id). Lookup scans the hashes (256 `u64`
/// compares, tens of nanoseconds) and compares the id only on a hash match.
/// A `BTreeSet` gave O(log n) lookup but cost about 5 KB of wasm (measured by
/// `make size`), which a linear scan of 256 hashes does not need.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dedupe {
    capacity: usize,
    order: VecDeque<(u64, Box<str>)>,
    dropped: u64,
}

/// FNV-1a, 64-bit: tiny, no state, good enough to pre-filter equal ids.
fn fnv1a(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl Dedupe {
    /// Remember up to `capacity` ids (0 disables dedupe: everything is delivered).
    pub fn new(capacity: usize) -> Self {
        Dedupe {
            capacity,
            order: VecDeque::new(),
            dropped: 0,
        }
    }

    /// Decide about one event. `own_id` is the id its own block set (`None`, or
    /// `Some("")` from a bare `id:` line that resets the cursor, is always
    /// delivered and not remembered). An id among the last `capacity` delivered
    /// ones is dropped (counted) and returns `false`; a new one is remembered,
    /// evicting the oldest when full, and returns `true`. A duplicate does not
    /// refresh its place in the order.
    pub fn should_deliver(&mut self, own_id: Option<&str>) -> bool {
        let id = match own_id {
            Some(id) if !id.is_empty() && self.capacity > 0 => id,
            _ => return true,
        };
        let h = fnv1a(id);
        if self.order.iter().any(|(k, v)| *k == h && **v == *id) {
            self.dropped = self.dropped.saturating_add(1);
            return false;
        }
        while self.order.len() >= self.capacity {
            self.order.pop_front();
        }
        self.order.push_back((h, Box::from(id)));
        true
    }

    /// Where `id` stands among the remembered ids, oldest first (the order
    /// they were first delivered in), without deciding anything.
    pub fn position(&self, id: &str) -> Option<usize> {
        let h = fnv1a(id);
        self.order.iter().position(|(k, v)| *k == h && **v == *id)
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{prop_assert, prop_assert_eq, proptest};

    #[test]
    fn drops_repeats_keeps_idless() {
        let mut d = Dedupe::new(DEFAULT_DEDUPE_CAPACITY);
        assert!(d.should_deliver(Some("1")));
        assert!(d.should_deliver(Some("2")));
        assert!(!d.should_deliver(Some("1")));
        assert!(d.should_deliver(None));
        assert!(d.should_deliver(None));
        assert!(d.should_deliver(Some("")));
        assert!(d.should_deliver(Some("")));
        assert_eq!((d.duplicates_dropped(), d.len()), (1, 2));
        assert_eq!(
            (d.position("1"), d.position("2"), d.position("3")),
            (Some(0), Some(1), None)
        );
    }

    #[test]
    fn forgets_oldest_beyond_capacity() {
        let mut d = Dedupe::new(3);
        for id in ["a", "b", "c", "d"] {
            assert!(d.should_deliver(Some(id)));
        }
        assert_eq!(d.len(), 3);
        assert!(!d.should_deliver(Some("b")));
        assert!(d.should_deliver(Some("a"))); // evicted, so new again
        assert!(!d.should_deliver(Some("d")));
        d.clear();
        assert!(d.is_empty());
        assert!(d.should_deliver(Some("d")));
        assert_eq!(d.duplicates_dropped(), 2);
    }

    #[test]
    fn is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Dedupe>();
    }

    #[test]
    fn zero_capacity_delivers_everything() {
        let mut d = Dedupe::new(0);
        assert!(d.should_deliver(Some("x")));
        assert!(d.should_deliver(Some("x")));
        assert_eq!(d.duplicates_dropped(), 0);
    }

    proptest! {
        /// Matches a naive model: "among the last `cap` distinct delivered ids".
        #[test]
        fn matches_model(cap in 0usize..8, ids in proptest::collection::vec(proptest::option::of(0u8..12), 0..200)) {
            let mut d = Dedupe::new(cap);
            let mut model: Vec<String> = Vec::new();
            for id in ids {
                let id = id.map(|n| n.to_string());
                let got = d.should_deliver(id.as_deref());
                let want = match &id {
                    Some(s) if cap > 0 => {
                        if model.contains(s) { false } else {
                            model.push(s.clone());
                            if model.len() > cap { model.remove(0); }
                            true
                        }
                    }
                    _ => true,
                };
                prop_assert_eq!(got, want);
                prop_assert!(d.len() <= cap);
            }
        }
    }
}
