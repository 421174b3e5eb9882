//! The engine's configuration: every option of the API contract table in
//! ARCHITECTURE.md ("The API contract"), with its defaults, durations in
//! milliseconds. [`Config::new`] gives all defaults; the engine sanitizes
//! whatever it is given instead of panicking (see each field).

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use crate::policy::backoff::BackoffConfig;
use crate::policy::breaker::BreakerConfig;
use crate::policy::dedupe::DEFAULT_DEDUPE_CAPACITY;
use crate::policy::interval::IntervalConfig;
use crate::policy::retry_after::DEFAULT_MAX_RETRY_AFTER_MS;
use crate::sse::SseLimits;
use crate::time::{clamp_timer_ms, WallMs};

/// The four transports (ARCHITECTURE.md "Transports").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TransportKind {
    /// Native `EventSource`: no request headers, status and headers hidden,
    /// comments hidden; decoded events arrive via
    /// [`Engine::handle_native_event`](super::Engine::handle_native_event).
    EventSource,
    /// SSE over a streaming `fetch` body, parsed by the engine's parser.
    FetchSse,
    /// A `fetch` held open by the server until news or timeout, then re-issued.
    LongPoll,
    /// A conditional `fetch` on an interval.
    Poll,
}

impl TransportKind {
    /// All four, in the default preference order.
    pub const ALL: [TransportKind; 4] = [
        TransportKind::EventSource,
        TransportKind::FetchSse,
        TransportKind::LongPoll,
        TransportKind::Poll,
    ];

    /// The JS name: `"eventsource"`, `"fetch-sse"`, `"long-poll"` or `"poll"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            TransportKind::EventSource => "eventsource",
            TransportKind::FetchSse => "fetch-sse",
            TransportKind::LongPoll => "long-poll",
            TransportKind::Poll => "poll",
        }
    }

    /// The transport named by its JS name (exact match), else `None`.
    pub fn from_name(name: &str) -> Option<Self> {
        TransportKind::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// `eventsource` and `fetch-sse`: one long response carrying many events.
    pub const fn is_streaming(self) -> bool {
        matches!(self, TransportKind::EventSource | TransportKind::FetchSse)
    }
}

/// The transports whose endpoint ([`Config::url_for`]) is on another origin
/// than the page, computed by the adapter for each endpoint: `urls` may put
/// one transport on a CDN and another on the page's own origin.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CrossOrigin(u8);

impl CrossOrigin {
    /// Every endpoint is same-origin (the default).
    pub const NONE: CrossOrigin = CrossOrigin(0);
    /// Every endpoint is cross-origin.
    pub const ALL: CrossOrigin = CrossOrigin(0b1111);

    const fn bit(transport: TransportKind) -> u8 {
        1 << transport as u8
    }

    /// Whether `transport`'s endpoint is cross-origin.
    pub const fn contains(self, transport: TransportKind) -> bool {
        self.0 & Self::bit(transport) != 0
    }

    /// The same set with `transport` marked cross-origin or not.
    pub const fn with(self, transport: TransportKind, cross: bool) -> CrossOrigin {
        if cross {
            CrossOrigin(self.0 | Self::bit(transport))
        } else {
            CrossOrigin(self.0 & !Self::bit(transport))
        }
    }
}

impl From<bool> for CrossOrigin {
    /// `true`: every endpoint; `false`: none.
    fn from(all: bool) -> Self {
        if all {
            CrossOrigin::ALL
        } else {
            CrossOrigin::NONE
        }
    }
}

/// What the browser offers, probed once by the adapter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Capabilities {
    /// `EventSource` exists (needed by `eventsource`).
    pub event_source: bool,
    /// `fetch` with `ReadableStream` response bodies (needed by `fetch-sse`).
    pub fetch_streaming: bool,
    /// `AbortController` (needed by `fetch-sse` and `long-poll`, which must be
    /// cancellable; `poll` works without it).
    pub abort_controller: bool,
}

impl Capabilities {
    /// Everything available (every current browser).
    pub const ALL: Capabilities = Capabilities {
        event_source: true,
        fetch_streaming: true,
        abort_controller: true,
    };

    /// Whether `transport` can run with these capabilities.
    pub const fn allow(self, transport: TransportKind) -> bool {
        match transport {
            TransportKind::EventSource => self.event_source,
            TransportKind::FetchSse => self.fetch_streaming && self.abort_controller,
            TransportKind::LongPoll => self.abort_controller,
            TransportKind::Poll => true,
        }
    }
}

/// One endpoint per transport (JS `urls`); `None` = the subscribe URL.
/// Servers such as nchan serve each transport on its own location.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TransportUrls {
    /// `urls.eventsource`.
    pub eventsource: Option<String>,
    /// `urls["fetch-sse"]`.
    pub fetch_sse: Option<String>,
    /// `urls["long-poll"]`.
    pub long_poll: Option<String>,
    /// `urls.poll`.
    pub poll: Option<String>,
}

impl TransportUrls {
    /// The configured URL of `transport`, if any.
    pub fn get(&self, transport: TransportKind) -> Option<&str> {
        match transport {
            TransportKind::EventSource => self.eventsource.as_deref(),
            TransportKind::FetchSse => self.fetch_sse.as_deref(),
            TransportKind::LongPoll => self.long_poll.as_deref(),
            TransportKind::Poll => self.poll.as_deref(),
        }
    }
}

/// Default `watchdog.first_event_timeout_ms`, ms (see [`WatchdogConfig`]).
pub const DEFAULT_FIRST_EVENT_TIMEOUT_MS: u64 = 45_000;

/// Stream liveness watchdogs (JS `watchdog.*`). A value of 0 disables that
/// watchdog (BC-14 V4: 0 means disabled, not "default").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WatchdogConfig {
    /// A stream silent this long is dead, ms. Any body byte counts on
    /// `fetch-sse`; any event (message or heartbeat event) on `eventsource`,
    /// where the watchdog runs only once such an event has arrived (comments
    /// never reach JS: BC-14 V1). Also the connect deadline of a stream whose
    /// response head (or `open`) has not arrived, and the request deadline of a
    /// `poll` request. Default 45 000 (3 missed heartbeats of 15 s).
    pub idle_timeout_ms: u64,
    /// A stream that opened and delivered nothing this long (`fetch-sse`: no
    /// byte, comments included; `eventsource`: no message or heartbeat event)
    /// is aborted with reason `buffered-stream` and counts as evidence of a
    /// buffering proxy for the selector (BC-15). Default 45 000: three times
    /// the most common server ping (15 s: axum `KeepAlive`, sse-starlette,
    /// warp), above the 30 s end of the usual 15–30 s range, so a healthy quiet
    /// server is never taken for a proxy (ARCHITECTURE.md "Defaults").
    pub first_event_timeout_ms: u64,
}

impl Default for WatchdogConfig {
    fn default() -> Self {
        WatchdogConfig {
            idle_timeout_ms: 45_000,
            first_event_timeout_ms: DEFAULT_FIRST_EVENT_TIMEOUT_MS,
        }
    }
}

/// Long-poll settings (JS `longPoll.*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LongPollConfig {
    /// Client-side abort of a held request, ms (the server holds about 30 s,
    /// below a typical 60 s proxy read timeout). Such an abort without a
    /// response head is "no news"; two in a row are a `timeout` failure.
    /// Default 35 000; 0 = no client timeout.
    pub timeout_ms: u64,
}

impl Default for LongPollConfig {
    fn default() -> Self {
        LongPollConfig { timeout_ms: 35_000 }
    }
}

/// Transport downgrade settings (JS `fallback.*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FallbackConfig {
    /// Consecutive opens that fail, or that open and deliver no byte before
    /// `watchdog.first_event_timeout_ms`, before every streaming transport is
    /// skipped (and, on `long-poll`, before falling back to `poll`). Default 2;
    /// 0 = never downgrade.
    pub after_failures: u32,
    /// How long a downgrade is remembered before the preferred transport is
    /// probed again, ms. Default 600 000 (10 min).
    pub remember_ms: u64,
}

impl Default for FallbackConfig {
    fn default() -> Self {
        FallbackConfig {
            after_failures: 2,
            remember_ms: 600_000,
        }
    }
}

/// Everything the engine needs to know, fixed for the life of a connection.
///
/// JS option names are given per field; the adapter translates the options
/// object into this. Durations are milliseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The subscribe URL (as the app gave it; the adapter may resolve it against
    /// the page first). An empty URL, or one containing ASCII control
    /// characters or spaces, stops the connection at start with the fatal error
    /// `invalid-url`.
    pub url: String,
    /// JS `urls`: a different endpoint per transport; each defaults to `url`.
    pub urls: TransportUrls,
    /// JS `transports`: the preference order. Default all four:
    /// `eventsource`, `fetch-sse`, `long-poll`, `poll`. Duplicates are dropped;
    /// an empty list means the default.
    pub transports: Vec<TransportKind>,
    /// JS `events`: event types delivered besides `message` (the same filter on
    /// every transport). Default empty.
    pub events: Vec<String>,
    /// JS `lastEventId`: the initial cursor. Default `""`. With
    /// [`Protocol::DurableStreams`] it is the start offset (JS `offset`):
    /// `"-1"` (the stream's start, the default), `"now"` (its tail) or a
    /// stored `Stream-Next-Offset`.
    pub last_event_id: String,
    /// JS `lastEventIdParam`: the query parameter that carries the cursor where
    /// a header is impossible (`eventsource`) or would force a CORS preflight
    /// (cross-origin `fetch`). Default `"lastEventId"` (nchan:
    /// `last_event_id`); empty means the default.
    pub last_event_id_param: String,
    /// The app set JS `headers`: rules out `eventsource` (it cannot send them),
    /// and enables the one retry with refreshed headers after a 401 or 403.
    pub has_custom_headers: bool,
    /// The app's JS `url` option is a function, asked for the URL of every
    /// attempt: enables the one retry after a 401 or 403 (a rotated query
    /// token), on every transport. Default `false`.
    pub url_function: bool,
    /// Which endpoints are cross-origin (computed by the adapter per
    /// transport URL). A cross-origin `fetch` transport carries the cursor in
    /// the query instead of the `Last-Event-ID` header, which would force a
    /// CORS preflight. `eventsource` always uses the query. Default: none.
    pub cross_origin: CrossOrigin,
    /// JS `backoff.*`: the reconnect delay policy. Defaults: full jitter, base
    /// 500, cap 60 000, floor 1000, healthy after 10 000, attempts unlimited.
    pub backoff: BackoffConfig,
    /// JS `maxRetryAfterMs`: cap on any server-requested wait, ms. Default
    /// 300 000. The wait is `max(clamped wait, floor)` plus a herd spread of
    /// at most `min(10 %, 1000 ms)`, not plus the backoff term (see
    /// `engine::retry`, rule 3), so a total wait exceeds the cap by ≤ 1 s.
    pub max_retry_after_ms: u64,
    /// JS `breaker.*`: 5 consecutive failures, 30 000 ms cool-down.
    pub breaker: BreakerConfig,
    /// JS `interval.*`: the poll interval (exponential, 5000 in [1000, 300 000]).
    pub interval: IntervalConfig,
    /// JS `heartbeatEvent`: an event of this type is liveness only, never
    /// delivered. Default `"heartbeat"`; `""` or `"message"` disables it.
    pub heartbeat_event: String,
    /// JS `watchdog.*`.
    pub watchdog: WatchdogConfig,
    /// JS `longPoll.*`.
    pub long_poll: LongPollConfig,
    /// JS `fallback.*`.
    pub fallback: FallbackConfig,
    /// JS `pauseWhenHidden`: `Some(after_ms)` releases the connection once the
    /// page has been hidden `after_ms` (default `Some(0)`: at once); `None`
    /// never pauses (JS `false`).
    pub pause_when_hidden: Option<u64>,
    /// JS `maxMessageBytes` (both limits set to it): the largest message
    /// accepted, in bytes. Default 1 MiB (1 048 576) each; a limit of 0 means
    /// the default. On event-stream bodies (`fetch-sse`, and `long-poll` /
    /// `poll` answers in `text/event-stream`) these are the parser's limits
    /// ([`SseLimits`]: a line, and an event's data counting one LF per
    /// `data` line), which also bound its memory (BC-16); on JSON messages,
    /// raw resources and native `EventSource` events, which the browser has
    /// already decoded whole, `max_event_data_bytes` caps each message's data.
    /// A message past them is skipped ([`Action::Skipped`](super::Action::Skipped)
    /// and a `too-large` error, not fatal), never retried.
    pub sse_limits: SseLimits,
    /// How many recent message ids dedupe remembers. Default 256; 0 disables dedupe.
    pub dedupe_capacity: usize,
    /// JS `protocol`: where the cursor is read and written, what ends a
    /// stream and what a gap looks like ([`Protocol`]). Default
    /// [`Protocol::Default`].
    pub protocol: Protocol,
    /// JS `live` (with [`Protocol::DurableStreams`]): how the profile reads
    /// once caught up ([`Live`]). Default [`Live::LongPoll`]. Ignored by the
    /// default profile; only in a core built with its `durable-streams`
    /// feature.
    #[cfg(feature = "durable-streams")]
    pub live: Live,
    /// A remembered downgrade to seed (the adapter persists
    /// [`Engine::downgrade`](super::Engine::downgrade) in `sessionStorage`):
    /// the transport downgraded to (`long-poll` or `poll`) and the wall time
    /// until which the preferred transports are skipped. Default `None`.
    pub downgrade: Option<(TransportKind, WallMs)>,
    /// JS `method`, `body`, `resume` and `end`: the app's own request
    /// starts the stream, an in-band marker ends it (`engine::start`).
    /// Default `None`: a `GET` of the URL, no marker. Shared, not copied,
    /// with every engine of the connection.
    #[cfg(feature = "post-streams")]
    pub start: Option<alloc::sync::Arc<super::start::StartRules>>,
}

impl Config {
    /// Every default of the API contract, for `url`.
    pub fn new(url: impl Into<String>) -> Self {
        Config {
            url: url.into(),
            urls: TransportUrls::default(),
            transports: TransportKind::ALL.to_vec(),
            events: Vec::new(),
            last_event_id: String::new(),
            last_event_id_param: String::from(DEFAULT_LAST_EVENT_ID_PARAM),
            has_custom_headers: false,
            url_function: false,
            cross_origin: CrossOrigin::NONE,
            backoff: BackoffConfig::default(),
            max_retry_after_ms: DEFAULT_MAX_RETRY_AFTER_MS,
            breaker: BreakerConfig::default(),
            interval: IntervalConfig::default(),
            heartbeat_event: String::from("heartbeat"),
            watchdog: WatchdogConfig::default(),
            long_poll: LongPollConfig::default(),
            fallback: FallbackConfig::default(),
            pause_when_hidden: Some(0),
            sse_limits: SseLimits::DEFAULT,
            dedupe_capacity: DEFAULT_DEDUPE_CAPACITY,
            protocol: Protocol::Default,
            #[cfg(feature = "durable-streams")]
            live: Live::LongPoll,
            downgrade: None,
            #[cfg(feature = "post-streams")]
            start: None,
        }
    }

    /// The endpoint of `transport`: its entry in [`Config::urls`], else [`Config::url`].
    pub fn url_for(&self, transport: TransportKind) -> &str {
        self.urls.get(transport).unwrap_or(&self.url)
    }

    /// The same configuration with every value made usable (never panics):
    /// an empty or duplicated transport list, empty parameter names, zero SSE
    /// limits and timer values above `MAX_TIMER_MS` are replaced as documented
    /// on each field. The two delays that alone separate one request from the
    /// next, `backoff.floor_ms` (reconnects) and the poll interval bounds
    /// `interval.min_ms`/`max_ms`, are raised to at least 10 ms: 0 would make
    /// a busy request loop (a 0 ms poll interval, or an instant reconnect
    /// after every refused connection).
    pub fn sanitized(mut self) -> Self {
        /// The least delay between two requests, ms (above the 4 ms browsers
        /// clamp nested timers to; no busy loop).
        const MIN_DELAY_MS: u64 = 10;
        let mut transports: Vec<TransportKind> = Vec::with_capacity(4);
        for t in self.transports.iter().copied() {
            if !transports.contains(&t) {
                transports.push(t);
            }
        }
        if transports.is_empty() {
            transports = vec![
                TransportKind::EventSource,
                TransportKind::FetchSse,
                TransportKind::LongPoll,
                TransportKind::Poll,
            ];
        }
        self.transports = transports;
        if self.last_event_id_param.is_empty() {
            self.last_event_id_param = String::from(DEFAULT_LAST_EVENT_ID_PARAM);
        }
        if self.sse_limits.max_line_bytes == 0 {
            self.sse_limits.max_line_bytes = SseLimits::DEFAULT_BYTES;
        }
        if self.sse_limits.max_event_data_bytes == 0 {
            self.sse_limits.max_event_data_bytes = SseLimits::DEFAULT_BYTES;
        }
        let w = &mut self.watchdog;
        w.idle_timeout_ms = clamp_timer_ms(w.idle_timeout_ms);
        w.first_event_timeout_ms = clamp_timer_ms(w.first_event_timeout_ms);
        self.long_poll.timeout_ms = clamp_timer_ms(self.long_poll.timeout_ms);
        self.pause_when_hidden = self.pause_when_hidden.map(clamp_timer_ms);
        self.backoff.floor_ms = self.backoff.floor_ms.max(MIN_DELAY_MS);
        let i = &mut self.interval;
        i.min_ms = i.min_ms.max(MIN_DELAY_MS);
        i.max_ms = i.max_ms.max(MIN_DELAY_MS);
        self.events.retain(|e| !e.is_empty());
        self.protocol.shape_config(&mut self);
        self
    }

    /// Whether a subscription with this configuration can ever dispatch an
    /// event of type `kind`: `message`, a name in `events`, or one of the
    /// subscription's own event types ([`RESERVED_EVENTS`](super::RESERVED_EVENTS)).
    /// A listener for any other type never runs (the adapter warns once per
    /// subscription and type): the server's events of that type are dropped.
    pub fn dispatches(&self, kind: &str) -> bool {
        super::RESERVED_EVENTS.contains(&kind) || super::decode::wanted(&self.events, kind)
    }

    /// The heartbeat event type, if enabled.
    pub(crate) fn heartbeat(&self) -> Option<&str> {
        match self.heartbeat_event.as_str() {
            "" | "message" => None,
            name => Some(name),
        }
    }
}

/// The server family a connection speaks (JS `protocol`): what differs is
/// where the cursor is read and written, what ends a stream and what a gap
/// looks like; transports, lifecycle, selection and crossTab are the same.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// JS `"default"`: SSE ids and `Last-Event-ID`, JSON and raw long-poll and
    /// poll bodies, validators (ARCHITECTURE.md "Server conventions").
    #[default]
    Default,
    /// JS `"durable-streams"`: the Durable Streams protocol (PROTOCOL.md of
    /// durable-streams/durable-streams, §5.6 catch-up and §5.7 long-poll
    /// reads). The cursor is the offset ([`Config::last_event_id`], default
    /// `"-1"`, or `"now"`), read from `Stream-Next-Offset` and sent as the
    /// `offset` query parameter; `long-poll` is the only transport
    /// (`fetch-sse` with [`Live::Sse`], §5.8). See `engine::durable`
    /// and `engine::durable_sse`.
    DurableStreams,
}

/// JS `live` of the Durable Streams profile ([`Config::live`]): how a
/// subscription reads once caught up. `as u8` is its share-key hash (0 is
/// left out of the key).
#[cfg(feature = "durable-streams")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Live {
    /// `"long-poll"`, the default: `live=long-poll` reads (PROTOCOL.md §5.7).
    LongPoll = 0,
    /// `"sse"`: `live=sse` over `fetch-sse` (§5.8, `engine::durable_sse`);
    /// `fetch-sse` is then the only transport, catch-up reads included.
    Sse = 1,
    /// `false`: none: catch up, then end (state `closed`, reason
    /// `up-to-date`).
    Off = 2,
}

impl Protocol {
    /// The JS name: `"default"` or `"durable-streams"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Protocol::Default => "default",
            Protocol::DurableStreams => "durable-streams",
        }
    }

    /// The protocol named by its JS name (exact match), else `None`.
    pub fn from_name(name: &str) -> Option<Self> {
        [Protocol::Default, Protocol::DurableStreams]
            .into_iter()
            .find(|p| p.as_str() == name)
    }
}

/// Default of [`Config::last_event_id_param`].
pub const DEFAULT_LAST_EVENT_ID_PARAM: &str = "lastEventId";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_api_table() {
        let c = Config::new("/updates");
        assert_eq!(c.url_for(TransportKind::Poll), "/updates");
        assert_eq!(c.transports, TransportKind::ALL);
        assert_eq!(c.last_event_id_param, "lastEventId");
        assert_eq!(c.max_retry_after_ms, 300_000);
        assert_eq!(c.watchdog.idle_timeout_ms, 45_000);
        assert_eq!(c.watchdog.first_event_timeout_ms, 45_000);
        assert_eq!(c.long_poll.timeout_ms, 35_000);
        assert_eq!(c.fallback.after_failures, 2);
        assert_eq!(c.fallback.remember_ms, 600_000);
        assert_eq!(c.pause_when_hidden, Some(0));
        assert_eq!(c.heartbeat(), Some("heartbeat"));
        assert_eq!(c.backoff.floor_ms, 1000);
        assert_eq!(c.interval.initial_ms, 5000);
    }

    #[test]
    fn a_listener_type_is_dispatched_only_when_message_own_or_listed() {
        let mut c = Config::new("/u");
        c.events = vec!["chat".into()];
        let c = c.sanitized();
        let yes = ["message", "chat", "open", "error", "statechange"];
        let more = ["transportchange", "reset", "uptodate", "statuschange"];
        for kind in yes.into_iter().chain(more) {
            assert!(c.dispatches(kind), "{kind}");
        }
        // The heartbeat is liveness only; a name differing in case is
        // another type (DOM event types are case-sensitive).
        for kind in ["price", "heartbeat", "Chat", "", "messages"] {
            assert!(!c.dispatches(kind), "{kind}");
        }
    }

    #[test]
    fn names_round_trip() {
        for t in TransportKind::ALL {
            assert_eq!(TransportKind::from_name(t.as_str()), Some(t));
        }
        assert_eq!(TransportKind::from_name("websocket"), None);
    }

    #[test]
    fn sanitize_fills_and_dedups() {
        let mut c = Config::new("/u");
        c.transports = vec![TransportKind::Poll, TransportKind::Poll];
        c.last_event_id_param = String::new();
        c.sse_limits.max_line_bytes = 0;
        c.heartbeat_event = "message".into();
        c.long_poll.timeout_ms = u64::MAX;
        c.events = vec!["".into(), "price".into()];
        c.urls.poll = Some("/p".into());
        let c = c.sanitized();
        assert_eq!(c.transports, [TransportKind::Poll]);
        assert_eq!(c.last_event_id_param, "lastEventId");
        assert_eq!(c.sse_limits.max_line_bytes, 1 << 20);
        assert_eq!(c.heartbeat(), None);
        assert_eq!(c.long_poll.timeout_ms, (1 << 31) - 1);
        assert_eq!(c.events, ["price"]);
        assert_eq!(c.url_for(TransportKind::Poll), "/p");
        let mut empty = Config::new("/u");
        empty.transports.clear();
        assert_eq!(empty.sanitized().transports, TransportKind::ALL);
    }

    #[test]
    fn sanitize_floors_the_delays_between_requests() {
        let mut c = Config::new("/u");
        c.backoff.floor_ms = 0;
        c.interval.min_ms = 0;
        c.interval.max_ms = 0;
        c.interval.initial_ms = 0;
        let c = c.sanitized();
        assert_eq!(c.backoff.floor_ms, 10);
        assert_eq!((c.interval.min_ms, c.interval.max_ms), (10, 10));
        // Values at or above the floor, and the defaults, are kept.
        let mut c = Config::new("/u");
        c.backoff.floor_ms = 10;
        c.interval.min_ms = 11;
        let c = c.sanitized();
        assert_eq!((c.backoff.floor_ms, c.interval.min_ms), (10, 11));
        let d = Config::new("/u").sanitized();
        assert_eq!(d.backoff.floor_ms, 1000);
        assert_eq!((d.interval.min_ms, d.interval.max_ms), (1000, 300_000));
    }

    #[test]
    fn capabilities_gate_transports() {
        let none = Capabilities::default();
        assert!(!none.allow(TransportKind::EventSource));
        assert!(!none.allow(TransportKind::FetchSse));
        assert!(!none.allow(TransportKind::LongPoll));
        assert!(none.allow(TransportKind::Poll));
        let streaming_only = Capabilities {
            fetch_streaming: true,
            ..none
        };
        assert!(!streaming_only.allow(TransportKind::FetchSse));
        assert!(Capabilities::ALL.allow(TransportKind::FetchSse));
    }
}
