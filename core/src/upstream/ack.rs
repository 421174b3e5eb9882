//! [`AckBatcher`]: delivery ACKs for a subscription.
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
//!   following tab's reports are dropped ([`AckInput::Received`] carries
//!   `leader`): the leader dispatched the same messages itself.
//! - The body is `{"ids":["<id>",…]}` ([`ack_body`]).

use alloc::string::String;
use alloc::vec::Vec;

use crate::machine::{Lifecycle, Machine};
use crate::time::{MonoMs, Monotone, Now};

/// Default wait before a batch goes out, ms (JS `ack.batchMs`).
pub const DEFAULT_ACK_BATCH_MS: u64 = 1000;
/// Default ids per batch (JS `ack.maxBatch`).
pub const DEFAULT_ACK_MAX_BATCH: usize = 100;

/// A fact for the batcher ([`AckBatcher::handle`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AckInput {
    /// The app received message `id` (dispatched to its listeners).
    Received {
        /// The message id.
        id: String,
        /// This tab holds the connection (always true without `crossTab`).
        leader: bool,
    },
    /// The timer armed from the last `Wait` fired.
    Timer,
    /// The subscription closed: what is pending goes out now; nothing after.
    Close,
    /// `pagehide`: what is pending goes out now, as a keepalive batch.
    PageHide,
}

/// What to do next ([`AckBatcher::poll`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AckAction {
    /// Post this batch (one idempotent send).
    Send(Vec<String>),
    /// Post this batch once with `fetch(…, { keepalive: true })`: the page
    /// is going away ([`AckInput::PageHide`]); its answer is not read.
    SendKeepalive(Vec<String>),
    /// Arm the single timer (`None`: no timer).
    Wait {
        /// When to feed [`AckInput::Timer`].
        until: Option<MonoMs>,
    },
}

/// The sans-IO ACK batcher of one subscription: a [`Machine`] (running from
/// [`AckBatcher::new`], done at [`AckInput::Close`]).
#[derive(Clone, Debug)]
pub struct AckBatcher {
    batch_ms: u64,
    max_batch: usize,
    pending: Vec<String>,
    due: Option<MonoMs>,
    ready: Vec<Vec<String>>,
    /// Batches for [`AckAction::SendKeepalive`].
    keepalive: Vec<Vec<String>>,
    life: Lifecycle,
    clock: Monotone,
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
            life: Lifecycle::Running,
            clock: Monotone::default(),
        }
    }

    /// Feed one fact at `now` (its monotonic clock, kept from going back).
    /// Ignored once closed.
    pub fn handle(&mut self, now: Now, input: AckInput) {
        if self.life.is_done() {
            return;
        }
        let now = self.clock.observe(now).mono;
        match input {
            AckInput::Received { id, leader } => self.received(now, id, leader),
            AckInput::Timer => {
                if self.due.is_some_and(|d| d <= now) {
                    self.flush();
                }
            }
            AckInput::Close => {
                self.flush();
                self.life.finish();
            }
            AckInput::PageHide => {
                self.due = None;
                if !self.pending.is_empty() {
                    self.keepalive.push(core::mem::take(&mut self.pending));
                }
            }
        }
    }

    /// The next action.
    #[must_use = "an action not carried out is lost"]
    pub fn poll(&mut self) -> AckAction {
        if !self.keepalive.is_empty() {
            return AckAction::SendKeepalive(self.keepalive.remove(0));
        }
        if !self.ready.is_empty() {
            return AckAction::Send(self.ready.remove(0));
        }
        AckAction::Wait {
            until: self.clock.wait_until(self.due),
        }
    }

    fn received(&mut self, now: MonoMs, id: String, leader: bool) {
        if !leader || id.is_empty() || self.pending.contains(&id) {
            return;
        }
        self.pending.push(id);
        if self.pending.len() >= self.max_batch {
            self.flush();
        } else if self.due.is_none() {
            self.due = Some(now.plus(self.batch_ms));
        }
    }

    fn flush(&mut self) {
        self.due = None;
        if !self.pending.is_empty() {
            self.ready.push(core::mem::take(&mut self.pending));
        }
    }
}

impl Machine for AckBatcher {
    type Input<'a> = AckInput;
    type Action = AckAction;
    const TIMER: Self::Input<'static> = AckInput::Timer;

    fn handle(&mut self, now: Now, input: AckInput) {
        AckBatcher::handle(self, now, input);
    }

    fn poll(&mut self) -> AckAction {
        AckBatcher::poll(self)
    }

    fn split_wait(action: AckAction) -> Result<AckAction, Option<MonoMs>> {
        match action {
            AckAction::Wait { until } => Err(until),
            a => Ok(a),
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
