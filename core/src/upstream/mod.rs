//! Upstream: requests the client sends to the server (`send`).
//! [`Reporter`] (`report`) sends a report every interval, each one
//! a [`Sender`] with its own key (see the `reporter` module doc).
//!
//! [`Sender`] is the sans-IO machine of ONE send: one request that takes
//! effect once, because every attempt carries the same idempotency key
//! (draft-ietf-httpapi-idempotency-key-header-07). Same contract as the
//! connection [`Engine`](crate::engine::Engine): every input takes a
//! [`Now`](crate::time::Now) (both clocks), the machine never reads a clock or
//! an ambient RNG (its [`Rng`](crate::rng::Rng) is seeded), and after every
//! input the adapter drains [`Sender::poll`] until [`SendAction::Wait`].
//!
//! ## The drive loop
//! `handle_start` → `Issue { attempt, headers }`: the adapter `fetch`es the
//! caller's URL and body with those headers added and reports
//! `handle_response(attempt, head)` or `handle_error(attempt, _)`; it reports
//! `online`/`offline` and the caller's abort; it arms one timer from `Wait`.
//! `handle_queued` (before `handle_start`, for an `ordered` send waiting for
//! its turn) starts the deadline at the call.
//! `Abort { attempt }`: abort that fetch. `Settle(outcome)`: resolve or
//! reject the promise (abort any fetch still running); nothing follows.
//!
//! ## Rules
//! - Transient: a network error, a timeout (per attempt, `timeout_ms`), 5xx,
//!   408, 425, 429, and 409 with `Retry-After` (the first request with this
//!   key is still in flight, draft §2.7) → retry after the connection engine's backoff
//!   (full jitter, floor 1 s; 429 without a hint doubles the step), or after
//!   the server's wait (`Retry-After` delta-seconds or HTTP-date against the
//!   response's `Date`, else `RateLimit-Reset`, clamped to
//!   `max_retry_after_ms`) as asked + the herd spread `U[0, min(w/10, 1 s)]`
//!   ([`server_wait_delay_ms`](crate::engine::server_wait_delay_ms)). Any
//!   transient status may carry the wait (the engine reads it on 429/503).
//! - Permanent: every other 4xx (400; 401/403 → `auth`; 409 with
//!   `Stream-Closed: true` → `stream-closed`, a closed Durable Stream, even
//!   with `Retry-After`; other 409 without `Retry-After` → `conflict`; 422
//!   "key reused with another payload", draft
//!   §2.7) → settle `Err` at once.
//! - 2xx/3xx → settle `Ok`; with an answer body over
//!   [`SendConfig::max_answer_bytes`] (1 MiB; the adapter reads no more)
//!   → settle `too-large` with its status, not retried (the server replays
//!   the same answer; the request did take effect).
//! - Offline: no attempt until online, then one prompt attempt (`U[0, 250)`
//!   ms, as the engine resumes), never earlier than a server's wait.
//! - Abort → settle `Aborted`, no `Issue` after it.
//! - The app's `headers` failed for an attempt (its function threw, its
//!   promise rejected, an invalid header): settle `HeadersFailed` at once;
//!   nothing was sent, and a retry would call the same broken code.
//! - `max_attempts` failed attempts → `gave-up`; the deadline passing, or a
//!   retry that could only start after it → `timeout`.
//! - Never two attempts in flight; `Settle` exactly once; every input after
//!   it is ignored; facts about other attempts are ignored.
//!
//! [`Ordered`] keeps `ordered: true` sends one at a time per URL;
//! [`keepalive_handoff`] decides which pending sends survive `pagehide`.
//! [`Appender`] appends to a Durable Streams stream as an idempotent
//! producer, one [`Sender`] per batch; [`AckBatcher`] batches a
//! subscription's delivery ACKs, each batch one send. [`StreamOp`] (feature
//! `stream-handles`) is a Durable Streams stream's create, `HEAD`, delete
//! and close, each one send.

mod ack;
mod appender;
mod config;
mod keepalive;
mod key;
mod ordered;
mod reporter;
mod sender;
#[cfg(feature = "stream-handles")]
mod stream;

pub use ack::{
    ack_body, AckAction, AckBatcher, AckInput, DEFAULT_ACK_BATCH_MS, DEFAULT_ACK_MAX_BATCH,
};
pub use appender::{
    is_json_stream, is_valid_producer_id, producer_epoch, AppendAction, AppendError, AppendInput,
    AppendRequest, Appender, AppenderConfig, DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_BATCH_ITEMS,
    MAX_AUTO_CLAIMS, MAX_PRODUCER_ID_BYTES, MAX_PRODUCER_NUMBER,
};
pub use config::{
    is_forbidden_request_header, SendConfig, DEFAULT_IDEMPOTENCY_HEADER, DEFAULT_MAX_ANSWER_BYTES,
    DEFAULT_MAX_ATTEMPTS, DEFAULT_METHOD, DEFAULT_SEND_TIMEOUT_MS,
};
pub use keepalive::{keepalive_handoff, PendingSend, KEEPALIVE_BUDGET_BYTES};
pub use key::{IdempotencyKey, KeyError, MAX_KEY_LEN};
pub use ordered::{ordered_key, Ordered};
pub use reporter::{
    HiddenPolicy, ReportAction, ReportConfig, ReportInput, ReportOutcome, ReportStats, Reporter,
    DEFAULT_MAX_QUEUED, DEFAULT_REPORT_INTERVAL_MS, TICK_JITTER_PERMILLE,
};
pub use sender::{
    classify_status, is_replayed, Issue, Outcome, SendAction, SendInput, Sender, StatusClass,
    REPLAYED_HEADER,
};
#[cfg(feature = "stream-handles")]
pub use stream::{CreateOptions, StreamOp, DEFAULT_STREAM_CONTENT_TYPE};

/// The first of `queue`, taken out: the upstream machines keep their FIFOs
/// (actions, queued reports and values) in a `Vec`, a few items long, so the
/// bundle has no ring-buffer code for them (a `VecDeque`'s `push_back` alone
/// was 240 bytes of wasm per item type).
pub(crate) fn pop_front<T>(queue: &mut alloc::vec::Vec<T>) -> Option<T> {
    (!queue.is_empty()).then(|| queue.remove(0))
}
