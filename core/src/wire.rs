//! The wire vocabulary every machine shares: decimal numbers and
//! percent-encoded query parameters. It sits under the machines
//! (ARCHITECTURE.md "Layers"): the engine, the SSE parser and the upstream
//! machines all read and write these, and this module imports none of them.

use alloc::string::String;

/// `base` with the query parameter `name` set to `value` (percent-encoded), or
/// removed when `value` is empty. Every existing parameter of that name is
/// dropped first, so a stale cursor in the app's URL never survives (BC-08).
/// The fragment stays at the end; other parameters keep their order and bytes.
pub fn with_query_param(base: &str, name: &str, value: &str) -> String {
    let (before_fragment, fragment) = match find_byte(base, b'#') {
        Some(i) => (&base[..i], Some(&base[i..])),
        None => (base, None),
    };
    let (path, mut query) = match split_once_byte(before_fragment, b'?') {
        Some((path, query)) => (path, Some(query)),
        None => (before_fragment, None),
    };
    let mut encoded_name = String::with_capacity(name.len());
    percent_encode_into(&mut encoded_name, name);
    let mut out = String::with_capacity(base.len() + name.len() + value.len() * 3 + 2);
    out.push_str(path);
    let mut first = true;
    // The pairs between `&`s, empty ones included, as `split('&')` gives them.
    while let Some(q) = query {
        let pair = match split_once_byte(q, b'&') {
            Some((pair, rest)) => {
                query = Some(rest);
                pair
            }
            None => {
                query = None;
                q
            }
        };
        if pair.is_empty() {
            continue;
        }
        let key = before_byte(pair, b'=');
        if key == encoded_name || key == name {
            continue;
        }
        out.push(if first { '?' } else { '&' });
        first = false;
        out.push_str(pair);
    }
    if !value.is_empty() {
        out.push(if first { '?' } else { '&' });
        out.push_str(&encoded_name);
        out.push('=');
        percent_encode_into(&mut out, value);
    }
    if let Some(fragment) = fragment {
        out.push_str(fragment);
    }
    out
}

/// Append `s` percent-encoded (UTF-8 bytes; everything except the RFC 3986
/// unreserved characters `A-Z a-z 0-9 - . _ ~` becomes `%XX`, upper case).
pub fn percent_encode_into(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xF)]));
        }
    }
}

/// The index of the first `b` in `s`. With an ASCII `b` the index is a
/// character boundary, and the result that of `str::find` with the same
/// `char`; a byte loop, where a `char` pattern links the standard library's
/// UTF-8 searcher (its `memchr` and split iterators: about 0.7 KB of code).
pub fn find_byte(s: &str, b: u8) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// `s` split around the first `sep` (ASCII), as `str::split_once` with that
/// `char`; `None` when `s` has none (see [`find_byte`]).
pub fn split_once_byte(s: &str, sep: u8) -> Option<(&str, &str)> {
    let i = find_byte(s, sep)?;
    Some((s.get(..i)?, s.get(i + 1..)?))
}

/// The part of `s` before the first `sep` (ASCII), all of `s` when it has
/// none: the first item of `str::split` with that `char`.
pub fn before_byte(s: &str, sep: u8) -> &str {
    split_once_byte(s, sep).map_or(s, |(before, _)| before)
}

/// `s` without leading and trailing spaces and tabs (HTTP's optional
/// whitespace around a header value). Byte by byte: both are ASCII, so the
/// ends are character boundaries, and `str::trim_matches` with a `char`
/// pattern decodes UTF-8 from both ends (twice the code in the wasm).
pub fn trim_ows(s: &str) -> &str {
    let ows = |b: &u8| *b != b' ' && *b != b'\t';
    let b = s.as_bytes();
    let start = b.iter().position(ows).unwrap_or(b.len());
    let end = b.iter().rposition(ows).map_or(start, |i| i + 1);
    s.get(start..end).unwrap_or("")
}

/// Append `n` in decimal (no `core::fmt` in the bundle; the adapter uses it
/// too).
pub fn push_decimal(out: &mut String, n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[i..] {
        out.push(char::from(d));
    }
}

/// `1*DIGIT` in base 10, the inverse of [`push_decimal`]: `None` when `s` is
/// empty, holds anything but ASCII digits (no sign, no spaces) or overflows
/// `u64`. Written out so the bundle links no `core::num` string parsing.
pub fn parse_decimal(s: &[u8]) -> Option<u64> {
    let mut n = 0u64;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    (!s.is_empty()).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_ows_drops_only_spaces_and_tabs_at_the_ends() {
        for (given, kept) in [
            ("", ""),
            (" \t ", ""),
            ("\t 5 \t", "5"),
            (" a b ", "a b"),
            ("\u{a0}x\u{a0}", "\u{a0}x\u{a0}"),
            ("\r\n7\n", "\r\n7\n"),
            (" é ", "é"),
        ] {
            assert_eq!(trim_ows(given), kept, "{given:?}");
            assert_eq!(trim_ows(given), given.trim_matches([' ', '\t']));
        }
    }

    #[test]
    fn query_param_added_replaced_removed() {
        assert_eq!(
            with_query_param("/s", "lastEventId", "7"),
            "/s?lastEventId=7"
        );
        assert_eq!(
            with_query_param("/s?a=1&lastEventId=s0&b=2#top", "lastEventId", "9"),
            "/s?a=1&b=2&lastEventId=9#top"
        );
        assert_eq!(
            with_query_param("/s?lastEventId=s0", "lastEventId", ""),
            "/s"
        );
        assert_eq!(with_query_param("/s?&a", "x", ""), "/s?a");
        assert_eq!(
            with_query_param("https://h/p?x=1", "last_event_id", "1:2"),
            "https://h/p?x=1&last_event_id=1%3A2"
        );
    }

    /// The query rewriting as it was written with `char` patterns
    /// (`find`, `split`, `split_once`): the byte loops give the same URL.
    fn with_query_param_by_chars(base: &str, name: &str, value: &str) -> String {
        let (before_fragment, fragment) = match base.find('#') {
            Some(i) => (&base[..i], Some(&base[i..])),
            None => (base, None),
        };
        let (path, query) = match before_fragment.find('?') {
            Some(i) => (&before_fragment[..i], Some(&before_fragment[i + 1..])),
            None => (before_fragment, None),
        };
        let mut encoded_name = String::new();
        percent_encode_into(&mut encoded_name, name);
        let mut out = String::from(path);
        let mut first = true;
        for pair in query.into_iter().flat_map(|q| q.split('&')) {
            let key = pair.split_once('=').map_or(pair, |(k, _)| k);
            if pair.is_empty() || key == encoded_name || key == name {
                continue;
            }
            out.push(if first { '?' } else { '&' });
            first = false;
            out.push_str(pair);
        }
        if !value.is_empty() {
            out.push(if first { '?' } else { '&' });
            out.push_str(&encoded_name);
            out.push('=');
            percent_encode_into(&mut out, value);
        }
        out.push_str(fragment.unwrap_or(""));
        out
    }

    #[test]
    fn byte_searches_match_the_char_pattern_ones() {
        for s in [
            "",
            "a",
            "=",
            "a=b=c",
            "é=ü",
            "x&&y&",
            "#?#",
            "\\n",
            "naïve; x",
        ] {
            for b in [b'=', b'&', b'#', b'?', b'\\', b';', b' '] {
                let c = char::from(b);
                assert_eq!(find_byte(s, b), s.find(c), "{s:?} {c:?}");
                assert_eq!(split_once_byte(s, b), s.split_once(c), "{s:?} {c:?}");
                assert_eq!(Some(before_byte(s, b)), s.split(c).next(), "{s:?} {c:?}");
            }
        }
    }

    #[test]
    fn query_param_edges_as_with_char_patterns() {
        for base in [
            "/s?",
            "/s?&",
            "/s?a&",
            "/s?&&b=1&",
            "/s?x=1&x=2#f?g&x=3",
            "/s#?x=1",
            "/é?ü=1&x",
        ] {
            for (name, value) in [("x", "7"), ("x", ""), ("a b", "1")] {
                assert_eq!(
                    with_query_param(base, name, value),
                    with_query_param_by_chars(base, name, value),
                    "{base:?} {name:?} {value:?}"
                );
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn query_param_as_with_char_patterns(
            base in "[a-z/?#&=é%]{0,24}",
            name in "[a-z&= ]{1,4}",
            value in "[a-z&=#é]{0,4}",
        ) {
            proptest::prop_assert_eq!(
                with_query_param(&base, &name, &value),
                with_query_param_by_chars(&base, &name, &value)
            );
        }
    }

    #[test]
    fn percent_encoding_is_utf8() {
        // BC-08: U+2026 as the cursor.
        assert_eq!(
            with_query_param("/s", "lastEventId", "\u{2026}"),
            "/s?lastEventId=%E2%80%A6"
        );
        let mut s = String::new();
        percent_encode_into(&mut s, "a b&c=d~-._/?#%");
        assert_eq!(s, "a%20b%26c%3Dd~-._%2F%3F%23%25");
    }

    #[test]
    fn parse_decimal_is_push_decimal_backwards_and_digits_only() {
        for n in [0, 7, 10, 1_700_000_000_000, u64::MAX] {
            let mut s = String::new();
            push_decimal(&mut s, n);
            assert_eq!(parse_decimal(s.as_bytes()), Some(n), "{s}");
        }
        assert_eq!(parse_decimal(b"007"), Some(7));
        let mut s = String::new();
        push_decimal(&mut s, u64::MAX);
        assert_eq!(s, "18446744073709551615");
        for bad in [
            "",
            "-1",
            "+1",
            " 1",
            "1 ",
            "1e3",
            "0x10",
            "18446744073709551616",
        ] {
            assert_eq!(parse_decimal(bad.as_bytes()), None, "{bad:?}");
        }
    }
}
