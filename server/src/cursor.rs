//! Where a request's cursor comes from.

use std::collections::HashMap;

use axum::http::HeaderMap;

use crate::hub::Cursor;
use crate::validators;

/// Query parameter names that carry the cursor (ours, and nchan's).
pub const CURSOR_PARAMS: &[&str] = &["lastEventId", "last_event_id"];

/// The `Last-Event-ID` header wins; else `?lastEventId=` / `?last_event_id=`.
/// Absent or empty everywhere: no cursor, which means "live only", unless the
/// query has `from_start=1`: then "from the start" (every buffered event, as
/// a server that answers a request without an offset with the whole state,
/// Electric's `offset=-1`).
pub fn from_request(headers: &HeaderMap, query: &HashMap<String, String>) -> Cursor {
    match given(headers, query) {
        Cursor::None if query_flag(query, "from_start") => Cursor::Id(0),
        c => c,
    }
}

/// Whether the request carries a cursor anywhere a client puts one: a
/// non-empty `Last-Event-ID` header, `lastEventId` / `last_event_id` query
/// parameter, or the validators `If-None-Match` / `If-Modified-Since`
/// (nchan-style resumes). For fault rules with `"when": "cursor"`.
pub fn carries_cursor(headers: &HeaderMap, query: &HashMap<String, String>) -> bool {
    !matches!(given(headers, query), Cursor::None)
        || headers.contains_key("if-none-match")
        || headers.contains_key("if-modified-since")
}

/// The cursor as the request gives it (no `from_start`).
fn given(headers: &HeaderMap, query: &HashMap<String, String>) -> Cursor {
    if let Some(v) = headers.get("last-event-id") {
        let s = String::from_utf8_lossy(v.as_bytes());
        if !s.trim().is_empty() {
            return Cursor::parse(&s);
        }
    }
    for k in CURSOR_PARAMS {
        if let Some(v) = query.get(*k) {
            if !v.trim().is_empty() {
                return Cursor::parse(v);
            }
        }
    }
    Cursor::None
}

/// The cursor of the polling endpoints (`/long-poll`, `/poll`): as
/// [`from_request`], else the first tag in `If-None-Match`, because
/// nchan-style clients send the previous validators back instead of an id.
pub fn from_request_or_etag(headers: &HeaderMap, query: &HashMap<String, String>) -> Cursor {
    match from_request(headers, query) {
        Cursor::None => validators::cursor_from_etag(headers).unwrap_or(Cursor::None),
        c => c,
    }
}

/// Parses an integer query parameter; absent or unparseable → `None`.
pub fn query_u64(query: &HashMap<String, String>, key: &str) -> Option<u64> {
    query.get(key).and_then(|v| v.trim().parse().ok())
}

/// A boolean query parameter: on for `1` or `true`, off otherwise (absent
/// included).
pub fn query_flag(query: &HashMap<String, String>, key: &str) -> bool {
    query.get(key).is_some_and(|v| v == "1" || v == "true")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn etag_is_the_cursor_only_without_another() {
        let mut h = HeaderMap::new();
        h.insert(
            "if-none-match",
            axum::http::HeaderValue::from_static("\"4\""),
        );
        assert_eq!(from_request_or_etag(&h, &q(&[])), Cursor::Id(4));
        assert_eq!(
            from_request_or_etag(&h, &q(&[("lastEventId", "2")])),
            Cursor::Id(2)
        );
        assert_eq!(from_request(&h, &q(&[])), Cursor::None);
        assert_eq!(
            from_request_or_etag(&HeaderMap::new(), &q(&[])),
            Cursor::None
        );
    }

    #[test]
    fn from_start_only_without_a_cursor() {
        let h = HeaderMap::new();
        assert_eq!(from_request(&h, &q(&[("from_start", "1")])), Cursor::Id(0));
        assert_eq!(
            from_request(&h, &q(&[("from_start", "1"), ("lastEventId", "3")])),
            Cursor::Id(3)
        );
        assert!(!carries_cursor(&h, &q(&[("from_start", "1")])));
        assert!(carries_cursor(&h, &q(&[("last_event_id", "3")])));
        let mut v = HeaderMap::new();
        v.insert(
            "if-none-match",
            axum::http::HeaderValue::from_static("\"e\""),
        );
        assert!(carries_cursor(&v, &q(&[])));
        let mut e = HeaderMap::new();
        e.insert("last-event-id", axum::http::HeaderValue::from_static(" "));
        assert!(!carries_cursor(&e, &q(&[("lastEventId", "")])));
    }

    #[test]
    fn header_wins_over_query() {
        let mut h = HeaderMap::new();
        h.insert("last-event-id", axum::http::HeaderValue::from_static("5"));
        assert_eq!(from_request(&h, &q(&[("lastEventId", "2")])), Cursor::Id(5));
        assert_eq!(
            from_request(&HeaderMap::new(), &q(&[("lastEventId", "2")])),
            Cursor::Id(2)
        );
        assert_eq!(
            from_request(&HeaderMap::new(), &q(&[("last_event_id", "3")])),
            Cursor::Id(3)
        );
        assert_eq!(from_request(&HeaderMap::new(), &q(&[])), Cursor::None);
        assert_eq!(
            from_request(&HeaderMap::new(), &q(&[("lastEventId", "")])),
            Cursor::None
        );
    }
}
