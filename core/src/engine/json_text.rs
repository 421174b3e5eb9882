//! The JSON long-poll / poll body read from its text: the
//! adapter holds the body as text in wasm and has had the browser's
//! `JSON.parse` check it, so the messages are read here in one pass over the
//! text instead of field by field across the wasm↔JS boundary (about 18
//! crossings per message through `Reflect.get`).
//!
//! The rule stays [`super::decode_json_body`]'s: the shape and the hint are
//! read from the parsed value (a few crossings per body), and so is any
//! message this scanner is unsure of (a `\u` escape, a key written with escapes, a number id other
//! than a plain non-negative integer, a `data` that is not a string: its
//! `JSON.stringify` text). The fuzz target
//! `json_envelope` checks both agree (`testing::decoders::check_json`).

use alloc::string::String;
use alloc::vec::Vec;

use super::entry::Input;
use super::input::{AttemptId, IncomingMessage, TransportError};
use super::json_body::{message_list, view_message, JsonView};

/// The fact of attempt `id`'s JSON long-poll / poll body (read as
/// [`BodyRead::Json`](super::BodyRead::Json)): `text`, and `value`, what
/// `JSON.parse(text)` gave (`None`: it threw). Its messages when it has one of
/// the two shapes ([`Input::Messages`]); JSON of neither shape is one raw
/// resource ([`Input::BodyResource`]), as a body of any other media type
/// is; an empty body is no news; other text that is not JSON is a failed attempt
/// ([`TransportError::BadBody`]): a body cut short must never reach the
/// app as a message.
pub fn json_body<V: JsonView>(id: AttemptId, text: String, value: Option<&V>) -> Input<'static> {
    let Some(value) = value else {
        // An empty (or whitespace-only) body is "no news" on any content
        // type: the raw-resource path says so.
        if super::decode::is_blank(&text) {
            return Input::BodyResource(id, text);
        }
        return Input::TransportError(id, TransportError::BadBody);
    };
    match decode_json_text(&text, value) {
        Some((msgs, polling_hint_ms)) => Input::Messages {
            id,
            msgs,
            polling_hint_ms,
        },
        None => Input::BodyResource(id, text),
    }
}

/// What [`super::decode_json_body`] gives for `value`, the result of
/// `JSON.parse(text)` (so `text` is valid JSON; on other text the answer is
/// unspecified but never a panic).
pub fn decode_json_text<V: JsonView>(
    text: &str,
    value: &V,
) -> Option<(Vec<Option<IncomingMessage>>, Option<u64>)> {
    let (list, hint) = message_list(value)?;
    let list = list.as_ref().unwrap_or(value);
    let b = text.as_bytes();
    // Where the next element's text starts; `None` once unsure of it.
    let mut at = list_start(b);
    // A loop, not a collected `Vec`: no iterator of its own in the wasm.
    let n = list.length();
    let mut msgs = Vec::with_capacity(n as usize);
    for i in 0..n {
        let m = at.take().and_then(|a| {
            let start = skip_ws(b, a + 1);
            let end = value_end(b, start)?;
            at = Some(skip_ws(b, end));
            scan_message(text.get(start..end)?).map(Some)
        });
        msgs.push(m.unwrap_or_else(|| view_message(&list.at(i))));
    }
    Some((msgs, hint))
}

/// Where the list of messages opens: the body when it is an array, else the
/// value of an envelope's last `messages` key (the one `JSON.parse` keeps).
/// `None` (read from the parsed value) when a key is written with escapes:
/// it could be that last `messages`. Only asked once the value has one of
/// the two shapes, so a `messages` key is there when the body is no array.
fn list_start(b: &[u8]) -> Option<usize> {
    let mut at = skip_ws(b, 0);
    for (key, v, _) in fields(b, at) {
        if key == b"messages" {
            at = v;
        }
        if key.contains(&b'\\') {
            return None;
        }
    }
    Some(at)
}

/// One message (an element of the list), or `None` when unsure (and for
/// an element that is not an object: the value says it is no message).
fn scan_message(m: &str) -> Option<IncomingMessage> {
    if !m.starts_with('{') {
        return None;
    }
    let (mut id, mut event, mut data) = (None, None, None);
    for (key, at, end) in fields(m.as_bytes(), 0) {
        let v = m.get(at..end);
        match key {
            b"id" => id = v,
            b"event" => event = v,
            b"data" => data = v,
            _ if key.contains(&b'\\') => return None,
            _ => {}
        }
    }
    let first = |v: Option<&str>| v.and_then(|v| v.bytes().next());
    let id = match first(id) {
        Some(b'"') => Some(unescape(id?)?),
        Some(b'-' | b'0'..=b'9') => Some(js_integer(id?)?),
        _ => None,
    };
    let event = match first(event) {
        Some(b'"') => Some(unescape(event?)?),
        _ => None,
    };
    let data = match first(data) {
        None => String::new(),
        Some(b'"') => unescape(data?)?,
        Some(_) => return None,
    };
    Some(IncomingMessage { id, event, data })
}

/// The elements of the JSON array `text`, each as its text (a Durable
/// Streams SSE `data` event, PROTOCOL.md §5.8); `None` when `text` is not
/// one array (an empty element, a missing bracket, text after it). The
/// elements' own syntax is not checked: `parse: "json"` does that per
/// message.
#[cfg(feature = "durable-streams")]
pub(super) fn array_elements(text: &str) -> Option<Vec<String>> {
    let b = text.as_bytes();
    let start = skip_ws(b, 0);
    if b.get(start) != Some(&b'[') {
        return None;
    }
    let mut out = Vec::new();
    let mut at = skip_ws(b, start + 1);
    if b.get(at) == Some(&b']') {
        return (skip_ws(b, at + 1) == b.len()).then_some(out);
    }
    loop {
        let end = value_end(b, at).filter(|&end| end > at)?;
        out.push(String::from(text.get(at..end)?));
        let next = skip_ws(b, end);
        match b.get(next)? {
            b',' => at = skip_ws(b, next + 1),
            b']' => return (skip_ws(b, next + 1) == b.len()).then_some(out),
            _ => return None,
        }
    }
}

/// A Durable Streams SSE `control` event's fields (PROTOCOL.md §5.8).
#[cfg(feature = "durable-streams")]
pub(super) struct Control<'a> {
    /// `streamNextOffset` (not checked here).
    pub next: &'a str,
    /// `streamCursor`, when it is a string.
    pub cursor: Option<&'a str>,
    /// `upToDate: true`.
    pub up_to_date: bool,
    /// `streamClosed: true`.
    pub closed: bool,
}

/// The control event `text`: `None` unless it is one JSON object (brackets
/// balanced, nothing after it) with a string `streamNextOffset`. The last
/// of a repeated key counts, as in `JSON.parse`. Strings are taken between
/// their quotes as written, not unescaped: offsets and cursors are URL-safe
/// ASCII (PROTOCOL.md §8), which JSON writes without escapes.
#[cfg(feature = "durable-streams")]
pub(super) fn control_fields(text: &str) -> Option<Control<'_>> {
    let b = text.as_bytes();
    let at = skip_ws(b, 0);
    if b.get(at) != Some(&b'{') || skip_ws(b, value_end(b, at)?) != b.len() {
        return None;
    }
    let mut c = Control {
        next: "",
        cursor: None,
        up_to_date: false,
        closed: false,
    };
    for (key, v, end) in fields(b, at) {
        let v = text.get(v..end)?;
        let string = v.strip_prefix('"').and_then(|v| v.strip_suffix('"'));
        match key {
            b"streamNextOffset" => c.next = string?,
            b"streamCursor" => c.cursor = string,
            b"upToDate" => c.up_to_date = v == "true",
            b"streamClosed" => c.closed = v == "true",
            _ => {}
        }
    }
    Some(c)
}

fn skip_ws(b: &[u8], mut at: usize) -> usize {
    while matches!(b.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// The members of the object at `at` (none when it is not one).
fn fields(b: &[u8], at: usize) -> Fields<'_> {
    // `{}`: the first key is not a string, so there is no member.
    let i = skip_ws(b, at + 1);
    let more = b.get(at) == Some(&b'{');
    Fields { b, i, more }
}

/// Each member of an object: (its key between the quotes, where its value
/// starts, where it ends), in the order of the text.
struct Fields<'a> {
    b: &'a [u8],
    i: usize,
    more: bool,
}

impl<'a> Iterator for Fields<'a> {
    type Item = (&'a [u8], usize, usize);

    fn next(&mut self) -> Option<Self::Item> {
        if !core::mem::take(&mut self.more) {
            return None;
        }
        let b = self.b;
        let key_end = string_end(b, self.i)?;
        let key = b.get(self.i + 1..key_end - 1)?;
        let v = skip_ws(b, skip_ws(b, key_end) + 1);
        let end = value_end(b, v)?;
        let next = skip_ws(b, end);
        if b.get(next) == Some(&b',') {
            self.more = true;
            self.i = skip_ws(b, next + 1);
        }
        Some((key, v, end))
    }
}

/// Where the string at `at` ends, past its closing quote.
fn string_end(b: &[u8], at: usize) -> Option<usize> {
    if b.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    loop {
        match b.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// Where the (valid) value at `at` ends: a string at its closing quote, a
/// scalar before the delimiter after it, a container at its closing bracket
/// (brackets counted outside strings; no recursion, so any depth is safe).
fn value_end(b: &[u8], at: usize) -> Option<usize> {
    let (mut depth, mut i) = (0usize, at);
    loop {
        match *b.get(i)? {
            b'"' => {
                i = string_end(b, i)?;
                if depth == 0 {
                    return Some(i);
                }
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' if depth > 1 => depth -= 1,
            b']' | b'}' if depth == 1 => return Some(i + 1),
            b']' | b'}' | b',' | b' ' | b'\t' | b'\n' | b'\r' if depth == 0 => return Some(i),
            _ => {}
        }
        i += 1;
    }
}

/// The text of the string `v` (quotes included); `None` for a `\u`
/// escape (a lone surrogate is possible: left to the parsed value) and the
/// rarer `\b`, `\f`, `\r` (bundle bytes).
fn unescape(v: &str) -> Option<String> {
    let mut rest = v.get(1..v.len().checked_sub(1)?)?;
    let mut out = String::with_capacity(rest.len());
    while let Some(i) = crate::wire::find_byte(rest, b'\\') {
        out.push_str(rest.get(..i)?);
        out.push(match *rest.as_bytes().get(i + 1)? {
            b'n' => '\n',
            b't' => '\t',
            b'b' | b'f' | b'r' | b'u' => return None,
            e => char::from(e),
        });
        rest = rest.get(i + 2..rest.len())?;
    }
    out.push_str(rest);
    Some(out)
}

/// A number id as its source text when it is a non-negative integer: the
/// text, not `String(Number(n))`, so an id past 2^53 (a 64-bit sequence
/// number, a snowflake id) keeps every digit. Other numbers (a sign, a
/// fraction, an exponent) are read from the value.
fn js_integer(n: &str) -> Option<String> {
    // Valid JSON has no leading zero.
    n.bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| String::from(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(id: Option<&str>, event: Option<&str>, data: &str) -> Option<IncomingMessage> {
        Some(IncomingMessage {
            id: id.map(String::from),
            event: event.map(String::from),
            data: String::from(data),
        })
    }

    fn scan(m: &str) -> Option<IncomingMessage> {
        scan_message(m)
    }

    #[test]
    fn messages_are_read_from_the_text() {
        assert_eq!(
            scan(r#"{"id":"1","data":"{\"n\":1}"}"#),
            msg(Some("1"), None, r#"{"n":1}"#)
        );
        assert_eq!(
            scan(r#"{ "id" : 12 , "event":"e","x":{"a":[1.5e3,"]}",null,{}]},"data":"\/\n\t\\"}"#),
            msg(Some("12"), Some("e"), "/\n\t\\")
        );
        // The last of a repeated key counts, as in JSON.parse; not-strings
        // are none.
        assert_eq!(
            scan(r#"{"data":"a","data":"b","event":1,"id":null}"#),
            msg(None, None, "b")
        );
        // An empty object: no field.
        for m in ["{}", "{ }"] {
            assert_eq!(scan(m), msg(None, None, ""), "{m}");
        }
    }

    #[test]
    fn what_the_scanner_is_unsure_of_is_read_from_the_value() {
        for m in [
            r#"{"data":"\u00e9"}"#,
            r#"{"data":"\b"}"#,
            r#"{"data":"\r"}"#,
            r#"{"i\u0064":"1"}"#,
            r#"{"id":1.0}"#,
            r#"{"id":-0}"#,
            r#"{"id":-1}"#,
            r#"{"id":1e3}"#,
            "7",
            "\"s\"",
            "[1]",
            "null",
            r#"{"data":{"a":1}}"#,
            r#"{"data":[]}"#,
            r#"{"data":1}"#,
            r#"{"data":null}"#,
        ] {
            assert_eq!(scan(m), None, "{m}");
        }
    }

    /// An id past 2^53 (here 2^53 + 1, which a double rounds to 2^53) keeps
    /// its digits: taken from the text, not through a number.
    #[test]
    fn a_number_id_past_2_53_is_its_source_text() {
        for id in ["9007199254740993", "18446744073709551615"] {
            let m = format!(r#"{{"id":{id},"data":"x"}}"#);
            assert_eq!(scan(&m), msg(Some(id), None, "x"));
        }
    }

    #[test]
    fn the_list_is_read_from_the_text_when_the_body_is_an_array() {
        assert_eq!(list_start(b" \n[1]"), Some(2));
        assert_eq!(list_start(br#"{"messages":[]}"#), Some(12));
        assert_eq!(list_start(br#"{"a\\":[]}"#), None);
    }

    #[test]
    fn text_that_is_not_json_never_panics() {
        let deep = "[".repeat(100_000);
        for t in [
            "", "{", "{\"", "[\"\\", "{\"a\"", "{\"a\":", "{\"a\":1", "\"", "]", &deep,
        ] {
            let _ = list_start(t.as_bytes());
            let _ = scan_message(t);
            let _ = value_end(t.as_bytes(), 0);
        }
    }
}
