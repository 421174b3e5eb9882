//! The persisted cursor (Durable Streams: clients SHOULD persist offsets):
//! what is stored, under which key, and when. The adapter
//! only reads and writes `sessionStorage` / `localStorage` and reports a
//! failure.
//!
//! - Key: `tidings:cursor:` + the app's `persistKey`, else + 16 hex digits of
//!   the FNV-1a 64 hash ([`crate::keys::Fnv`]) of the stream's identity (its
//!   URL and `events`): the URL itself never goes into storage, since URLs
//!   carry tokens. (An app
//!   whose URL changes between page loads, a rotating token in the query,
//!   gives a `persistKey`.)
//! - Restore at `subscribe`: the stored cursor, unless the app gave one
//!   (`lastEventId` / `offset`: a server-rendered page knows better; Durable
//!   Streams' `-1`, the default start, is no cursor: an app that passes it
//!   still resumes from the stored offset, `now` is its choice), and only
//!   when it could be sent (no U+0000, CR, LF; a valid offset for Durable
//!   Streams); anything else is ignored.
//! - Write: the cursor after a message the app has handled, once per
//!   delivered batch (never before the app had it: a reload in between would
//!   skip it), and only when it changed.
//! - `reset` (the server cannot fill the gap): the stored cursor is removed
//!   at once; the next handled message writes the new one. A message a
//!   pulling reader (async iterator, Rust `Stream`) queued before the reset
//!   and pulled after it writes nothing: its cursor is from before the gap.
//! - `crossTab`: a follower tab does not write `localStorage` (the leader
//!   tab writes the same value to the same place); with `sessionStorage`
//!   (one per tab) every tab writes its own.
//! - A storage that is missing, full or refused: the first failure is
//!   reported (one debug-log line) and nothing is stored any more; the
//!   subscription goes on.

use alloc::string::String;
use core::hash::Hasher;

use crate::engine::{is_valid_offset, START_OFFSET};
use crate::keys::Fnv;

/// Every stored cursor's key starts with this.
pub const KEY_PREFIX: &str = "tidings:cursor:";

/// Where the cursor is kept (JS `persist`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// `"session"`: `sessionStorage`, this tab only, until it closes.
    Session,
    /// `"local"`: `localStorage`, every tab of the origin, across restarts.
    Local,
}

/// The storage key: `persistKey` when given, else the hash of the stream's
/// identity, its `url` and `events` (each name after a 0xFF byte, which
/// UTF-8 never holds, so `["a\nb"]` and `["a", "b"]` differ).
pub fn storage_key(url: &str, events: &[String], persist_key: Option<&str>) -> String {
    if let Some(k) = persist_key {
        let mut key = String::from(KEY_PREFIX);
        key.push_str(k);
        return key;
    }
    let mut h = Fnv::new();
    h.write(url.as_bytes());
    for e in events {
        h.write(&[0xff]);
        h.write(e.as_bytes());
    }
    h.key(KEY_PREFIX)
}

/// The cursor to start from: the app's own (`configured`, non-empty; with
/// `durable`, other than the default start offset `-1`, which the sanitized
/// options hold when the app gave none) wins; else the stored one when it
/// could be sent (no U+0000, CR, LF; with `durable`, a valid Durable Streams
/// offset).
pub fn restore<'a>(configured: &str, stored: Option<&'a str>, durable: bool) -> Option<&'a str> {
    // Durable Streams' `-1` is the default start, not a cursor.
    let none_given = configured.is_empty() || (durable && configured == START_OFFSET);
    if !none_given {
        return None;
    }
    stored.filter(|s| {
        !s.is_empty()
            && crate::engine::is_usable_event_id(s)
            && (!durable || is_valid_offset(s, true))
    })
}

/// A storage operation for the adapter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `setItem(key, cursor)`.
    Write(String),
    /// `removeItem(key)`.
    Clear,
}

/// The write policy of one subscription's persisted cursor.
#[derive(Clone, Debug)]
pub struct Persist {
    scope: Scope,
    /// What storage holds (as far as this subscription knows).
    saved: Option<String>,
    pending: Option<Op>,
    broken: bool,
    /// Messages queued for a pulling reader, and pulled from it, so far.
    queued: u64,
    pulled: u64,
    /// The pulls up to this count are of messages queued before the latest
    /// `reset`: they say nothing about where to resume.
    stale: u64,
}

impl Persist {
    /// A policy for `scope`, the storage holding `stored`.
    pub fn new(scope: Scope, stored: Option<String>) -> Self {
        Persist {
            scope,
            saved: stored,
            pending: None,
            broken: false,
            queued: 0,
            pulled: 0,
            stale: 0,
        }
    }

    /// A message was queued for a pulling reader (the JS async iterator's
    /// buffer, the Rust `Stream`): its consumer handles it when it pulls
    /// the one after ([`Persist::pulled`]).
    pub fn queued(&mut self) {
        self.queued = self.queued.saturating_add(1);
    }

    /// The pulling reader's consumer handled the next message of its queue
    /// (they are pulled in order), `cursor` being the cursor after it.
    pub fn pulled(&mut self, cursor: &str) {
        self.pulled = self.pulled.saturating_add(1);
        if self.pulled > self.stale {
            self.handled(cursor);
        }
    }

    /// The app handled a message whose cursor after it is `cursor` (an empty
    /// cursor, a stream without ids, is not stored).
    pub fn handled(&mut self, cursor: &str) {
        if cursor.is_empty() {
            return;
        }
        self.pending = match self.saved.as_deref() == Some(cursor) {
            true => None,
            false => Some(Op::Write(String::from(cursor))),
        };
    }

    /// A `reset`: the stored cursor goes, and the messages queued before it
    /// but pulled after it do not write theirs back (a reload would resume
    /// from the gap the server just said it cannot fill).
    pub fn reset(&mut self) {
        self.stale = self.queued;
        self.pending = self.saved.is_some().then_some(Op::Clear);
    }

    /// Whether something waits for [`Persist::take`] (the adapter schedules
    /// one take per batch).
    pub fn is_pending(&self) -> bool {
        self.pending.is_some() && !self.broken
    }

    /// The operation to carry out now (end of a batch), if any. `follower`:
    /// this tab follows another tab's connection (`crossTab`).
    pub fn take(&mut self, follower: bool) -> Option<Op> {
        let op = self.pending.take()?;
        if self.broken || (follower && self.scope == Scope::Local) {
            return None;
        }
        self.saved = match &op {
            Op::Write(c) => Some(c.clone()),
            Op::Clear => None,
        };
        Some(op)
    }

    /// The storage failed (missing, full, refused). `true` the first time
    /// (log one line); nothing is stored afterwards.
    pub fn failed(&mut self) -> bool {
        !core::mem::replace(&mut self.broken, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_is_a_hash_never_the_url() {
        let url = "https://h.example/sse?token=s3cret";
        let k = storage_key(url, &[], None);
        assert_eq!(k.len(), KEY_PREFIX.len() + 16);
        assert!(!k.contains("s3cret") && !k.contains("h.example"));
        // Stable (pinned: a change would lose every stored cursor).
        assert_eq!(
            storage_key("", &[], None),
            "tidings:cursor:cbf29ce484222325"
        );
        let a = String::from("a");
        assert_eq!(
            storage_key(url, std::slice::from_ref(&a), None),
            "tidings:cursor:9ddd306f249e008b"
        );
        // `events: ["a\nb"]` is not `events: ["a", "b"]`, nor `["ab"]`.
        let split = storage_key(url, &[a, String::from("b")], None);
        assert_ne!(split, storage_key(url, &[String::from("a\nb")], None));
        assert_ne!(split, storage_key(url, &[String::from("ab")], None));
        assert_eq!(storage_key(url, &[], Some("feed")), "tidings:cursor:feed");
    }

    #[test]
    fn restore_prefers_the_apps_cursor_and_checks_the_stored_one() {
        assert_eq!(restore("", Some("7"), false), Some("7"));
        assert_eq!(restore("3", Some("7"), false), None);
        assert_eq!(restore("", Some("a\nb"), false), None);
        assert_eq!(restore("", Some("a\0b"), false), None);
        assert_eq!(restore("", Some(""), false), None);
        assert_eq!(restore("", None, false), None);
        assert_eq!(restore("", Some("a b"), false), Some("a b"));
        assert_eq!(restore("", Some("a b"), true), None);
        assert_eq!(restore("", Some("0_12"), true), Some("0_12"));
    }

    /// Durable Streams: the options the adapter reads are sanitized, which
    /// sets the default start offset `-1` when the app gave none. That `-1`
    /// is no cursor: the stored offset is restored over it (a reload must
    /// not read the stream again from its start). `now` is the app's choice.
    #[test]
    fn durable_streams_default_start_is_no_cursor() {
        use crate::engine::{Config, Protocol};
        let mut c = Config::new("https://h.example/v1/stream/chat");
        c.protocol = Protocol::DurableStreams;
        let c = c.sanitized();
        assert_eq!(c.last_event_id, "-1");
        assert_eq!(restore(&c.last_event_id, Some("0_12"), true), Some("0_12"));
        assert_eq!(restore("-1", None, true), None);
        assert_eq!(restore("now", Some("0_12"), true), None);
        assert_eq!(restore("0_7", Some("0_12"), true), None);
        // Without Durable Streams `-1` is an event id like any other.
        assert_eq!(restore("-1", Some("7"), false), None);
    }

    #[test]
    fn writes_once_per_batch_after_handling_and_clears_on_reset() {
        let mut p = Persist::new(Scope::Local, Some(String::from("1")));
        p.handled("1");
        assert_eq!(p.take(false), None);
        p.handled("2");
        p.handled("3");
        assert!(p.is_pending());
        assert_eq!(p.take(false), Some(Op::Write(String::from("3"))));
        assert_eq!(p.take(false), None);
        p.handled("");
        assert_eq!(p.take(false), None);
        p.reset();
        assert_eq!(p.take(false), Some(Op::Clear));
        p.reset();
        assert_eq!(p.take(false), None);
        // A reset then new messages in one batch: the new cursor.
        p.reset();
        p.handled("9");
        assert_eq!(p.take(false), Some(Op::Write(String::from("9"))));
    }

    /// A reader pulls in order: messages queued before a `reset` and pulled
    /// after it write nothing; the first message queued after it does.
    #[test]
    fn messages_queued_before_a_reset_and_pulled_after_it_write_nothing() {
        let mut p = Persist::new(Scope::Session, None);
        p.queued();
        p.pulled("1");
        assert_eq!(p.take(false), Some(Op::Write(String::from("1"))));
        p.queued(); // "2"
        p.queued(); // "3"
        p.reset();
        assert_eq!(p.take(false), Some(Op::Clear));
        p.queued(); // "10", after the reset
        p.pulled("2");
        assert_eq!(p.take(false), None);
        p.pulled("3");
        assert_eq!(p.take(false), None);
        p.pulled("10");
        assert_eq!(p.take(false), Some(Op::Write(String::from("10"))));
        // A second reset with nothing queued: nothing is stale.
        p.reset();
        assert_eq!(p.take(false), Some(Op::Clear));
        p.queued();
        p.pulled("11");
        assert_eq!(p.take(false), Some(Op::Write(String::from("11"))));
    }

    #[test]
    fn followers_do_not_write_shared_storage() {
        let mut local = Persist::new(Scope::Local, None);
        local.handled("5");
        assert_eq!(local.take(true), None);
        let mut session = Persist::new(Scope::Session, None);
        session.handled("5");
        assert_eq!(session.take(true), Some(Op::Write(String::from("5"))));
    }

    #[test]
    fn a_failure_is_reported_once_then_nothing_is_stored() {
        let mut p = Persist::new(Scope::Session, None);
        assert!(p.failed());
        assert!(!p.failed());
        p.handled("1");
        assert!(!p.is_pending());
        assert_eq!(p.take(false), None);
    }
}
