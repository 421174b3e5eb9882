//! What a response means: the verdict on a status and content type, and how
//! events (parsed SSE, native, JSON, raw resource) become deliveries.
//!
//! Status rules (ARCHITECTURE.md "Defaults"; WHATWG HTML §9.2 "fail the connection";
//! BC-10, BC-11):
//! - 401 → one retry with refreshed headers when the app has custom headers,
//!   else fatal `auth`; 403 → fatal `auth`.
//! - 429 and 503 → retried, after `Retry-After` / rate-limit reset when sent;
//!   429 without a hint doubles the backoff step.
//! - 408, 425 and every 5xx → retried with backoff (on `long-poll`, 408 is
//!   "no news": nchan answers it when a hold ends empty).
//! - Streams: 200 with `text/event-stream` opens; 200 with another or no
//!   content type → fatal `bad-content-type`; 204 → fatal `no-content`;
//!   anything else → fatal `http-status` (205, 299, 404, 410, …).
//! - `long-poll` and `poll`: 204 and 304 are "no news"; another 2xx has a body
//!   whose kind follows its content type; anything else → fatal `http-status`,
//!   except a `410 Gone` that ends a subscription the server had accepted
//!   (see [`Engine::gone_is_transient`]): retried with backoff.

use alloc::string::String;

use super::action::{Action, ErrorCode, Message, ResetReason};
use super::config::TransportKind;
use super::state::BodyKind;
use super::Engine;
use crate::policy::dedupe::{content_hash, SKIPPED_CONTENT};
use crate::policy::http_date::parse_http_date;
use crate::policy::validators::Validators;
use crate::wire::push_decimal;

/// The event type that makes the app refetch its state ([`Action::Reset`]).
pub const RESET_EVENT: &str = "reset";

/// The subscription's own event types (ARCHITECTURE.md "Events"; `uptodate` is the
/// Durable Streams "caught up" moment, [`Action::UpToDate`]; `statuschange`
/// is the calm status, `tidings_core::calm`). A server event of
/// one of these types is never dispatched to the app as a message, whatever
/// `events` lists: `reset` keeps its protocol meaning ([`Action::Reset`]), the
/// others are dropped and reported as [`Action::Ignored`] (a server's `event: error`
/// must never be taken for a connection failure). The JS options refuse these names in `events` and
/// `heartbeatEvent`. `open` and `error` come first: a native `EventSource`
/// has listeners of its own for them, the adapter listens for the rest.
pub const RESERVED_EVENTS: [&str; 7] = [
    "open",
    "error",
    "statechange",
    "transportchange",
    "reset",
    "uptodate",
    "statuschange",
];

/// How many event types left out by `events` are reported
/// ([`Action::Ignored`] with `filtered`), each once per connection.
pub const MAX_FILTERED_TOLD: usize = 16;

/// Who an event is for ([`Engine::audience`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Audience {
    /// Delivered (dedupe and the size limit permitting).
    App,
    /// The heartbeat event: liveness only.
    Heartbeat,
    /// `reset`: [`Action::Reset`].
    Reset,
    /// Another reserved name: [`Action::Ignored`].
    Reserved,
    /// Left out by the `events` filter.
    Filtered,
}

/// The verdict on a response head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// A usable event stream: the stream is open.
    OpenStream,
    /// A request transport's answer with a body of this kind.
    Body(BodyKind),
    /// A request transport's "nothing new".
    NoNews,
    /// Retry later; read `Retry-After` / rate-limit headers when
    /// `server_hint`; multiply the backoff step by `step_multiplier`.
    Retry {
        server_hint: bool,
        step_multiplier: u32,
    },
    /// 401 or 403: the credentials were refused.
    Unauthorized,
    /// Stop.
    Fatal(ErrorCode),
}

/// The verdict for `status` and `content_type` on `transport`.
pub(crate) fn classify(
    transport: TransportKind,
    status: u16,
    content_type: Option<&str>,
) -> Verdict {
    let request = matches!(transport, TransportKind::LongPoll | TransportKind::Poll);
    match status {
        401 | 403 => Verdict::Unauthorized,
        408 if transport == TransportKind::LongPoll => Verdict::NoNews,
        429 => Verdict::Retry {
            server_hint: true,
            step_multiplier: 2,
        },
        503 => Verdict::Retry {
            server_hint: true,
            step_multiplier: 1,
        },
        408 | 425 | 500..=599 => Verdict::Retry {
            server_hint: false,
            step_multiplier: 1,
        },
        204 | 304 if request => Verdict::NoNews,
        200..=299 if request => Verdict::Body(body_kind(content_type)),
        200 if is_event_stream(content_type) => Verdict::OpenStream,
        200 => Verdict::Fatal(ErrorCode::BadContentType),
        204 => Verdict::Fatal(ErrorCode::NoContent),
        _ => Verdict::Fatal(ErrorCode::HttpStatus),
    }
}

/// What a `Content-Type` value says about a body: the one media-type rule of
/// tidings, used by the engine's verdicts and asked by the adapter (which
/// hands over the header and reads the body as this says). Only the media
/// type before `;` counts, trimmed, compared ASCII case-insensitively and in
/// full: `text/event-streamx` is not an event stream and `application/jsonp`
/// is not JSON (RFC 9110 §8.3.1: a media type is a token, not a prefix).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MediaType {
    /// `text/event-stream`: bytes through the SSE parser.
    EventStream,
    /// `application/json` or any `…/…+json` type (RFC 6839 structured
    /// syntax suffix): decoded with `JSON.parse`.
    Json,
    /// Anything else, or no `Content-Type`: a raw resource.
    Other,
}

impl MediaType {
    /// The verdict on `content_type` (the header value as sent, if any).
    pub fn of(content_type: Option<&str>) -> MediaType {
        let m = content_type
            .map(|ct| crate::wire::before_byte(ct, b';').trim())
            .unwrap_or("");
        let b = m.as_bytes();
        if m.eq_ignore_ascii_case("text/event-stream") {
            MediaType::EventStream
        } else if m.eq_ignore_ascii_case("application/json")
            || (b.len() > 5
                && b[..b.len() - 5].contains(&b'/')
                && b[b.len() - 5..].eq_ignore_ascii_case(b"+json"))
        {
            MediaType::Json
        } else {
            MediaType::Other
        }
    }
}

/// `text/event-stream` (parameters ignored, case-insensitive).
pub(crate) fn is_event_stream(content_type: Option<&str>) -> bool {
    MediaType::of(content_type) == MediaType::EventStream
}

/// How a request transport's body is delivered.
pub(crate) fn body_kind(content_type: Option<&str>) -> BodyKind {
    match MediaType::of(content_type) {
        MediaType::EventStream => BodyKind::EventStream,
        MediaType::Json => BodyKind::Json,
        MediaType::Other => BodyKind::Resource,
    }
}

/// Whether a message id decoded from a JSON body can be a cursor: not one
/// holding U+0000, CR or LF. No event stream can carry such an id (an `id:`
/// line with NUL is ignored, WHATWG HTML §9.2.6; CR and LF end the line), and
/// a `Last-Event-ID` header holding one makes the browser refuse the request,
/// so taking it as the cursor would leave the subscription failing forever.
/// Such a message is delivered without an own id, and the app's starting
/// `lastEventId` must pass it too.
pub fn is_usable_event_id(id: &str) -> bool {
    // A loop, not `Iterator::any`: no closure and fold of its own in the wasm.
    for b in id.bytes() {
        if matches!(b, 0 | b'\r' | b'\n') {
            return false;
        }
    }
    true
}

/// The `events` filter: `message` and the listed names.
pub(crate) fn wanted(events: &[String], event: &str) -> bool {
    event == "message" || events.iter().any(|e| e == event)
}

/// nchan's message id `<Unix seconds>:<tag>` from a raw answer's validators:
/// nchan's long-poll and interval-poll name a message by `Last-Modified` (its
/// publication second) and a bare-digit `Etag` (its number within that second;
/// not a quoted entity-tag, so no RFC 9110 server sends one). `None` for any
/// other pair, which keeps the plain resource rules.
pub(crate) fn nchan_message_id(v: &Validators) -> Option<String> {
    let tag = v.etag.as_deref()?;
    // Up to ten digits: `parse_decimal` checks them (no `all` fold).
    if tag.len() > 10 {
        return None;
    }
    crate::wire::parse_decimal(tag.as_bytes())?;
    let ms = parse_http_date(v.last_modified.as_deref()?)?;
    let secs = u64::try_from(ms / 1000).ok()?;
    let mut id = String::with_capacity(24);
    push_decimal(&mut id, secs);
    id.push(':');
    id.push_str(tag);
    Some(id)
}

/// Whether a raw `body` answering `transport` is a long-poll's "no news": a
/// 200 whose body is empty or only ASCII whitespace (whatever its content
/// type: an empty JSON or event-stream body carries no message either). A
/// server that does not hold answers this way when nothing happened; it is
/// neither a message with empty data nor a failure, and the cursor stays
/// (the pacing is `Engine::succeed_request`'s). An nchan message keeps its
/// id even with empty data, so it stays an event. On `poll` an empty
/// resource is news (the resource is empty now).
pub(crate) fn empty_long_poll_answer(
    transport: TransportKind,
    body: &str,
    validators: &Validators,
) -> bool {
    transport == TransportKind::LongPoll && is_blank(body) && nchan_message_id(validators).is_none()
}

/// Whether `body` is empty or only ASCII whitespace (no news on any
/// content type).
pub(crate) fn is_blank(body: &str) -> bool {
    // A loop, not `Iterator::all`: no closure and fold of its own in the wasm.
    for b in body.bytes() {
        if !b.is_ascii_whitespace() {
            return false;
        }
    }
    true
}

impl Engine {
    /// Whether a `410 Gone` on `transport`, answered `held_ms` after the
    /// request went out, is retried with backoff instead of stopping.
    ///
    /// RFC 9110 makes 410 permanent, and for the endpoint itself it is: a
    /// first request answered 410 at once stops with `http-status`. But nchan
    /// answers 410 to every held long-poll when nginx stops or reloads (and
    /// when the channel is deleted), which would stop every client on a
    /// routine restart. So on `long-poll` and `poll` a 410 is transient once
    /// the server had accepted the subscription: some earlier request of this
    /// connection was answered (a message, 304, 408, an `open`), or this
    /// request was held at least `backoff.floorMs` before the 410. It is then
    /// an `http-status` error (status 410) under backoff that counts toward
    /// the breaker, like a 5xx; `backoff.maxAttempts` bounds it. Streams keep
    /// 410 permanent (nchan ends a stream with a `:410:` comment and a clean
    /// end, not with a status).
    pub(crate) fn gone_is_transient(&self, transport: TransportKind, held_ms: u64) -> bool {
        matches!(transport, TransportKind::LongPoll | TransportKind::Poll)
            && (self.server_answered || held_ms >= self.backoff.config().floor_ms)
    }

    /// One event from any transport, after the cursor has been updated: the
    /// heartbeat event is liveness only; `reset` becomes [`Action::Reset`];
    /// the `events` filter applies; data larger than the limit
    /// (`sse_limits.max_event_data_bytes`: JSON messages and native
    /// `EventSource` events, whose bodies the browser decoded whole) is
    /// skipped like an SSE event past it; dedupe (the event's own id with the
    /// same type and data: see `policy::dedupe`) applies; the rest is
    /// delivered. Returns whether it was delivered. An event not for the app
    /// goes through dedupe too ([`Engine::offer_unwanted`]): a repeat is
    /// counted as a dropped duplicate, so the caller keeps the cursor. An
    /// event that matches the `end` rule closes the connection, and nothing
    /// after it (the rest of its chunk) is delivered (`engine::start`).
    pub(crate) fn offer_event(
        &mut self,
        event: String,
        data: String,
        own_id: Option<String>,
        last_event_id: String,
    ) -> bool {
        #[cfg(feature = "post-streams")]
        if self.phase.attempt().is_none() || self.end_at_marker(&event, &data) {
            return false;
        }
        match self.audience(&event) {
            Audience::App => {}
            Audience::Reset => {
                self.offer_reset(&event, &data, own_id.as_deref());
                return false;
            }
            other => {
                let content = content_hash(&event, &data);
                self.offer_unwanted(other, &event, own_id.as_deref(), content);
                return false;
            }
        }
        if data.len() > self.config.sse_limits.max_event_data_bytes {
            if self.dedupe.should_report_skipped(own_id.as_deref()) {
                self.skip_event(own_id, last_event_id);
            }
            return false;
        }
        let position = self.replay_position(own_id.as_deref());
        if !self.dedupe.should_deliver(own_id.as_deref(), &event, &data) {
            self.note_replay(position, true);
            return false;
        }
        self.note_replay(position, false);
        if let Some(a) = self.phase.attempt_mut() {
            a.delivered = a.delivered.saturating_add(1);
        }
        let id = own_id.unwrap_or_default();
        let proves_gap = self.gap_in(&id);
        self.actions
            .push_back(Action::Deliver(alloc::boxed::Box::new(Message {
                id,
                last_event_id,
                event,
                data,
                binary: false,
            })));
        if proves_gap {
            self.raise_gap();
        }
        true
    }

    /// A `reset` event. A replayed one (its id and content seen before) is
    /// not news: it neither clears dedupe again nor is raised again. Its id
    /// is remembered past the clear it caused.
    fn offer_reset(&mut self, event: &str, data: &str, id: Option<&str>) {
        let content = content_hash(event, data);
        if self.dedupe.is_new_undelivered(id, content) {
            self.server_reset();
            self.dedupe.is_new_undelivered(id, content);
        }
    }

    /// Who an event of type `event` is for: not the app when it is the
    /// heartbeat (liveness only), `reset` (raised as [`Action::Reset`]),
    /// another of [`RESERVED_EVENTS`] (reported as [`Action::Ignored`]), or
    /// neither `message` nor one of `events`.
    fn audience(&self, event: &str) -> Audience {
        if self.config.heartbeat() == Some(event) {
            Audience::Heartbeat
        } else if event == RESET_EVENT {
            Audience::Reset
        } else if RESERVED_EVENTS.contains(&event) {
            Audience::Reserved
        } else if wanted(&self.config.events, event) {
            Audience::App
        } else {
            Audience::Filtered
        }
    }

    /// A server `reset` event: the server's history restarted.
    fn server_reset(&mut self) {
        self.dedupe.clear();
        // The server announced the jump that follows: no `gap` for it.
        self.forget_numbering();
        self.actions.push_back(Action::Reset {
            reason: ResetReason::Server,
        });
    }

    /// An event not for the app (`who`: heartbeat, reserved or filtered) with
    /// its `content` hash: a repeat of one seen before (same id and content,
    /// see `Dedupe::is_new_undelivered`) is a replay: not reported, not
    /// counted as `filtered` (the server's news). One with an id of its own
    /// is remembered, and extends or stops the replay watch like any event
    /// (an id-less one, like a comment, leaves the watch alone).
    fn offer_unwanted(&mut self, who: Audience, event: &str, own_id: Option<&str>, content: u64) {
        let Some(id) = own_id.filter(|id| !id.is_empty()) else {
            self.report_unwanted(who, event, "");
            return;
        };
        let position = self.replay_position(Some(id));
        let new = self.dedupe.is_new_undelivered(Some(id), content);
        self.note_replay(position, !new);
        if new {
            if self.gap_in(id) {
                self.raise_gap();
            }
            self.report_unwanted(who, event, id);
        }
    }

    /// A new event not for the app: a reserved name is reported, one left
    /// out by the filter is the server's news (`made_progress`) and reported
    /// the first time its type comes (of the first [`MAX_FILTERED_TOLD`]
    /// types: a server naming each event differently cannot grow the list).
    fn report_unwanted(&mut self, who: Audience, event: &str, id: &str) {
        let filtered = who == Audience::Filtered;
        if filtered {
            if let Some(a) = self.phase.attempt_mut() {
                a.filtered = a.filtered.saturating_add(1);
            }
            // The rest is the debug log's only.
            if !cfg!(feature = "debug") {
                return;
            }
            let told = &mut self.filtered_told;
            if told.len() >= MAX_FILTERED_TOLD || told.iter().any(|t| t == event) {
                return;
            }
            told.push(String::from(event));
        }
        if cfg!(feature = "debug") && (filtered || who == Audience::Reserved) {
            self.actions.push_back(Action::Ignored {
                event: String::from(event),
                id: String::from(id),
                filtered,
            });
        }
    }

    /// An SSE event the parser skipped for its size: reported like a
    /// delivery would be (same filter, same dedupe), as [`Engine::skip_message`].
    /// `event` is `None` when its type is unknown (its `event` line was past
    /// the limit): reported, since it may be one the app wants.
    pub(crate) fn offer_skipped(
        &mut self,
        event: Option<&str>,
        own_id: Option<String>,
        last_event_id: String,
    ) {
        let who = event.map_or(Audience::App, |e| self.audience(e));
        match who {
            Audience::App => {}
            Audience::Reset => return self.server_reset(),
            other => {
                let event = event.unwrap_or_default();
                return self.offer_unwanted(other, event, own_id.as_deref(), SKIPPED_CONTENT);
            }
        }
        if self.dedupe.should_report_skipped(own_id.as_deref()) {
            self.skip_event(own_id, last_event_id);
        }
    }

    /// A new event skipped for its size: its id counts in the numbering
    /// like a delivered one's (`engine::gap`), then [`Engine::skip_message`].
    fn skip_event(&mut self, own_id: Option<String>, last_event_id: String) {
        let proves_gap = self.gap_in(own_id.as_deref().unwrap_or_default());
        self.skip_message(own_id, last_event_id);
        if proves_gap {
            self.raise_gap();
        }
    }

    /// Report a message skipped for its size: [`Action::Skipped`], then the
    /// `too-large` error (not fatal, nothing retried: the connection goes on).
    pub(crate) fn skip_message(&mut self, own_id: Option<String>, last_event_id: String) {
        if let Some(a) = self.phase.attempt_mut() {
            a.delivered = a.delivered.saturating_add(1);
        }
        let id = own_id.unwrap_or_default();
        self.actions.push_back(Action::Skipped {
            id: id.clone(),
            last_event_id,
        });
        self.actions.push_back(Action::Error {
            code: ErrorCode::TooLarge,
            status: None,
            retry_in_ms: None,
            fatal: false,
            id: Some(id),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use TransportKind::{EventSource, FetchSse, LongPoll, Poll};

    #[test]
    fn stream_statuses_bc10() {
        let es = Some("text/event-stream; charset=utf-8");
        assert_eq!(classify(FetchSse, 200, es), Verdict::OpenStream);
        assert_eq!(
            classify(FetchSse, 200, Some("Text/Event-Stream")),
            Verdict::OpenStream
        );
        assert_eq!(
            classify(FetchSse, 200, None),
            Verdict::Fatal(ErrorCode::BadContentType)
        );
        assert_eq!(
            classify(FetchSse, 200, Some("text/html")),
            Verdict::Fatal(ErrorCode::BadContentType)
        );
        assert_eq!(
            classify(FetchSse, 204, None),
            Verdict::Fatal(ErrorCode::NoContent)
        );
        for s in [205, 299, 404, 410, 302, 400] {
            assert_eq!(
                classify(FetchSse, s, es),
                Verdict::Fatal(ErrorCode::HttpStatus),
                "{s}"
            );
        }

        assert_eq!(classify(EventSource, 403, None), Verdict::Unauthorized);
        assert_eq!(classify(FetchSse, 401, None), Verdict::Unauthorized);
        let plain = Verdict::Retry {
            server_hint: false,
            step_multiplier: 1,
        };
        for s in [408, 425, 500, 502, 504, 599] {
            assert_eq!(classify(FetchSse, s, es), plain, "{s}");
        }
        assert_eq!(
            classify(FetchSse, 429, None),
            Verdict::Retry {
                server_hint: true,
                step_multiplier: 2
            }
        );
    }

    #[test]
    fn request_statuses() {
        assert_eq!(classify(LongPoll, 408, None), Verdict::NoNews);
        assert_eq!(classify(LongPoll, 204, None), Verdict::NoNews);
        assert_eq!(classify(Poll, 304, None), Verdict::NoNews);
        assert!(matches!(classify(Poll, 408, None), Verdict::Retry { .. }));
        assert_eq!(
            classify(LongPoll, 200, Some("application/json")),
            Verdict::Body(BodyKind::Json)
        );
        assert_eq!(
            classify(Poll, 200, Some("application/vnd.api+json")),
            Verdict::Body(BodyKind::Json)
        );
        assert_eq!(
            classify(Poll, 200, Some("text/event-stream")),
            Verdict::Body(BodyKind::EventStream)
        );
        assert_eq!(classify(Poll, 200, None), Verdict::Body(BodyKind::Resource));
        assert_eq!(
            classify(Poll, 404, None),
            Verdict::Fatal(ErrorCode::HttpStatus)
        );
    }

    #[test]
    fn nchan_ids_from_validators() {
        let v = |etag: Option<&str>, lm: Option<&str>| Validators {
            etag: etag.map(String::from),
            last_modified: lm.map(String::from),
        };
        let lm = Some("Sun, 29 Nov 2026 20:04:13 GMT");
        assert_eq!(
            nchan_message_id(&v(Some("0"), lm)).as_deref(),
            Some("1795982653:0")
        );
        assert_eq!(
            nchan_message_id(&v(Some("17"), lm)).as_deref(),
            Some("1795982653:17")
        );
        for etag in [Some("\"0\""), Some("W/\"0\""), Some("a1"), Some(""), None] {
            assert_eq!(nchan_message_id(&v(etag, lm)), None, "{etag:?}");
        }
        assert_eq!(nchan_message_id(&v(Some("0"), None)), None);
        assert_eq!(nchan_message_id(&v(Some("0"), Some("yesterday"))), None);
        assert_eq!(
            nchan_message_id(&v(Some("0"), Some("Thu, 01 Jan 1970 00:00:00 GMT"))).as_deref(),
            Some("0:0")
        );
    }

    #[test]
    fn reserved_names_open_and_error_first() {
        assert_eq!(RESERVED_EVENTS[..2], ["open", "error"]);
        assert!(RESERVED_EVENTS.contains(&RESET_EVENT));
    }

    #[test]
    fn filter() {
        let events = vec![String::from("price")];
        assert!(wanted(&events, "message"));
        assert!(wanted(&events, "price"));
        assert!(!wanted(&events, "goaway"));
        assert_ne!(MediaType::of(Some("json")), MediaType::Json);
        assert_eq!(MediaType::of(Some("application/é+JSON")), MediaType::Json);
        assert_ne!(MediaType::of(Some("+json")), MediaType::Json);
    }

    #[test]
    fn media_type_is_the_whole_token_not_a_prefix() {
        use MediaType::*;
        let cases = [
            (Some("text/event-stream"), EventStream),
            (Some(" TEXT/Event-Stream ; charset=utf-8"), EventStream),
            (Some("text/event-streamx"), Other),
            (Some("text/event-stream-x;a=b"), Other),
            (Some("application/json"), Json),
            (Some("application/JSON; charset=utf-8"), Json),
            (Some("application/ld+json"), Json),
            (Some("application/jsonp"), Other),
            (Some("application/json5"), Other),
            (Some("text/plain; x=+json"), Other),
            (Some("+json"), Other),
            (Some("x+json"), Other),
            (Some(""), Other),
            (None, Other),
        ];
        for (ct, want) in cases {
            assert_eq!(MediaType::of(ct), want, "{ct:?}");
        }
    }
}
