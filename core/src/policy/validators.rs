//! Conditional-request validators: the previous response's `ETag` and
//! `Last-Modified`, sent back as `If-None-Match` / `If-Modified-Since`
//! (RFC 9110 §13.1.2, §13.1.3). For polls they turn "nothing new" into a 304;
//! for long-poll servers such as nchan the pair IS the cursor.
//!
//! Values are kept byte for byte (only surrounding spaces/tabs trimmed): the
//! `W/` prefix stays, and unquoted tags such as nchan's `Etag: 0` are accepted,
//! because the server compares what we send with what it sent.

use alloc::string::{String, ToString};

use super::headers::HeaderLookup;

/// What a response meant for the resource, judged by status and validators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// 304 Not Modified: nothing new.
    NotModified,
    /// 200 whose `ETag` weakly matches the previous one, and whose
    /// `Last-Modified` (when both responses carry one) is the same: the same
    /// content again (a server or cache that ignored the conditional request).
    /// Unchanged for the interval policy.
    Unchanged,
    /// 200 with a different `ETag`, or none to compare: new content.
    Changed,
    /// Any other status: validators untouched.
    Other,
}

/// The validators of the last 200/304 response. Empty at first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Validators {
    /// The `ETag` value exactly as received (`"abc"`, `W/"abc"`, `0`).
    pub etag: Option<String>,
    /// The `Last-Modified` value exactly as received (an HTTP-date, not parsed:
    /// RFC 9110 §13.1.3 asks the client to send it back unchanged).
    pub last_modified: Option<String>,
}

impl Validators {
    /// No validators yet (also `Validators::default()`).
    pub fn new() -> Self {
        Validators::default()
    }

    /// Neither validator known.
    pub fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }

    /// The `If-None-Match` request value: the stored ETag.
    pub fn if_none_match(&self) -> Option<&str> {
        self.etag.as_deref()
    }

    /// The `If-Modified-Since` request value: the stored Last-Modified.
    pub fn if_modified_since(&self) -> Option<&str> {
        self.last_modified.as_deref()
    }

    /// The request header fields to send, as `(name, value)` pairs, zero to two.
    /// Both are sent when both are known: a server that understands ETags then
    /// ignores `If-Modified-Since` (RFC 9110 §13.1.3).
    pub fn request_headers(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [
            self.if_none_match().map(|v| ("If-None-Match", v)),
            self.if_modified_since().map(|v| ("If-Modified-Since", v)),
        ]
        .into_iter()
        .flatten()
    }

    /// Take in a response head. For 200 and 304, each validator present (and
    /// valid: non-empty, no control characters, so it can be sent back) replaces
    /// the stored one; one absent keeps the stored one (a 304 that carries none
    /// keeps the old, RFC 9111 §4.3.4; for a 200, an old validator sent again is
    /// harmless: the server just answers 200). Other statuses change nothing.
    pub fn update<H: HeaderLookup + ?Sized>(&mut self, status: u16, headers: &H) -> Outcome {
        let etag = headers.header("ETag").filter(|v| sendable(v));
        let last_modified = headers.header("Last-Modified").filter(|v| sendable(v));
        // A different Last-Modified is a different version even when the tag
        // repeats: nchan's `Etag` is only the message's number within its
        // second (`Etag: 0` at 20:04:13 and again at 20:04:14).
        let same_date = match (self.last_modified.as_deref(), last_modified) {
            (Some(old), Some(new)) => old == new,
            _ => true,
        };
        let outcome = match status {
            304 => Outcome::NotModified,
            200 => match (self.etag.as_deref(), etag) {
                (Some(old), Some(new)) if weak_eq(old, new) && same_date => Outcome::Unchanged,
                _ => Outcome::Changed,
            },
            _ => return Outcome::Other,
        };
        if let Some(e) = etag {
            self.etag = Some(e.to_string());
        }
        if let Some(lm) = last_modified {
            self.last_modified = Some(lm.to_string());
        }
        outcome
    }
}

/// Weak comparison of two entity tags (RFC 9110 §8.8.3.2): equal when their
/// opaque tags match character by character, whether or not either carries the
/// `W/` prefix (case-sensitive, as the grammar says). Unquoted tags compare as
/// they are.
pub fn weak_eq(a: &str, b: &str) -> bool {
    a.strip_prefix("W/").unwrap_or(a) == b.strip_prefix("W/").unwrap_or(b)
}

/// Non-empty and free of control characters other than HTAB (a value the
/// browser would refuse to send as a request header is useless).
fn sendable(v: &str) -> bool {
    for &b in v.as_bytes() {
        if (b < 0x20 && b != b'\t') || b == 0x7f {
            return false;
        }
    }
    !v.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{any, prop_assert, prop_assert_eq, proptest};

    fn v(etag: Option<&str>, lm: Option<&str>) -> Validators {
        Validators {
            etag: etag.map(String::from),
            last_modified: lm.map(String::from),
        }
    }

    const LM: &str = "Sun, 06 Nov 1994 08:49:37 GMT";

    #[test]
    fn kept_byte_for_byte_and_rendered() {
        let mut val = Validators::new();
        assert!(val.is_empty());
        assert_eq!(val.request_headers().count(), 0);
        let h = [("Etag", "W/\"x-1\""), ("Last-Modified", LM)];
        assert_eq!(val.update(200, &h), Outcome::Changed);
        assert_eq!(val, v(Some("W/\"x-1\""), Some(LM)));
        let sent: Vec<_> = val.request_headers().collect();
        assert_eq!(
            sent,
            [("If-None-Match", "W/\"x-1\""), ("If-Modified-Since", LM)]
        );
    }

    #[test]
    fn nchan_unquoted_etag() {
        let mut val = Validators::new();
        val.update(200, &[("Etag", "0"), ("Last-Modified", LM)]);
        assert_eq!(val.if_none_match(), Some("0"));
    }

    #[test]
    fn not_modified_keeps_or_updates() {
        let mut val = v(Some("\"a\""), Some(LM));
        assert_eq!(val.update(304, &[("Date", LM)]), Outcome::NotModified);
        assert_eq!(val, v(Some("\"a\""), Some(LM)));
        assert_eq!(val.update(304, &[("ETag", "\"b\"")]), Outcome::NotModified);
        assert_eq!(val, v(Some("\"b\""), Some(LM)));
    }

    #[test]
    fn unchanged_200_by_weak_comparison() {
        let mut val = v(Some("\"a\""), None);
        assert_eq!(val.update(200, &[("ETag", "W/\"a\"")]), Outcome::Unchanged);
        assert_eq!(val.etag.as_deref(), Some("W/\"a\""));
        assert_eq!(val.update(200, &[("ETag", "\"b\"")]), Outcome::Changed);
        assert_eq!(val.update(200, &[("X", "y")]), Outcome::Changed);
        assert_eq!(val.etag.as_deref(), Some("\"b\""));
    }

    #[test]
    fn nchan_tag_repeating_in_a_new_second_is_changed() {
        // Seen with nchan 1.3.6: one message at 20:04:13 (`Etag: 0`), the next
        // at 20:04:14 (`Etag: 0` again).
        let lm2 = "Sun, 06 Nov 1994 08:49:38 GMT";
        let mut val = v(Some("0"), Some(LM));
        assert_eq!(
            val.update(200, &[("Etag", "0"), ("Last-Modified", lm2)]),
            Outcome::Changed
        );
        assert_eq!(val, v(Some("0"), Some(lm2)));
        assert_eq!(
            val.update(200, &[("Etag", "0"), ("Last-Modified", lm2)]),
            Outcome::Unchanged
        );
        assert_eq!(val.update(200, &[("Etag", "0")]), Outcome::Unchanged);
    }

    #[test]
    fn other_statuses_and_bad_values_change_nothing() {
        let mut val = v(Some("\"a\""), Some(LM));
        assert_eq!(val.update(503, &[("ETag", "\"z\"")]), Outcome::Other);
        assert_eq!(
            val.update(200, &[("ETag", ""), ("Last-Modified", "a\nb")]),
            Outcome::Changed
        );
        assert_eq!(val, v(Some("\"a\""), Some(LM)));
    }

    #[test]
    fn weak_comparison_table() {
        // RFC 9110 §8.8.3.2 example table.
        assert!(!weak_eq("W/\"1\"", "W/\"2\""));
        assert!(weak_eq("W/\"1\"", "W/\"1\""));
        assert!(weak_eq("W/\"1\"", "\"1\""));
        assert!(weak_eq("\"1\"", "\"1\""));
        assert!(!weak_eq("w/\"1\"", "\"1\""));
        assert!(!weak_eq("1", "\"1\""));
    }

    proptest! {
        #[test]
        fn update_never_panics_and_round_trips(etag in ".*", lm in ".*", status in any::<u16>()) {
            let mut val = Validators::new();
            let h = [("ETag", etag.as_str()), ("Last-Modified", lm.as_str())];
            let out = val.update(status, &h);
            prop_assert!(matches!(status, 200 | 304) || out == Outcome::Other);
            if let Some(e) = val.if_none_match() {
                prop_assert!(weak_eq(e, e));
                prop_assert_eq!(e, etag.trim_matches([' ', '\t']));
            }
        }
    }
}
