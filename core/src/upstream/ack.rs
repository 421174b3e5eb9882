//! [`AckBatcher`]: delivery ACKs for a subscription (issue 16).
//!
//! The adapter reports each message id it dispatched to the app's listeners
//! ("received"); the batcher collects them and hands out batches to post
//! upstream, each batch one idempotent send ([`crate::upstream::Sender`]
//! through the adapter's `send`), so its retry rules are the send's.
//!
//! ## Rules
//! - A batch goes out `batch_ms` after the first id of it arrived, or at
//!   once when it holds `max_batch` ids, or on close (what is pending).
//! - Ids are acknowledged once each (a re-sent message the dedupe dropped is
//!   never dispatched, so never reported; a repeat reported anyway is
//!   skipped while its batch is pending). Empty ids are not acknowledged
//!   (nothing names them).
//! - `pagehide`: what is pending goes out at once as one batch posted with
//!   `fetch(…, { keepalive: true })` ([`AckAction::SendKeepalive`]; a send's
//!   retries cannot run once the page is gone, and an id never acknowledged
//!   is re-sent by the server to the next page, which shows it again). The
//!   batcher goes on: a page back from the back-forward cache keeps batching.
//! - `crossTab`: only the tab that holds the connection acknowledges; a
//!   following tab's reports are dropped ([`AckBatcher::handle_received`]
//!   takes `leader`): the leader dispatched the same messages itself.
//! - The body is `{"ids":["<id>",…]}` ([`ack_body`]).

use alloc::string::String;
use alloc::vec::Vec;

use crate::time::MonoMs;

/// Default wait before a batch goes out, ms (JS `ack.batchMs`).
pub const DEFAULT_ACK_BATCH_MS: u64 = 1000;
/// Default ids per batch (JS `ack.maxBatch`).
pub const DEFAULT_ACK_MAX_BATCH: usize = 100;

/// What to do next ([`AckBatcher::poll`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AckAction {
    /// Post this batch (one idempotent send).
    Send(Vec<String>),
    /// Post this batch once with `fetch(…, { keepalive: true })`: the page
    /// is going away ([`AckBatcher::handle_page_hide`]); its answer is not
    /// read.
    SendKeepalive(Vec<String>),
    /// Arm the single timer (`None`: no timer).
    Wait {
        /// When to call `handle_timer`.
        until: Option<MonoMs>,
    },
}

/// The sans-IO ACK batcher of one subscription.
#[derive(Clone, Debug)]
pub struct AckBatcher {
    batch_ms: u64,
    max_batch: usize,
    pending: Vec<String>,
    due: Option<MonoMs>,
    ready: Vec<Vec<String>>,
    /// Batches for [`AckAction::SendKeepalive`].
    keepalive: Vec<Vec<String>>,
    closed: bool,
}

impl AckBatcher {
    /// A batcher: `batch_ms` wait, `max_batch` ids per batch (at least 1).
    pub fn new(batch_ms: u64, max_batch: usize) -> AckBatcher {
        AckBatcher {
            batch_ms,
            max_batch: max_batch.max(1),
            pending: Vec::new(),
            due: None,
            ready: Vec::new(),
            keepalive: Vec::new(),
            closed: false,
        }
    }

    /// The app received message `id` (dispatched to its listeners) at `now`;
    /// `leader`: this tab holds the connection (always true without
    /// `crossTab`).
    pub fn handle_received(&mut self, now: MonoMs, id: &str, leader: bool) {
        if self.closed || !leader || id.is_empty() || self.pending.iter().any(|p| p == id) {
            return;
        }
        self.pending.push(String::from(id));
        if self.pending.len() >= self.max_batch {
            self.flush();
        } else if self.due.is_none() {
            self.due = Some(now.plus(self.batch_ms));
        }
    }

    /// The timer fired.
    pub fn handle_timer(&mut self, now: MonoMs) {
        if self.due.is_some_and(|d| d <= now) {
            self.flush();
        }
    }

    /// The subscription closed: what is pending goes out now; nothing after.
    pub fn handle_close(&mut self) {
        self.flush();
        self.closed = true;
    }

    /// `pagehide`: what is pending goes out now, as a keepalive batch.
    pub fn handle_page_hide(&mut self) {
        self.due = None;
        if !self.closed && !self.pending.is_empty() {
            self.keepalive.push(core::mem::take(&mut self.pending));
        }
    }

    /// The next action.
    pub fn poll(&mut self) -> AckAction {
        if !self.keepalive.is_empty() {
            return AckAction::SendKeepalive(self.keepalive.remove(0));
        }
        if !self.ready.is_empty() {
            return AckAction::Send(self.ready.remove(0));
        }
        AckAction::Wait { until: self.due }
    }

    fn flush(&mut self) {
        self.due = None;
        if !self.pending.is_empty() {
            self.ready.push(core::mem::take(&mut self.pending));
        }
    }
}

/// `{"ids":["1","2"]}`: the ids as JSON strings (quotes, backslashes and
/// control characters escaped, RFC 8259 §7).
pub fn ack_body(ids: &[String]) -> String {
    let mut s = String::from("{\"ids\":[");
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push('"');
        for c in id.chars() {
            match c {
                '"' => s.push_str("\\\""),
                '\\' => s.push_str("\\\\"),
                c if (c as u32) < 0x20 => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    s.push_str("\\u00");
                    s.push(char::from(HEX[(c as usize) >> 4]));
                    s.push(char::from(HEX[(c as usize) & 15]));
                }
                c => s.push(c),
            }
        }
        s.push('"');
    }
    s.push_str("]}");
    s
}
