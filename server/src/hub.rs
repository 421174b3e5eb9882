//! The event hub: a ring buffer of recent events (for replay by cursor) and a
//! broadcast to every live stream.
//!
//! Ids are integers counted from 1, sent as strings. A cursor names the last
//! event a client has seen; replay is every buffered event with a larger id.
//! When the server cannot fill the gap after a cursor (the cursor's successor
//! was evicted, the cursor is not a number, or it is newer than anything this
//! server run has published) the answer is a *reset* instead.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use bytes::Bytes;
use tokio::sync::broadcast;

use crate::clock::wall_now;

/// One published event.
#[derive(Debug)]
pub struct Event {
    pub id: u64,
    pub event: Option<String>,
    pub data: String,
    /// Wall time of publication (`Last-Modified` of `/resource`).
    pub published: SystemTime,
    /// The event as an SSE block (`id:`, `event:`, `data:` lines, blank line).
    pub frame: Bytes,
}

impl Event {
    fn new(id: u64, event: Option<String>, data: String) -> Self {
        let frame = Bytes::from(sse_block(Some(&id.to_string()), event.as_deref(), &data));
        Event {
            id,
            event,
            data,
            published: wall_now(),
            frame,
        }
    }

    pub fn id_string(&self) -> String {
        self.id.to_string()
    }

    /// `{"id": "<n>", "event"?: "<name>", "data": "<text>"}`.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({ "id": self.id_string(), "data": self.data });
        if let (Some(e), serde_json::Value::Object(m)) = (&self.event, &mut v) {
            m.insert("event".into(), serde_json::Value::String(e.clone()));
        }
        v
    }
}

/// Formats one SSE block. Multi-line data (LF, CRLF or CR) becomes several
/// `data:` lines, so the client reassembles it joined by LF.
pub fn sse_block(id: Option<&str>, event: Option<&str>, data: &str) -> String {
    let mut s = String::with_capacity(data.len() + 32);
    if let Some(id) = id {
        s.push_str("id: ");
        s.push_str(id);
        s.push('\n');
    }
    if let Some(ev) = event {
        s.push_str("event: ");
        s.push_str(ev);
        s.push('\n');
    }
    for line in split_lines(data) {
        if line.is_empty() {
            s.push_str("data:\n");
        } else {
            s.push_str("data: ");
            s.push_str(line);
            s.push('\n');
        }
    }
    s.push('\n');
    s
}

/// Splits on CRLF, LF or CR; `"a\n"` gives `["a", ""]`, `""` gives `[""]`.
fn split_lines(data: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = data.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                out.push(&data[start..i]);
                start = i + 1;
            }
            b'\r' => {
                out.push(&data[start..i]);
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(&data[start..]);
    out
}

/// A client's position, as parsed from `Last-Event-ID` / `?lastEventId=`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cursor {
    /// No cursor (absent or empty): live only, no replay.
    None,
    /// The id of the last event the client has seen.
    Id(u64),
    /// Not an id this server could have sent.
    Invalid(String),
}

impl Cursor {
    pub fn parse(s: &str) -> Cursor {
        let t = s.trim();
        if t.is_empty() {
            Cursor::None
        } else {
            match t.parse::<u64>() {
                Ok(n) => Cursor::Id(n),
                Err(_) => Cursor::Invalid(t.to_string()),
            }
        }
    }
}

/// Why a cursor cannot be resumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetReason {
    /// Sent as `cursor-too-old` for every cause (the wire value clients see).
    CursorTooOld,
}

impl ResetReason {
    pub fn as_str(self) -> &'static str {
        match self {
            ResetReason::CursorTooOld => "cursor-too-old",
        }
    }

    /// The SSE block announcing the reset (no `id:` line).
    pub fn sse_block(self) -> String {
        format!(
            "event: reset\ndata: {{\"reason\":\"{}\"}}\n\n",
            self.as_str()
        )
    }
}

/// The answer to "what comes after this cursor".
#[derive(Debug, Clone)]
pub struct Replay {
    pub reset: Option<ResetReason>,
    pub events: Vec<Arc<Event>>,
    /// The newest id when the answer was taken (0 = none yet): after a
    /// reset, the cursor the client should continue from.
    pub head: u64,
}

impl Replay {
    /// After a reset: an id-only block that moves the client's cursor to the
    /// head (`id:` with no value when nothing was published), so a client
    /// that reconnects before the next event does not get the reset again.
    /// It dispatches no event.
    pub fn head_block(&self) -> String {
        if self.head == 0 {
            "id:\n\n".to_string()
        } else {
            format!("id: {}\n\n", self.head)
        }
    }

    pub fn head_id(&self) -> String {
        if self.head == 0 {
            String::new()
        } else {
            self.head.to_string()
        }
    }

    /// The answer as JSON messages (`/long-poll?format=json`, `/poll`): the
    /// reset first if any, as `{"id": "<head>", "event": "reset", "data":
    /// "{\"reason\":...}"}` (data is text, as for every event), then the
    /// events.
    pub fn json_items(&self) -> Vec<serde_json::Value> {
        let reset = self.reset.map(|reason| {
            serde_json::json!({
                "id": self.head_id(),
                "event": "reset",
                "data": serde_json::json!({ "reason": reason.as_str() }).to_string(),
            })
        });
        reset
            .into_iter()
            .chain(self.events.iter().map(|e| e.to_json()))
            .collect()
    }
}

#[derive(Debug)]
struct Inner {
    buf: VecDeque<Arc<Event>>,
    last_id: u64,
    capacity: usize,
    /// After `forget_all(false)`: a cursor newer than anything published is
    /// served as "live only", not a reset (a naive restarted server).
    future_is_live: bool,
}

/// Ring buffer + broadcast.
#[derive(Debug)]
pub struct Hub {
    inner: Mutex<Inner>,
    tx: broadcast::Sender<Arc<Event>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Hub {
    /// `capacity`: events kept for replay (at least 1). `queue`: how far a
    /// live stream may fall behind before it is told it lagged.
    pub fn new(capacity: usize, queue: usize) -> Self {
        let (tx, _) = broadcast::channel(queue.max(1));
        Hub {
            inner: Mutex::new(Inner {
                buf: VecDeque::with_capacity(capacity.clamp(1, 1 << 16)),
                last_id: 0,
                capacity: capacity.max(1),
                future_is_live: false,
            }),
            tx,
        }
    }

    /// Appends an event with the next id and sends it to every live stream.
    pub fn publish(&self, event: Option<String>, data: String) -> Arc<Event> {
        let mut g = lock(&self.inner);
        g.last_id += 1;
        let ev = Arc::new(Event::new(g.last_id, event, data));
        if g.buf.len() >= g.capacity {
            g.buf.pop_front();
        }
        g.buf.push_back(ev.clone());
        // Sent under the lock: a subscriber sees each event either in its
        // replay snapshot or on its receiver, never both, never neither.
        let _ = self.tx.send(ev.clone());
        ev
    }

    /// Sends `ev` again, unchanged (same id and frame), to every live stream
    /// (`POST /publish?resendAfterMs=`: an un-acknowledged event); the
    /// replay buffer is not touched.
    pub fn resend(&self, ev: &Arc<Event>) {
        let _g = lock(&self.inner);
        let _ = self.tx.send(ev.clone());
    }

    /// The id of the newest event (0 before the first publish).
    pub fn last_id(&self) -> u64 {
        lock(&self.inner).last_id
    }

    /// The newest event, if any is buffered.
    pub fn last(&self) -> Option<Arc<Event>> {
        lock(&self.inner).buf.back().cloned()
    }

    /// Oldest buffered id (None when empty).
    pub fn oldest_id(&self) -> Option<u64> {
        lock(&self.inner).buf.front().map(|e| e.id)
    }

    /// What comes after `cursor`.
    pub fn replay(&self, cursor: &Cursor) -> Replay {
        Self::replay_locked(&lock(&self.inner), cursor)
    }

    /// Replay plus a receiver for everything published afterwards, taken
    /// atomically (no gap, no duplicate).
    pub fn subscribe(&self, cursor: &Cursor) -> (Replay, broadcast::Receiver<Arc<Event>>) {
        let g = lock(&self.inner);
        let replay = Self::replay_locked(&g, cursor);
        let rx = self.tx.subscribe();
        drop(g);
        (replay, rx)
    }

    /// Forgets every event and starts ids again from 1 (an emulated server
    /// restart that loses its state). Live receivers stay subscribed.
    /// `reset_old_cursors`: a cursor newer than anything published since is
    /// answered with a reset (it is from a previous run); without it, such a
    /// cursor gets live events only, as a naive server with a fresh in-memory
    /// counter does, which then reissues ids 1, 2, … to clients that saw the
    /// old ones (n8n PR #33558).
    pub fn forget_all(&self, reset_old_cursors: bool) {
        let mut g = lock(&self.inner);
        g.buf.clear();
        g.last_id = 0;
        g.future_is_live = !reset_old_cursors;
    }

    fn replay_locked(g: &Inner, cursor: &Cursor) -> Replay {
        let reset = Replay {
            reset: Some(ResetReason::CursorTooOld),
            events: Vec::new(),
            head: g.last_id,
        };
        let none = Replay {
            reset: None,
            events: Vec::new(),
            head: g.last_id,
        };
        match cursor {
            Cursor::None => none,
            Cursor::Invalid(_) => reset,
            Cursor::Id(c) => {
                let c = *c;
                if c > g.last_id {
                    // From the future, e.g. a previous server run.
                    return if g.future_is_live { none } else { reset };
                }
                if c == g.last_id {
                    return none;
                }
                let Some(oldest) = g.buf.front().map(|e| e.id) else {
                    return reset;
                };
                // c < last_id: the successor c+1 must still be buffered.
                if c + 1 < oldest {
                    return reset;
                }
                let skip = usize::try_from(c + 1 - oldest).unwrap_or(usize::MAX);
                Replay {
                    reset: None,
                    events: g.buf.iter().skip(skip).cloned().collect(),
                    head: g.last_id,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(r: &Replay) -> Vec<u64> {
        r.events.iter().map(|e| e.id).collect()
    }

    fn hub_with(cap: usize, n: u64) -> Hub {
        let h = Hub::new(cap, 16);
        for i in 1..=n {
            let ev = h.publish(None, format!("m{i}"));
            assert_eq!(ev.id, i);
        }
        h
    }

    #[test]
    fn ids_are_monotonic_from_one() {
        let h = hub_with(10, 3);
        assert_eq!(h.last_id(), 3);
        assert_eq!(h.oldest_id(), Some(1));
    }

    #[test]
    fn replay_after_cursor() {
        let h = hub_with(10, 5);
        let r = h.replay(&Cursor::Id(2));
        assert_eq!(r.reset, None);
        assert_eq!(ids(&r), vec![3, 4, 5]);
        assert_eq!(ids(&h.replay(&Cursor::Id(0))), vec![1, 2, 3, 4, 5]);
        assert_eq!(ids(&h.replay(&Cursor::Id(4))), vec![5]);
    }

    #[test]
    fn cursor_at_head_replays_nothing() {
        let h = hub_with(10, 5);
        let r = h.replay(&Cursor::Id(5));
        assert_eq!(r.reset, None);
        assert!(r.events.is_empty());
    }

    #[test]
    fn empty_cursor_is_live_only() {
        let h = hub_with(10, 5);
        let r = h.replay(&Cursor::parse(""));
        assert_eq!(r.reset, None);
        assert!(r.events.is_empty());
        assert_eq!(Cursor::parse("  "), Cursor::None);
    }

    #[test]
    fn eviction_keeps_the_newest() {
        let h = hub_with(3, 5);
        assert_eq!(h.oldest_id(), Some(3));
        // Cursor 2: its successor 3 is still buffered, so no gap.
        let r = h.replay(&Cursor::Id(2));
        assert_eq!(r.reset, None);
        assert_eq!(ids(&r), vec![3, 4, 5]);
    }

    #[test]
    fn cursor_older_than_buffer_resets() {
        let h = hub_with(3, 5);
        // Successor of 1 is 2, evicted.
        let r = h.replay(&Cursor::Id(1));
        assert_eq!(r.reset, Some(ResetReason::CursorTooOld));
        assert!(r.events.is_empty());
        assert_eq!(
            h.replay(&Cursor::Id(0)).reset,
            Some(ResetReason::CursorTooOld)
        );
    }

    #[test]
    fn cursor_from_the_future_resets() {
        let h = hub_with(10, 3);
        assert_eq!(
            h.replay(&Cursor::Id(4)).reset,
            Some(ResetReason::CursorTooOld)
        );
        let empty = Hub::new(10, 16);
        assert_eq!(
            empty.replay(&Cursor::Id(7)).reset,
            Some(ResetReason::CursorTooOld)
        );
        // Cursor 0 on an empty hub: nothing missed.
        assert_eq!(empty.replay(&Cursor::Id(0)).reset, None);
    }

    #[test]
    fn unparseable_cursor_resets() {
        let h = hub_with(10, 3);
        for c in ["abc", "1:2", "-1", "1.5"] {
            let r = h.replay(&Cursor::parse(c));
            assert_eq!(r.reset, Some(ResetReason::CursorTooOld), "{c}");
        }
    }

    #[test]
    fn forget_all_makes_old_cursors_reset() {
        let h = hub_with(10, 3);
        h.forget_all(true);
        assert_eq!(
            h.replay(&Cursor::Id(3)).reset,
            Some(ResetReason::CursorTooOld)
        );
        assert_eq!(h.publish(None, "x".into()).id, 1);
    }

    #[test]
    fn forget_all_without_reset_serves_old_cursors_live() {
        let h = hub_with(10, 3);
        h.forget_all(false);
        let r = h.replay(&Cursor::Id(3));
        assert_eq!((r.reset, r.events.len(), r.head), (None, 0, 0));
        for _ in 0..4 {
            h.publish(None, "new".into());
        }
        // Ids caught up with the old cursor: ordinary replay again.
        assert_eq!(ids(&h.replay(&Cursor::Id(3))), vec![4]);
        // A later restart with resets resets again.
        h.forget_all(true);
        assert_eq!(
            h.replay(&Cursor::Id(3)).reset,
            Some(ResetReason::CursorTooOld)
        );
    }

    #[tokio::test]
    async fn subscribe_has_no_gap_and_no_duplicate() {
        let h = hub_with(10, 2);
        let (r, mut rx) = h.subscribe(&Cursor::Id(1));
        assert_eq!(ids(&r), vec![2]);
        h.publish(None, "x".into());
        let live = rx.recv().await.ok().map(|e| e.id);
        assert_eq!(live, Some(3));
    }

    #[test]
    fn reset_carries_the_head() {
        let h = hub_with(2, 5);
        let r = h.replay(&Cursor::Id(1));
        assert_eq!(r.head, 5);
        assert_eq!(r.head_block(), "id: 5\n\n");
        let empty = Hub::new(2, 4).replay(&Cursor::Id(3));
        assert_eq!(empty.head_block(), "id:\n\n");
        assert_eq!(empty.head_id(), "");
    }

    #[test]
    fn frames() {
        assert_eq!(
            sse_block(Some("7"), Some("price"), "a\nb\r\nc\rd"),
            "id: 7\nevent: price\ndata: a\ndata: b\ndata: c\ndata: d\n\n"
        );
        assert_eq!(sse_block(Some("1"), None, ""), "id: 1\ndata:\n\n");
        assert_eq!(sse_block(None, None, "x\n"), "data: x\ndata:\n\n");
        assert_eq!(
            ResetReason::CursorTooOld.sse_block(),
            "event: reset\ndata: {\"reason\":\"cursor-too-old\"}\n\n"
        );
    }
}
