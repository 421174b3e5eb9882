//! Facts the adapter reports (the arguments of the `handle_*` methods).

use alloc::string::String;
use alloc::vec::Vec;

use crate::policy::headers::HeaderLookup;

/// Identifies one request (one `Open`). Facts about a request carry the id the
/// engine gave in [`OpenRequest::id`](super::OpenRequest::id); facts for any
/// other id (a stale attempt) are ignored. Ids start at 1 and only grow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AttemptId(pub u64);

/// A response head as `fetch` reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResponseHead {
    /// The HTTP status (after redirects).
    pub status: u16,
    /// The `Content-Type` value as sent, if any (`"text/event-stream;
    /// charset=utf-8"`): only the media type before `;` is compared, ASCII
    /// case-insensitively.
    pub content_type: Option<String>,
    /// The response header fields the engine reads, lower-case names:
    /// `retry-after`, `date`, `etag`, `last-modified`, `x-poll-interval`,
    /// `ratelimit-reset`, `x-ratelimit-reset`. Others are ignored; names are
    /// matched case-insensitively anyway. Cross-origin, JS can only read the
    /// ones the server lists in `Access-Control-Expose-Headers`.
    pub headers: Vec<(String, String)>,
}

impl ResponseHead {
    /// A head with `status`, no content type and no headers.
    pub fn new(status: u16) -> Self {
        ResponseHead {
            status,
            content_type: None,
            headers: Vec::new(),
        }
    }

    /// This head with a `Content-Type`.
    pub fn with_content_type(mut self, content_type: &str) -> Self {
        self.content_type = Some(String::from(content_type));
        self
    }

    /// This head with one more header field (the name is lower-cased).
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers
            .push((name.to_ascii_lowercase(), String::from(value)));
        self
    }

    /// `200 OK` with `Content-Type: text/event-stream`.
    pub fn event_stream() -> Self {
        ResponseHead::new(200).with_content_type("text/event-stream")
    }
}

impl HeaderLookup for ResponseHead {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.header(name)
    }
}

/// One message of a JSON long-poll or poll body, decoded by the adapter with
/// `JSON.parse` (a JSON array of `{id, event?, data}` or an envelope
/// `{messages, _polling?}`; a non-string `data` re-serialized as JSON text).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct IncomingMessage {
    /// The message's own id, if it has one (dedupe and the cursor use it).
    pub id: Option<String>,
    /// Its event type; `None` (or empty) = `"message"`.
    pub event: Option<String>,
    /// Its data.
    pub data: String,
}

/// How a request failed, as the adapter sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TransportError {
    /// A network error (connection refused or reset, DNS, native
    /// `EventSource` `error`).
    Network,
    /// `fetch` rejected with a `TypeError` while online: a network error or a
    /// CORS refusal, which JS cannot tell apart.
    NetworkOrCors,
    /// The request was aborted by something other than the engine (an
    /// engine-requested abort makes the attempt stale, so its facts are
    /// ignored anyway).
    Aborted,
    /// A timeout of the adapter's own fired. The engine enforces every
    /// deadline itself (long-poll hold, connect, idle: its `Wait`), so the
    /// browser adapter never reports it; an embedder whose transport has
    /// a timeout of its own may.
    Timeout,
    /// The native `EventSource` failed before it opened (the browser hides
    /// why: a status other than 200, a wrong content type, CORS), and a
    /// `fetch` of the same URL sent right after got `200 text/event-stream`.
    /// So the path, CORS and the endpoint work and the server refused that
    /// one connection (a one-shot 503, 429 or 204, a restart): a transient
    /// server-side failure. The engine reports `http-status` without a
    /// status and retries with backoff (counted for the breaker and
    /// `maxAttempts`), and it is no evidence against the transport, as no
    /// HTTP status is (the server answered). Only valid before the stream
    /// opened; after it, it counts as [`TransportError::Network`]. The
    /// engine derives it itself from the probe's head in
    /// [`Engine::handle_native_probe`](super::Engine::handle_native_probe).
    ServerRefused,
    /// The native `EventSource` fired `error` in `readyState` CONNECTING:
    /// it was about to reestablish the connection (WHATWG HTML §9.2.3), which
    /// it does when the body ended and on a network error it would retry; the
    /// browser shows both alike. After the stream opened, the engine takes it
    /// for the end of the stream (what [`Engine::handle_stream_end`] reports
    /// for `fetch-sse`: no `network-or-cors` error; a real outage shows at the
    /// reconnect, whose open fails); before, for a failed open
    /// ([`TransportError::Network`]). readyState CLOSED (the browser failed
    /// the connection) is [`TransportError::Network`].
    ///
    /// [`Engine::handle_stream_end`]: super::Engine::handle_stream_end
    NativeReconnecting,
    /// The native `EventSource` fired `error` in `readyState` CLOSED: the
    /// browser failed the connection. Before the stream opened, the browser
    /// hid why, so the engine answers once with [`Action::Probe`] and waits
    /// for its answer; after it (or a second time), it is a
    /// [`TransportError::Network`].
    ///
    /// [`Action::Probe`]: super::Action::Probe
    NativeFailed,
    /// A long-poll or poll body that says it is JSON and does not parse:
    /// cut short (WebKitGTK reports a connection reset mid-body as the
    /// body's end) or broken. A failed attempt with a `parse` error,
    /// retried with backoff; never a message.
    BadBody,
}

/// The browser's network information (`navigator.connection`), if any.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NetworkHint {
    /// `rtt`, ms.
    pub rtt_ms: Option<u64>,
    /// `saveData`.
    pub save_data: bool,
    /// `effectiveType`, used when `rtt` is missing.
    pub effective_type: Option<EffectiveType>,
}

/// `navigator.connection.effectiveType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EffectiveType {
    /// `"slow-2g"`.
    Slow2g,
    /// `"2g"`.
    TwoG,
    /// `"3g"`.
    ThreeG,
    /// `"4g"`.
    FourG,
}

impl EffectiveType {
    /// The JS name.
    pub const fn as_str(self) -> &'static str {
        match self {
            EffectiveType::Slow2g => "slow-2g",
            EffectiveType::TwoG => "2g",
            EffectiveType::ThreeG => "3g",
            EffectiveType::FourG => "4g",
        }
    }

    /// From the JS name, else `None`.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Slow2g, Self::TwoG, Self::ThreeG, Self::FourG]
            .into_iter()
            .find(|t| t.as_str() == name)
    }

    /// The round-trip time the browser associates with this type (the upper
    /// bounds of the Network Information API table: slow-2g ≥ 2000 ms, 2g
    /// 1400 ms, 3g 270 ms, 4g below), used when `rtt` is not reported.
    pub const fn typical_rtt_ms(self) -> u64 {
        match self {
            EffectiveType::Slow2g => 2000,
            EffectiveType::TwoG => 1400,
            EffectiveType::ThreeG => 270,
            EffectiveType::FourG => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_builders_and_lookup() {
        let h = ResponseHead::event_stream().with_header("Retry-After", "5");
        assert_eq!(h.status, 200);
        assert_eq!(h.header("retry-after"), Some("5"));
        assert_eq!(h.headers[0].0, "retry-after");
    }

    #[test]
    fn effective_type_names() {
        for t in ["slow-2g", "2g", "3g", "4g"] {
            assert_eq!(
                EffectiveType::from_name(t).map(EffectiveType::as_str),
                Some(t)
            );
        }
        assert_eq!(EffectiveType::from_name("5g"), None);
    }
}
