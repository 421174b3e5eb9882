//! What a response means: the verdict on a status and content type, and how
//! events (parsed SSE, native, JSON, raw resource) become deliveries.
//!
//! Status rules (DESIGN.md "Defaults"; WHATWG HTML §9.2 "fail the connection";
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
//!   whose kind follows its content type; anything else → fatal `http-status`.

use alloc::string::String;

use super::action::{Action, ErrorCode, Message, ResetReason};
use super::config::TransportKind;
use super::state::BodyKind;
use super::Engine;

/// The event type that makes the app refetch its state ([`Action::Reset`]).
pub const RESET_EVENT: &str = "reset";

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
    /// 401.
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
        401 => Verdict::Unauthorized,
        403 => Verdict::Fatal(ErrorCode::Auth),
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

/// The media type of a `Content-Type` value: before `;`, trimmed, lower-cased
/// comparisons are done by the callers.
fn media_type(content_type: Option<&str>) -> &str {
    content_type
        .map(|ct| ct.split(';').next().unwrap_or("").trim())
        .unwrap_or("")
}

/// `text/event-stream` (parameters ignored, case-insensitive).
pub(crate) fn is_event_stream(content_type: Option<&str>) -> bool {
    media_type(content_type).eq_ignore_ascii_case("text/event-stream")
}

/// `application/json` or any `+json` type.
pub(crate) fn is_json(content_type: Option<&str>) -> bool {
    let m = media_type(content_type);
    let b = m.as_bytes();
    m.eq_ignore_ascii_case("application/json")
        || (b.len() > 5 && b[b.len() - 5..].eq_ignore_ascii_case(b"+json"))
}

/// How a request transport's body is delivered.
pub(crate) fn body_kind(content_type: Option<&str>) -> BodyKind {
    if is_event_stream(content_type) {
        BodyKind::EventStream
    } else if is_json(content_type) {
        BodyKind::Json
    } else {
        BodyKind::Resource
    }
}

/// The `events` filter: `message` and the listed names.
pub(crate) fn wanted(events: &[String], event: &str) -> bool {
    event == "message" || events.iter().any(|e| e == event)
}

impl Engine {
    /// One event from any transport, after the cursor has been updated: the
    /// heartbeat event is liveness only; `reset` becomes [`Action::Reset`];
    /// the `events` filter and dedupe (by the event's own id) apply; the rest
    /// is delivered. Returns whether it was delivered.
    pub(crate) fn offer_event(
        &mut self,
        event: String,
        data: String,
        own_id: Option<String>,
        last_event_id: String,
    ) -> bool {
        if self.config.heartbeat() == Some(event.as_str()) {
            return false;
        }
        if event == RESET_EVENT {
            self.dedupe.clear();
            self.actions.push_back(Action::Reset {
                reason: ResetReason::Server,
            });
            return false;
        }
        if !wanted(&self.config.events, &event) || !self.dedupe.should_deliver(own_id.as_deref()) {
            return false;
        }
        if let Some(a) = self.attempt.as_mut() {
            a.delivered = a.delivered.saturating_add(1);
        }
        self.actions.push_back(Action::Deliver(Message {
            id: own_id.unwrap_or_default(),
            last_event_id,
            event,
            data,
        }));
        true
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
        assert_eq!(
            classify(EventSource, 403, None),
            Verdict::Fatal(ErrorCode::Auth)
        );
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
    fn filter() {
        let events = vec![String::from("price")];
        assert!(wanted(&events, "message"));
        assert!(wanted(&events, "price"));
        assert!(!wanted(&events, "goaway"));
        assert!(!is_json(Some("json")));
        assert!(is_json(Some("application/é+JSON")));
        assert!(!is_json(Some("+json")));
    }
}
