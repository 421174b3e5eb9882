//! [`Fifo`]: the machines' queues of actions, first in first out.
//!
//! Every machine's queue is filled by one input and drained to its `Wait`
//! before the next, so a `Vec` read from a moving head, and emptied when
//! the head reaches its end, serves as well as a ring buffer; in the wasm
//! it is a few small functions per item type where a `VecDeque` is its
//! ring code (growing, the two slices of its drop, `push_back`) for each.

use alloc::vec::Vec;

/// A first-in-first-out queue. Popped items leave empty slots behind until
/// the queue runs dry, which clears it (keeping its capacity): a queue that
/// is always drained, as the machines' are, holds only what is queued.
#[derive(Clone, Debug)]
pub struct Fifo<T> {
    items: Vec<Option<T>>,
    /// The index of the front item (those before it were popped).
    head: usize,
}

impl<T> Default for Fifo<T> {
    fn default() -> Self {
        Fifo::new()
    }
}

impl<T> Fifo<T> {
    /// An empty queue (no allocation).
    pub const fn new() -> Self {
        Fifo {
            items: Vec::new(),
            head: 0,
        }
    }

    /// Queue `item` at the back.
    pub fn push_back(&mut self, item: T) {
        self.items.push(Some(item));
    }

    /// The front item, taken out; `None` when the queue is empty (then
    /// its slots are cleared).
    pub fn pop_front(&mut self) -> Option<T> {
        let item = self.items.get_mut(self.head).and_then(Option::take);
        if item.is_some() {
            self.head += 1;
        } else {
            self.items.clear();
            self.head = 0;
        }
        item
    }

    /// The back item, if one is queued.
    pub fn back_mut(&mut self) -> Option<&mut T> {
        self.items.last_mut().and_then(Option::as_mut)
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.head >= self.items.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::VecDeque;
    use proptest::prelude::{any, prop_assert_eq, proptest};

    #[test]
    fn first_in_first_out_and_empty_after_the_last() {
        let mut q = Fifo::new();
        q.push_back(1);
        q.push_back(2);
        assert_eq!(q.pop_front(), Some(1));
        q.push_back(3);
        assert_eq!(q.back_mut(), Some(&mut 3));
        assert_eq!(q.pop_front(), Some(2));
        assert_eq!(q.pop_front(), Some(3));
        assert!(q.is_empty());
        assert_eq!(q.back_mut(), None);
        assert_eq!(q.pop_front(), None);
        assert_eq!((q.items.len(), q.head), (0, 0));
        q.push_back(4);
        assert_eq!(q.pop_front(), Some(4));
    }

    proptest! {
        /// Any sequence of pushes, pops and back edits gives what a
        /// `VecDeque` gives.
        #[test]
        fn as_a_vec_deque(ops in proptest::collection::vec(any::<(u8, u16)>(), 0..64)) {
            let (mut q, mut d) = (Fifo::new(), VecDeque::new());
            for (op, v) in ops {
                match op % 3 {
                    0 => {
                        q.push_back(v);
                        d.push_back(v);
                    }
                    1 => prop_assert_eq!(q.pop_front(), d.pop_front()),
                    _ => {
                        if let (Some(a), Some(b)) = (q.back_mut(), d.back_mut()) {
                            *a = a.wrapping_add(1);
                            *b = b.wrapping_add(1);
                        }
                        prop_assert_eq!(q.back_mut().copied(), d.back().copied());
                    }
                }
                prop_assert_eq!(q.is_empty(), d.is_empty());
            }
        }
    }
}
