//! [`SendConfig`]: the options of one send.

use alloc::string::String;

use crate::policy::backoff::BackoffConfig;
use crate::policy::retry_after::DEFAULT_MAX_RETRY_AFTER_MS;
use crate::sse::SseLimits;

/// Default request method (JS `method`).
pub const DEFAULT_METHOD: &str = "POST";
/// Default idempotency header name (JS `idempotencyHeader`; some servers use
/// `X-Idempotency-Key`).
pub const DEFAULT_IDEMPOTENCY_HEADER: &str = "Idempotency-Key";
/// Default attempts per send (JS `maxAttempts`): the first plus 4 retries.
/// Finite, so a send settles even without a deadline while online.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 5;
/// Default per-attempt timeout, ms (JS `timeoutMs`): below a typical 60 s
/// proxy read timeout, like the long-poll numbers of ARCHITECTURE.md.
pub const DEFAULT_SEND_TIMEOUT_MS: u64 = 30_000;
/// Default cap on a send's answer body, bytes: 1 MiB, the cap a
/// subscription puts on one message (`maxMessageBytes`,
/// [`SseLimits::DEFAULT_BYTES`]). The adapter reads no more than this
/// (it is carried by every [`Issue`](super::Issue)); a longer answer is
/// [`Sender::handle_answer_too_large`](super::Sender::handle_answer_too_large).
pub const DEFAULT_MAX_ANSWER_BYTES: u64 = SseLimits::DEFAULT_BYTES as u64;

/// The options of one send. Every duration is in milliseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendConfig {
    /// The request method, rendered literally by the adapter. Default `POST`.
    pub method: String,
    /// The name of the idempotency header. Default `Idempotency-Key`.
    pub idempotency_header: String,
    /// Attempts before settling `gave-up`, counting the first. Default 5;
    /// 0 behaves like 1. Replaces `backoff.max_attempts`.
    pub max_attempts: u32,
    /// Per-attempt timeout, ms: an attempt without a response head this long
    /// is aborted and counts as a `timeout` failure. Default 30 000; 0 = none.
    pub timeout_ms: u64,
    /// Overall deadline from `handle_start`, ms: when it passes the send
    /// settles `timeout` (aborting a live attempt). Default `None` (no
    /// deadline: while offline a send then waits for `online` indefinitely).
    pub deadline_ms: Option<u64>,
    /// Retry delays: the connection engine's backoff (full jitter, base
    /// 500 ms, cap 60 s, floor 1 s by default). Its `max_attempts` is ignored.
    pub backoff: BackoffConfig,
    /// Cap on any server-requested wait (`Retry-After`, rate-limit reset), ms.
    /// Default 300 000, as for subscriptions (JS `maxRetryAfterMs`).
    pub max_retry_after_ms: u64,
    /// Cap on the answer body read, bytes. Default
    /// [`DEFAULT_MAX_ANSWER_BYTES`] (1 MiB); no JS option.
    pub max_answer_bytes: u64,
}

impl Default for SendConfig {
    fn default() -> Self {
        SendConfig {
            method: String::from(DEFAULT_METHOD),
            idempotency_header: String::from(DEFAULT_IDEMPOTENCY_HEADER),
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            timeout_ms: DEFAULT_SEND_TIMEOUT_MS,
            deadline_ms: None,
            backoff: BackoffConfig::default(),
            max_retry_after_ms: DEFAULT_MAX_RETRY_AFTER_MS,
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
        }
    }
}

/// Whether `name` is a forbidden request-header name (Fetch standard,
/// "forbidden request-header"): a browser drops such a header from a
/// `fetch` without a word, so an idempotency key sent in one would never
/// reach the server (which then answers 400, or applies every attempt).
/// ASCII case-insensitive; `Sec-` and `Proxy-` prefixes included.
pub fn is_forbidden_request_header(name: &str) -> bool {
    const NAMES: [&str; 21] = [
        "accept-charset",
        "accept-encoding",
        "access-control-request-headers",
        "access-control-request-method",
        "connection",
        "content-length",
        "cookie",
        "cookie2",
        "date",
        "dnt",
        "expect",
        "host",
        "keep-alive",
        "origin",
        "referer",
        "set-cookie",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "via",
    ];
    let has_prefix = |p: &str| {
        name.get(..p.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(p))
    };
    if has_prefix("sec-") || has_prefix("proxy-") {
        return true;
    }
    for n in NAMES {
        if n.eq_ignore_ascii_case(name) {
            return true;
        }
    }
    false
}
