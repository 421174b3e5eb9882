//! The engine: one state machine per connection, fed facts ([`Engine::handle`]
//! with an [`Input`], or its `handle_*` shorthands) and drained for actions
//! ([`Engine::poll`]).
//!
//! Every input takes a [`Now`] (both clocks) first; the engine never reads a
//! clock or an ambient random source (its [`Rng`] is seeded by
//! [`Engine::new`]). Facts about a request carry the [`AttemptId`] of its
//! [`Action::Open`]; facts about any other attempt are ignored. After every
//! input, drain [`Engine::poll`] until it returns [`Action::Wait`], arm the
//! single timer for its `until`, and call [`Engine::handle_timer`] when it
//! fires. No input sequence panics.
//!
//! The files each hold one idea:
//! - `config`: [`Config`] and the option types;
//! - `input`: the facts ([`ResponseHead`], [`IncomingMessage`], …);
//! - `action`: the outputs ([`Action`], [`State`], [`Reason`], [`ErrorCode`]);
//! - `entry`: the one input entry ([`Input`], [`Engine::handle`]);
//! - `state`: the phase (idle, scheduled, live attempt, closed), the page
//!   lifecycle;
//! - `selector`: transport selection, fallback and failback;
//! - `watchdog`: the deadlines of the live attempt;
//! - `request`: rendering the URL and request headers;
//! - `decode`: status verdicts, body kinds, the event filter, deliveries;
//! - `retry`: reconnect delays, the breaker, fatal stops;
//! - `cursor_reset`: a 409 to a resume (the cursor is no longer valid);
//! - `profile`: the protocol profile's hooks, the one place that asks which
//!   [`Protocol`] a connection speaks;
//! - `durable`: the Durable Streams profile (offsets, closure, 410);
//! - `durable_sse`: its SSE mode (data and control events, base64);
//! - `lifecycle`: hidden, offline, frozen, wake-up detection;
//! - `network`: the poll interval's network tier (measured, reported);
//! - `quiet`: a silent native stream with nowhere to go;
//! - `reconnect`: the app's `reconnect()`;
//! - `replay`: a server that ignores the cursor in the query;
//! - `stats`: the counters.

mod action;
mod app_headers;
mod body_read;
mod carrier;
mod config;
mod cursor_reset;
mod decode;
mod durable;
#[cfg(feature = "durable-streams")]
mod durable_sse;
mod entry;
mod gap;
mod handover;
mod head;
mod input;
mod json_body;
mod json_text;
mod lifecycle;
mod native_probe;
mod network;
mod news_probe;
mod profile;
mod quiet;
mod reconnect;
mod replay;
mod request;
mod retry;
mod selector;
#[cfg(feature = "post-streams")]
pub mod start;
mod state;
mod stats;
#[cfg(feature = "testing")]
mod testing_hooks;
mod watchdog;

use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::mem;

pub use action::{Action, ErrorCode, Message, Note, OpenRequest, Reason, ResetReason, State};
pub use body_read::BodyRead;
#[cfg(feature = "durable-streams")]
pub use config::Live;
pub use config::{
    Capabilities, Config, CrossOrigin, FallbackConfig, LongPollConfig, Protocol, TransportKind,
    TransportUrls, WatchdogConfig, DEFAULT_LAST_EVENT_ID_PARAM,
};
pub use cursor_reset::CURSOR_INVALID_STATUS;
pub use decode::{is_usable_event_id, MediaType, MAX_FILTERED_TOLD, RESERVED_EVENTS, RESET_EVENT};
pub(crate) use durable::advances as offset_advances;
pub use durable::{
    body_kind as durable_body_kind, is_valid_offset, DurableBody, MAX_OFFSET_BYTES, NOW_OFFSET,
    START_OFFSET,
};
#[cfg(feature = "durable-streams")]
pub use durable_sse::{base64, SSE_DATA_ENCODING_HEADER};
pub use entry::Input;
pub use input::{
    AttemptId, EffectiveType, IncomingMessage, NetworkHint, ResponseHead, TransportError,
};
pub use json_body::{decode_json_body, JsonView};
pub use json_text::{decode_json_text, json_body};
pub use lifecycle::{CLOCK_DISAGREEMENT_MS, LATE_TIMER_MS, RESUME_JITTER_MS};
pub use news_probe::{NEWS_PROBE_AFTER_MS, NEWS_PROBE_GRACE_MS};
pub use reconnect::ReconnectAnswer;
pub use replay::REPLAY_RUN;
pub use request::{ACCEPT_EVENT_STREAM, ACCEPT_LONG_POLL, REVALIDATE};
pub use retry::{
    herd_spread_max_ms, long_poll_spread_max_ms, server_wait_delay_ms, LONG_POLL_JITTER_MS,
    LONG_POLL_SPREAD_DIVISOR, RETRY_AFTER_SPREAD_DIVISOR, RETRY_AFTER_SPREAD_MAX_MS,
};
pub use stats::Stats;

use crate::fifo::Fifo;
use crate::policy::backoff::Backoff;
use crate::policy::breaker::Breaker;
use crate::policy::dedupe::Dedupe;
use crate::policy::interval::PollInterval;
use crate::policy::network::NetworkView;
use crate::policy::validators::{Outcome, Validators};
use crate::rng::Rng;
use crate::sse::{SseItem, SseParser};
use crate::time::{earlier, MonoMs, Monotone, Now, WallMs};
use retry::Failure;
use selector::{Change, Selector};
use state::{Attempt, AuthRetry, BodyKind, Lifecycle, PerTransport, Phase, Scheduled};
use watchdog::Expiry;

/// Rounds of due-deadline processing per input (each round starts, ends or
/// pauses something; more than a few means nothing is left to do).
const MAX_ROUNDS: usize = 8;

/// The sans-IO engine of one connection (one URL + options).
///
/// ```
/// use tidings_core::engine::{Action, Capabilities, Config, Engine, ResponseHead};
/// use tidings_core::time::Now;
///
/// let mut engine = Engine::new(Config::new("/updates"), 42);
/// engine.handle_start(Now::at(0, 0), Capabilities::ALL);
/// let mut opened = None;
/// loop {
///     match engine.poll() {
///         Action::Open(req) => opened = Some(req),
///         Action::Wait { .. } => break,
///         _ => {}
///     }
/// }
/// let req = opened.ok_or("no open")?;
/// assert_eq!(req.transport.as_str(), "eventsource");
/// engine.handle_opened(Now::at(40, 40), req.id);
/// engine.handle_native_event(Now::at(50, 50), req.id, "message", "hi", "1");
/// let mut delivered = Vec::new();
/// loop {
///     match engine.poll() {
///         Action::Deliver(m) => delivered.push(m.data),
///         Action::Wait { .. } => break,
///         _ => {}
///     }
/// }
/// assert_eq!(delivered, ["hi"]);
/// assert_eq!(engine.last_event_id(), "1");
/// # Ok::<(), &str>(())
/// ```
#[derive(Debug)]
pub struct Engine {
    /// Sanitized; shared with the session, which starts the next engine of
    /// the connection from it (no copy).
    config: Rc<Config>,
    rng: Rng,
    started: bool,
    selector: Selector,
    backoff: Backoff,
    breaker: Breaker,
    interval: PollInterval,
    validators: Validators,
    dedupe: Dedupe,
    /// The SSE parser, whose last event ID is the engine's one cursor (the
    /// last event id, kept across bodies, reconnects and transport
    /// switches): every transport's ids are written there, so its events
    /// and id-only blocks move the one cursor there is.
    parser: SseParser,
    /// Idle, scheduled, live or closed (see `state::Phase`).
    phase: Phase,
    next_id: u64,
    life: Lifecycle,
    /// The last [`Action::State`] handed out (`connecting` and no reason
    /// before the first): only to hand out a change once.
    told: (State, Option<Reason>),
    actions: Fifo<Action>,
    stats: Stats,
    /// The monotone-clock guard.
    clock: Monotone,
    /// The wall time of the previous input (`None` before the first): with
    /// the guard's latest monotonic time, it is compared with each new
    /// input to notice sleep (`lifecycle::clocks_disagree`).
    last_wall: Option<WallMs>,
    /// The `until` of the last `Wait` handed out (to notice late timers).
    armed: Option<MonoMs>,
    /// Consecutive long-poll client timeouts without a response head.
    long_poll_timeouts: u32,
    /// The server has answered this connection at least once (a usable head,
    /// an `open`, a no-news answer): a later `410 Gone` on a request transport
    /// ends a subscription, not the endpoint (see `decode::gone_is_transient`).
    server_answered: bool,
    /// Where the one 401 refresh retry stands since the last success.
    auth_retry: AuthRetry,
    /// The status of the last response head, until the next `Open` names it.
    last_status: Option<u16>,
    /// A stream delivered messages but left no cursor: raise
    /// `Reset { Unresumable }` before the next attempt.
    unresumable: bool,
    /// A 409 reset the cursor and no request with a cursor was accepted
    /// since: another 409 is fatal (see `cursor_reset`).
    cursor_reset_pending: bool,
    /// Scratch buffer for parser output.
    items: Vec<SseItem>,
    /// A kept silent native stream was noted in the debug log (`quiet`).
    silence_noted: bool,
    /// Ignored resumes (`replay`).
    resume: replay::ResumeCheck,
    /// The Durable Streams profile's state (`durable`).
    durable: durable::Durable,
    /// The browser's network report and the measured request times (`network`).
    network: NetworkView,
    /// What the app's `reconnect()` must respect (`reconnect`).
    user: reconnect::UserReconnect,
    /// The connection moved to a transport that sends `Last-Event-ID` for a
    /// resume: its requests carry the cursor in the query too (`carrier`).
    query_too: bool,
    /// Integer ids after a resume (`gap`).
    gap: gap::GapWatch,
    /// Event types left out by `events` that were reported once
    /// (`decode::report_unwanted`).
    filtered_told: Vec<String>,
    /// The news probe of the live stream, while it is out (`news_probe`).
    probe: Option<news_probe::Probe>,
}

impl Engine {
    /// An engine for `config` (sanitized, see [`Config::sanitized`]) whose
    /// jitter comes from a PRNG seeded with `seed` (the adapter draws it from
    /// `crypto.getRandomValues`, or takes the `seed` option). Nothing happens
    /// before [`Engine::handle_start`].
    pub fn new(config: Config, seed: u64) -> Engine {
        Engine::with_config(Rc::new(config.sanitized()), seed)
    }

    /// An engine of a config another engine sanitized ([`Engine::shared_config`]).
    pub(crate) fn with_config(config: Rc<Config>, seed: u64) -> Engine {
        let mut parser = SseParser::with_limits(config.sse_limits);
        parser.set_last_event_id(&config.last_event_id);
        let interval = PollInterval::new(config.interval);
        let stats = Stats {
            current_interval_ms: interval.current_ms(),
            ..Stats::default()
        };
        Engine {
            rng: Rng::new(seed),
            started: false,
            selector: Selector::placeholder(),
            backoff: Backoff::new(config.backoff),
            breaker: Breaker::new(config.breaker),
            interval,
            validators: Validators::new(),
            dedupe: Dedupe::new(config.dedupe_capacity),
            parser,
            phase: Phase::Idle,
            next_id: 1,
            life: Lifecycle::default(),
            told: (State::Connecting, None),
            actions: Fifo::new(),
            stats,
            clock: Monotone::default(),
            last_wall: None,
            armed: None,
            long_poll_timeouts: 0,
            server_answered: false,
            auth_retry: AuthRetry::Unused,
            last_status: None,
            unresumable: false,
            cursor_reset_pending: false,
            items: Vec::new(),
            silence_noted: false,
            resume: replay::ResumeCheck::default(),
            durable: durable::Durable::default(),
            network: NetworkView::default(),
            user: reconnect::UserReconnect::default(),
            query_too: false,
            gap: gap::GapWatch::default(),
            filtered_told: Vec::new(),
            probe: None,
            config,
        }
    }

    // ----- getters -------------------------------------------------------

    /// The current state (`connecting` before start).
    pub fn state(&self) -> State {
        self.phase.state(self.started, self.life.paused())
    }

    /// The transport in use (or about to be); `None` before start and for
    /// good when the engine stopped before choosing one (an invalid URL, no
    /// usable transport): the one source of the JS `transport` (`""` then).
    pub fn transport(&self) -> Option<TransportKind> {
        self.selector.chosen()
    }

    /// The cursor: the last event id, `config.last_event_id` initially.
    pub fn last_event_id(&self) -> &str {
        self.cursor()
    }

    /// The cursor (kept by the parser, see `Engine::parser`).
    fn cursor(&self) -> &str {
        self.parser.last_event_id()
    }

    /// Move the cursor to `id`.
    fn set_cursor(&mut self, id: &str) {
        self.parser.set_last_event_id(id);
    }

    /// The counters.
    pub fn stats(&self) -> Stats {
        Stats {
            duplicates_dropped: self
                .dedupe
                .duplicates_dropped()
                .saturating_add(self.durable.repeats),
            current_interval_ms: self.interval.current_ms(),
            ..self.stats
        }
    }

    /// The remembered downgrade, to persist in `sessionStorage` and seed
    /// [`Config::downgrade`] with on the next page: the transport downgraded to
    /// and the wall time until which the preferred transports are skipped.
    pub fn downgrade(&self) -> Option<(TransportKind, WallMs)> {
        self.selector.downgrade()
    }

    /// The live attempt (the one whose facts are accepted), if any.
    pub fn live_attempt(&self) -> Option<AttemptId> {
        self.phase.attempt().map(|a| a.id)
    }

    /// The sanitized configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Queue `note` for the debug log (`Action::Note`); without the
    /// crate's `debug` feature nobody reads one, so none is made.
    fn note(&mut self, note: Note) {
        if cfg!(feature = "debug") {
            self.actions.push_back(Action::Note(note));
        }
    }

    /// The sanitized config, shared (the session's next engine starts from it).
    pub(crate) fn shared_config(&self) -> Rc<Config> {
        Rc::clone(&self.config)
    }

    /// The endpoint of `transport` without the cursor parameter.
    pub fn url_for(&self, transport: TransportKind) -> &str {
        self.config.url_for(transport)
    }

    // ----- output ----------------------------------------------------------

    /// The next action. Drain until [`Action::Wait`], whose `until` is the
    /// earliest deadline (never before the `now` of the last input; `None` =
    /// nothing scheduled).
    #[must_use = "an action not carried out is lost"]
    pub fn poll(&mut self) -> Action {
        if let Some(action) = self.actions.pop_front() {
            return action;
        }
        let until = self.clock.wait_until(self.next_deadline());
        self.armed = until;
        Action::Wait { until }
    }

    // ----- inputs ----------------------------------------------------------

    /// Start: pick the transport (`TransportChanged` with reason `start`, or
    /// `capability` when the first preference is not available) and open it,
    /// unless the page is already paused. A second call is ignored. An invalid
    /// URL stops with the fatal error `invalid-url`; no usable transport in the
    /// preference list stops with `gave-up` (reason `capability`).
    pub fn handle_start(&mut self, now: Now, caps: Capabilities) {
        self.handle(now, Input::Start(caps));
    }

    fn on_start(&mut self, now: Now, caps: Capabilities) {
        self.started = true;
        if request::is_invalid_url(&self.config.url) {
            self.fatal(ErrorCode::InvalidUrl, None, Reason::PermanentError);
            return;
        }
        let Some((selector, reason)) = Selector::new(&self.config, caps, now) else {
            self.fatal(ErrorCode::GaveUp, None, Reason::Capability);
            return;
        };
        self.selector = selector;
        self.actions.push_back(Action::TransportChanged {
            transport: self.selector.current(),
            previous: None,
            reason,
        });
        self.note_query_only_cursor();
        if self.life.hidden && self.life.hidden_since.is_none() {
            self.life.hidden_since = Some(now.mono);
        }
        if self.life.offline || self.life.frozen {
            self.pause(now, self.life.pause_reason());
        } else {
            self.phase.schedule(Scheduled {
                at: now.mono,
                reason: Reason::Start,
                shows: State::Connecting,
            });
        }
    }

    /// The app closed the subscription: abort, state `closed`
    /// (`closed-by-user`). Every later input is ignored.
    pub fn handle_close(&mut self, now: Now) {
        self.handle(now, Input::Close);
    }

    fn on_close(&mut self) {
        let probe = self.news_probe();
        if let Some(a) = self.phase.close() {
            self.actions.push_back(Action::Abort(a.id));
        }
        if let Some(id) = probe {
            self.actions.push_back(Action::Abort(id));
        }
        self.set_state(State::Closed, Reason::ClosedByUser, None);
    }

    /// A stream opened: the native `EventSource` `open` event. (For `fetch`
    /// transports call [`Engine::handle_response_head`] instead; a call for
    /// `fetch-sse` counts as a usable head, for the request transports it is
    /// ignored.)
    pub fn handle_opened(&mut self, now: Now, id: AttemptId) {
        self.handle(now, Input::Opened(id));
    }

    fn on_opened(&mut self, now: Now) {
        if let Some(a) = self.phase.attempt() {
            if a.transport.is_streaming() && a.opened_at.is_none() {
                self.stream_opened(now);
            }
        }
    }

    /// Body bytes: `fetch-sse` chunks, and `text/event-stream` bodies of
    /// `long-poll` / `poll`, parsed by the engine's SSE parser. Any byte is
    /// liveness. An event past the SSE limits is dropped as it arrives
    /// (memory stays bounded, BC-16) and skipped at its blank line
    /// ([`Action::Skipped`] + a `too-large` error, not fatal): its id moves
    /// the cursor and the body goes on, so a server replaying from the cursor
    /// never sends it again. Bytes of a request whose head was not usable are
    /// ignored.
    pub fn handle_bytes(&mut self, now: Now, id: AttemptId, bytes: &[u8]) {
        self.handle(now, Input::Bytes(id, bytes));
    }

    fn on_bytes(&mut self, now: Now, id: AttemptId, bytes: &[u8]) {
        let Some(a) = self.phase.attempt_mut() else {
            return;
        };
        let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        let first_byte = a.bytes == 0;
        a.bytes = a.bytes.saturating_add(len);
        a.last_activity = now;
        let parse = match &a.per {
            PerTransport::FetchSse => a.opened_at.is_some(),
            PerTransport::Request(r) => {
                if first_byte && len > 0 {
                    a.opened_at = Some(now.mono);
                }
                r.body == BodyKind::EventStream
            }
            PerTransport::Native(_) => false,
        };
        let transport = a.transport;
        self.stats.bytes = self.stats.bytes.saturating_add(len);
        if transport == TransportKind::FetchSse && parse && first_byte && len > 0 {
            self.mark_success(transport, true);
        }
        if parse {
            if !transport.is_streaming() {
                self.request_opened();
            } else if first_byte {
                // Nothing of this stream is in the parser: whatever is
                // there is a news probe's event-stream answer cut short.
                self.new_body();
            }
            let before = String::from(self.cursor());
            let mut items = mem::take(&mut self.items);
            self.parser.feed(bytes, &mut items);
            self.parsed_items(now, id, &mut items, &before);
            self.items = items;
        } else {
            self.unparsed_bytes(id, bytes);
        }
        self.check_healthy(now);
    }

    /// A native `EventSource` event (decoded by the browser, which hides
    /// comments and the event's own id): `last_event_id` differing from the
    /// previous event's of the same `EventSource` (`""` for its first: a new
    /// instance starts empty, WHATWG HTML §9.2.2) means the event set its own
    /// id. Comparing with the cursor instead would take the first id-less
    /// event after every reconnect for a bare `id:` and clear the cursor
    /// (BC-08 NATIVE). The price: a bare `id:` as the very first event of a
    /// connection cannot be told from no id, and keeps the cursor. The first event also counts as
    /// `open` (Safari fires `open` late: BC-15 NATIVE-SAFARI). Heartbeat and
    /// message events arm the idle watchdog.
    pub fn handle_native_event(
        &mut self,
        now: Now,
        id: AttemptId,
        event_type: &str,
        data: &str,
        last_event_id: &str,
    ) {
        let input = Input::NativeEvent {
            id,
            event_type,
            data,
            last_event_id,
        };
        self.handle(now, input);
    }

    fn on_native_event(&mut self, now: Now, event_type: &str, data: &str, last_event_id: &str) {
        let Some(a) = self.phase.attempt_mut() else {
            return;
        };
        let opened = a.opened_at.is_some();
        let Some(n) = a.native_mut() else {
            return;
        };
        let first_event = !n.saw_event;
        n.saw_event = true;
        let own_id = (last_event_id != n.last_event_id).then(|| String::from(last_event_id));
        if let Some(own) = &own_id {
            n.last_event_id.clone_from(own);
        }
        a.last_activity = now;
        if !opened {
            self.stream_opened(now);
        }
        if first_event {
            // The selector's success: `open` alone may be a buffering proxy.
            self.selector.on_success(TransportKind::EventSource, true);
        }
        let len = u64::try_from(data.len()).unwrap_or(u64::MAX);
        self.stats.bytes = self.stats.bytes.saturating_add(len);
        let before = own_id.as_deref().map(|own| self.replace_cursor(own));
        let event = if event_type.is_empty() {
            "message"
        } else {
            event_type
        };
        let dropped = self.dedupe.duplicates_dropped();
        self.offer_event(
            String::from(event),
            String::from(data),
            own_id,
            String::from(self.cursor()),
        );
        self.keep_cursor_on_replay(dropped, before);
        self.check_healthy(now);
    }

    /// A JSON body of `long-poll` / `poll`, decoded by the adapter: the whole
    /// answer (the request is complete). Each message's own id moves the
    /// cursor and feeds dedupe, unless it holds U+0000, CR or LF (no header
    /// could carry it: the message is delivered without an id, see
    /// `decode::is_usable_event_id`); `polling_hint_ms` is
    /// `_polling.next_interval_ms`. A `None` entry (one that is not an
    /// object, see [`decode_json_body`]) is no message: a non-fatal `parse`
    /// error each, and the others are still delivered.
    pub fn handle_messages(
        &mut self,
        now: Now,
        id: AttemptId,
        msgs: Vec<Option<IncomingMessage>>,
        polling_hint_ms: Option<u64>,
    ) {
        let input = Input::Messages {
            id,
            msgs,
            polling_hint_ms,
        };
        self.handle(now, input);
    }

    fn on_messages(
        &mut self,
        now: Now,
        msgs: Vec<Option<IncomingMessage>>,
        polling_hint_ms: Option<u64>,
    ) {
        let Some(a) = self.phase.attempt_mut() else {
            return;
        };
        if a.transport.is_streaming() {
            return;
        }
        a.last_activity = now;
        if let Some(r) = a.request_mut().filter(|_| polling_hint_ms.is_some()) {
            r.hint_ms = polling_hint_ms;
        }
        self.request_opened();
        for m in msgs {
            let Some(m) = m else {
                self.actions.push_back(Action::Error {
                    code: ErrorCode::Parse,
                    status: None,
                    retry_in_ms: None,
                    fatal: false,
                    id: None,
                });
                continue;
            };
            let len = u64::try_from(m.data.len()).unwrap_or(u64::MAX);
            self.stats.bytes = self.stats.bytes.saturating_add(len);
            let own_id = m.id.filter(|id| decode::is_usable_event_id(id));
            let before = own_id
                .as_deref()
                .filter(|own| *own != self.cursor())
                .map(|own| self.replace_cursor(own));
            let event = match m.event {
                Some(e) if !e.is_empty() => e,
                _ => String::from("message"),
            };
            let dropped = self.dedupe.duplicates_dropped();
            let cursor = String::from(self.cursor());
            self.offer_event(event, m.data, own_id, cursor);
            self.keep_cursor_on_replay(dropped, before);
        }
        if let Some(a) = self.phase.take_attempt() {
            let news = a.delivered > 0;
            self.succeed_request(now, &a, news);
        }
    }

    /// A raw resource body of `long-poll` / `poll` (neither event stream nor
    /// JSON): the whole answer. Delivered as one `message` whose data is the
    /// body and whose id is the `ETag` (else `Last-Modified`, else `""`),
    /// bypassing dedupe (a resource may legitimately return to an earlier
    /// version) and leaving the cursor alone (the validators are this
    /// transport's cursor). A 200 whose `ETag` weakly matches the previous one
    /// (with the same `Last-Modified`) delivers nothing.
    ///
    /// On `long-poll`, an empty body (or only whitespace) is "no news", not a
    /// message (see `decode::empty_long_poll_answer`); on `poll` it is an
    /// empty resource, delivered.
    ///
    /// An nchan message (a bare-digit `Etag` plus a `Last-Modified`) is an
    /// event instead: its id is nchan's `<Unix seconds>:<tag>` (the id its
    /// EventSource sends, which its `last_event_id` parameter takes back), it
    /// becomes the cursor, and it goes through the `events` filter and dedupe
    /// like any event (see `decode::nchan_message_id`).
    pub fn handle_body_resource(&mut self, now: Now, id: AttemptId, body: String) {
        self.handle(now, Input::BodyResource(id, body));
    }

    fn on_body_resource(&mut self, now: Now, body: String) {
        let Some(a) = self.phase.attempt() else {
            return;
        };
        if a.transport.is_streaming() {
            return;
        }
        let unchanged = a.request().and_then(|r| r.outcome) == Some(Outcome::Unchanged)
            || decode::empty_long_poll_answer(a.transport, &body, &self.validators);
        let len = u64::try_from(body.len()).unwrap_or(u64::MAX);
        self.stats.bytes = self.stats.bytes.saturating_add(len);
        self.request_opened();
        if !unchanged {
            if let Some(id) = decode::nchan_message_id(&self.validators) {
                // An nchan message: its id is an event id like the ones its
                // EventSource sends, so it is the cursor and feeds dedupe.
                self.set_cursor(&id);
                let cursor = id.clone();
                self.offer_event(String::from("message"), body, Some(id), cursor);
            } else {
                let id = self
                    .validators
                    .etag
                    .clone()
                    .or_else(|| self.validators.last_modified.clone())
                    .unwrap_or_default();
                if body.len() > self.config.sse_limits.max_event_data_bytes {
                    self.skip_message(Some(id), String::from(self.cursor()));
                } else {
                    if let Some(a) = self.phase.attempt_mut() {
                        a.delivered = a.delivered.saturating_add(1);
                    }
                    self.actions
                        .push_back(Action::Deliver(alloc::boxed::Box::new(Message {
                            id,
                            last_event_id: String::from(self.cursor()),
                            event: String::from("message"),
                            data: body,
                            binary: false,
                        })));
                }
            }
        }
        if let Some(a) = self.phase.take_attempt() {
            let news = a.delivered > 0;
            self.succeed_request(now, &a, news);
        }
    }

    /// The request failed. Before the response head (or `open`) this is an
    /// open that failed (`network-or-cors` / `timeout`, evidence for the
    /// selector); after it, a dropped stream or body. `Aborted` (not by the
    /// engine) retries after the backoff delay without counting a failure. A
    /// long-poll `Timeout` is the client hold timeout ("no news", twice in a
    /// row without a head: a `timeout` failure). `ServerRefused` before the
    /// stream opened is an `http-status` failure without a status: backoff,
    /// no evidence (see [`TransportError::ServerRefused`]).
    pub fn handle_transport_error(&mut self, now: Now, id: AttemptId, error: TransportError) {
        self.handle(now, Input::TransportError(id, error));
    }

    fn on_transport_error(&mut self, now: Now, error: TransportError) {
        let Some(a) = self.phase.take_attempt() else {
            return;
        };
        self.drop_body();
        let code = match error {
            TransportError::Timeout => ErrorCode::Timeout,
            TransportError::BadBody => ErrorCode::Parse,
            _ => ErrorCode::NetworkOrCors,
        };
        let answered = a.opened_at.is_some() || a.status.is_some();
        match error {
            TransportError::Aborted => {
                self.note_stream_gap(&a);
                let f = Failure {
                    code: None,
                    counts: false,
                    ..Failure::new(ErrorCode::NetworkOrCors, Reason::Aborted)
                };
                self.fail(now, &a, f);
            }
            TransportError::Timeout if a.transport == TransportKind::LongPoll => {
                self.long_poll_timed_out(now, a);
            }
            // The server refused one connection and serves again: a status
            // failure whose status the browser hid, not a network verdict.
            TransportError::ServerRefused if !answered => {
                self.fail(
                    now,
                    &a,
                    Failure::new(ErrorCode::HttpStatus, Reason::Backoff),
                );
            }
            // The browser shows a clean end and a retryable drop alike.
            TransportError::NativeReconnecting if a.opened_at.is_some() => {
                self.stream_ended(now, &a, None, Reason::Backoff);
            }
            _ if a.transport.is_streaming() && a.opened_at.is_some() => {
                self.stream_ended(now, &a, Some(code), Reason::Backoff);
            }
            _ => {
                let mut f = Failure::new(code, Reason::Backoff);
                if !answered && a.transport != TransportKind::Poll {
                    f = f.evidence(Reason::OpenFailed);
                }
                self.fail(now, &a, f);
            }
        }
    }

    /// The body ended cleanly. A stream reconnects (healthy or not, see
    /// `backoff.healthyAfterMs`); a long-poll or poll answer is complete.
    pub fn handle_stream_end(&mut self, now: Now, id: AttemptId) {
        self.handle(now, Input::StreamEnd(id));
    }

    fn on_stream_end(&mut self, now: Now, id: AttemptId) {
        if self.durable_body_end(now, id) {
            return;
        }
        #[cfg(feature = "durable-streams")]
        if self.durable_sse_end(now, id) {
            return;
        }
        let Some(a) = self.phase.take_attempt() else {
            return;
        };
        self.drop_body();
        if a.transport.is_streaming() {
            if a.opened_at.is_some() {
                self.stream_ended(now, &a, None, Reason::Backoff);
            } else {
                let f = Failure::new(ErrorCode::NetworkOrCors, Reason::Backoff)
                    .evidence(Reason::OpenFailed);
                self.fail(now, &a, f);
            }
        } else if a.status.is_some() {
            let news = a.delivered > 0;
            self.succeed_request(now, &a, news);
        } else {
            let mut f = Failure::new(ErrorCode::NetworkOrCors, Reason::Backoff);
            if a.transport == TransportKind::LongPoll {
                f = f.evidence(Reason::OpenFailed);
            }
            self.fail(now, &a, f);
        }
    }

    /// The timer armed from the last [`Action::Wait`] fired (or any time: the
    /// engine re-checks every deadline against `now`). A timer ≥ 1 s late
    /// means the tab or device slept (see `lifecycle`).
    pub fn handle_timer(&mut self, now: Now) {
        self.handle(now, Input::Timer);
    }

    fn on_timer(&mut self, now: Now) {
        let late = self
            .armed
            .is_some_and(|at| now.mono.since(at) >= LATE_TIMER_MS);
        if late {
            self.on_wake(now);
        }
    }

    /// `visibilitychange`: hidden pauses after `pauseWhenHidden.afterMs`;
    /// visible resumes with one prompt attempt.
    pub fn handle_visibility(&mut self, now: Now, hidden: bool) {
        self.handle(now, Input::Visibility { hidden });
    }

    /// `online` / `offline`.
    pub fn handle_online(&mut self, now: Now, online: bool) {
        self.handle(now, Input::Online(online));
    }

    /// `freeze` / `resume`, and `pagehide` / `pageshow` with `persisted`.
    pub fn handle_frozen(&mut self, now: Now, frozen: bool) {
        self.handle(now, Input::Frozen(frozen));
    }

    /// `navigator.connection` changed: poll intervals stretch on slow
    /// networks (RTT < 50 ms ×1, < 200 ms ×3, < 1 s ×6, worse or `saveData` →
    /// the maximum), always within `[interval.minMs, interval.maxMs]`. The
    /// RTT is the browser's `rtt` (without it, the effective type's typical
    /// RTT), lowered by the engine's own faster `poll` request times (see
    /// `policy::network`); `saveData` always counts.
    pub fn handle_network_hint(&mut self, now: Now, hint: NetworkHint) {
        self.handle(now, Input::NetworkHint(hint));
    }

    // ----- internals ---------------------------------------------------------

    /// Common entry of every input: ignore everything once closed; keep the
    /// monotonic clock from going backwards; notice clock disagreement.
    fn begin(&mut self, now: Now) -> Option<Now> {
        if self.phase.is_closed() {
            return None;
        }
        let mono = self.clock.latest();
        let now = self.clock.observe(now);
        let before = self.last_wall.replace(now.wall);
        let woke = before.is_some_and(|wall| lifecycle::clocks_disagree(Now { mono, wall }, now));
        if woke {
            self.on_wake(now);
        }
        Some(now)
    }

    /// The live attempt if it is `id`.
    fn live_mut(&mut self, id: AttemptId) -> Option<&mut Attempt> {
        self.phase.attempt_mut().filter(|a| a.id == id)
    }

    /// Process every deadline that is due at `now`.
    fn advance(&mut self, now: Now) {
        for _ in 0..MAX_ROUNDS {
            if self.phase.is_closed() || !self.started {
                return;
            }
            self.on_resume_ignored(now);
            if let Some(at) = self.pause_deadline() {
                if at <= now.mono {
                    self.life.paused_hidden = true;
                    self.pause(now, Reason::Hidden);
                    continue;
                }
            }
            if self.news_probe_step(now) {
                continue;
            }
            if let Some((at, kind)) = self.attempt_deadline() {
                if at <= now.mono {
                    self.expire(now, kind);
                    continue;
                }
            }
            if let Some(s) = self.phase.scheduled() {
                if s.at <= now.mono && self.phase.attempt().is_none() && !self.life.paused() {
                    self.phase.cancel_scheduled();
                    self.start_attempt(now, s.reason, s.shows == State::Open);
                    continue;
                }
            }
            return;
        }
    }

    /// When the hidden grace ends, if it is running.
    fn pause_deadline(&self) -> Option<MonoMs> {
        let after = self.config.pause_when_hidden?;
        match (
            self.life.hidden,
            self.life.paused_hidden,
            self.life.hidden_since,
        ) {
            (true, false, Some(since)) if self.started => Some(since.plus(after)),
            _ => None,
        }
    }

    fn attempt_deadline(&self) -> Option<(MonoMs, Expiry)> {
        let a = self.phase.attempt()?;
        watchdog::deadline(a, &self.config.watchdog, self.config.long_poll.timeout_ms)
    }

    /// The earliest deadline of anything.
    fn next_deadline(&self) -> Option<MonoMs> {
        if self.phase.is_closed() || !self.started {
            return None;
        }
        let scheduled = self
            .phase
            .scheduled()
            .filter(|_| !self.life.paused())
            .map(|s| s.at);
        // The live attempt's and its news probe's, the earlier of the two.
        let attempt = earlier(self.attempt_deadline().map(|d| d.0), self.probe_deadline());
        earlier(earlier(self.pause_deadline(), attempt), scheduled)
    }

    /// A watchdog of the live attempt expired.
    fn expire(&mut self, now: Now, kind: Expiry) {
        if kind == Expiry::FirstByte && self.keep_silent_stream() {
            return;
        }
        let Some(a) = self.phase.take_attempt() else {
            return;
        };
        self.actions.push_back(Action::Abort(a.id));
        self.drop_body();
        match kind {
            Expiry::Connect => {
                let f =
                    Failure::new(ErrorCode::Timeout, Reason::Stalled).evidence(Reason::OpenFailed);
                self.fail(now, &a, f);
            }
            Expiry::FirstByte => {
                let f = Failure::new(ErrorCode::Timeout, Reason::BufferedStream)
                    .evidence(Reason::BufferedStream);
                self.fail(now, &a, f);
            }
            Expiry::Idle => self.stream_ended(now, &a, Some(ErrorCode::Timeout), Reason::Stalled),
            Expiry::Hold => self.long_poll_timed_out(now, a),
            Expiry::Request => {
                self.fail(now, &a, Failure::new(ErrorCode::Timeout, Reason::Stalled))
            }
        }
    }

    /// The long-poll hold timed out on the client. Without a response head
    /// (or a head and no byte) it is "no news", unless it is the second such
    /// timeout in a row: then a `timeout` failure (evidence against long-poll).
    fn long_poll_timed_out(&mut self, now: Now, a: Attempt) {
        if a.bytes > 0 || a.delivered > 0 {
            let news = a.delivered > 0;
            self.succeed_request(now, &a, news);
            return;
        }
        self.long_poll_timeouts = self.long_poll_timeouts.saturating_add(1);
        if self.long_poll_timeouts >= 2 {
            let f = Failure::new(ErrorCode::Timeout, Reason::Stalled).evidence(Reason::OpenFailed);
            self.fail(now, &a, f);
        } else {
            self.succeed_request(now, &a, false);
        }
    }

    /// A stream that had opened ended (cleanly, by error, or stalled). It was
    /// healthy when open `healthyAfterMs` with a byte (or kept silent that
    /// long, `quiet`), or when it ended cleanly (`code` = `None`) after making
    /// progress (`retry::made_progress`).
    fn stream_ended(&mut self, now: Now, a: &Attempt, code: Option<ErrorCode>, reason: Reason) {
        self.note_stream_gap(a);
        let healthy = a.healthy_at(now.mono, self.backoff.config().healthy_after_ms)
            || a.healthy_seen
            || self.kept_silent_healthy(a, now.mono)
            || (code.is_none() && self.made_progress(a));
        let f = Failure {
            code,
            counts: !healthy,
            healthy,
            ..Failure::new(ErrorCode::NetworkOrCors, reason)
        };
        self.fail(now, a, f);
    }

    /// A stream that delivered messages without ever giving a cursor cannot
    /// be resumed: remember to tell the app at the next attempt.
    fn note_stream_gap(&mut self, a: &Attempt) {
        if a.transport.is_streaming() && a.delivered > 0 && self.cursor().is_empty() {
            self.unresumable = true;
        }
    }

    /// A stream is open (usable head, `open` event, or first native event).
    fn stream_opened(&mut self, now: Now) {
        let Some(a) = self.phase.attempt_mut() else {
            return;
        };
        a.opened_at = Some(now.mono);
        a.open = true;
        a.last_activity = now;
        let transport = a.transport;
        let reason = a.reason;
        self.cursor_accepted();
        if transport == TransportKind::FetchSse {
            self.new_body();
        } else {
            // `open` is all a native EventSource shows of a usable answer; the
            // selector waits for its first event (`handle_native_event`).
            self.mark_answered();
        }
        self.set_state(State::Open, reason, None);
    }

    /// A request transport's usable body arrives: state `open` now, before
    /// anything it delivers (the first answer's messages must not reach the
    /// app while it is still `connecting`). `succeed_request` does the rest.
    fn request_opened(&mut self) {
        let Some(a) = self.phase.attempt_mut() else {
            return;
        };
        if !a.transport.is_streaming() && !a.open {
            a.open = true;
            let reason = a.reason;
            self.set_state(State::Open, reason, None);
        }
    }

    /// A new SSE body starts: fresh parser buffers (the cursor stays).
    fn new_body(&mut self) {
        self.parser.new_stream();
    }

    /// Move the cursor to `id`; returns where it stood.
    fn replace_cursor(&mut self, id: &str) -> String {
        let before = String::from(self.cursor());
        self.set_cursor(id);
        before
    }

    /// Deliver parsed SSE items (`cursor`: where the cursor stood before
    /// the chunk; the parser moved it, id-only blocks too, BC-07). A
    /// replayed duplicate does not move the cursor back, whatever the chunk
    /// boundaries (`replay::BatchCursor`).
    fn take_items(&mut self, items: &mut Vec<SseItem>, cursor: &str) {
        let mut batch = replay::BatchCursor::default();
        // Reused buffer (no allocation per event on the hot path).
        let mut last = String::new();
        for item in items.drain(..) {
            match item {
                SseItem::Event(mut ev) => {
                    let rewritten = batch.inherit(&mut ev.last_event_id, ev.id.is_some(), cursor);
                    let dropped = self.dedupe.duplicates_dropped();
                    last.clone_from(&ev.last_event_id);
                    self.offer_event(ev.event, ev.data, ev.id, ev.last_event_id);
                    let replayed = self.dedupe.duplicates_dropped() > dropped;
                    batch.after(&last, replayed, rewritten);
                }
                SseItem::RetryMs(ms) => self.take_retry(ms),
                SseItem::Comment => {}
                SseItem::Skipped(mut s) => {
                    let rewritten = batch.inherit(&mut s.last_event_id, s.id.is_some(), cursor);
                    let dropped = self.dedupe.duplicates_dropped();
                    last.clone_from(&s.last_event_id);
                    self.offer_skipped(s.event.as_deref(), s.id, s.last_event_id);
                    let replayed = self.dedupe.duplicates_dropped() > dropped;
                    batch.after(&last, replayed, rewritten);
                }
            }
        }
        if let Some(kept) = batch.restore(self.cursor(), cursor) {
            let kept = String::from(kept);
            self.set_cursor(&kept);
        }
    }

    /// An SSE `retry:` field: the server's reconnection time (capped), and on
    /// `poll` the interval's floor.
    fn take_retry(&mut self, ms: u64) {
        let ms = ms.min(self.config.max_retry_after_ms);
        self.backoff.set_server_retry_ms(ms);
        let is_poll = self
            .phase
            .attempt()
            .is_some_and(|a| a.transport == TransportKind::Poll);
        if is_poll {
            self.interval.set_floor_ms(Some(ms));
        }
    }

    /// After an event whose own id had moved the cursor from `before`: when
    /// dedupe dropped it (the count passed `dropped`), it was a replay, and
    /// the cursor goes back to `before`.
    fn keep_cursor_on_replay(&mut self, dropped: u64, before: Option<String>) {
        if let Some(before) = before {
            if self.dedupe.duplicates_dropped() > dropped {
                self.set_cursor(&before);
            }
        }
    }

    /// The SSE body ends or is dropped: a partial event is discarded (HTML
    /// §9.2.6), and one being skipped for its size is reported, so a body cut
    /// off inside an endless line still says why nothing came.
    fn drop_body(&mut self) {
        if self.parser.skipping().is_some() {
            self.skip_message(None, String::from(self.cursor()));
        }
        self.parser.new_stream();
    }

    /// A stream open `healthyAfterMs` with at least one byte resets the
    /// backoff count while it is still open (so a later drop starts from k = 0).
    fn check_healthy(&mut self, now: Now) {
        let after = self.backoff.config().healthy_after_ms;
        let Some(a) = self.phase.attempt_mut() else {
            return;
        };
        if a.transport.is_streaming() && !a.healthy_seen && a.healthy_at(now.mono, after) {
            a.healthy_seen = true;
            self.backoff.record_healthy();
        }
    }

    /// Start the scheduled attempt.
    /// `was_open`: the app sees `open` (a request transport between two
    /// answers).
    fn start_attempt(&mut self, now: Now, reason: Reason, was_open: bool) {
        if let Some(a) = self.phase.take_attempt() {
            self.actions.push_back(Action::Abort(a.id));
        }
        let Some(mut reason) = self.admit(now, reason) else {
            return;
        };
        // First: a failback probe must not pick a transport a resume cannot
        // use (it would go there and straight back).
        self.carry_cursor_by_header();
        if let Some(change) = self.selector.before_attempt(now) {
            self.push_transport_change(change);
            reason = Reason::FailbackProbe;
        }
        if mem::take(&mut self.unresumable) {
            self.actions.push_back(Action::Reset {
                reason: ResetReason::Unresumable,
            });
        }
        let transport = self.selector.current();
        let (attempt, open) = self.new_attempt(now, transport, reason, false);
        self.stats.requests = self.stats.requests.saturating_add(1);
        if self.stats.requests > 1 {
            self.stats.reconnects = self.stats.reconnects.saturating_add(1);
        }
        self.stats.current_delay_ms = 0;
        self.phase = Phase::Live(attempt);
        self.watch_replay();
        // Between two answers the app sees `open`: a request transport's
        // next request, and every Durable Streams read (SSE mode's catch-up
        // reads and its reconnect after the server's periodic close too).
        let durable = self.profile() == Protocol::DurableStreams;
        let request_cycle = (!transport.is_streaming() || durable) && was_open;
        if let Some(a) = self.phase.attempt_mut() {
            a.open = request_cycle;
        }
        self.watch_gap(request_cycle);
        if !request_cycle {
            self.set_state(State::Connecting, reason, None);
        }
        self.actions.push_back(Action::Open(open));
    }

    /// A new attempt on `transport` and its request; `beside`: the news
    /// probe's, which runs beside the live one (no 401 refresh, no failback).
    fn new_attempt(
        &mut self,
        now: Now,
        transport: TransportKind,
        reason: Reason,
        beside: bool,
    ) -> (Attempt, OpenRequest) {
        let id = AttemptId(self.next_id);
        self.next_id = self.next_id.saturating_add(1);
        let (url, headers) = self.render_request(transport);
        let refresh_auth = !beside && self.auth_retry.take_next();
        let failback = !beside && self.selector.probing();
        let mut attempt = Attempt::new(id, transport, reason, now, failback);
        attempt.cursor_at_start = String::from(self.cursor());
        attempt.carried_cursor = self.request_carries_cursor(transport);
        let open = OpenRequest {
            id,
            transport,
            url,
            headers,
            refresh_auth,
            // The probe leaves the previous answer's status to the next
            // attempt of the connection.
            status: if beside {
                self.last_status
            } else {
                self.last_status.take()
            },
            beside,
            #[cfg(feature = "post-streams")]
            start: start::start_of(&self.config, self.cursor()),
        };
        (attempt, open)
    }

    /// The breaker's word on the next attempt: its reason (`breaker-probe`
    /// for the half-open probe), or `None` when it is open (the wait is
    /// scheduled).
    fn admit(&mut self, now: Now, reason: Reason) -> Option<Reason> {
        use crate::policy::breaker::Admission;
        match self.breaker.admit(now.mono) {
            Admission::Allowed => Some(reason),
            Admission::Probe => Some(Reason::BreakerProbe),
            Admission::Open { until } => {
                self.schedule(now, until.since(now.mono), Reason::BreakerOpen);
                None
            }
            Admission::ProbeInFlight => {
                self.breaker.abandon_probe(now.mono);
                let probe = self.breaker.admit(now.mono) == Admission::Probe;
                Some(if probe { Reason::BreakerProbe } else { reason })
            }
        }
    }

    fn push_transport_change(&mut self, change: Change) {
        self.actions.push_back(Action::TransportChanged {
            transport: change.transport,
            previous: Some(change.previous),
            reason: change.reason,
        });
    }

    /// Emit `State` when the state or its reason changed (every `waiting` is
    /// news: it carries a new delay).
    fn set_state(&mut self, state: State, reason: Reason, delay_ms: Option<u64>) {
        let changed = self.told != (state, Some(reason)) || state == State::Waiting;
        if !changed {
            return;
        }
        self.told = (state, Some(reason));
        self.actions.push_back(Action::State {
            state,
            reason,
            delay_ms,
        });
    }
}
