//! Reading response header fields without choosing a header type: the policies
//! take anything that can look a field up by name.

use alloc::vec::Vec;

/// Looks up a response header field by name.
pub trait HeaderLookup {
    /// The value of the field `name`, matched ASCII case-insensitively (RFC 9110
    /// §5.1), with surrounding spaces and tabs removed (§5.5). If the field is
    /// listed more than once, the first one wins (the browser's `Headers.get`
    /// already joins repeats with `", "`).
    fn header(&self, name: &str) -> Option<&str>;
}

impl<N: AsRef<str>, V: AsRef<str>> HeaderLookup for [(N, V)] {
    fn header(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|(n, _)| n.as_ref().eq_ignore_ascii_case(name))
            .map(|(_, v)| crate::wire::trim_ows(v.as_ref()))
    }
}

impl<N: AsRef<str>, V: AsRef<str>> HeaderLookup for Vec<(N, V)> {
    fn header(&self, name: &str) -> Option<&str> {
        self.as_slice().header(name)
    }
}

impl<N: AsRef<str>, V: AsRef<str>, const K: usize> HeaderLookup for [(N, V); K] {
    fn header(&self, name: &str) -> Option<&str> {
        self.as_slice().header(name)
    }
}

/// The response header fields the connection engine reads, lower-case: an
/// adapter hands over at least these (the others are ignored; cross-origin, a script sees them only when the
/// server lists them in `Access-Control-Expose-Headers`; `Last-Modified` is
/// safelisted). Retry waits (`Retry-After` against `Date`, rate-limit reset),
/// validators, the poll hint and the Durable Streams profile's fields.
pub const ENGINE_RESPONSE_HEADERS: [&str; 11] = [
    "retry-after",
    "date",
    "etag",
    "last-modified",
    "x-poll-interval",
    "ratelimit-reset",
    "x-ratelimit-reset",
    "stream-next-offset",
    "stream-up-to-date",
    "stream-closed",
    "stream-cursor",
];

/// The response header fields the upstream machines (`Sender`, `Reporter`)
/// read, lower-case: a retry's wait (`Retry-After` against `Date`, rate-limit
/// reset) and a reporter's pace (`X-Poll-Interval`).
pub const UPSTREAM_RESPONSE_HEADERS: [&str; 6] = [
    "retry-after",
    "date",
    "ratelimit-reset",
    "x-ratelimit-reset",
    "x-poll-interval",
    "stream-closed",
];

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::String;

    #[test]
    fn case_insensitive_first_wins_trimmed() {
        let h = [("etag", " \"a\"\t"), ("ETag", "\"b\"")];
        assert_eq!(h.header("ETag"), Some("\"a\""));
        assert_eq!(h.header("Date"), None);
        let owned: Vec<(String, String)> = vec![("Retry-After".into(), "5".into())];
        assert_eq!(owned.header("retry-after"), Some("5"));
    }
}
