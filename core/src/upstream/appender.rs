//! [`Appender`]: Durable Streams idempotent appends (the open Durable
//! Streams protocol, PROTOCOL.md §5.2 Append, §5.2.1 Idempotent
//! Producers, §5.3 Close, §9.1 JSON mode).
//!
//! The app appends values; the machine batches them and POSTs one batch at a
//! time with `Producer-Id`, `Producer-Epoch` and `Producer-Seq` (the seq
//! counts batches, from 0 in each epoch). Every batch is one [`Sender`]: the
//! retry rules (transient statuses, network errors, timeouts, offline,
//! `Retry-After`) are the send's, and a retry repeats the same
//! `(id, epoch, seq)`, so the server applies the batch once (a repeat of an
//! applied batch answers 204, a duplicate success).
//!
//! ## Rules
//! - Batching: the first append goes out at once; appends made while a batch
//!   is in flight wait and go out together as the next batch (at most
//!   [`AppenderConfig::max_batch_items`] values and about
//!   [`AppenderConfig::max_batch_bytes`] bytes; one value bigger than that
//!   goes alone).
//! - Body: JSON streams (`json`) post `[v1,v2,…]`: the server flattens
//!   exactly one level of array (§9.1.2), so each value, an array one too,
//!   is stored as one message. Other streams post the values' bytes
//!   concatenated (the protocol has no framing for them).
//! - 200/204 (any 2xx/3xx) → the batch is durable: [`AppendAction::Durable`].
//! - 403 (stale epoch, §5.2.1 zombie fencing; `Producer-Epoch` is the
//!   server's epoch) → [`AppendError::StaleEpoch`], unless `auto_claim`:
//!   then the same batch again at epoch `server + 1`, seq 0 (at most
//!   [`MAX_AUTO_CLAIMS`] times in a row, then `StaleEpoch`).
//! - 409 with `Stream-Closed: true` → [`AppendError::StreamClosed`]; 409
//!   with `Producer-Expected-Seq` → [`AppendError::SequenceGap`] (the
//!   producer's state was lost: a bug, or a server that forgot it); any other
//!   409 → [`AppendError::Conflict`] (the content type does not match the
//!   stream's). None is retried: unlike a send's 409, none means "still in
//!   flight" here (§5.2.1: the server serialises a producer's requests).
//! - Any other answer or failure is the batch's [`Sender`]'s: retried, or
//!   [`AppendError::Send`] with its code when it gives up or is permanent.
//! - A failure is final: [`AppendAction::Failed`] once, every value not yet
//!   durable is not appended, later appends are refused.
//! - `close`: the batch that takes the last queued value (the final message
//!   of [`Appender::handle_close_with`] among them) carries `Stream-Closed:
//!   true`, so those values and the close are one atomic append (§5.2.1
//!   "Stream Closure with Idempotent Producers"); with nothing queued, one
//!   close-only request (empty body) once the batch in flight is durable.
//!   Either goes as the producer's next batch with the producer headers (a
//!   retry is the server's duplicate, and a close of a stream another
//!   producer closed is its 409 `Stream-Closed`, so
//!   [`AppendError::StreamClosed`]) → [`AppendAction::Durable`] for its
//!   values, then [`AppendAction::Closed`]. Its attempts are
//!   [`AppenderConfig::close_max_attempts`] (bounded by default even when
//!   the appends' are not: a close that cannot get through says so).

use alloc::string::String;
use alloc::vec::Vec;

use super::config::{SendConfig, DEFAULT_MAX_ATTEMPTS};
use super::key::IdempotencyKey;
use super::sender::{Outcome, SendAction, Sender};
use crate::engine::{durable_body_kind, DurableBody, ErrorCode, ResponseHead, TransportError};
use crate::machine::{Lifecycle, Machine};
use crate::rng::Rng;
use crate::time::{MonoMs, Monotone, Now};

/// Default cap on the values in one batch (JS `maxBatch`).
pub const DEFAULT_MAX_BATCH_ITEMS: usize = 1000;
/// Default cap on a batch's body, bytes (JS `maxBatchBytes`): 1 MiB.
pub const DEFAULT_MAX_BATCH_BYTES: usize = 1 << 20;
/// Auto-claims in a row (403 → epoch + 1) before `StaleEpoch`: two producers
/// claiming the same id would otherwise fence each other forever.
pub const MAX_AUTO_CLAIMS: u32 = 3;
/// The largest epoch or seq the protocol allows (2^53 − 1, §5.2.1).
pub const MAX_PRODUCER_NUMBER: u64 = (1 << 53) - 1;
/// The longest `Producer-Id` taken from the app, bytes (it travels in every
/// request's headers).
pub const MAX_PRODUCER_ID_BYTES: usize = 256;

/// Whether the app's `id` can be the `Producer-Id`: 1 to
/// [`MAX_PRODUCER_ID_BYTES`] bytes.
pub fn is_valid_producer_id(id: &str) -> bool {
    (1..=MAX_PRODUCER_ID_BYTES).contains(&id.len())
}

/// The starting `Producer-Epoch` the app's `epoch` (a JS number) names: an
/// integer from 0 to [`MAX_PRODUCER_NUMBER`] (every one exact in a JS number);
/// `None` for anything else (a fraction, a negative, `NaN`, past the range).
pub fn producer_epoch(n: f64) -> Option<u64> {
    let in_range = (0.0..=MAX_PRODUCER_NUMBER as f64).contains(&n);
    (in_range && n as u64 as f64 == n).then_some(n as u64)
}

/// Whether a stream of `content_type` is a JSON stream (§9.1: batches posted
/// as a JSON array): the reader's rule
/// ([`durable_body_kind`](crate::engine::durable_body_kind)), one media-type
/// rule for reading and writing.
pub fn is_json_stream(content_type: &str) -> bool {
    durable_body_kind(Some(content_type)) == DurableBody::Json
}

/// The options of one appender.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppenderConfig {
    /// `Producer-Id`: non-empty; the adapter generates a UUID by default.
    pub producer_id: String,
    /// `Producer-Epoch` to start with. Default 0.
    pub epoch: u64,
    /// On 403, claim the producer id at the server's epoch + 1. Default false.
    pub auto_claim: bool,
    /// The stream is `application/json`: post batches as a JSON array.
    pub json: bool,
    /// Values per batch, at least 1. Default [`DEFAULT_MAX_BATCH_ITEMS`].
    pub max_batch_items: usize,
    /// Body bytes per batch. Default [`DEFAULT_MAX_BATCH_BYTES`].
    pub max_batch_bytes: usize,
    /// Retries of one batch: a send's options (its idempotency header is not
    /// sent; the producer headers take its place).
    pub send: SendConfig,
    /// Attempts of the close request (`send.max_attempts` is the appends').
    /// Default [`DEFAULT_MAX_ATTEMPTS`]; `u32::MAX` retries as long as it fails.
    pub close_max_attempts: u32,
}

impl AppenderConfig {
    /// Defaults for `producer_id`.
    pub fn new(producer_id: &str) -> AppenderConfig {
        AppenderConfig {
            producer_id: String::from(producer_id),
            epoch: 0,
            auto_claim: false,
            json: true,
            max_batch_items: DEFAULT_MAX_BATCH_ITEMS,
            max_batch_bytes: DEFAULT_MAX_BATCH_BYTES,
            send: SendConfig::default(),
            close_max_attempts: DEFAULT_MAX_ATTEMPTS,
        }
    }
}

/// Why an appender stopped ([`AppendAction::Failed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AppendError {
    /// 403: another producer holds a newer epoch (`current`, from
    /// `Producer-Epoch`, when the server sent one). JS `stale-epoch`.
    StaleEpoch {
        /// The server's epoch.
        current: Option<u64>,
    },
    /// 409 with `Producer-Expected-Seq`. JS `sequence-gap`.
    SequenceGap {
        /// The seq the server expected.
        expected: Option<u64>,
        /// The seq sent.
        sent: u64,
    },
    /// 409 with `Stream-Closed: true`. JS `stream-closed`.
    StreamClosed,
    /// Another 409: the content type does not match. JS `conflict`.
    Conflict,
    /// The batch's send failed (`http-status`, `auth`, `gave-up`,
    /// `timeout`), with the last status if an answer caused it.
    Send {
        /// The send's code.
        code: ErrorCode,
        /// The last status.
        status: Option<u16>,
    },
    /// [`Appender::handle_abort`]. JS: the signal's reason.
    Aborted,
    /// [`Appender::handle_headers_failed`]: the app's `headers` failed;
    /// nothing was sent, and a retry would run the same failing code (as
    /// for a send). JS `headers`.
    Headers,
}

impl AppendError {
    /// The JS `code`.
    pub fn code(self) -> &'static str {
        match self {
            AppendError::StaleEpoch { .. } => "stale-epoch",
            AppendError::SequenceGap { .. } => "sequence-gap",
            AppendError::StreamClosed => "stream-closed",
            AppendError::Conflict => "conflict",
            AppendError::Send { code, .. } => code.as_str(),
            AppendError::Aborted => "aborted",
            AppendError::Headers => "headers",
        }
    }
}

/// One request of the appender.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppendRequest {
    /// Unique per request (attempts included): its facts carry it.
    pub request: u64,
    /// Header fields to send: the producer's, and `Stream-Closed: true` for
    /// the close.
    pub headers: Vec<(String, String)>,
    /// The body (empty for the close).
    pub body: Vec<u8>,
}

/// A fact for the appender ([`Appender::handle`]); each is the
/// `handle_*` method of the same name, which documents its rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppendInput {
    /// [`Appender::handle_append`]: one value (its index is
    /// [`Appender::next_index`] just before).
    Append(Vec<u8>),
    /// [`Appender::handle_close_with`]: the final message, if any.
    Close(Option<Vec<u8>>),
    /// [`Appender::handle_response`] of a request.
    Response(u64, ResponseHead),
    /// [`Appender::handle_error`] of a request.
    Error(u64, TransportError),
    /// [`Appender::handle_headers_failed`] of a request.
    HeadersFailed(u64),
    /// [`Appender::handle_timer`].
    Timer,
    /// [`Appender::handle_online`].
    Online(bool),
    /// [`Appender::handle_abort`].
    Abort,
}

/// What the adapter does next ([`Appender::poll`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppendAction {
    /// POST this request to the stream URL.
    Issue(AppendRequest),
    /// Abort the live request `request`.
    Abort {
        /// Its id.
        request: u64,
    },
    /// Every value with index below `through` is in the stream (resolve
    /// their promises).
    Durable {
        /// One past the last durable index.
        through: u64,
    },
    /// The close was confirmed.
    Closed,
    /// Stopped for good: values from index `from` on are not appended.
    Failed {
        /// Why.
        error: AppendError,
        /// The first value that is not durable.
        from: u64,
    },
    /// Arm the single timer (`None`: no timer).
    Wait {
        /// When to call `handle_timer`.
        until: Option<MonoMs>,
    },
}

/// The batch in flight: its sender, its body, the values it holds.
#[derive(Clone, Debug)]
struct Batch {
    sender: Sender,
    body: Vec<u8>,
    close: bool,
    /// Its first value's index.
    from: u64,
    /// One past its last value's index.
    through: u64,
    /// The request id of the sender's live attempt.
    live: Option<(u64, u32)>,
}

/// The sans-IO appender. Every input takes [`Now`]; drain [`Appender::poll`]
/// until `Wait` after each. No input panics; one request in flight at most.
#[derive(Clone, Debug)]
pub struct Appender {
    config: AppenderConfig,
    epoch: u64,
    seq: u64,
    rng: Rng,
    queue: Vec<Vec<u8>>,
    /// Index of the first queued value.
    queued_from: u64,
    batch: Option<Batch>,
    next_request: u64,
    claims: u32,
    online: bool,
    /// `Running` from [`Appender::new`]; `Closing` after the app's close
    /// until the close is confirmed; `Done` once closed or failed.
    life: Lifecycle,
    clock: Monotone,
    actions: Vec<AppendAction>,
}

impl Appender {
    /// An appender with `config` and a PRNG seeded with `seed` (jitter).
    pub fn new(config: AppenderConfig, seed: u64) -> Appender {
        Appender {
            epoch: config.epoch.min(MAX_PRODUCER_NUMBER),
            config,
            seq: 0,
            rng: Rng::new(seed),
            queue: Vec::new(),
            queued_from: 0,
            batch: None,
            next_request: 1,
            claims: 0,
            online: true,
            life: Lifecycle::Running,
            clock: Monotone::default(),
            actions: Vec::new(),
        }
    }

    /// The current `(epoch, next seq)`.
    pub fn producer(&self) -> (u64, u64) {
        (self.epoch, self.seq)
    }

    /// Whether the appender failed or closed (appends are refused).
    pub fn is_done(&self) -> bool {
        self.life.is_done()
    }

    /// The index the next appended value takes; `None` when appends are
    /// refused (closing or done).
    pub fn next_index(&self) -> Option<u64> {
        (self.life == Lifecycle::Running).then(|| self.queued_from + self.queue.len() as u64)
    }

    /// The next action.
    #[must_use = "an action not carried out is lost"]
    pub fn poll(&mut self) -> AppendAction {
        if let Some(a) = crate::upstream::pop_front(&mut self.actions) {
            return a;
        }
        let until = match &mut self.batch {
            Some(b) if !self.life.is_done() => match b.sender.poll() {
                SendAction::Wait { until } => until,
                other => {
                    // Not reached: the sender's actions are drained after
                    // every input. Keep them in order anyway.
                    self.relay(other);
                    return self.poll();
                }
            },
            _ => None,
        };
        AppendAction::Wait {
            until: self.clock.wait_until(until),
        }
    }

    /// Feed one fact at `now` (its monotonic time kept from going back);
    /// the `handle_*` methods are shorthands for it and document each
    /// fact's rule. Ignored once done.
    pub fn handle(&mut self, now: Now, input: AppendInput) {
        if self.life.is_done() {
            return;
        }
        let now = self.clock.observe(now);
        match input {
            AppendInput::Append(v) => self.on_append(now, v),
            AppendInput::Close(last) => self.on_close(now, last),
            AppendInput::Response(r, head) => self.on_response(now, r, &head),
            AppendInput::Error(r, e) => self.on_error(now, r, e),
            AppendInput::HeadersFailed(r) => {
                if self.live_attempt(r).is_some() {
                    self.fail(AppendError::Headers);
                }
            }
            AppendInput::Timer => self.on_sender(now, |s| s.handle_timer(now)),
            AppendInput::Online(on) => {
                self.online = on;
                self.on_sender(now, |s| s.handle_online(now, on));
            }
            AppendInput::Abort => {
                if let Some((request, _)) = self.batch.as_ref().and_then(|b| b.live) {
                    self.actions.push(AppendAction::Abort { request });
                }
                self.fail(AppendError::Aborted);
            }
        }
    }

    /// Append one value (its JSON text for a JSON stream, else its bytes);
    /// returns its index, or `None` when the appender is closing or done.
    pub fn handle_append(&mut self, now: Now, value: Vec<u8>) -> Option<u64> {
        let index = self.next_index()?;
        self.handle(now, AppendInput::Append(value));
        Some(index)
    }

    /// Close the stream once every pending value is durable.
    pub fn handle_close(&mut self, now: Now) {
        self.handle(now, AppendInput::Close(None));
    }

    /// Close the stream once every pending value is durable, with `last`
    /// (its JSON text for a JSON stream, else its bytes) as the final
    /// message in the close's own request. Ignored unless appends are open.
    pub fn handle_close_with(&mut self, now: Now, last: Option<Vec<u8>>) {
        self.handle(now, AppendInput::Close(last));
    }

    /// The response head of request `request`.
    pub fn handle_response(&mut self, now: Now, request: u64, head: &ResponseHead) {
        self.handle(now, AppendInput::Response(request, head.clone()));
    }

    /// Request `request` failed without an answer.
    pub fn handle_error(&mut self, now: Now, request: u64, error: TransportError) {
        self.handle(now, AppendInput::Error(request, error));
    }

    /// The app's `headers` failed before request `request` went out: stop
    /// with [`AppendError::Headers`].
    pub fn handle_headers_failed(&mut self, now: Now, request: u64) {
        self.handle(now, AppendInput::HeadersFailed(request));
    }

    /// The timer fired.
    pub fn handle_timer(&mut self, now: Now) {
        self.handle(now, AppendInput::Timer);
    }

    /// `online` / `offline` (the batch's send waits while offline).
    pub fn handle_online(&mut self, now: Now, online: bool) {
        self.handle(now, AppendInput::Online(online));
    }

    /// The app aborted: the live request is aborted, nothing more is sent.
    pub fn handle_abort(&mut self, now: Now) {
        self.handle(now, AppendInput::Abort);
    }

    // ----- internals ---------------------------------------------------

    fn on_append(&mut self, now: Now, value: Vec<u8>) {
        if self.life == Lifecycle::Running {
            self.queue.push(value);
            self.next_batch(now);
        }
    }

    fn on_close(&mut self, now: Now, last: Option<Vec<u8>>) {
        if self.life == Lifecycle::Running {
            self.life = Lifecycle::Closing;
            if let Some(v) = last {
                self.queue.push(v);
            }
            self.next_batch(now);
        }
    }

    fn on_response(&mut self, now: Now, request: u64, head: &ResponseHead) {
        let Some(attempt) = self.live_attempt(request) else {
            return;
        };
        if let Some(b) = &mut self.batch {
            b.live = None;
        }
        if head.status == 403 || head.status == 409 {
            self.refused(now, head);
            return;
        }
        self.on_sender(now, |s| s.handle_response(now, attempt, head));
    }

    fn on_error(&mut self, now: Now, request: u64, error: TransportError) {
        let Some(attempt) = self.live_attempt(request) else {
            return;
        };
        if let Some(b) = &mut self.batch {
            b.live = None;
        }
        self.on_sender(now, |s| s.handle_error(now, attempt, error));
    }

    /// Tell the batch's sender (if a batch is out), then relay what it says.
    fn on_sender(&mut self, now: Now, tell: impl FnOnce(&mut Sender)) {
        if let Some(b) = &mut self.batch {
            tell(&mut b.sender);
        }
        self.drain_sender(now);
    }

    /// The sender attempt of `request` if it is the live one.
    fn live_attempt(&self, request: u64) -> Option<u32> {
        if self.life.is_done() {
            return None;
        }
        let (live, attempt) = self.batch.as_ref()?.live?;
        (live == request).then_some(attempt)
    }

    /// 403 and 409: typed errors, or an auto-claim (module doc, "Rules").
    fn refused(&mut self, now: Now, head: &ResponseHead) {
        let closed = header(head, "stream-closed").is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let error = match head.status {
            403 => {
                let current = number(head, "producer-epoch");
                if self.config.auto_claim && self.claims < MAX_AUTO_CLAIMS {
                    if let Some(c) = current.filter(|c| *c < MAX_PRODUCER_NUMBER) {
                        self.claims += 1;
                        self.epoch = c + 1;
                        self.seq = 0;
                        self.restart_batch(now);
                        return;
                    }
                }
                AppendError::StaleEpoch { current }
            }
            _ if closed => AppendError::StreamClosed,
            _ if header(head, "producer-expected-seq").is_some() => AppendError::SequenceGap {
                expected: number(head, "producer-expected-seq"),
                sent: self.seq,
            },
            _ => AppendError::Conflict,
        };
        self.fail(error);
    }

    /// Stop for good: `Failed` once, drop the batch and the queue.
    fn fail(&mut self, error: AppendError) {
        if !self.life.finish() {
            return;
        }
        let from = self.batch.as_ref().map_or(self.queued_from, |b| b.from);
        self.batch = None;
        self.queue.clear();
        self.actions.push(AppendAction::Failed { error, from });
    }

    /// Relay the batch's sender actions; on its settle, finish the batch.
    fn drain_sender(&mut self, now: Now) {
        for _ in 0..64 {
            let Some(b) = &mut self.batch else { return };
            match b.sender.poll() {
                SendAction::Wait { .. } => return,
                a => {
                    if self.relay(a) {
                        self.next_batch(now);
                    }
                }
            }
        }
    }

    /// One sender action; true when the batch is finished and the next may go.
    fn relay(&mut self, action: SendAction) -> bool {
        let Some(b) = &mut self.batch else {
            return false;
        };
        match action {
            SendAction::Issue(issue) => {
                let request = self.next_request;
                self.next_request += 1;
                b.live = Some((request, issue.attempt));
                let mut headers = producer_headers(&self.config.producer_id, self.epoch, self.seq);
                if b.close {
                    headers.push((String::from("Stream-Closed"), String::from("true")));
                }
                let body = b.body.clone();
                self.actions.push(AppendAction::Issue(AppendRequest {
                    request,
                    headers,
                    body,
                }));
                false
            }
            SendAction::Abort { .. } => {
                if let Some((request, _)) = b.live.take() {
                    self.actions.push(AppendAction::Abort { request });
                }
                false
            }
            SendAction::Settle(outcome) => self.settled(outcome),
            SendAction::Wait { .. } => false,
        }
    }

    /// The batch's send settled.
    fn settled(&mut self, outcome: Outcome) -> bool {
        let Some(b) = self.batch.take() else {
            return false;
        };
        match outcome {
            Outcome::Ok { .. } if b.close => {
                self.life.finish();
                if b.through > b.from {
                    self.actions
                        .push(AppendAction::Durable { through: b.through });
                }
                self.actions.push(AppendAction::Closed);
                false
            }
            Outcome::Ok { .. } => {
                self.claims = 0;
                self.seq = (self.seq + 1).min(MAX_PRODUCER_NUMBER);
                self.actions
                    .push(AppendAction::Durable { through: b.through });
                true
            }
            Outcome::Err { code, status, .. } => {
                self.batch = Some(b);
                self.fail(AppendError::Send { code, status });
                false
            }
            Outcome::Aborted | Outcome::HeadersFailed { .. } => {
                self.batch = Some(b);
                self.fail(AppendError::Aborted);
                false
            }
        }
    }

    /// Start the next batch (or the close) when nothing is in flight.
    fn next_batch(&mut self, now: Now) {
        if self.life.is_done() || self.batch.is_some() {
            return;
        }
        if self.queue.is_empty() {
            if self.life == Lifecycle::Closing {
                let at = self.queued_from;
                self.start(now, Vec::new(), true, (at, at));
            }
            return;
        }
        let from = self.queued_from;
        let (body, n) = self.take_batch();
        self.queued_from += n;
        let close = self.life == Lifecycle::Closing && self.queue.is_empty();
        self.start(now, body, close, (from, self.queued_from));
    }

    /// Take the next batch's values from the queue and build its body (the
    /// queue split once after them: a backlog of many values is not moved
    /// once per value).
    fn take_batch(&mut self) -> (Vec<u8>, u64) {
        let mut body = Vec::new();
        let mut n = 0;
        let max_items = self.config.max_batch_items.max(1);
        for v in &self.queue {
            let full = n >= max_items || body.len() + v.len() > self.config.max_batch_bytes;
            if n > 0 && full {
                break;
            }
            if self.config.json {
                body.push(if n == 0 { b'[' } else { b',' });
            }
            body.extend_from_slice(v);
            n += 1;
        }
        if self.config.json && n > 0 {
            body.push(b']');
        }
        let rest = self.queue.split_off(n);
        self.queue = rest;
        (body, n as u64)
    }

    /// A new sender for a batch, started at once.
    fn start(&mut self, now: Now, body: Vec<u8>, close: bool, (from, through): (u64, u64)) {
        let key = IdempotencyKey::new("batch").ok();
        let Some(key) = key else { return };
        let mut config = self.config.send.clone();
        if close {
            config.max_attempts = self.config.close_max_attempts;
        }
        let mut sender = Sender::new(config, &key, self.rng.next_u64());
        if !self.online {
            sender.handle_online(now, false);
        }
        sender.handle_start(now);
        self.batch = Some(Batch {
            sender,
            body,
            close,
            from,
            through,
            live: None,
        });
        self.drain_sender(now);
    }

    /// The same batch again (after an auto-claim): a fresh sender.
    fn restart_batch(&mut self, now: Now) {
        let Some(b) = self.batch.take() else { return };
        self.start(now, b.body, b.close, (b.from, b.through));
    }
}

impl Machine for Appender {
    type Input<'a> = AppendInput;
    type Action = AppendAction;
    const TIMER: Self::Input<'static> = AppendInput::Timer;

    fn handle(&mut self, now: Now, input: AppendInput) {
        Appender::handle(self, now, input);
    }

    fn poll(&mut self) -> AppendAction {
        Appender::poll(self)
    }

    fn split_wait(action: AppendAction) -> Result<AppendAction, Option<MonoMs>> {
        match action {
            AppendAction::Wait { until } => Err(until),
            a => Ok(a),
        }
    }
}

fn producer_headers(id: &str, epoch: u64, seq: u64) -> Vec<(String, String)> {
    alloc::vec![
        (String::from("Producer-Id"), String::from(id)),
        (String::from("Producer-Epoch"), decimal(epoch)),
        (String::from("Producer-Seq"), decimal(seq)),
    ]
}

/// `n` in decimal, without `format!` (no `core::fmt` in the bundle).
fn decimal(n: u64) -> String {
    let mut s = String::new();
    crate::wire::push_decimal(&mut s, n);
    s
}

fn header<'a>(head: &'a ResponseHead, name: &str) -> Option<&'a str> {
    head.headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim())
}

/// A header's non-negative integer (at most 2^53 − 1), else `None`.
fn number(head: &ResponseHead, name: &str) -> Option<u64> {
    let v = header(head, name)?;
    // At most 16 digits (no overflow): `parse_decimal` checks them.
    if v.len() > 16 {
        return None;
    }
    crate::wire::parse_decimal(v.as_bytes()).filter(|n| *n <= MAX_PRODUCER_NUMBER)
}
