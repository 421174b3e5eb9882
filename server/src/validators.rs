//! ETag / Last-Modified helpers (RFC 9110 §8.8, §13.1).

use std::time::{SystemTime, UNIX_EPOCH};

use axum::http::{header, HeaderMap, HeaderValue};

use crate::clock::http_date;
use crate::hub::Cursor;

/// `"<n>"`, or `W/"<n>"` when weak.
pub fn etag(n: u64, weak: bool) -> String {
    if weak {
        format!("W/\"{n}\"")
    } else {
        format!("\"{n}\"")
    }
}

/// Puts an answer's validators on its headers: `ETag: <tag>` and, when there
/// is a time, `Last-Modified` as an HTTP-date. A value that cannot be a header
/// is left out rather than failing the answer (ours always can be one).
pub fn insert(h: &mut HeaderMap, tag: &str, modified: Option<SystemTime>) {
    if let Ok(v) = HeaderValue::try_from(tag) {
        h.insert(header::ETAG, v);
    }
    if let Some(Ok(v)) = modified.map(|t| HeaderValue::try_from(http_date(t))) {
        h.insert(header::LAST_MODIFIED, v);
    }
}

/// The opaque part of an entity tag (`W/"x"` and `"x"` both give `x`).
fn opaque(tag: &str) -> &str {
    let t = tag.trim();
    let t = t.strip_prefix("W/").unwrap_or(t);
    t.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(t)
}

/// The entity tags listed in `If-None-Match` (`*` included as is).
pub fn if_none_match(h: &HeaderMap) -> Option<Vec<String>> {
    let v = h.get(header::IF_NONE_MATCH)?.to_str().ok()?;
    Some(
        v.split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

/// Weak comparison of `If-None-Match` against the current tag.
pub fn none_match_hits(list: &[String], current: &str) -> bool {
    list.iter()
        .any(|t| t == "*" || opaque(t) == opaque(current))
}

/// A cursor from `If-None-Match` (our tags are `"<id>"`): nchan-style
/// clients send the previous validators back instead of an event id.
pub fn cursor_from_etag(h: &HeaderMap) -> Option<Cursor> {
    let list = if_none_match(h)?;
    let first = list.first()?;
    Some(Cursor::parse(opaque(first)))
}

/// `If-Modified-Since`, parsed.
pub fn if_modified_since(h: &HeaderMap) -> Option<SystemTime> {
    let v = h.get(header::IF_MODIFIED_SINCE)?.to_str().ok()?;
    httpdate::parse_http_date(v).ok()
}

/// Whole seconds since the epoch (HTTP-dates have no finer resolution).
pub fn secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weak_comparison() {
        let l = vec!["W/\"3\"".to_string(), "\"9\"".to_string()];
        assert!(none_match_hits(&l, "\"3\""));
        assert!(none_match_hits(&l, "W/\"9\""));
        assert!(!none_match_hits(&l, "\"4\""));
        assert!(none_match_hits(&["*".to_string()], "\"1\""));
        assert_eq!(etag(5, false), "\"5\"");
        assert_eq!(etag(5, true), "W/\"5\"");
    }

    #[test]
    fn etag_as_cursor() {
        let mut h = HeaderMap::new();
        h.insert(
            header::IF_NONE_MATCH,
            axum::http::HeaderValue::from_static("W/\"12\""),
        );
        assert_eq!(cursor_from_etag(&h), Some(Cursor::Id(12)));
        assert_eq!(cursor_from_etag(&HeaderMap::new()), None);
    }
}
