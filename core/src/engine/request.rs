//! Rendering a request: the URL with the cursor query parameter, and the
//! request header fields (ARCHITECTURE.md "Server conventions" and "Defaults",
//! cross-origin rules).
//!
//! Where the cursor (last event id) travels:
//! - `eventsource`: always the `lastEventIdParam` query parameter — a new
//!   native `EventSource` cannot send `Last-Event-ID` (BC-08 NATIVE).
//! - `fetch` transports, same-origin: the `Last-Event-ID` header.
//! - `fetch` transports, cross-origin: the query parameter, because the
//!   header would force a CORS preflight.
//! - A cursor that is not visible ASCII (`!` to `~`: a non-ASCII id, a
//!   space, a control character) goes in the query parameter only, on every
//!   transport ([`by_header`]).
//! - An empty cursor is sent nowhere (BC-08: a bare `id` clears it).
//! - After a resume moved the connection off a query-only transport to one
//!   that sends the header (`engine::carrier`), both: the query parameter
//!   as well, so a server that reads only the query keeps resuming.
//!
//! Validators (`If-None-Match`, `If-Modified-Since`) travel as headers on
//! `long-poll` and `poll`: servers answer 304 only to those. One exception:
//! when they name exactly the cursor as an nchan message (`Last-Modified` +
//! `Etag` = `<seconds>:<tag>`, see `decode::nchan_message_id`), only the
//! cursor is sent. nchan takes it from `last_event_id` / `Last-Event-ID` just
//! as well (and answers 304 to it at the tip), and the request stays
//! CORS-simple: cross-origin, the validators cost a preflight before every
//! request, because Chromium (156, measured) does not use its preflight cache
//! for a `no-store` request and Fetch makes every request carrying
//! `If-None-Match` / `If-Modified-Since` `no-store`.
//!
//! The same holds for every `long-poll` whose cursor travels in the query
//! (cross-origin, or not visible ASCII): the cursor already says where to
//! resume, so only it is sent, no validators. Otherwise each request would need a preflight (the cursor
//! changes the URL, so no preflight cache helps either), and a server that
//! allows only `Access-Control-Allow-Origin: *` would refuse every request
//! after the first. `poll` keeps its validators cross-origin (a 304 is its
//! point): such a server must allow `If-None-Match` and `If-Modified-Since`
//! in `Access-Control-Allow-Headers`.
//!
//! A request that carries a validator also carries `Cache-Control: max-age=0`
//! ([`REVALIDATE`]); the app's own `Cache-Control` (its `headers` option,
//! added after ours) replaces it.

use alloc::string::String;
use alloc::vec::Vec;

use super::config::{Config, TransportKind};
use super::decode::nchan_message_id;
use crate::policy::validators::Validators;
use crate::wire::with_query_param;

/// `Accept` for `fetch-sse`.
pub const ACCEPT_EVENT_STREAM: &str = "text/event-stream";
/// `Accept` for `long-poll`: the three body kinds, event stream first. Only
/// CORS-safelisted bytes, so it never forces a preflight.
pub const ACCEPT_LONG_POLL: &str = "text/event-stream, application/json;q=0.9, */*;q=0.8";

/// `Cache-Control` of a conditional request (`If-None-Match` /
/// `If-Modified-Since`).
///
/// The adapter's `fetch` uses `cache: "no-store"` (polls must see their own
/// 304s), with which the browser adds `Cache-Control: no-cache` and `Pragma:
/// no-cache` to every request that carries no `Cache-Control` (WHATWG Fetch,
/// "HTTP-network-or-cache fetch"). Express's freshness check (`fresh`, behind
/// `req.fresh`, `res.json`/`res.send` and `express.static`) reads a request
/// `no-cache` as "ignore the validators" and answers every conditional poll
/// with a full 200 (seen with Express 5.3 and Chromium). `max-age=0` still
/// makes caches on the way revalidate with the origin, and servers then
/// answer the validators. Cross-origin the header is covered by the preflight
/// the validators force anyway (the server must allow `Cache-Control` as well
/// as the two validators).
pub const REVALIDATE: &str = "max-age=0";

/// Whether the cursor goes in the query (else in the `Last-Event-ID` header).
pub(crate) fn cursor_in_query(transport: TransportKind, cross_origin: bool) -> bool {
    transport == TransportKind::EventSource || cross_origin
}

/// Whether `id` may travel as `Last-Event-ID`: visible ASCII only. A page
/// can put other bytes in a `fetch` header only as a string of Latin-1 code
/// points, one per UTF-8 byte (`Headers` takes a ByteString), and WebKitGTK
/// (2.50) encodes that string as UTF-8 again (U+2026 arrives as C3 A2 C2 80
/// C2 A6); servers read header bytes as Latin-1 besides (Node, WSGI, ASGI),
/// and `fetch` trims spaces at a value's edges. The query is percent-encoded
/// UTF-8 on every engine and server, so such an id goes only there.
pub(crate) fn by_header(id: &str) -> bool {
    id.bytes().all(|b| b.is_ascii_graphic())
}

/// The cursor of one request, and where it goes besides its usual place.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cursor<'a> {
    /// The last event id (`""`: none).
    pub id: &'a str,
    /// Also in the query where the header carries it (`engine::carrier`).
    pub query_too: bool,
}

/// The URL and headers of one request.
pub(crate) fn render(
    config: &Config,
    transport: TransportKind,
    cursor: Cursor<'_>,
    validators: &Validators,
) -> (String, Vec<(String, String)>) {
    let (query_too, cursor) = (cursor.query_too, cursor.id);
    let base = config.url_for(transport);
    let in_query =
        cursor_in_query(transport, config.cross_origin.contains(transport)) || !by_header(cursor);
    let request = matches!(transport, TransportKind::LongPoll | TransportKind::Poll);
    let cursor_only = request
        && !cursor.is_empty()
        && ((transport == TransportKind::LongPoll && in_query)
            || nchan_message_id(validators).as_deref() == Some(cursor));
    let url = with_query_param(
        base,
        &config.last_event_id_param,
        if in_query || query_too { cursor } else { "" },
    );
    let mut headers = Vec::new();
    match transport {
        TransportKind::EventSource => return (url, headers),
        TransportKind::FetchSse => headers.push(field("Accept", ACCEPT_EVENT_STREAM)),
        TransportKind::LongPoll => headers.push(field("Accept", ACCEPT_LONG_POLL)),
        TransportKind::Poll => {}
    }
    if !in_query && !cursor.is_empty() {
        headers.push(field("Last-Event-ID", cursor));
    }
    if request && !cursor_only {
        let plain = headers.len();
        for (name, value) in validators.request_headers() {
            headers.push(field(name, value));
        }
        if headers.len() > plain {
            headers.push(field("Cache-Control", REVALIDATE));
        }
    }
    (url, headers)
}

fn field(name: &str, value: &str) -> (String, String) {
    (String::from(name), String::from(value))
}

/// A URL the engine refuses at start (`invalid-url`): empty, or containing
/// ASCII control characters or spaces (the adapter resolves relative URLs).
pub(crate) fn is_invalid_url(url: &str) -> bool {
    if url.trim().is_empty() {
        return true;
    }
    // A loop, not `Iterator::any`: no closure and fold of its own in the wasm.
    for b in url.bytes() {
        if b <= b' ' || b == 0x7f {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::config::CrossOrigin;

    fn c(id: &str) -> Cursor<'_> {
        Cursor {
            id,
            query_too: false,
        }
    }

    /// After a move by `resume-by-header`: the header AND the query.
    #[test]
    fn query_too_sends_both() {
        let config = Config::new("/u");
        let val = Validators::new();
        let both = Cursor {
            id: "29",
            query_too: true,
        };
        let (url, h) = render(&config, TransportKind::FetchSse, both, &val);
        assert_eq!(url, "/u?lastEventId=29");
        assert_eq!(
            h,
            [
                field("Accept", ACCEPT_EVENT_STREAM),
                field("Last-Event-ID", "29")
            ]
        );
        // Not visible ASCII: the query alone, whatever `query_too` says,
        // and on long-poll without the validators (the cursor says it all).
        let mut val = Validators::new();
        val.etag = Some("\"e\"".into());
        let q = Cursor {
            id: "a b",
            query_too: false,
        };
        let (url, h) = render(&config, TransportKind::LongPoll, q, &val);
        assert_eq!(url, "/u?lastEventId=a%20b");
        assert_eq!(h, [field("Accept", ACCEPT_LONG_POLL)]);
        let (_, h) = render(&config, TransportKind::Poll, q, &val);
        assert_eq!(h, [field("If-None-Match", "\"e\""), revalidate()]);
        let other = Cursor {
            id: "\u{2026}",
            query_too: true,
        };
        let (url, h) = render(&config, TransportKind::FetchSse, other, &val);
        assert_eq!(url, "/u?lastEventId=%E2%80%A6");
        assert_eq!(h, [field("Accept", ACCEPT_EVENT_STREAM)]);
        let none = Cursor {
            id: "",
            query_too: true,
        };
        let (url, h) = render(&config, TransportKind::FetchSse, none, &val);
        assert_eq!((url.as_str(), h.len()), ("/u", 1));
    }

    #[test]
    fn headers_per_transport_and_origin() {
        let mut config = Config::new("/u");
        let mut val = Validators::new();
        val.etag = Some("\"e\"".into());
        let (url, h) = render(&config, TransportKind::FetchSse, c("5"), &val);
        assert_eq!(url, "/u");
        assert_eq!(
            h,
            [
                field("Accept", "text/event-stream"),
                field("Last-Event-ID", "5")
            ]
        );
        let (url, h) = render(&config, TransportKind::EventSource, c("5"), &val);
        assert_eq!((url.as_str(), h.len()), ("/u?lastEventId=5", 0));
        let (_, h) = render(&config, TransportKind::Poll, c(""), &val);
        assert_eq!(h, [field("If-None-Match", "\"e\""), revalidate()]);
        config.cross_origin = CrossOrigin::ALL;
        // Cross-origin long-poll: the cursor alone, no validators (no preflight).
        let (url, h) = render(&config, TransportKind::LongPoll, c("5"), &val);
        assert_eq!(url, "/u?lastEventId=5");
        assert_eq!(h, [field("Accept", ACCEPT_LONG_POLL)]);
        // Without a cursor the validators are all it has.
        let (url, h) = render(&config, TransportKind::LongPoll, c(""), &val);
        assert_eq!(url, "/u");
        assert_eq!(
            h,
            [
                field("Accept", ACCEPT_LONG_POLL),
                field("If-None-Match", "\"e\""),
                revalidate()
            ]
        );
        // Poll keeps them: a 304 is its point.
        let (_, h) = render(&config, TransportKind::Poll, c("5"), &val);
        assert_eq!(h, [field("If-None-Match", "\"e\""), revalidate()]);
    }

    #[test]
    fn nchan_validators_carry_the_cursor() {
        let mut config = Config::new("/lp");
        config.cross_origin = CrossOrigin::ALL;
        let mut val = Validators::new();
        val.etag = Some("3".into());
        val.last_modified = Some("Sun, 29 Nov 2026 20:04:13 GMT".into());
        let (url, h) = render(&config, TransportKind::LongPoll, c("1795982653:3"), &val);
        assert_eq!(url, "/lp?lastEventId=1795982653%3A3");
        assert_eq!(h, [field("Accept", ACCEPT_LONG_POLL)]);
        // Validators that name another message still travel.
        let (_, h) = render(&config, TransportKind::Poll, c("1795982653:2"), &val);
        assert_eq!(
            h,
            [
                field("If-None-Match", "3"),
                field("If-Modified-Since", "Sun, 29 Nov 2026 20:04:13 GMT"),
                revalidate()
            ]
        );
        config.cross_origin = CrossOrigin::NONE;
        let (url, h) = render(&config, TransportKind::Poll, c("1795982653:3"), &val);
        assert_eq!(url, "/lp");
        assert_eq!(h, [field("Last-Event-ID", "1795982653:3")]);
    }

    /// `urls` puts `fetch-sse` on another origin while `long-poll` stays on the
    /// page's: only the cross-origin request moves the cursor to the query
    /// (a `Last-Event-ID` header there would force a preflight).
    #[test]
    fn cross_origin_is_per_endpoint() {
        let mut config = Config::new("/same");
        config.urls.fetch_sse = Some("https://cdn.example/sse".into());
        config.cross_origin = CrossOrigin::NONE.with(TransportKind::FetchSse, true);
        let val = Validators::new();
        let (url, h) = render(&config, TransportKind::FetchSse, c("7"), &val);
        assert_eq!(url, "https://cdn.example/sse?lastEventId=7");
        assert_eq!(h, [field("Accept", ACCEPT_EVENT_STREAM)]);
        let (url, h) = render(&config, TransportKind::LongPoll, c("7"), &val);
        assert_eq!(url, "/same");
        assert_eq!(
            h,
            [
                field("Accept", ACCEPT_LONG_POLL),
                field("Last-Event-ID", "7")
            ]
        );
        let flags = CrossOrigin::ALL.with(TransportKind::Poll, false);
        assert!(flags.contains(TransportKind::EventSource) && !flags.contains(TransportKind::Poll));
    }

    fn revalidate() -> (String, String) {
        field("Cache-Control", "max-age=0")
    }

    /// `Cache-Control: max-age=0` goes with the validators and only with
    /// them: with either one, on `long-poll` and `poll`; never on a request
    /// without one (nothing stored yet, or the cursor alone carries it), so
    /// such a request stays CORS-simple.
    #[test]
    fn conditional_requests_revalidate() {
        let config = Config::new("/u");
        let mut val = Validators::new();
        let cc = |h: &[(String, String)]| {
            h.iter()
                .filter(|(n, _)| n == "Cache-Control")
                .map(|(_, v)| v.clone())
                .collect::<Vec<_>>()
        };
        for t in [TransportKind::LongPoll, TransportKind::Poll] {
            assert_eq!(cc(&render(&config, t, c("5"), &val).1), [] as [String; 0]);
        }
        val.last_modified = Some("Sun, 29 Nov 2026 20:04:13 GMT".into());
        for t in [TransportKind::LongPoll, TransportKind::Poll] {
            let (_, h) = render(&config, t, c("5"), &val);
            assert_eq!(h.last(), Some(&revalidate()), "{t:?}");
            assert_eq!(cc(&h), ["max-age=0"]);
        }
        val.etag = Some("\"e\"".into());
        let (_, h) = render(&config, TransportKind::Poll, c(""), &val);
        assert_eq!(cc(&h), ["max-age=0"], "once, whatever the validators");
        for t in [TransportKind::FetchSse, TransportKind::EventSource] {
            assert_eq!(cc(&render(&config, t, c("5"), &val).1), [] as [String; 0]);
        }
    }

    #[test]
    fn invalid_urls() {
        assert!(is_invalid_url(""));
        assert!(is_invalid_url("  "));
        assert!(is_invalid_url("/a b"));
        assert!(is_invalid_url("/a\nb"));
        assert!(!is_invalid_url("/updates"));
        assert!(!is_invalid_url("https://example.com/s?x=%20"));
    }
}
