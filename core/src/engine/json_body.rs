//! The shape of a JSON long-poll / poll body (ARCHITECTURE.md "Server
//! conventions"): an array of `{id, event?, data}`, or an envelope
//! `{messages, _polling?: {next_interval_ms}}`. The adapter parses the text
//! with the browser's `JSON.parse` (no JSON parser in the bundle) and hands
//! the value over as a [`JsonView`]; what counts as a message is decided
//! here, tested and fuzzed natively.

use alloc::string::String;
use alloc::vec::Vec;

use super::input::IncomingMessage;

/// A value produced by `JSON.parse`, read the way JS reads it.
pub trait JsonView: Sized {
    /// `Array.isArray(v)`.
    fn is_array(&self) -> bool;
    /// `v` is an object that is not an array (not `null`, not a number or
    /// a string).
    fn is_object(&self) -> bool;
    /// `v[key]` for an object, else `undefined`.
    fn get(&self, key: &str) -> Self;
    /// `v.length` of an array (0 otherwise).
    fn length(&self) -> u32;
    /// `v[i]` of an array.
    fn at(&self, i: u32) -> Self;
    /// `v` when it is a string.
    fn as_string(&self) -> Option<String>;
    /// `v` when it is a number.
    fn as_f64(&self) -> Option<f64>;
    /// `String(v)` when `v` is a number (JS number formatting).
    fn number_text(&self) -> Option<String>;
    /// `JSON.stringify(v)` when it gives a string (`undefined` gives none).
    fn stringify(&self) -> Option<String>;
}

/// The messages of a JSON body and its `_polling.next_interval_ms` hint
/// (ms; a negative or non-number hint is none), or `None` when the body has
/// neither shape. Per message: `id` a string, or a number as JS prints it,
/// else none; `event` a string, else none (`message`); `data` a string as
/// is, anything else as its JSON text (`""` when there is none). An entry
/// that is not an object (`null`, a number, a string, an array) is no
/// message: `None` in its place (the engine reports a `parse` error for it).
pub fn decode_json_body<V: JsonView>(v: &V) -> Option<(Vec<Option<IncomingMessage>>, Option<u64>)> {
    let (list, hint) = message_list(v)?;
    let list = list.as_ref().unwrap_or(v);
    let msgs = (0..list.length())
        .map(|i| view_message(&list.at(i)))
        .collect();
    Some((msgs, hint))
}

/// The body's list of messages (`None` inside: the body itself is the list)
/// and its hint, or `None` when the body has neither shape.
pub(super) fn message_list<V: JsonView>(v: &V) -> Option<(Option<V>, Option<u64>)> {
    if v.is_array() {
        return Some((None, None));
    }
    let messages = v.get("messages");
    if !messages.is_array() {
        return None;
    }
    let hint = v
        .get("_polling")
        .get("next_interval_ms")
        .as_f64()
        .filter(|ms| *ms >= 0.0)
        .map(|ms| ms as u64);
    Some((Some(messages), hint))
}

/// One element of the list as a message ([`decode_json_body`]'s rule).
pub(super) fn view_message<V: JsonView>(m: &V) -> Option<IncomingMessage> {
    if !m.is_object() {
        return None;
    }
    let id = m.get("id");
    let data = m.get("data");
    Some(IncomingMessage {
        id: id.as_string().or_else(|| id.number_text()),
        event: m.get("event").as_string(),
        data: data
            .as_string()
            .or_else(|| data.stringify())
            .unwrap_or_default(),
    })
}
