//! The idempotency key and its header value.
//!
//! The IETF httpapi Idempotency-Key draft
//! (draft-ietf-httpapi-idempotency-key-header-07) makes `Idempotency-Key` an
//! Item Structured Header whose value MUST be a String (§2.1 "Syntax"), i.e. an
//! RFC 8941 `sf-string` (§3.3.3): printable ASCII `%x20-7E` between double
//! quotes, with `"` and `\` escaped by a backslash (serialized per RFC 8941
//! §4.1.6). The key is unique per request and never reused with another
//! payload (§2.2); the adapter generates it once per send
//! (`crypto.randomUUID()`), this machine puts it on every attempt unchanged.

use alloc::string::String;

/// The longest key accepted, in characters (printable ASCII: bytes). The
/// draft sets no bound, but servers do: Stripe's API, whose scheme the draft
/// describes and many servers copy, refuses a key over 255 characters, so a
/// longer key would be refused (or cut) only once it reached the server.
pub const MAX_KEY_LEN: usize = 255;

/// Why a key was refused ([`IdempotencyKey::new`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyError {
    /// The key is empty: it would identify nothing (draft §2.2 asks for a
    /// unique value; servers answer 400 to an empty one).
    Empty,
    /// The character at this byte index is not printable ASCII
    /// (`0x20..=0x7E`), so the key cannot be an RFC 8941 `sf-string`.
    NotPrintableAscii {
        /// Byte index of the first offending character.
        index: usize,
    },
    /// The key is longer than [`MAX_KEY_LEN`].
    TooLong,
}

/// A validated idempotency key: non-empty printable ASCII (`0x20..=0x7E`),
/// at most [`MAX_KEY_LEN`] characters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    /// Validate `key` (the raw key, without quotes).
    ///
    /// # Errors
    /// [`KeyError::Empty`] for `""`, [`KeyError::NotPrintableAscii`] for any
    /// byte outside `0x20..=0x7E` (control characters, DEL, non-ASCII),
    /// [`KeyError::TooLong`] past [`MAX_KEY_LEN`] characters.
    pub fn new(key: &str) -> Result<Self, KeyError> {
        if key.is_empty() {
            return Err(KeyError::Empty);
        }
        let mut bad = None;
        for (i, &b) in key.as_bytes().iter().enumerate() {
            if !(0x20..=0x7E).contains(&b) {
                bad = Some(i);
                break;
            }
        }
        match bad {
            Some(index) => Err(KeyError::NotPrintableAscii { index }),
            None if key.len() > MAX_KEY_LEN => Err(KeyError::TooLong),
            None => Ok(IdempotencyKey(String::from(key))),
        }
    }

    /// The raw key.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The raw key, as its own `String` (no copy).
    pub fn into_string(self) -> String {
        self.0
    }

    /// The header field value: the key as an RFC 8941 `sf-string` (§4.1.6):
    /// `"` + the key with `\` and `"` each preceded by `\` + `"`.
    /// `abc` → `"abc"`; `a"b\c` → `"a\"b\\c"`.
    pub fn header_value(&self) -> String {
        let mut out = String::with_capacity(self.0.len() + 2);
        out.push('"');
        // Bytes, not `chars()`: a key is printable ASCII (`new`), so each
        // byte is its character, with no UTF-8 decoding in the bundle.
        for &b in self.0.as_bytes() {
            if b == b'"' || b == b'\\' {
                out.push('\\');
            }
            out.push(char::from(b));
        }
        out.push('"');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates_printable_ascii() {
        assert_eq!(IdempotencyKey::new(""), Err(KeyError::Empty));
        assert_eq!(
            IdempotencyKey::new("ab\tc"),
            Err(KeyError::NotPrintableAscii { index: 2 })
        );
        assert_eq!(
            IdempotencyKey::new("é"),
            Err(KeyError::NotPrintableAscii { index: 0 })
        );
        assert_eq!(
            IdempotencyKey::new("x\u{7f}"),
            Err(KeyError::NotPrintableAscii { index: 1 })
        );
        assert!(IdempotencyKey::new(" ~").is_ok());
    }

    #[test]
    fn a_key_longer_than_255_characters_is_refused() {
        let at_most = "k".repeat(MAX_KEY_LEN);
        assert!(IdempotencyKey::new(&at_most).is_ok());
        let longer = "k".repeat(MAX_KEY_LEN + 1);
        assert_eq!(IdempotencyKey::new(&longer), Err(KeyError::TooLong));
    }

    #[test]
    fn header_value_is_an_sf_string() {
        let k = |s: &str| IdempotencyKey::new(s).map(|k| k.header_value());
        assert_eq!(
            k("8e03978e-40d5-43e8-bc93-6894a57f9324").as_deref(),
            Ok("\"8e03978e-40d5-43e8-bc93-6894a57f9324\"")
        );
        assert_eq!(k("a\"b\\c").as_deref(), Ok("\"a\\\"b\\\\c\""));
    }
}
