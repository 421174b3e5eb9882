//! The JSON long-poll / poll body decoded from its text (issue 19's
//! long-poll ingest): the adapter already holds the body as text in wasm, so
//! the common body is read here in one pass instead of being handed to
//! `JSON.parse` and read back one field at a time across the boundary.
//!
//! The rule stays [`decode_json_body`]'s (same shapes, same messages). This
//! scanner only answers when its answer is certainly the one `JSON.parse`
//! plus that rule would give; for anything it is unsure of (text that may not
//! be JSON, a lone surrogate, a number whose JS text is not its own, a
//! non-string `data` whose `JSON.stringify` would differ from how it was sent,
//! nesting deeper than [`MAX_DEPTH`]) it asks the adapter's `parse` (the
//! browser's `JSON.parse`) and applies [`decode_json_body`] to the value.
//! The fuzz target `json_envelope` checks both agree
//! (`testing::decoders::check_json`).

use alloc::string::String;
use alloc::vec::Vec;

use super::input::IncomingMessage;
use super::json_body::{decode_json_body, JsonView};

/// Deepest nesting the scanner follows (deeper bodies go to `JSON.parse`;
/// bounds the recursion, so a hostile `[[[[…` cannot exhaust the stack).
pub const MAX_DEPTH: u32 = 64;

/// Most keys in one object of a non-string `data` the scanner checks for
/// duplicates (pairwise; more go to `JSON.parse`).
const MAX_DATA_KEYS: usize = 32;

/// The scanner cannot be sure: ask `JSON.parse`.
struct Unsure;

type Scan<T> = Result<T, Unsure>;

/// The messages of a JSON body given as `text`, and its
/// `_polling.next_interval_ms` hint (ms), exactly as
/// `decode_json_body(&JSON.parse(text))` would give them; `None` when the
/// text is not JSON or has neither shape. `parse` is `JSON.parse` (`None`
/// when it throws), called only for the bodies described in the module doc.
pub fn decode_json_text<V: JsonView>(
    text: &str,
    parse: impl FnOnce(&str) -> Option<V>,
) -> Option<(Vec<IncomingMessage>, Option<u64>)> {
    match scan_body(text.as_bytes()) {
        Ok(found) => found,
        Err(Unsure) => decode_json_body(&parse(text)?),
    }
}

type Body = Option<(Vec<IncomingMessage>, Option<u64>)>;

/// The body: an array of messages, or an envelope; whitespace around it.
fn scan_body(b: &[u8]) -> Scan<Body> {
    let start = skip_ws(b, 0);
    let (found, end) = match b.get(start) {
        Some(b'[') => {
            let mut msgs = Vec::new();
            let end = each_element(b, start, 1, |at| {
                let (m, end) = message(b, at)?;
                msgs.push(m);
                Ok(end)
            })?;
            (Some((msgs, None)), end)
        }
        Some(b'{') => envelope(b, start)?,
        Some(_) => (None, value_end(b, start, 0)?),
        None => return Err(Unsure),
    };
    if skip_ws(b, end) == b.len() {
        Ok(found)
    } else {
        Err(Unsure)
    }
}

/// `{messages, _polling?}` at `at` (the last of a repeated key counts, as in
/// `JSON.parse`); the decoded body and where the object ends.
fn envelope(b: &[u8], at: usize) -> Scan<(Body, usize)> {
    let (mut messages, mut polling) = (None, None);
    let end = each_field(b, at, 0, |key, v, _| {
        if key_is(b, key, "messages")? {
            messages = Some(v);
        } else if key_is(b, key, "_polling")? {
            polling = Some(v);
        }
        Ok(())
    })?;
    let Some(v) = messages.filter(|v| b[*v] == b'[') else {
        return Ok((None, end));
    };
    let mut msgs = Vec::new();
    each_element(b, v, 1, |at| {
        let (m, end) = message(b, at)?;
        msgs.push(m);
        Ok(end)
    })?;
    let hint = match polling {
        Some(p) if b[p] == b'{' => interval_hint(b, p)?,
        _ => None,
    };
    Ok((Some((msgs, hint)), end))
}

/// `next_interval_ms` of the `_polling` object at `at`: a non-negative
/// number, else none.
fn interval_hint(b: &[u8], at: usize) -> Scan<Option<u64>> {
    let mut hint = None;
    each_field(b, at, 1, |key, v, end| {
        if key_is(b, key, "next_interval_ms")? {
            hint = Some((v, end));
        }
        Ok(())
    })?;
    match hint {
        Some((v, end)) if is_number_start(b[v]) => {
            let n = js_integer(&b[v..end])?;
            Ok((!n.starts_with('-')).then(|| parse_u64(n)))
        }
        _ => Ok(None),
    }
}

/// The message at `at` and where it ends: `id` a string or a number as JS
/// prints it, `event` a string, `data` a string as is or anything else as
/// its JSON text; a message that is not an object has none of them.
fn message(b: &[u8], at: usize) -> Scan<(IncomingMessage, usize)> {
    if b.get(at) != Some(&b'{') {
        let none = IncomingMessage {
            id: None,
            event: None,
            data: String::new(),
        };
        return Ok((none, value_end(b, at, 1)?));
    }
    let (mut id, mut event, mut data) = (None, None, None);
    let end = {
        each_field(b, at, 2, |key, v, end| {
            let slot = if key_is(b, key, "id")? {
                &mut id
            } else if key_is(b, key, "event")? {
                &mut event
            } else if key_is(b, key, "data")? {
                &mut data
            } else {
                return Ok(());
            };
            *slot = Some((v, end));
            Ok(())
        })?
    };
    let id = match id {
        Some((v, e)) if b[v] == b'"' => Some(unescape(b, v, e)?),
        Some((v, e)) if is_number_start(b[v]) => Some(String::from(js_integer(&b[v..e])?)),
        _ => None,
    };
    let event = match event {
        Some((v, e)) if b[v] == b'"' => Some(unescape(b, v, e)?),
        _ => None,
    };
    let data = match data {
        None => String::new(),
        Some((v, e)) if b[v] == b'"' => unescape(b, v, e)?,
        Some((v, e)) if canonical_end(b, v, 0) == Some(e) => String::from(text(&b[v..e])?),
        Some(_) => return Err(Unsure),
    };
    Ok((IncomingMessage { id, event, data }, end))
}

// ----- the JSON grammar (RFC 8259, which `JSON.parse` follows) -------------

fn skip_ws(b: &[u8], mut at: usize) -> usize {
    while matches!(b.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

fn is_number_start(c: u8) -> bool {
    c == b'-' || c.is_ascii_digit()
}

/// Where the JSON value at `at` (no whitespace before it) ends.
fn value_end(b: &[u8], at: usize, depth: u32) -> Scan<usize> {
    match b.get(at).ok_or(Unsure)? {
        b'"' => string_end(b, at),
        b'[' => each_element(b, at, depth + 1, |i| value_end(b, i, depth + 1)),
        b'{' => each_field(b, at, depth + 1, |_, _, _| Ok(())),
        b't' => literal_end(b, at, b"true"),
        b'f' => literal_end(b, at, b"false"),
        b'n' => literal_end(b, at, b"null"),
        c if is_number_start(*c) => number_end(b, at),
        _ => Err(Unsure),
    }
}

fn literal_end(b: &[u8], at: usize, word: &[u8]) -> Scan<usize> {
    let end = at + word.len();
    if b.get(at..end) == Some(word) {
        Ok(end)
    } else {
        Err(Unsure)
    }
}

/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
fn number_end(b: &[u8], at: usize) -> Scan<usize> {
    let digits = |from: usize| from + b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut i = at + usize::from(b[at] == b'-');
    let int_end = digits(i);
    if int_end == i || (b[i] == b'0' && int_end > i + 1) {
        return Err(Unsure);
    }
    i = int_end;
    if b.get(i) == Some(&b'.') {
        let end = digits(i + 1);
        if end == i + 1 {
            return Err(Unsure);
        }
        i = end;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        i += usize::from(matches!(b.get(i), Some(b'+' | b'-')));
        let end = digits(i);
        if end == i {
            return Err(Unsure);
        }
        i = end;
    }
    Ok(i)
}

/// Where the string at `at` (its opening quote) ends, past the closing quote.
fn string_end(b: &[u8], at: usize) -> Scan<usize> {
    let mut i = at + 1;
    loop {
        match *b.get(i).ok_or(Unsure)? {
            b'"' => return Ok(i + 1),
            b'\\' => {
                i += match *b.get(i + 1).ok_or(Unsure)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
                    b'u' => hex4(b, i + 2).map(|_| 6)?,
                    _ => return Err(Unsure),
                }
            }
            c if c < 0x20 => return Err(Unsure),
            _ => i += 1,
        }
    }
}

fn hex4(b: &[u8], at: usize) -> Scan<u16> {
    let digits = b.get(at..at + 4).ok_or(Unsure)?;
    digits.iter().try_fold(0u16, |n, &c| {
        let d = (c as char).to_digit(16).ok_or(Unsure)?;
        Ok(n * 16 + d as u16)
    })
}

/// Call `f(start)` for each element of the array at `at` (it reads the
/// element and returns where it ends); where the array ends.
fn each_element(
    b: &[u8],
    at: usize,
    depth: u32,
    mut f: impl FnMut(usize) -> Scan<usize>,
) -> Scan<usize> {
    if depth > MAX_DEPTH {
        return Err(Unsure);
    }
    let mut i = skip_ws(b, at + 1);
    if b.get(i) == Some(&b']') {
        return Ok(i + 1);
    }
    loop {
        i = skip_ws(b, f(i)?);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b']') => return Ok(i + 1),
            _ => return Err(Unsure),
        }
    }
}

/// Call `f(key, value, value_end)` (`key` the key's opening quote) for each
/// member of the object at `at`; where the object ends.
fn each_field(
    b: &[u8],
    at: usize,
    depth: u32,
    mut f: impl FnMut(usize, usize, usize) -> Scan<()>,
) -> Scan<usize> {
    if depth > MAX_DEPTH {
        return Err(Unsure);
    }
    let mut i = skip_ws(b, at + 1);
    if b.get(i) == Some(&b'}') {
        return Ok(i + 1);
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return Err(Unsure);
        }
        let key = i;
        i = skip_ws(b, string_end(b, key)?);
        if b.get(i) != Some(&b':') {
            return Err(Unsure);
        }
        let v = skip_ws(b, i + 1);
        let end = value_end(b, v, depth)?;
        f(key, v, end)?;
        i = skip_ws(b, end);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => return Ok(i + 1),
            _ => return Err(Unsure),
        }
    }
}

// ----- values as JS reads them ----------------------------------------------

/// Whether the (valid) string at `at` is `name`.
fn key_is(b: &[u8], at: usize, name: &str) -> Scan<bool> {
    let raw = &b[at + 1..];
    if raw.get(name.len()) == Some(&b'"') && raw.starts_with(name.as_bytes()) {
        return Ok(true);
    }
    if !raw.starts_with(b"\\") && !raw[..raw.len().min(name.len())].contains(&b'\\') {
        return Ok(false);
    }
    Ok(unescape(b, at, string_end(b, at)?)? == name)
}

/// The text of the (valid) string at `at..end` (quotes included); a lone
/// surrogate is unsure (JS keeps it, a Rust string cannot).
fn unescape(b: &[u8], at: usize, end: usize) -> Scan<String> {
    let raw = &b[at + 1..end - 1];
    if !raw.contains(&b'\\') {
        return text(raw).map(String::from);
    }
    let mut out = String::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let run = raw[i..]
            .iter()
            .position(|&c| c == b'\\')
            .unwrap_or(raw.len() - i);
        out.push_str(text(&raw[i..i + run])?);
        i += run;
        if i < raw.len() {
            i += push_escape(raw, i, &mut out)?;
        }
    }
    Ok(out)
}

/// Append the escape at `raw[i]` (a backslash); how many bytes it took.
fn push_escape(raw: &[u8], i: usize, out: &mut String) -> Scan<usize> {
    let c = match *raw.get(i + 1).ok_or(Unsure)? {
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => return push_unicode_escape(raw, i, out),
        c => char::from(c),
    };
    out.push(c);
    Ok(2)
}

fn push_unicode_escape(raw: &[u8], i: usize, out: &mut String) -> Scan<usize> {
    let hi = hex4(raw, i + 2)?;
    if let Some(c) = char::from_u32(u32::from(hi)) {
        out.push(c);
        return Ok(6);
    }
    let low = match raw.get(i + 6..i + 8) {
        Some(b"\\u") if (0xD800..0xDC00).contains(&hi) => hex4(raw, i + 8)?,
        _ => return Err(Unsure),
    };
    if !(0xDC00..0xE000).contains(&low) {
        return Err(Unsure);
    }
    let c = 0x10000 + ((u32::from(hi) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
    out.push(char::from_u32(c).ok_or(Unsure)?);
    Ok(12)
}

fn text(raw: &[u8]) -> Scan<&str> {
    core::str::from_utf8(raw).map_err(|_| Unsure)
}

/// The number text `n` when `String(Number(n))` is `n` itself, as far as
/// this decoder is sure: an integer of at most 15 digits (below 2^53, so
/// exact) other than `-0`.
fn js_integer(n: &[u8]) -> Scan<&str> {
    let digits = n.strip_prefix(b"-").unwrap_or(n);
    let plain = !digits.is_empty()
        && digits.len() <= 15
        && digits.iter().all(u8::is_ascii_digit)
        && (digits[0] != b'0' || digits.len() == 1)
        && n != b"-0";
    if plain {
        text(n)
    } else {
        Err(Unsure)
    }
}

fn parse_u64(n: &str) -> u64 {
    n.bytes()
        .fold(0u64, |acc, d| acc * 10 + u64::from(d - b'0'))
}

/// Where the value at `at` ends when it is written exactly as
/// `JSON.stringify(JSON.parse(it))` would write it (no whitespace, numbers
/// as JS prints them, strings with only the escapes JS uses, no repeated
/// key and no array-index key, whose order JS changes); `None` otherwise.
fn canonical_end(b: &[u8], at: usize, depth: u32) -> Option<usize> {
    if depth > MAX_DEPTH {
        return None;
    }
    match *b.get(at)? {
        b'"' => canonical_string_end(b, at),
        b'[' => canonical_array_end(b, at, depth),
        b'{' => canonical_object_end(b, at, depth),
        b't' | b'f' | b'n' => value_end(b, at, depth).ok(),
        c if is_number_start(c) => {
            let end = number_end(b, at).ok()?;
            js_integer(&b[at..end]).ok().map(|_| end)
        }
        _ => None,
    }
}

fn canonical_array_end(b: &[u8], at: usize, depth: u32) -> Option<usize> {
    let mut i = at + 1;
    if b.get(i) == Some(&b']') {
        return Some(i + 1);
    }
    loop {
        i = canonical_end(b, i, depth + 1)?;
        match b.get(i)? {
            b',' => i += 1,
            b']' => return Some(i + 1),
            _ => return None,
        }
    }
}

fn canonical_object_end(b: &[u8], at: usize, depth: u32) -> Option<usize> {
    let mut keys: Vec<&[u8]> = Vec::new();
    let mut i = at + 1;
    if b.get(i) == Some(&b'}') {
        return Some(i + 1);
    }
    loop {
        let key_end = canonical_string_end(b, i)?;
        let key = &b[i..key_end];
        let index_like = key[1..key.len() - 1].iter().all(u8::is_ascii_digit);
        if index_like || keys.len() >= MAX_DATA_KEYS || keys.contains(&key) {
            return None;
        }
        keys.push(key);
        if b.get(key_end) != Some(&b':') {
            return None;
        }
        i = canonical_end(b, key_end + 1, depth + 1)?;
        match b.get(i)? {
            b',' => i += 1,
            b'}' => return Some(i + 1),
            _ => return None,
        }
    }
}

/// A string with only the escapes `JSON.stringify` writes: `\"`, `\\`,
/// `\b`, `\f`, `\n`, `\r`, `\t`, and `\u00xx` (lowercase) for the other
/// control characters (lone surrogates, which it also escapes, are left to
/// `JSON.parse`).
fn canonical_string_end(b: &[u8], at: usize) -> Option<usize> {
    if b.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    loop {
        match *b.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => match *b.get(i + 1)? {
                b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                b'u' => {
                    let hex = b.get(i + 2..i + 6)?;
                    let code = hex4(b, i + 2).ok()?;
                    let lower = !hex.iter().any(u8::is_ascii_uppercase);
                    let short = matches!(code, 0x8 | 0x9 | 0xA | 0xC | 0xD);
                    if code >= 0x20 || short || !lower {
                        return None;
                    }
                    i += 6;
                }
                _ => return None,
            },
            c if c < 0x20 => return None,
            _ => i += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `parse` that must not be called: the scanner was sure.
    fn sure(text: &str) -> Body {
        decode_json_text::<Never>(text, |_| panic!("asked JSON.parse for {text}"))
    }

    /// Whether the scanner asks `JSON.parse` for `text`.
    fn asks(text: &str) -> bool {
        scan_body(text.as_bytes()).is_err()
    }

    fn msg(id: Option<&str>, event: Option<&str>, data: &str) -> IncomingMessage {
        IncomingMessage {
            id: id.map(String::from),
            event: event.map(String::from),
            data: String::from(data),
        }
    }

    #[test]
    fn an_array_of_messages_is_read_without_json_parse() {
        let body = r#" [{"id":"1","data":"{\"n\":1}"},{"id":2,"event":"e","data":{"a":[1,"x",null,true]}}] "#;
        assert_eq!(
            sure(body),
            Some((
                alloc::vec![
                    msg(Some("1"), None, r#"{"n":1}"#),
                    msg(Some("2"), Some("e"), r#"{"a":[1,"x",null,true]}"#),
                ],
                None
            ))
        );
    }

    #[test]
    fn an_envelope_and_its_hint_the_last_repeated_key_counts() {
        let body = r#"{"messages":5,"_polling":{"next_interval_ms":-1,"next_interval_ms":250},
            "messages":[{"data":"a","data":"b","x":[{}]},7,"s"]}"#;
        assert_eq!(
            sure(body),
            Some((
                alloc::vec![
                    msg(None, None, "b"),
                    msg(None, None, ""),
                    msg(None, None, "")
                ],
                Some(250)
            ))
        );
        assert_eq!(
            sure(r#"{"messages":[],"_polling":{"next_interval_ms":-5}}"#),
            Some((alloc::vec![], None))
        );
        assert_eq!(
            sure(r#"{"messages":[],"_polling":[1]}"#),
            Some((alloc::vec![], None))
        );
    }

    #[test]
    fn json_without_either_shape_is_none() {
        for body in [
            "{}",
            r#"{"messages":{}}"#,
            "\"x\"",
            "12",
            "null",
            r#"{"messages":"[]"}"#,
        ] {
            assert_eq!(sure(body), None, "{body}");
        }
    }

    #[test]
    fn escapes_are_decoded_a_lone_surrogate_is_unsure() {
        let body = r#"[{"i\u0064":"\u00e9\ud83d\ude00\/\n","data":"\"\\"}]"#;
        assert_eq!(
            sure(body),
            Some((alloc::vec![msg(Some("é😀/\n"), None, "\"\\")], None))
        );
        assert!(asks(r#"[{"data":"\ud800"}]"#));
        assert!(asks(r#"[{"data":"\udc00\ud800"}]"#));
    }

    #[test]
    fn what_js_would_print_differently_asks_json_parse() {
        for body in [
            r#"[{"id":1.0}]"#,
            r#"[{"id":-0}]"#,
            r#"[{"id":1e3}]"#,
            r#"[{"id":1234567890123456}]"#,
            r#"[{"data":{"a": 1}}]"#,
            r#"[{"data":{"a":1,"a":2}}]"#,
            r#"[{"data":{"b":1,"0":2}}]"#,
            r#"[{"data":["\/"]}]"#,
            r#"[{"data":["\u0041"]}]"#,
            r#"[{"data":["\u001F"]}]"#,
            r#"[{"data":1.5}]"#,
            r#"{"messages":[],"_polling":{"next_interval_ms":2.5}}"#,
        ] {
            assert!(asks(body), "{body}");
        }
        assert_eq!(
            sure(r#"[{"id":-12,"data":["\u001f\n",-3,{"k":{}}]}]"#),
            Some((
                alloc::vec![msg(Some("-12"), None, r#"["\u001f\n",-3,{"k":{}}]"#)],
                None
            ))
        );
    }

    #[test]
    fn text_that_may_not_be_json_asks_json_parse_and_never_panics() {
        let deep = "[".repeat(100_000);
        for body in [
            "",
            " ",
            "[",
            "[1,]",
            "{\"a\"}",
            "[01]",
            "[1.]",
            "[-]",
            "[1e]",
            "tru",
            "[\"\t\"]",
            "[\"\\x\"]",
            "[\"\\u12\"]",
            "[] x",
            "{\"messages\":[]",
            &deep,
            "[{\"data\":\"é",
        ] {
            assert!(asks(body), "{body}");
        }
        let not_json = decode_json_text::<Never>("[1,]", |_| None);
        assert_eq!(not_json, None);
    }

    /// A [`JsonView`] never built (the tests' `parse` never returns one).
    enum Never {}

    impl JsonView for Never {
        fn is_array(&self) -> bool {
            match *self {}
        }
        fn get(&self, _: &str) -> Self {
            match *self {}
        }
        fn length(&self) -> u32 {
            match *self {}
        }
        fn at(&self, _: u32) -> Self {
            match *self {}
        }
        fn as_string(&self) -> Option<String> {
            match *self {}
        }
        fn as_f64(&self) -> Option<f64> {
            match *self {}
        }
        fn number_text(&self) -> Option<String> {
            match *self {}
        }
        fn stringify(&self) -> Option<String> {
            match *self {}
        }
    }
}
