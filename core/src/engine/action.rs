//! What the engine asks the adapter to do (the values [`Engine::poll`]
//! returns), and the vocabulary of states, reasons and error codes
//! (ARCHITECTURE.md "The API contract").
//!
//! [`Engine::poll`]: super::Engine::poll

use alloc::string::String;
use alloc::vec::Vec;

use super::config::TransportKind;
use super::input::AttemptId;
use crate::time::MonoMs;

/// One decision of the engine. Drain [`Engine::poll`](super::Engine::poll)
/// until it returns [`Action::Wait`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Start a request. At most one attempt is live at any time: every `Open`
    /// except the first after start is preceded by an [`Action::Abort`] of the
    /// previous attempt if that one was still live.
    Open(OpenRequest),
    /// Cancel this attempt (close the `EventSource`, abort the `fetch`). Facts
    /// about it arriving later are ignored.
    Abort(AttemptId),
    /// Ask once why this attempt's native `EventSource` failed before it
    /// opened (the browser hides the status and headers of a connection it
    /// fails, WHATWG HTML §9.2.3): one `fetch` of the attempt's URL with
    /// `Accept: text/event-stream` (as the `EventSource` sent it: servers such
    /// as nchan answer 403 without it), aborted once its head is read. Report
    /// its head, or `None` when it failed too, with
    /// [`Engine::handle_native_probe`](super::Engine::handle_native_probe);
    /// the attempt stays live until then.
    Probe(AttemptId),
    /// Hand this message to the subscribers. Boxed: the largest payload,
    /// so every other action moves and copies in fewer bytes.
    Deliver(alloc::boxed::Box<Message>),
    /// A message was not delivered because it passed the size limit
    /// ([`Config::sse_limits`](super::Config::sse_limits), JS
    /// `maxMessageBytes`): it was skipped, the cursor moved past it as its own
    /// id says (WHATWG HTML §9.2.6 commits the id of every dispatched block),
    /// and the connection goes on. Always followed by an [`Action::Error`]
    /// with code `too-large`, not fatal and without `retry_in_ms` (nothing is
    /// retried), carrying the same `id`: that one is the JS `error` event;
    /// this one is for the debug log.
    Skipped {
        /// The skipped message's own id, or `""` when its block set none (or
        /// its `id` line was itself past the limit, or the body ended before
        /// the message did).
        id: String,
        /// The cursor after it.
        last_event_id: String,
    },
    /// A server event whose type is one of the subscription's own event names
    /// ([`RESERVED_EVENTS`](super::RESERVED_EVENTS) other than `reset`:
    /// `open`, `error`, `statechange`, `transportchange`) was not delivered: it
    /// is the server's data, and dispatched under that name it would pass for a
    /// lifecycle signal (a server `event: error` read as a connection
    /// failure). Nothing else happens: its id moved the cursor, the connection
    /// goes on. For the debug log only (JS `debug: true` logs it as `ignore`).
    ///
    /// Also, once per event type (the first [`MAX_FILTERED_TOLD`](super::MAX_FILTERED_TOLD)
    /// types), an event dropped because its type is neither `message` nor in
    /// `events` (`filtered: true`): a listener for it never runs, and this is
    /// the one word the app's `debug` log gets about it.
    Ignored {
        /// The event type the server sent.
        event: String,
        /// Its own id, or `""` when its block set none.
        id: String,
        /// `true`: not in `events` (JS reason `not-in-events`); `false`: a
        /// reserved name.
        filtered: bool,
    },
    /// The app should refetch its state: the server cannot fill the gap since
    /// the cursor.
    Reset {
        /// Why.
        reason: ResetReason,
    },
    /// The connection state changed (JS `statechange`).
    State {
        /// The new state.
        state: State,
        /// Why.
        reason: Reason,
        /// For [`State::Waiting`]: milliseconds until the next attempt.
        delay_ms: Option<u64>,
    },
    /// A different transport is used from now on (JS `transportchange`).
    TransportChanged {
        /// The new transport.
        transport: TransportKind,
        /// The one before (`None` at start).
        previous: Option<TransportKind>,
        /// Why: `start`, `capability`, `open-failed`, `buffered-stream`,
        /// `failback-probe`, `resume-ignored` or `resume-by-header`.
        reason: Reason,
    },
    /// Something went wrong (JS `error`).
    Error {
        /// What.
        code: ErrorCode,
        /// The HTTP status involved, if any.
        status: Option<u16>,
        /// Milliseconds until the next attempt, when one is scheduled (a
        /// server-requested wait already clamped to `max_retry_after_ms`).
        retry_in_ms: Option<u64>,
        /// `true` when the connection stopped for good (state `closed`).
        fatal: bool,
        /// With [`ErrorCode::TooLarge`]: the skipped message's own id (`""`
        /// when its block set none); `None` for every other code.
        id: Option<String>,
    },
    /// A decision worth a line in the debug log (`debug: true`), not an event
    /// for the app.
    Note(Note),
    /// The subscription has caught up with everything the server had (Durable
    /// Streams `Stream-Up-To-Date: true` after a response that did not say
    /// so, or the first one): JS `uptodate`. Not end of stream: more may come.
    UpToDate {
        /// The cursor (offset) at that moment.
        last_event_id: String,
    },
    /// Nothing more to do now. Arm the single timer for `until` (monotonic;
    /// clamp the delay to 2^31−1 ms) and call
    /// [`Engine::handle_timer`](super::Engine::handle_timer) when it fires;
    /// `None` = nothing scheduled. `until` is never earlier than the `now` of
    /// the last input.
    Wait {
        /// When to call `handle_timer`.
        until: Option<MonoMs>,
    },
}

/// A request to start. The adapter renders it literally.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenRequest {
    /// Report facts about this request with this id.
    pub id: AttemptId,
    /// Which transport to use.
    pub transport: TransportKind,
    /// The URL, with the cursor query parameter rendered and percent-encoded
    /// (UTF-8, everything but `A-Z a-z 0-9 - . _ ~` escaped) when the cursor
    /// travels in the query; an existing parameter of that name is replaced
    /// (or removed when the cursor is empty).
    pub url: String,
    /// Request header fields, in this order when present: `Accept`,
    /// `Last-Event-ID` (a UTF-8 string: the adapter must encode it to bytes, as
    /// the JS `Headers` API rejects code points above U+00FF), `If-None-Match`,
    /// `If-Modified-Since`, and with either of those `Cache-Control:
    /// max-age=0` (see [`REVALIDATE`](super::REVALIDATE)). Empty for `eventsource`.
    pub headers: Vec<(String, String)>,
    /// Ask the app's `headers` / `url` functions again with `status` for
    /// this request: it is the one retry after a 401 or 403 (only with
    /// custom headers or a `url` function).
    pub refresh_auth: bool,
    /// The status of the previous attempt's answer (its response head, or
    /// its status probe's); `None` when it had none (a network error, a
    /// native stream, the first attempt).
    pub status: Option<u16>,
    /// Keep the request already out: this one runs beside it (the news
    /// probe of a silent stream, `long-poll`). Otherwise it replaces it.
    pub beside: bool,
    /// Which request to send: a `GET`, the app's request, or the one its
    /// `resume` function builds from the cursor (`engine::start`).
    #[cfg(feature = "post-streams")]
    pub start: super::start::Start,
}

/// A message for the app (JS `message` event and the named ones in `events`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Message {
    /// The event's own id, or `""` when its block set none.
    pub id: String,
    /// The cursor after this event (the `lastEventId` of a `MessageEvent`).
    pub last_event_id: String,
    /// The event type (`"message"` unless named).
    pub event: String,
    /// The data. When `binary` is set, each `char` is one byte (U+0000 to
    /// U+00FF) and the app receives a `Uint8Array` of those bytes.
    pub data: String,
    /// The data is bytes, not text (a Durable Streams body whose content
    /// type is neither `application/json` nor `text/*`).
    pub binary: bool,
}

/// The connection states (JS `state`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum State {
    /// A request is out and not yet established. Also the state before start.
    #[default]
    Connecting,
    /// Established (stream open, or a request transport answering).
    Open,
    /// A delay is scheduled before the next attempt.
    Waiting,
    /// Released while the page is hidden, offline or frozen.
    Paused,
    /// Stopped for good.
    Closed,
}

impl State {
    /// Every state, for [`State::from_name`].
    pub const ALL: [State; 5] = [
        State::Connecting,
        State::Open,
        State::Waiting,
        State::Paused,
        State::Closed,
    ];

    /// The state named by its JS name (exact match), else `None`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// The JS name.
    pub const fn as_str(self) -> &'static str {
        match self {
            State::Connecting => "connecting",
            State::Open => "open",
            State::Waiting => "waiting",
            State::Paused => "paused",
            State::Closed => "closed",
        }
    }
}

/// Why a state or transport changed: one vocabulary for both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// The subscription started.
    Start,
    /// The browser lacks what a preferred transport needs.
    Capability,
    /// The reconnect delay after a failure or a dropped stream.
    Backoff,
    /// The server's `Retry-After`.
    RetryAfter,
    /// The server's `RateLimit-Reset` / `X-RateLimit-Reset`.
    RateLimit,
    /// A server interval hint.
    ServerHint,
    /// The circuit breaker opened.
    BreakerOpen,
    /// The breaker's one half-open probe.
    BreakerProbe,
    /// A stream opened but delivered nothing (buffering proxy).
    BufferedStream,
    /// A stream went silent past the idle timeout.
    Stalled,
    /// Opens failed repeatedly.
    OpenFailed,
    /// Trying the preferred transport again after a remembered downgrade.
    FailbackProbe,
    /// The page was hidden.
    Hidden,
    /// The page became visible.
    Visible,
    /// The browser went offline.
    Offline,
    /// The browser came back online.
    Online,
    /// The page was frozen (or hidden in the back/forward cache).
    Frozen,
    /// The page was resumed, or the device woke up.
    Resumed,
    /// A permanent failure (status, content type, invalid URL).
    PermanentError,
    /// The app called `close()`.
    ClosedByUser,
    /// A request was aborted by something other than the engine.
    Aborted,
    /// The server ignored the cursor in the query (`lastEventIdParam`) and
    /// replayed events already delivered: moved to a transport that sends
    /// `Last-Event-ID` ([`ErrorCode::ResumeIgnored`]).
    ResumeIgnored,
    /// The server said the stream ended for good (Durable Streams
    /// `Stream-Closed: true`): state `closed`, no error, no more requests.
    StreamClosed,
    /// The app's `headers` function failed, so nothing was sent
    /// ([`ErrorCode::Headers`]; see `Engine::handle_headers_failed`).
    HeadersFailed,
    /// `backoff.maxAttempts` consecutive failures: state `closed` after the
    /// fatal `gave-up` error; `reconnect()` revives it (`reconnect`).
    GaveUp,
    /// The app called `reconnect()` (see `Engine::handle_reconnect`).
    Reconnect,
    /// A resume (a non-empty cursor) on a transport that can carry the
    /// cursor only in the query (`eventsource`, whose native object cannot
    /// send headers) moved to one that sends `Last-Event-ID`, the form every
    /// SSE server reads (see `engine::carrier`).
    ResumeByHeader,
    /// A Durable Streams read with `live: false` caught up
    /// (`Stream-Up-To-Date: true`): state `closed` after `uptodate`, no
    /// error, no live request.
    UpToDate,
}

impl Reason {
    /// Every reason, for [`Reason::from_name`].
    pub const ALL: [Reason; 28] = [
        Reason::Start,
        Reason::Capability,
        Reason::Backoff,
        Reason::RetryAfter,
        Reason::RateLimit,
        Reason::ServerHint,
        Reason::BreakerOpen,
        Reason::BreakerProbe,
        Reason::BufferedStream,
        Reason::Stalled,
        Reason::OpenFailed,
        Reason::FailbackProbe,
        Reason::Hidden,
        Reason::Visible,
        Reason::Offline,
        Reason::Online,
        Reason::Frozen,
        Reason::Resumed,
        Reason::PermanentError,
        Reason::ClosedByUser,
        Reason::Aborted,
        Reason::ResumeIgnored,
        Reason::StreamClosed,
        Reason::HeadersFailed,
        Reason::GaveUp,
        Reason::Reconnect,
        Reason::ResumeByHeader,
        Reason::UpToDate,
    ];

    /// The reason named by its JS name (exact match), else `None`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == name)
    }

    /// The JS name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Reason::Start => "start",
            Reason::Capability => "capability",
            Reason::Backoff => "backoff",
            Reason::RetryAfter => "retry-after",
            Reason::RateLimit => "rate-limit",
            Reason::ServerHint => "server-hint",
            Reason::BreakerOpen => "breaker-open",
            Reason::BreakerProbe => "breaker-probe",
            Reason::BufferedStream => "buffered-stream",
            Reason::Stalled => "stalled",
            Reason::OpenFailed => "open-failed",
            Reason::FailbackProbe => "failback-probe",
            Reason::Hidden => "hidden",
            Reason::Visible => "visible",
            Reason::Offline => "offline",
            Reason::Online => "online",
            Reason::Frozen => "frozen",
            Reason::Resumed => "resumed",
            Reason::PermanentError => "permanent-error",
            Reason::ClosedByUser => "closed-by-user",
            Reason::Aborted => "aborted",
            Reason::ResumeIgnored => "resume-ignored",
            Reason::StreamClosed => "stream-closed",
            Reason::HeadersFailed => "headers-failed",
            Reason::GaveUp => "gave-up",
            Reason::Reconnect => "reconnect",
            Reason::ResumeByHeader => "resume-by-header",
            Reason::UpToDate => "up-to-date",
        }
    }
}

/// Error codes (JS `error.code`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The URL is empty or malformed. Fatal.
    InvalidUrl,
    /// An HTTP status the transport cannot use (fatal for permanent 4xx, 2xx
    /// other than 200 on streams; retried for 5xx, 408, 425, 429).
    HttpStatus,
    /// A stream answered 204 No Content: the server's way to say "stop". Fatal.
    NoContent,
    /// A stream answered 200 without `text/event-stream`. Fatal.
    BadContentType,
    /// A network error, or a CORS refusal (JS cannot tell them apart). Retried.
    NetworkOrCors,
    /// No response, or a stream silent past a watchdog. Retried.
    Timeout,
    /// A message passed the size limit ([`Action::Skipped`]): skipped, not
    /// fatal, nothing retried; the connection goes on with the next message.
    TooLarge,
    /// A body could not be parsed: message data that is not JSON under
    /// `parse: "json"` (reported by the adapter), and in the Durable Streams
    /// profile a chunk that is not valid for its content type (a JSON body
    /// that is not an array, a `text/*` body that is not UTF-8) or a response
    /// without a usable `Stream-Next-Offset` (see `engine::durable`). Never
    /// fatal.
    Parse,
    /// 401/403. Fatal (after the one retry with refreshed headers on a 401).
    Auth,
    /// `backoff.maxAttempts` consecutive failures, or no usable transport. Fatal.
    GaveUp,
    /// A resumed connection (one that carried the cursor in the query,
    /// `lastEventIdParam`) replayed only events already delivered, from the
    /// oldest remembered one on, in the order first seen: the server resumes
    /// only from the `Last-Event-ID` header. Reported once per connection,
    /// never fatal. With `retry_in_ms`, the connection moves to a transport
    /// that sends the header (`fetch-sse` same-origin); without, none is
    /// usable and it stays (replays are dropped as duplicates).
    ResumeIgnored,
    /// The app's `headers` function threw or rejected, or returned an
    /// invalid header: nothing was sent. Never fatal by itself; retried
    /// after the backoff delay (see `Engine::handle_headers_failed`).
    Headers,
    /// A send's 409 without `Retry-After`: not "the first request with this
    /// key is still in flight" but a conflict a retry cannot cure. Final.
    /// The connection engine never emits it.
    Conflict,
    /// A send's 409 with `Stream-Closed: true`: the Durable Stream it
    /// appends to is closed (PROTOCOL.md §5.2). Final. The connection
    /// engine never emits it.
    StreamClosed,
}

impl ErrorCode {
    /// Every code (the engine emits all but `Conflict` and
    /// `StreamClosed`), for [`ErrorCode::from_name`].
    pub const ALL: [ErrorCode; 14] = [
        ErrorCode::InvalidUrl,
        ErrorCode::HttpStatus,
        ErrorCode::NoContent,
        ErrorCode::BadContentType,
        ErrorCode::NetworkOrCors,
        ErrorCode::Timeout,
        ErrorCode::TooLarge,
        ErrorCode::Parse,
        ErrorCode::Auth,
        ErrorCode::GaveUp,
        ErrorCode::ResumeIgnored,
        ErrorCode::Headers,
        ErrorCode::Conflict,
        ErrorCode::StreamClosed,
    ];

    /// The code named by its JS name (exact match), else `None`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// The JS name.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidUrl => "invalid-url",
            ErrorCode::HttpStatus => "http-status",
            ErrorCode::NoContent => "no-content",
            ErrorCode::BadContentType => "bad-content-type",
            ErrorCode::NetworkOrCors => "network-or-cors",
            ErrorCode::Timeout => "timeout",
            ErrorCode::TooLarge => "too-large",
            ErrorCode::Parse => "parse",
            ErrorCode::Auth => "auth",
            ErrorCode::GaveUp => "gave-up",
            ErrorCode::ResumeIgnored => "resume-ignored",
            ErrorCode::Headers => "headers",
            ErrorCode::Conflict => "conflict",
            ErrorCode::StreamClosed => "stream-closed",
        }
    }
}

/// What [`Action::Note`] tells the debug log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Note {
    /// An `eventsource` stream stayed silent past
    /// `watchdog.firstEventTimeoutMs`, and no other transport is usable (by
    /// options and capability): it is kept open, since a native
    /// `EventSource` cannot see comments and a healthy server that only sends
    /// comment heartbeats looks exactly like this; reconnecting could not
    /// tell more. Noted once per connection; the idle watchdog runs once an
    /// event arrives.
    SilentStreamKept,
    /// At start: no usable transport sends `Last-Event-ID` (only
    /// `eventsource`, or every endpoint cross-origin), so every resume
    /// carries the cursor only in the `lastEventIdParam` query parameter. A
    /// server that reads only the header goes on from "now" and the events in
    /// between are lost; the engine reports what it can see of that
    /// (`ResetReason::Gap`), the README says what the server must read.
    CursorInQueryOnly,
    /// The app called `reconnect()`: what it did and why (`reconnect: ` and
    /// the answer's JS name).
    Reconnect(super::reconnect::ReconnectAnswer),
}

impl Note {
    /// The name the debug log shows.
    pub const fn as_str(self) -> &'static str {
        match self {
            Note::SilentStreamKept => "silent-stream-kept",
            Note::CursorInQueryOnly => "cursor-in-query-only",
            Note::Reconnect(answer) => answer.note(),
        }
    }
}

/// Why the app should refetch its state ([`Action::Reset`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResetReason {
    /// The server sent an event of type `reset` (it cannot fill the gap since
    /// the cursor). Not delivered as a message; the dedupe memory is cleared.
    Server,
    /// A stream that delivered messages but never an id (empty cursor) is being
    /// reconnected: nothing tells the server where to resume, so messages sent
    /// in between may be lost (BC-18 NOREPLAY). Raised once per reconnect.
    Unresumable,
    /// The server answered `409 Conflict` to a request that resumed from a
    /// cursor (Electric's "must-refetch"): the cursor is no longer valid. The
    /// cursor, the dedupe memory and the validators are forgotten and one
    /// request without a cursor follows at once (see `engine::cursor_reset`).
    CursorInvalid,
    /// Durable Streams: the server answered `410 Gone` (the offset is before
    /// its retention, or the stream was soft-deleted). The connection starts
    /// over once from the configured start (see `engine::durable`).
    Gone,
    /// A resume was not honoured: the server numbers its events with
    /// consecutive integer ids, the request resumed from cursor `N`, and the
    /// first new id after it is above `N + 1` (it went on from "now"): the
    /// events in between are lost (see `engine::gap`). Raised after that
    /// event is delivered; nothing is forgotten.
    Gap,
}

impl ResetReason {
    /// Every reset reason, in documentation order.
    pub const ALL: [ResetReason; 5] = [
        ResetReason::Server,
        ResetReason::Unresumable,
        ResetReason::CursorInvalid,
        ResetReason::Gone,
        ResetReason::Gap,
    ];

    /// `"server"`, `"unresumable"`, `"cursor-invalid"`, `"gone"` or `"gap"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ResetReason::Server => "server",
            ResetReason::Unresumable => "unresumable",
            ResetReason::CursorInvalid => "cursor-invalid",
            ResetReason::Gone => "gone",
            ResetReason::Gap => "gap",
        }
    }

    /// The reason named `name` (the inverse of [`ResetReason::as_str`]).
    pub fn from_name(name: &str) -> Option<ResetReason> {
        ResetReason::ALL.into_iter().find(|r| r.as_str() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocabulary_is_the_design_table() {
        let reasons = [
            Reason::Start,
            Reason::Capability,
            Reason::Backoff,
            Reason::RetryAfter,
            Reason::RateLimit,
            Reason::ServerHint,
            Reason::BreakerOpen,
            Reason::BreakerProbe,
            Reason::BufferedStream,
            Reason::Stalled,
            Reason::OpenFailed,
            Reason::FailbackProbe,
            Reason::Hidden,
            Reason::Visible,
            Reason::Offline,
            Reason::Online,
            Reason::Frozen,
            Reason::Resumed,
            Reason::PermanentError,
            Reason::ClosedByUser,
            Reason::Aborted,
            Reason::ResumeIgnored,
        ]
        .map(Reason::as_str)
        .join(", ");
        assert_eq!(
            reasons,
            "start, capability, backoff, retry-after, rate-limit, server-hint, breaker-open, \
             breaker-probe, buffered-stream, stalled, open-failed, failback-probe, hidden, \
             visible, offline, online, frozen, resumed, permanent-error, closed-by-user, aborted, \
             resume-ignored"
        );
        let codes = [
            ErrorCode::InvalidUrl,
            ErrorCode::HttpStatus,
            ErrorCode::NoContent,
            ErrorCode::BadContentType,
            ErrorCode::NetworkOrCors,
            ErrorCode::Timeout,
            ErrorCode::TooLarge,
            ErrorCode::Parse,
            ErrorCode::Auth,
            ErrorCode::GaveUp,
            ErrorCode::ResumeIgnored,
        ]
        .map(ErrorCode::as_str)
        .join(", ");
        assert_eq!(
            codes,
            "invalid-url, http-status, no-content, bad-content-type, network-or-cors, timeout, \
             too-large, parse, auth, gave-up, resume-ignored"
        );
        let states = [
            State::Connecting,
            State::Open,
            State::Waiting,
            State::Paused,
            State::Closed,
        ]
        .map(State::as_str)
        .join(", ");
        assert_eq!(states, "connecting, open, waiting, paused, closed");
        assert_eq!(ResetReason::Server.as_str(), "server");
        assert_eq!(ResetReason::Unresumable.as_str(), "unresumable");
        assert_eq!(ResetReason::CursorInvalid.as_str(), "cursor-invalid");
    }

    /// `from_name` inverts `as_str` for every listed value, names are
    /// distinct, and an unknown name is `None` (the crossTab channel decodes
    /// posts with these).
    #[test]
    fn names_round_trip() {
        for s in State::ALL {
            assert_eq!(State::from_name(s.as_str()), Some(s));
        }
        for r in Reason::ALL {
            assert_eq!(Reason::from_name(r.as_str()), Some(r));
        }
        for c in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_name(c.as_str()), Some(c));
        }
        for r in ResetReason::ALL {
            assert_eq!(ResetReason::from_name(r.as_str()), Some(r));
        }
        assert_eq!(ResetReason::from_name("must-refetch"), None);
        assert_eq!(State::from_name("Open"), None);
        assert_eq!(Reason::from_name(""), None);
        assert_eq!(ErrorCode::from_name("invalid-option"), None);
    }
}
