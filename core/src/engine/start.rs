//! Streams started by a request of the app's own (JS `method`, `body`,
//! `resume`) and streams that end on an in-band marker (JS `end`): an LLM
//! answer streamed token by token after a POST, ended by `data: [DONE]`.
//!
//! The rules:
//! - Such a stream goes over `fetch-sse` or `long-poll` only: a native
//!   `EventSource` sends neither a method nor a body, and `poll` repeats
//!   one conditional request (the selector skips the others; a list that
//!   keeps neither is refused at `subscribe`, [`check`]).
//! - Every attempt is one request and sends the body once. Which request
//!   ([`Start`]): before the first event with an id, the app's request
//!   again; after it, by the resume rule ([`Resume`]): the same request with
//!   the cursor where it always goes (`Last-Event-ID`, or the query
//!   parameter cross-origin), for servers that replay; or the request the
//!   app builds from the cursor, for servers that hand out a stream to
//!   resume (the "resumable stream" pattern).
//! - `end`: the first event whose type and data match ([`EndRule`]) is not
//!   delivered; the request is aborted and the connection closes with state
//!   `closed`, reason `stream-closed`, no error and no further request.
//! - Such connections are never shared: the body is the app's value and
//!   cannot be compared (`keys::share_key`). An end rule is part of the
//!   share key: a stream that ends on a marker is not one that does not.

use alloc::string::String;

use super::action::{Action, Reason, State};
use super::config::{Config, TransportKind};
use super::Engine;

/// How a stream started by the app's request resumes once it has a cursor
/// (JS `resume`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Resume {
    /// JS `"replay"` (the default): the same request (method and body)
    /// again, with the cursor; the server replays what follows it.
    #[default]
    Replay,
    /// JS a function `(lastEventId) => ({ url, method?, body? })`: the
    /// request it returns, for servers that resume a stream by its id.
    Request,
}

/// The app's own request (JS `method`, `body`, `resume`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RequestStart {
    /// The method, as given (`fetch` normalizes the case of the standard
    /// ones). Default `"GET"`.
    pub method: String,
    /// The app gave a `body` (the adapter keeps the value).
    pub body: bool,
    /// The resume rule.
    pub resume: Resume,
}

/// The in-band end of a stream (JS `end: { event?, data? }`): an event of
/// this type and with this data; `None` matches any. With neither set it
/// matches nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct EndRule {
    /// The event type (`"message"` for an event without one).
    pub event: Option<String>,
    /// The whole data, compared exactly (`"[DONE]"`).
    pub data: Option<String>,
}

impl EndRule {
    /// Whether an event of type `event` with `data` ends the stream.
    pub fn matches(&self, event: &str, data: &str) -> bool {
        (self.event.is_some() || self.data.is_some())
            && self.event.as_deref().is_none_or(|e| e == event)
            && self.data.as_deref().is_none_or(|d| d == data)
    }
}

/// JS `method`, `body`, `resume` and `end` ([`Config::start`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct StartRules {
    /// The app's request; `None`: a `GET` of the URL.
    pub request: Option<RequestStart>,
    /// The in-band end.
    pub end: EndRule,
}

/// The app's request under `config`, if any.
pub fn request(config: &Config) -> Option<&RequestStart> {
    config.start.as_ref()?.request.as_ref()
}

/// Which request one attempt sends ([`OpenRequest::start`](super::OpenRequest::start)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Start {
    /// A `GET` of the URL (no `method`, `body` or `resume`).
    #[default]
    Get,
    /// The app's request: its method and body, with the cursor as usual.
    Request,
    /// The request the app's `resume` function builds from the cursor (the
    /// engine's `last_event_id` as this attempt starts).
    Resume,
}

/// Which request an attempt with `cursor` sends under `config`.
pub(crate) fn start_of(config: &Config, cursor: &str) -> Start {
    match request(config) {
        None => Start::Get,
        Some(r) if r.resume == Resume::Request && !cursor.is_empty() => Start::Resume,
        Some(_) => Start::Request,
    }
}

/// Whether `transport` can send the app's request under `config`.
pub(crate) fn can_send(config: &Config, transport: TransportKind) -> bool {
    request(config).is_none()
        || matches!(transport, TransportKind::FetchSse | TransportKind::LongPoll)
}

/// The methods `fetch` refuses (WHATWG Fetch "forbidden method"), in any
/// case.
const FORBIDDEN_METHODS: [&str; 3] = ["CONNECT", "TRACE", "TRACK"];

/// The option a request start cannot have, and what it expects instead:
/// a method `fetch` refuses or that is not an HTTP token, a body with `GET`
/// or `HEAD`, a transport list (after [`Config::sanitized`]) with neither
/// `fetch-sse` nor `long-poll`. `Ok` without a request start.
pub fn check(config: &Config) -> Result<(), (&'static str, &'static str)> {
    let Some(r) = request(config) else {
        return Ok(());
    };
    let m = r.method.as_str();
    let is = |name: &str| m.eq_ignore_ascii_case(name);
    // Loops, not `all`/`any` folds (docs/size.md).
    let mut token = !m.is_empty();
    for b in m.bytes() {
        token &= b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    }
    for name in &FORBIDDEN_METHODS {
        token &= !is(name);
    }
    if !token {
        return Err(("method", "a method fetch sends"));
    }
    if r.body && (is("GET") || is("HEAD")) {
        return Err(("body", "none with GET or HEAD"));
    }
    for &t in &config.transports {
        if can_send(config, t) {
            return Ok(());
        }
    }
    Err(("transports", "fetch-sse or long-poll"))
}

impl Engine {
    /// When an event of type `event` with `data` matches the end rule: the
    /// live request is aborted and the connection closes (state `closed`,
    /// reason `stream-closed`; every later input is ignored). Returns
    /// whether it did.
    pub(crate) fn end_at_marker(&mut self, event: &str, data: &str) -> bool {
        let Some(rules) = &self.config.start else {
            return false;
        };
        if !rules.end.matches(event, data) {
            return false;
        }
        if let Some(a) = self.phase.close() {
            self.actions.push_back(Action::Abort(a.id));
        }
        self.set_state(State::Closed, Reason::StreamClosed, None);
        true
    }
}
