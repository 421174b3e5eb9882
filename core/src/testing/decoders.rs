//! The decoders of what the browser hands over: the JSON long-poll / poll
//! body ([`crate::engine::decode_json_body`], over a value from
//! `JSON.parse`, and [`crate::engine::decode_json_text`], over its text and
//! that value, which must agree with it) and the cross-tab wire ([`crate::crosstab::wire`], over
//! an array another tab posted). Values are built by `arbitrary` as JS would
//! see them, every shape the decoders check is compared with a plain reading
//! of the rule, and decoded JSON messages are fed to a long-poll engine whose
//! invariants ([`super::engine_model`]) must hold.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use arbitrary::Arbitrary;

use super::engine_model::Model;
use crate::crosstab::wire::{decode, WireFields};
use crate::crosstab::{Relay, Wire};
use crate::engine::{
    decode_json_body, decode_json_text, Action, Capabilities, Config, IncomingMessage, Input,
    JsonView, ResponseHead, TransportKind,
};

const KEYS: [&str; 7] = [
    "messages",
    "_polling",
    "next_interval_ms",
    "id",
    "event",
    "data",
    "x",
];

/// An object key: one the decoder reads, or any.
#[derive(Arbitrary, Debug, Clone)]
pub enum Key {
    /// `KEYS[i % len]`.
    Known(u8),
    /// Anything.
    Raw(String),
}

impl Key {
    fn text(&self) -> &str {
        match self {
            Key::Known(i) => KEYS[usize::from(*i) % KEYS.len()],
            Key::Raw(s) => s,
        }
    }
}

/// A value `JSON.parse` can produce (and `undefined`, for a missing key).
#[derive(Arbitrary, Debug, Clone)]
pub enum Json {
    /// `undefined`.
    Undefined,
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A number (`1e999` parses to `Infinity`).
    Num(f64),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<Json>),
    /// An object (a repeated key: the last one wins, as in `JSON.parse`).
    Obj(Vec<(Key, Json)>),
}

impl Json {
    /// `JSON.stringify(v)` of a defined value (numbers as JS prints the
    /// integers the text decoder is sure of; others are only compared with
    /// this same function).
    fn json_text(&self, out: &mut String) {
        match self {
            Json::Undefined | Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Num(n) if *n == 0.0 => out.push('0'),
            Json::Num(n) if n.is_finite() => out.push_str(&format!("{n}")),
            Json::Num(_) => out.push_str("null"),
            Json::Str(s) => push_js_string(out, s),
            Json::Arr(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.json_text(out);
                }
                out.push(']');
            }
            Json::Obj(_) => self.object_json_text(out),
        }
    }

    /// An object as `JSON.stringify` writes it: each key once (at its first
    /// place, with its last value), array-index keys first in ascending
    /// order (ECMA-262 OrdinaryOwnPropertyKeys), undefined values left out.
    fn object_json_text(&self, out: &mut String) {
        let Json::Obj(fields) = self else { return };
        let mut keys: Vec<&str> = Vec::new();
        for (k, _) in fields {
            if !keys.contains(&k.text()) {
                keys.push(k.text());
            }
        }
        let (mut order, rest): (Vec<&str>, Vec<&str>) =
            keys.into_iter().partition(|k| array_index(k).is_some());
        order.sort_by_key(|k| array_index(k));
        order.extend(rest);
        out.push('{');
        let mut first = true;
        for k in order {
            let v = self.get(k);
            if matches!(v, Json::Undefined) {
                continue;
            }
            if !first {
                out.push(',');
            }
            first = false;
            push_js_string(out, k);
            out.push(':');
            v.json_text(out);
        }
        out.push('}');
    }

    /// The value `JSON.parse` gives back for the text of this one
    /// ([`Json::body_text`]): `undefined` and NaN become `null`.
    #[must_use]
    pub fn parsed(&self) -> Json {
        match self {
            Json::Undefined => Json::Null,
            Json::Num(n) if n.is_nan() => Json::Null,
            Json::Arr(items) => Json::Arr(items.iter().map(Json::parsed).collect()),
            Json::Obj(fields) => Json::Obj(
                fields
                    .iter()
                    .map(|(k, v)| (Key::Raw(k.text().into()), v.parsed()))
                    .collect(),
            ),
            v => v.clone(),
        }
    }

    /// The text a server could send for this value, every key as given
    /// (repeats included): compact with the escapes `JSON.stringify` uses,
    /// or `spaced` with whitespace around every token and other escapes
    /// (`\/`, `\uXXXX` for every non-ASCII character).
    #[must_use]
    pub fn body_text(&self, spaced: bool) -> String {
        let mut out = String::new();
        self.push_body_text(&mut out, spaced);
        out
    }

    fn push_body_text(&self, out: &mut String, spaced: bool) {
        let gap = if spaced { " " } else { "" };
        match self {
            Json::Num(n) if n.is_infinite() => {
                out.push_str(if *n > 0.0 { "1e999" } else { "-1e999" })
            }
            Json::Num(n) if !n.is_nan() => out.push_str(&format!("{n}")),
            Json::Str(s) if spaced => push_spaced_string(out, s),
            Json::Arr(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    out.push_str(if i > 0 { "," } else { gap });
                    v.push_body_text(out, spaced);
                    out.push_str(gap);
                }
                out.push(']');
            }
            Json::Obj(fields) => {
                out.push('{');
                for (i, (k, v)) in fields.iter().enumerate() {
                    out.push_str(if i > 0 { "," } else { gap });
                    Json::Str(k.text().into()).push_body_text(out, spaced);
                    out.push_str(gap);
                    out.push(':');
                    out.push_str(gap);
                    v.push_body_text(out, spaced);
                    out.push_str(gap);
                }
                out.push('}');
            }
            v => v.json_text(out),
        }
    }
}

/// `k` as an array index (a canonical integer below 2^32 − 1), which JS
/// orders first among an object's keys.
fn array_index(k: &str) -> Option<u32> {
    let n: u32 = k.parse().ok()?;
    (n.to_string() == k && n != u32::MAX).then_some(n)
}

/// A string as `JSON.stringify` quotes it.
fn push_js_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A string with escapes `JSON.stringify` does not write (`\/`, uppercase
/// `\uXXXX` for every character outside printable ASCII, surrogate pairs
/// above the BMP).
fn push_spaced_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '/' => out.push_str("\\/"),
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04X}"));
                }
            }
        }
    }
    out.push('"');
}

impl JsonView for Json {
    fn is_array(&self) -> bool {
        matches!(self, Json::Arr(_))
    }
    fn is_object(&self) -> bool {
        matches!(self, Json::Obj(_))
    }
    fn get(&self, key: &str) -> Self {
        match self {
            Json::Obj(fields) => fields
                .iter()
                .rev()
                .find(|(k, _)| k.text() == key)
                .map_or(Json::Undefined, |(_, v)| v.clone()),
            _ => Json::Undefined,
        }
    }
    fn length(&self) -> u32 {
        match self {
            Json::Arr(items) => u32::try_from(items.len()).unwrap_or(u32::MAX),
            _ => 0,
        }
    }
    fn at(&self, i: u32) -> Self {
        match self {
            Json::Arr(items) => items.get(i as usize).cloned().unwrap_or(Json::Undefined),
            _ => Json::Undefined,
        }
    }
    fn as_string(&self) -> Option<String> {
        match self {
            Json::Str(s) => Some(s.clone()),
            _ => None,
        }
    }
    fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Num(n) => Some(*n),
            _ => None,
        }
    }
    fn number_text(&self) -> Option<String> {
        self.as_f64().map(|n| n.to_string())
    }
    fn stringify(&self) -> Option<String> {
        if matches!(self, Json::Undefined) {
            return None;
        }
        let mut out = String::new();
        self.json_text(&mut out);
        Some(out)
    }
}

/// The rule of [`decode_json_body`], read plainly, for one message.
fn expected_message(m: &Json) -> Option<IncomingMessage> {
    if !matches!(m, Json::Obj(_)) {
        return None;
    }
    let id = match m.get("id") {
        Json::Str(s) => Some(s),
        Json::Num(n) => Some(n.to_string()),
        _ => None,
    };
    let event = m.get("event").as_string();
    let data = match m.get("data") {
        Json::Str(s) => s,
        Json::Undefined => String::new(),
        other => other.stringify().unwrap_or_default(),
    };
    Some(IncomingMessage { id, event, data })
}

/// The oracle of the JSON body decoder.
///
/// # Errors
/// A description of the first disagreement or broken engine invariant.
pub fn check_json(body: &Json) -> Result<(), String> {
    let got = decode_json_body(body);
    let (list, hint) = match body {
        Json::Arr(items) => (Some(items.clone()), None),
        _ => match body.get("messages") {
            Json::Arr(items) => {
                let hint = match body.get("_polling").get("next_interval_ms") {
                    Json::Num(n) if n >= 0.0 => Some(n as u64),
                    _ => None,
                };
                (Some(items), hint)
            }
            _ => (None, None),
        },
    };
    let want = list.map(|l| (l.iter().map(expected_message).collect::<Vec<_>>(), hint));
    if got != want {
        return Err(format!("decoded {got:?}, the rule says {want:?}"));
    }
    check_json_text(body)?;
    let Some((msgs, hint)) = got else {
        return Ok(());
    };
    // The decoded messages as a long-poll answer.
    let mut config = Config::new("/lp");
    config.transports = alloc::vec![TransportKind::LongPoll];
    let mut m = Model::new(config, 23);
    m.start(Capabilities::ALL)?;
    let id = m.live().ok_or("no long-poll request")?;
    let head = ResponseHead::new(200).with_content_type("application/json");
    m.input(Input::ResponseHead(id, &head), None)?;
    m.input(
        Input::Messages {
            id,
            msgs,
            polling_hint_ms: hint,
        },
        Some(id),
    )?;
    m.run_for(3_600_000)
}

/// The body's text decoded by [`decode_json_text`] (with the value
/// `JSON.parse` gives for it) must give what [`decode_json_body`] gives for
/// that value, sent compact and spaced; a cut-off text must not panic.
fn check_json_text(body: &Json) -> Result<(), String> {
    check_text_of(body)?;
    check_text_of(&strings_as_messages(body))
}

/// A list of messages made of every string in `body`, each as an id, an
/// event and the last of two `data` keys (so repeated keys, escapes and
/// any text reach the scanner whatever shape the input had).
fn strings_as_messages(body: &Json) -> Json {
    fn strings(v: &Json, out: &mut Vec<String>) {
        match v {
            Json::Str(s) => out.push(s.clone()),
            Json::Arr(items) => items.iter().for_each(|v| strings(v, out)),
            Json::Obj(fields) => fields.iter().for_each(|(k, v)| {
                out.push(k.text().into());
                strings(v, out);
            }),
            _ => {}
        }
    }
    let mut all = Vec::new();
    strings(body, &mut all);
    let key = |i: u8| Key::Known(i);
    let msgs = all.into_iter().map(|s| {
        Json::Obj(alloc::vec![
            (key(3), Json::Str(s.clone())),
            (key(4), Json::Str(s.clone())),
            (key(5), Json::Str("first".into())),
            (key(5), Json::Str(s)),
        ])
    });
    Json::Arr(msgs.collect())
}

/// [`check_json_text`] for one body.
fn check_text_of(body: &Json) -> Result<(), String> {
    let parsed = body.parsed();
    let want = decode_json_body(&parsed);
    for spaced in [false, true] {
        let text = body.body_text(spaced);
        let got = decode_json_text(&text, &parsed);
        if got != want {
            return Err(format!(
                "text {text:?} decoded {got:?}, the value gives {want:?}"
            ));
        }
        let cut = text
            .char_indices()
            .nth(text.chars().count() / 2)
            .map_or(0, |(i, _)| i);
        let _ = decode_json_text(&text[..cut], &parsed);
    }
    Ok(())
}

const WORDS: [&str; 16] = [
    "m",
    "s",
    "t",
    "e",
    "r",
    "u",
    "h",
    "b",
    "fetch-sse",
    "long-poll",
    "open",
    "waiting",
    "backoff",
    "http-status",
    "cursor-too-old",
    "",
];

/// A string field: from the wire's vocabulary, or any.
#[derive(Arbitrary, Debug, Clone)]
pub enum Word {
    /// `WORDS[i % len]`.
    Known(u8),
    /// Anything.
    Raw(String),
}

/// One element of a posted array, as JS sees it.
#[derive(Arbitrary, Debug, Clone)]
pub enum JsValue {
    /// `undefined`.
    Undefined,
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A number (NaN and infinities included).
    Num(f64),
    /// A string.
    Str(Word),
}

/// One fuzz case of the cross-tab wire: a post (`array: false` = not an array).
#[derive(Arbitrary, Debug, Clone)]
pub struct WireCase {
    /// `Array.isArray(post)`.
    pub array: bool,
    /// Its elements.
    pub values: Vec<JsValue>,
}

impl WireFields for WireCase {
    fn is_array(&self) -> bool {
        self.array
    }
    fn string(&self, i: u32) -> Option<String> {
        match self.values.get(i as usize)? {
            JsValue::Str(Word::Known(k)) => Some(WORDS[usize::from(*k) % WORDS.len()].to_string()),
            JsValue::Str(Word::Raw(s)) => Some(s.clone()),
            _ => None,
        }
    }
    fn number(&self, i: u32) -> Option<f64> {
        match self.values.get(i as usize)? {
            JsValue::Num(n) => Some(*n),
            _ => None,
        }
    }
    fn boolean(&self, i: u32) -> Option<bool> {
        match self.values.get(i as usize)? {
            JsValue::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn is_undefined(&self, i: u32) -> bool {
        matches!(self.values.get(i as usize), None | Some(JsValue::Undefined))
    }
    fn is_null(&self, i: u32) -> bool {
        matches!(self.values.get(i as usize), Some(JsValue::Null))
    }
}

/// The oracle of the cross-tab wire decoder: no panic; only arrays whose
/// kind is one of the table's letters decode; a message's fields are its
/// strings (its cursor absent or a string); a number that gets through is one the array held, finite and
/// non-negative; a status fits in `u16`.
///
/// # Errors
/// A description of the first disagreement.
pub fn check_wire(case: &WireCase) -> Result<(), String> {
    let got = decode(case);
    let kind = case.string(0);
    let Some(wire) = got else { return Ok(()) };
    if !case.array
        || !matches!(
            kind.as_deref(),
            Some("m" | "s" | "t" | "e" | "r" | "u" | "h" | "b" | "c")
        )
    {
        return Err(format!("{case:?} decoded to {wire:?}"));
    }
    let fine = |n: Option<u64>, i: u32| match n {
        None => case.is_undefined(i) || case.is_null(i),
        Some(n) => case
            .number(i)
            .is_some_and(|f| f.is_finite() && f >= 0.0 && f as u64 == n),
    };
    let ok = match &wire {
        Wire::Hello | Wire::Bye | Wire::Reconnect => true,
        Wire::Notice {
            notice: Relay::Message(m, _),
            cursor,
            index,
            ..
        } => {
            [&m.id, &m.last_event_id, &m.event, &m.data]
                .iter()
                .zip(2..)
                .all(|(s, i)| case.string(i).as_ref() == Some(*s))
                && (case.string(7).as_ref() == Some(cursor)
                    || (cursor.is_empty() && case.is_undefined(7)))
                && (fine(Some(u64::from(*index)), 8) || (*index == 0 && fine(None, 8)))
        }
        Wire::Notice {
            notice: Relay::Action(a),
            cursor,
            ..
        } => match a {
            Action::State { delay_ms, .. } => {
                fine(*delay_ms, 5) && case.string(4).as_ref() == Some(cursor)
            }
            Action::Error {
                status,
                retry_in_ms,
                ..
            } => fine(status.map(u64::from), 3) && fine(*retry_in_ms, 4),
            _ => true,
        },
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{case:?} decoded to {wire:?}"))
    }
}
