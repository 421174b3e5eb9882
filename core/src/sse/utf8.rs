//! [`lossy`]: a field's bytes as text, each invalid UTF-8 sequence replaced
//! by U+FFFD (the event-stream format's decoding, WHATWG HTML §9.2.5).

use alloc::borrow::Cow;
use alloc::string::String;

/// `bytes` as text, with the same result as `String::from_utf8_lossy`:
/// borrowed when valid, else each maximal invalid subpart (what
/// `Utf8Error::error_len` measures; an incomplete sequence at the end is
/// one) replaced by U+FFFD. Over `str::from_utf8`, whose validation the
/// bundle has anyway, rather than the standard library's `Utf8Chunks`
/// iterator (its own decoder: about 0.7 KB of wasm).
pub(crate) fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    let first = match core::str::from_utf8(bytes) {
        Ok(s) => return Cow::Borrowed(s),
        Err(e) => e,
    };
    let mut out = String::with_capacity(bytes.len() + 2);
    let (mut rest, mut e) = (bytes, first);
    loop {
        let (valid, after) = rest.split_at(e.valid_up_to());
        out.push_str(core::str::from_utf8(valid).unwrap_or_default());
        out.push('\u{FFFD}');
        let Some(n) = e.error_len() else {
            return Cow::Owned(out);
        };
        rest = after.get(n..).unwrap_or_default();
        match core::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                return Cow::Owned(out);
            }
            Err(next) => e = next,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use proptest::prelude::{any, prop_assert_eq, proptest};

    #[test]
    fn invalid_sequences_as_the_standard_library_replaces_them() {
        let cases: [&[u8]; 9] = [
            b"",
            b"plain",
            "é…😀".as_bytes(),
            b"a\xffb",
            b"\xe2\x82",
            b"x\xe2\x82y",
            b"\xf0\x9f\x98",
            b"\xc0\xaf\xed\xa0\x80z",
            b"\x80\x80\xf4\x90\x80\x80",
        ];
        for b in cases {
            assert_eq!(lossy(b), String::from_utf8_lossy(b), "{b:?}");
        }
        assert!(matches!(lossy(b"ok"), Cow::Borrowed("ok")));
        assert_eq!(lossy(b"a\xffb"), "a\u{FFFD}b");
    }

    proptest! {
        #[test]
        fn as_from_utf8_lossy(bytes in proptest::collection::vec(any::<u8>(), 0..32)) {
            prop_assert_eq!(lossy(&bytes), String::from_utf8_lossy(&bytes));
        }

        /// Mostly valid text with a few bytes broken (the random bytes above
        /// are mostly invalid).
        #[test]
        fn as_from_utf8_lossy_near_valid(s in "\\PC{0,12}", cut in any::<(u8, u8)>()) {
            let mut bytes: Vec<u8> = s.into_bytes();
            if !bytes.is_empty() {
                let i = usize::from(cut.0) % bytes.len();
                bytes[i] = cut.1;
                bytes.truncate(bytes.len() - usize::from(cut.1 % 2));
            }
            prop_assert_eq!(lossy(&bytes), String::from_utf8_lossy(&bytes));
        }
    }
}
