//! Splitting one line into a blank line, a comment or a `field: value` pair
//! (WHATWG HTML §9.2.6, the steps after "lines must be processed").

/// One line of the stream, terminator removed, seen as bytes. Names and values
/// are split on bytes: `:` (0x3A) and U+0020 (0x20) are ASCII and never part of
/// a multi-byte UTF-8 sequence, so splitting before decoding gives the same
/// strings as decoding first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Line<'a> {
    /// An empty line: dispatch the event.
    Blank,
    /// A line starting with `:`.
    Comment,
    /// Any other line. `name` is everything before the first `:` (the whole
    /// line when it has none); `value` is everything after it minus one leading
    /// U+0020, or empty when the line has no `:`.
    Field {
        /// The field name, case-sensitive.
        name: &'a [u8],
        /// The field value.
        value: &'a [u8],
    },
}

/// Classify one line (without its terminator).
pub(crate) fn parse_line(line: &[u8]) -> Line<'_> {
    match line.iter().position(|&b| b == b':') {
        _ if line.is_empty() => Line::Blank,
        Some(0) => Line::Comment,
        Some(colon) => {
            let (name, rest) = line.split_at_checked(colon).unwrap_or((line, &[]));
            let value = rest.get(1..).unwrap_or_default();
            let value = value.strip_prefix(b" ").unwrap_or(value);
            Line::Field { name, value }
        }
        None => Line::Field {
            name: line,
            value: &[],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_line, Line};

    fn field<'a>(name: &'a [u8], value: &'a [u8]) -> Line<'a> {
        Line::Field { name, value }
    }

    #[test]
    fn blank_and_comments() {
        assert_eq!(parse_line(b""), Line::Blank);
        assert_eq!(parse_line(b":"), Line::Comment);
        assert_eq!(parse_line(b": keepalive"), Line::Comment);
        assert_eq!(parse_line(b"::"), Line::Comment);
    }

    #[test]
    fn one_leading_space_is_removed() {
        assert_eq!(parse_line(b"data: x"), field(b"data", b"x"));
        assert_eq!(parse_line(b"data:x"), field(b"data", b"x"));
        assert_eq!(parse_line(b"data:  y"), field(b"data", b" y"));
        assert_eq!(parse_line(b"data:\tt"), field(b"data", b"\tt"));
        assert_eq!(parse_line(b"data: "), field(b"data", b""));
        assert_eq!(parse_line(b"data:"), field(b"data", b""));
    }

    #[test]
    fn splits_at_the_first_colon_only() {
        assert_eq!(parse_line(b"data: a:b: c"), field(b"data", b"a:b: c"));
        assert_eq!(parse_line(b"a:"), field(b"a", b""));
    }

    #[test]
    fn line_without_colon_is_a_name_with_empty_value() {
        assert_eq!(parse_line(b"data"), field(b"data", b""));
        assert_eq!(parse_line(b"id"), field(b"id", b""));
        // Whitespace is not a blank line: it is a field named " ".
        assert_eq!(parse_line(b" "), field(b" ", b""));
        assert_eq!(parse_line(b" data: x"), field(b" data", b"x"));
    }
}
