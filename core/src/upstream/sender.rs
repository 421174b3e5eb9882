//! [`Sender`]: the sans-IO machine of ONE send (one request that takes
//! effect once). See the module doc of [`crate::upstream`] for the
//! drive loop and the rules.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::config::SendConfig;
use super::key::IdempotencyKey;
use crate::engine::RESUME_JITTER_MS;
use crate::engine::{server_wait_delay_ms, ErrorCode, ResponseHead, TransportError};
use crate::machine::{Lifecycle, Machine};
use crate::policy::backoff::{Backoff, BackoffConfig};
use crate::policy::headers::HeaderLookup;
use crate::policy::retry_after::{server_wait, ServerWait};
use crate::rng::Rng;
use crate::time::{MonoMs, Monotone, Now};

/// Start one attempt: the adapter sends the request (method, the caller's
/// URL, body and headers) with these header fields added, and reports its
/// response head or error with this `attempt` number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    /// 1 for the first attempt, then 2, 3, …
    pub attempt: u32,
    /// The request method ([`SendConfig::method`]).
    pub method: String,
    /// The idempotency header (name, value): the same on every attempt.
    pub headers: Vec<(String, String)>,
    /// Read at most this many bytes of the answer body
    /// ([`SendConfig::max_answer_bytes`]); a longer one is reported with
    /// [`Sender::handle_answer_too_large`], its body never read whole.
    pub max_answer_bytes: u64,
}

/// How a send ended. Emitted exactly once, in [`SendAction::Settle`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// A 2xx or 3xx answer: the server took the request (or replayed its
    /// first answer to this key).
    Ok {
        /// The HTTP status.
        status: u16,
        /// Attempts issued, this one included.
        attempts: u32,
    },
    /// The send failed: `http-status` / `auth` for a permanent answer,
    /// `gave-up` after `max_attempts`, `timeout` when the deadline passed.
    Err {
        /// The error code (the connection engine's vocabulary).
        code: ErrorCode,
        /// The status of the last answer, if the last failure was one.
        status: Option<u16>,
        /// Attempts issued.
        attempts: u32,
    },
    /// `handle_abort`: nothing more is sent (JS: reject with `AbortError`).
    Aborted,
    /// `handle_headers_failed`: the app's `headers` failed before attempt
    /// `attempts` went out (JS: reject with code `headers` and the cause).
    HeadersFailed {
        /// Attempts issued, the one that was never sent included.
        attempts: u32,
    },
}

/// A fact for one send ([`Sender::handle`]); each is the `handle_*`
/// method of the same name, which documents its rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendInput {
    /// [`Sender::handle_start`].
    Start,
    /// [`Sender::handle_queued`]: an `ordered` send waits for its turn.
    Queued,
    /// [`Sender::handle_response`] of an attempt.
    Response(u32, ResponseHead),
    /// [`Sender::handle_answer_too_large`] of an attempt.
    TooLarge(u32, ResponseHead),
    /// [`Sender::handle_error`] of an attempt.
    Error(u32, TransportError),
    /// [`Sender::handle_headers_failed`] of an attempt.
    HeadersFailed(u32),
    /// [`Sender::handle_timer`].
    Timer,
    /// [`Sender::handle_online`].
    Online(bool),
    /// [`Sender::handle_abort`].
    Abort,
}

/// What the adapter does next ([`Sender::poll`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendAction {
    /// Send an attempt.
    Issue(Issue),
    /// Abort the live attempt `attempt` (its per-attempt timeout or the
    /// deadline passed, or the send was aborted); its facts are ignored.
    Abort {
        /// The attempt to abort.
        attempt: u32,
    },
    /// Settle the promise. Always the last action but a `Wait { until: None }`.
    Settle(Outcome),
    /// Nothing more now: arm the single timer for `until` (clamp the delay to
    /// 2^31−1 ms) and call [`Sender::handle_timer`]; `None` = no timer.
    Wait {
        /// When to call `handle_timer` (monotonic ms).
        until: Option<MonoMs>,
    },
}

/// What a response status means for a send (module doc, "Rules").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StatusClass {
    /// 2xx, 3xx: settle `Ok`.
    Success,
    /// 408, 425, 429, 5xx (and a 409 with `Retry-After`): retry; the backoff step is multiplied by
    /// `step_multiplier` when the server sent no wait (2 for 429).
    Transient {
        /// Backoff step multiplier.
        step_multiplier: u32,
    },
    /// Every other status: settle `Err` at once with this code (`auth` for
    /// 401/403, `conflict` for 409, else `http-status`).
    Permanent(ErrorCode),
}

/// Classify a response status for a send. 409 is `conflict`, final: only
/// with `Retry-After` is it the draft's "a request is outstanding for this
/// key" (draft-ietf-httpapi-idempotency-key-header-07 §2.7, "no correction
/// is required"), which [`Sender::handle_response`] retries; 422 (the key
/// reused with another payload) and 400 need a corrected request, so they
/// are permanent.
/// Statuses `fetch` never shows (0, 1xx, above 599) are permanent
/// `http-status`: no loop on nonsense.
pub fn classify_status(status: u16) -> StatusClass {
    match status {
        200..=399 => StatusClass::Success,
        429 => StatusClass::Transient { step_multiplier: 2 },
        408 | 425 | 500..=599 => StatusClass::Transient { step_multiplier: 1 },
        401 | 403 => StatusClass::Permanent(ErrorCode::Auth),
        409 => StatusClass::Permanent(ErrorCode::Conflict),
        _ => StatusClass::Permanent(ErrorCode::HttpStatus),
    }
}

/// The response header a server adds to a replayed answer (Stripe's name,
/// which the reference server uses; the IETF draft names none). Lower case.
pub const REPLAYED_HEADER: &str = "idempotent-replayed";

/// Whether an answer is the server's stored answer to this key, replayed:
/// its [`REPLAYED_HEADER`] value is `true` (ASCII case-insensitive,
/// surrounding whitespace ignored). Absent or anything else: `false`. The
/// same flag grammar as `Stream-Closed: true`, read with it too.
pub fn is_replayed(value: Option<&str>) -> bool {
    value.is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// The live attempt.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    attempt: u32,
    /// When its per-attempt timeout fires (`None`: `timeout_ms` 0).
    timeout_at: Option<MonoMs>,
}

/// The sans-IO machine of one send. Every input takes [`Now`]; it never
/// reads a clock or an ambient RNG. After every input drain [`Sender::poll`]
/// until [`SendAction::Wait`]. No input sequence panics; at most one attempt
/// is in flight; [`SendAction::Settle`] comes exactly once and nothing
/// follows it.
#[derive(Clone, Debug)]
pub struct Sender {
    method: String,
    header: (String, String),
    timeout_ms: u64,
    deadline_ms: Option<u64>,
    max_retry_after_ms: u64,
    max_answer_bytes: u64,
    backoff: Backoff,
    rng: Rng,
    life: Lifecycle,
    online: bool,
    attempts: u32,
    in_flight: Option<InFlight>,
    /// When the next attempt is due (kept while offline).
    retry_at: Option<MonoMs>,
    deadline: Option<MonoMs>,
    /// The status of the last failed answer (`None` after a network error).
    last_status: Option<u16>,
    clock: Monotone,
    actions: Vec<SendAction>,
}

impl Sender {
    /// A send with `config`, the caller's `key` and a PRNG seeded with `seed`
    /// (jitter only). Online until told otherwise; nothing happens before
    /// [`Sender::handle_start`].
    pub fn new(config: SendConfig, key: &IdempotencyKey, seed: u64) -> Sender {
        let backoff = BackoffConfig {
            max_attempts: Some(config.max_attempts.max(1)),
            ..config.backoff
        };
        Sender {
            header: (config.idempotency_header, key.header_value()),
            method: config.method,
            timeout_ms: config.timeout_ms,
            deadline_ms: config.deadline_ms,
            max_retry_after_ms: config.max_retry_after_ms,
            max_answer_bytes: config.max_answer_bytes,
            backoff: Backoff::new(backoff),
            rng: Rng::new(seed),
            life: Lifecycle::New,
            online: true,
            attempts: 0,
            in_flight: None,
            retry_at: None,
            deadline: None,
            last_status: None,
            clock: Monotone::default(),
            actions: Vec::new(),
        }
    }

    /// Attempts issued so far.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Whether the send has settled (every later input is ignored).
    pub fn is_settled(&self) -> bool {
        self.life.is_done()
    }

    /// The next action. After `Settle`, only `Wait { until: None }`.
    #[must_use = "an action not carried out is lost"]
    pub fn poll(&mut self) -> SendAction {
        if let Some(action) = crate::upstream::pop_front(&mut self.actions) {
            return action;
        }
        SendAction::Wait {
            until: self.clock.wait_until(self.next_deadline()),
        }
    }

    /// Feed one fact at `now` (the `handle_*` method it names).
    pub fn handle(&mut self, now: Now, input: SendInput) {
        match input {
            SendInput::Start => self.handle_start(now),
            SendInput::Queued => self.handle_queued(now),
            SendInput::Response(n, head) => self.handle_response(now, n, &head),
            SendInput::TooLarge(n, head) => self.handle_answer_too_large(now, n, &head),
            SendInput::Error(n, e) => self.handle_error(now, n, e),
            SendInput::HeadersFailed(n) => self.handle_headers_failed(now, n),
            SendInput::Timer => self.handle_timer(now),
            SendInput::Online(on) => self.handle_online(now, on),
            SendInput::Abort => self.handle_abort(now),
        }
    }

    /// Start: the first attempt at once (when online), the deadline runs
    /// from now. A second start is ignored.
    pub fn handle_start(&mut self, now: Now) {
        let Some(now) = self.begin(now) else { return };
        if !self.life.start() {
            return;
        }
        self.arm_deadline(now);
        self.retry_at = Some(now.mono);
        self.advance(now);
    }

    /// The send was called but waits for its turn (an `ordered` send queued
    /// behind another of its URL): the deadline runs from now, the call, so
    /// a queue that does not move (a head retrying for ever) cannot hold the
    /// caller past it; [`Sender::handle_start`] comes when its turn does.
    /// Nothing is issued before it. Ignored after start.
    pub fn handle_queued(&mut self, now: Now) {
        let Some(now) = self.begin(now) else { return };
        if self.life == Lifecycle::New {
            self.arm_deadline(now);
            self.advance(now);
        }
    }

    /// The response head of `attempt` arrived (facts of any other attempt
    /// are ignored). 2xx/3xx settle `Ok`; transient statuses retry after
    /// the server's wait (`Retry-After`, rate-limit reset; clamped) or the
    /// backoff; others settle `Err` at once.
    pub fn handle_response(&mut self, now: Now, attempt: u32, head: &ResponseHead) {
        let Some(now) = self.begin(now) else { return };
        if self.take_live(attempt).is_none() {
            return;
        }
        let status = head.status;
        let class = match classify_status(status) {
            // A Durable Stream refuses appends once closed and says so
            // (PROTOCOL.md §5.2): a cause the app can act on, and one no
            // wait cures.
            StatusClass::Permanent(ErrorCode::Conflict)
                if is_replayed(head.header("stream-closed")) =>
            {
                StatusClass::Permanent(ErrorCode::StreamClosed)
            }
            // The key's first request is still in flight only when the
            // server says when to come back (draft §2.7 asks for 409 then).
            StatusClass::Permanent(ErrorCode::Conflict) if head.header("retry-after").is_some() => {
                StatusClass::Transient { step_multiplier: 1 }
            }
            c => c,
        };
        match class {
            StatusClass::Success => self.settle(Outcome::Ok {
                status,
                attempts: self.attempts,
            }),
            StatusClass::Permanent(code) => self.settle_err(code, Some(status)),
            StatusClass::Transient { step_multiplier } => {
                self.last_status = Some(status);
                let wait = server_wait(head, now.wall, self.max_retry_after_ms);
                self.fail(now, wait, step_multiplier);
            }
        }
        self.advance(now);
    }

    /// The answer of `attempt` has a body over
    /// [`SendConfig::max_answer_bytes`] (the adapter stopped reading). A
    /// success settles `Err` `too-large` with its status: its answer cannot
    /// be handed over, and a retry would get the server's replay of the same
    /// answer (the request took effect). Any other status is decided as by
    /// [`Sender::handle_response`]: the body plays no part in it.
    pub fn handle_answer_too_large(&mut self, now: Now, attempt: u32, head: &ResponseHead) {
        if classify_status(head.status) != StatusClass::Success {
            return self.handle_response(now, attempt, head);
        }
        let Some(now) = self.begin(now) else { return };
        if self.take_live(attempt).is_some() {
            self.settle_err(ErrorCode::TooLarge, Some(head.status));
        }
        self.advance(now);
    }

    /// `attempt` failed without a response head (network error, CORS, a
    /// timeout the adapter observed, an abort the machine did not ask for):
    /// a transient failure, retried after the backoff.
    pub fn handle_error(&mut self, now: Now, attempt: u32, _error: TransportError) {
        let Some(now) = self.begin(now) else { return };
        if self.take_live(attempt).is_none() {
            return;
        }
        self.last_status = None;
        self.fail(now, None, 1);
        self.advance(now);
    }

    /// The timer armed from the last `Wait` fired (early or late calls are
    /// fine: only what is due happens).
    pub fn handle_timer(&mut self, now: Now) {
        let Some(now) = self.begin(now) else { return };
        self.advance(now);
    }

    /// `offline` / `online`. Offline: no new attempt (a live one is left to
    /// finish: its answer may still arrive). Online again: one prompt
    /// attempt `U[0, 250)` ms later, or when a running wait ends if later
    /// (a server's `Retry-After` still holds).
    pub fn handle_online(&mut self, now: Now, online: bool) {
        let Some(now) = self.begin(now) else { return };
        let was_offline = !self.online;
        self.online = online;
        if online && was_offline && self.in_flight.is_none() {
            if let Some(at) = self.retry_at {
                let prompt = now.mono.plus(self.rng.below(RESUME_JITTER_MS));
                self.retry_at = Some(at.max(prompt));
            }
        }
        self.advance(now);
    }

    /// The app's `headers` failed before `attempt` was sent (its function
    /// threw or its promise rejected, or a name or value is invalid):
    /// settle `HeadersFailed` at once. Nothing reached the server, and a
    /// retry would run the same failing code; the app sees its own error.
    pub fn handle_headers_failed(&mut self, now: Now, attempt: u32) {
        if self.begin(now).is_none() || self.take_live(attempt).is_none() {
            return;
        }
        let attempts = self.attempts;
        self.settle(Outcome::HeadersFailed { attempts });
    }

    /// The caller aborted (`signal`): abort the live attempt, settle
    /// `Aborted`. Also before start.
    pub fn handle_abort(&mut self, now: Now) {
        if self.begin(now).is_none() {
            return;
        }
        if let Some(live) = self.in_flight.take() {
            self.actions.push(SendAction::Abort {
                attempt: live.attempt,
            });
        }
        self.settle(Outcome::Aborted);
    }

    // ----- internals ---------------------------------------------------

    /// The deadline from `now`, unless [`Sender::handle_queued`] armed it.
    fn arm_deadline(&mut self, now: Now) {
        if self.deadline.is_none() {
            self.deadline = self.deadline_ms.map(|ms| now.mono.plus(ms));
        }
    }

    /// Common entry: ignore everything after settling; monotonic time never
    /// goes backwards.
    fn begin(&mut self, now: Now) -> Option<Now> {
        if self.life.is_done() {
            return None;
        }
        Some(self.clock.observe(now))
    }

    /// The live attempt if it is `attempt`, detached.
    fn take_live(&mut self, attempt: u32) -> Option<InFlight> {
        if self.in_flight.is_some_and(|f| f.attempt == attempt) {
            return self.in_flight.take();
        }
        None
    }

    /// A transient failure: schedule the next attempt after the server's
    /// wait (as asked + the herd spread) or the backoff, or settle
    /// `gave-up` (max attempts) / `timeout` (it would start after the
    /// deadline: settling now spares the caller a wait for nothing).
    fn fail(&mut self, now: Now, wait: Option<ServerWait>, step_multiplier: u32) {
        let delay = match wait {
            Some(w) => server_wait_delay_ms(&mut self.backoff, &mut self.rng, w.wait_ms),
            None => self
                .backoff
                .next_delay_scaled_ms(&mut self.rng, step_multiplier),
        };
        let Ok(delay) = delay else {
            self.settle_err(ErrorCode::GaveUp, self.last_status);
            return;
        };
        let at = now.mono.plus(delay);
        if self.deadline.is_some_and(|d| at >= d) {
            self.settle_err(ErrorCode::Timeout, self.last_status);
            return;
        }
        self.retry_at = Some(at);
    }

    /// Everything due at `now`: the deadline, the live attempt's timeout,
    /// the next attempt.
    fn advance(&mut self, now: Now) {
        if self.life.is_done() {
            return;
        }
        // Checked before start too: a queued send's deadline runs.
        if self.deadline.is_some_and(|d| d <= now.mono) {
            self.abort_live();
            self.settle_err(ErrorCode::Timeout, self.last_status);
            return;
        }
        if self.life == Lifecycle::New {
            return;
        }
        let timed_out = self
            .in_flight
            .is_some_and(|f| f.timeout_at.is_some_and(|t| t <= now.mono));
        if timed_out {
            self.abort_live();
            self.last_status = None;
            self.fail(now, None, 1);
        }
        let due = self.retry_at.is_some_and(|t| t <= now.mono);
        if !self.life.is_done() && self.online && self.in_flight.is_none() && due {
            self.issue(now);
        }
    }

    /// Emit `Abort` for the live attempt, if any.
    fn abort_live(&mut self) {
        if let Some(live) = self.in_flight.take() {
            self.actions.push(SendAction::Abort {
                attempt: live.attempt,
            });
        }
    }

    /// Start the next attempt.
    fn issue(&mut self, now: Now) {
        self.attempts = self.attempts.saturating_add(1);
        self.retry_at = None;
        self.in_flight = Some(InFlight {
            attempt: self.attempts,
            timeout_at: (self.timeout_ms > 0).then(|| now.mono.plus(self.timeout_ms)),
        });
        self.actions.push(SendAction::Issue(Issue {
            attempt: self.attempts,
            method: self.method.clone(),
            headers: vec![self.header.clone()],
            max_answer_bytes: self.max_answer_bytes,
        }));
    }

    fn settle_err(&mut self, code: ErrorCode, status: Option<u16>) {
        self.settle(Outcome::Err {
            code,
            status,
            attempts: self.attempts,
        });
    }

    /// Settle once: drop every pending timer and attempt.
    fn settle(&mut self, outcome: Outcome) {
        if !self.life.finish() {
            return;
        }
        self.in_flight = None;
        self.retry_at = None;
        self.deadline = None;
        self.actions.push(SendAction::Settle(outcome));
    }

    /// The earliest time something is due.
    fn next_deadline(&self) -> Option<MonoMs> {
        match self.life {
            Lifecycle::Done => return None,
            Lifecycle::New => return self.deadline,
            _ => {}
        }
        let retry = self
            .retry_at
            .filter(|_| self.online && self.in_flight.is_none());
        let timeout = self.in_flight.and_then(|f| f.timeout_at);
        crate::time::earlier(crate::time::earlier(self.deadline, retry), timeout)
    }
}

impl Machine for Sender {
    type Input<'a> = SendInput;
    type Action = SendAction;
    const TIMER: Self::Input<'static> = SendInput::Timer;

    fn handle(&mut self, now: Now, input: SendInput) {
        Sender::handle(self, now, input);
    }

    fn poll(&mut self) -> SendAction {
        Sender::poll(self)
    }

    fn split_wait(action: SendAction) -> Result<SendAction, Option<MonoMs>> {
        match action {
            SendAction::Wait { until } => Err(until),
            a => Ok(a),
        }
    }
}
