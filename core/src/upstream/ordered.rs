//! [`Ordered`]: `ordered: true` sends, one at a time per URL, in call order.
//!
//! The rule for the adapter: keep one `Ordered` per URL; `push` each ordered
//! send's id when it is called and start its [`Sender`](super::Sender) only
//! when `push` (or a later `remove`) says so; `remove` its id when it settles
//! (whatever the outcome: a failed send does not block the ones after it; the
//! app sees its rejection) or when it is aborted while still queued. So the
//! server receives attempt 1 of send n+1 only after send n has settled, and
//! sends never overtake each other. Sans-IO: ids in, ids out.

use alloc::vec::Vec;

/// The queue an `ordered` send to `url` joins: the URL without its
/// `#fragment`. A fragment never reaches the server, so `/a#x` and `/a` are
/// the same endpoint and keep one order.
pub fn ordered_key(url: &str) -> &str {
    crate::wire::before_byte(url, b'#')
}

/// A FIFO of send ids for one URL; only the head may be in progress. A
/// `Vec` (not a `VecDeque`): queues are a few ids long, and the bundle keeps
/// no ring-buffer code for them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ordered<T> {
    queue: Vec<T>,
}

impl<T: PartialEq> Ordered<T> {
    /// An empty queue.
    pub fn new() -> Self {
        Ordered { queue: Vec::new() }
    }

    /// Append `id`; `true` when it is the head and may start now.
    pub fn push(&mut self, id: T) -> bool {
        self.queue.push(id);
        self.queue.len() == 1
    }

    /// `id` settled (or was aborted while queued): forget it. Returns the id
    /// that may start now when the head changed, else `None` (also for an
    /// unknown id).
    pub fn remove(&mut self, id: &T) -> Option<&T> {
        let index = self.queue.iter().position(|x| x == id)?;
        self.queue.remove(index);
        if index == 0 {
            self.queue.first()
        } else {
            None
        }
    }

    /// The send in progress, if any.
    pub fn head(&self) -> Option<&T> {
        self.queue.first()
    }

    /// Sends queued, the head included.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ordered_key_excludes_the_fragment() {
        assert_eq!(ordered_key("https://h/a?q=1#x"), "https://h/a?q=1");
        assert_eq!(ordered_key("/a#x#y"), "/a");
        assert_eq!(ordered_key("/a"), "/a");
        assert_eq!(ordered_key("#"), "");
    }

    #[test]
    fn admits_in_call_order_one_at_a_time() {
        let mut q = Ordered::new();
        assert!(q.push(1));
        assert!(!q.push(2));
        assert!(!q.push(3));
        // 3 aborted while queued: the head is unchanged.
        assert_eq!(q.remove(&3), None);
        assert_eq!(q.remove(&1), Some(&2));
        assert_eq!(q.remove(&9), None);
        assert_eq!(q.remove(&2), None);
        assert!(q.is_empty());
        assert!(q.push(4));
        assert_eq!(q.head(), Some(&4));
        assert_eq!(q.len(), 1);
    }
}
