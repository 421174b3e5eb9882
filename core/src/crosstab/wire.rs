//! Decoding what another tab posted on the channel (the table of
//! `src/tabs/channel.rs`). Any same-origin script can post there, so every
//! field is validated (strings; names of the contract's vocabulary; finite
//! non-negative numbers) and anything else is dropped: no input panics. The
//! adapter reads the posted array through [`WireFields`]; the rules live here
//! so they are tested and fuzzed natively.

use alloc::string::String;

use super::{Relay, Wire};
use crate::engine::{Action, ErrorCode, Message, Reason, ResetReason, State, TransportKind};

/// The fields of a posted array, as JS sees them (`array[i]`).
pub trait WireFields {
    /// Whether the post is an array at all.
    fn is_array(&self) -> bool;
    /// `array[i]` when it is a string.
    fn string(&self, i: u32) -> Option<String>;
    /// `array[i]` when it is a number (any, NaN included).
    fn number(&self, i: u32) -> Option<f64>;
    /// `array[i]` when it is a boolean.
    fn boolean(&self, i: u32) -> Option<bool>;
    /// `array[i]` is `undefined` (missing).
    fn is_undefined(&self, i: u32) -> bool;
    /// `array[i]` is `null`.
    fn is_null(&self, i: u32) -> bool;
}

/// A finite non-negative number at `i`, saturated into `u64`; `Some(None)`
/// when absent (`undefined` or `null`); `None` when anything else.
fn number<F: WireFields + ?Sized>(a: &F, i: u32) -> Option<Option<u64>> {
    if a.is_undefined(i) || a.is_null(i) {
        return Some(None);
    }
    let f = a.number(i).filter(|f| f.is_finite() && *f >= 0.0)?;
    Some(Some(f as u64))
}

fn transport<F: WireFields + ?Sized>(a: &F, i: u32) -> Option<TransportKind> {
    TransportKind::from_name(&a.string(i)?)
}

fn reason<F: WireFields + ?Sized>(a: &F, i: u32) -> Option<Reason> {
    Reason::from_name(&a.string(i)?)
}

/// A message, with the leader's cursor (`""` when absent) and its index in
/// its chunk (`0` when absent; Durable Streams, `offsets.rs`).
fn decode_message<F: WireFields + ?Sized>(a: &F) -> Option<(Relay, String, u32)> {
    let t = transport(a, 1)?;
    let msg = Message {
        id: a.string(2)?,
        last_event_id: a.string(3)?,
        event: a.string(4)?,
        data: a.string(5)?,
        binary: a.boolean(6) == Some(true),
    };
    let cursor = if a.is_undefined(7) {
        String::new()
    } else {
        a.string(7)?
    };
    let index = u32::try_from(number(a, 8)?.unwrap_or(0)).ok()?;
    Some((Relay::Message(msg, Some(t)), cursor, index))
}

fn decode_error<F: WireFields + ?Sized>(a: &F) -> Option<Relay> {
    Some(Relay::Action(Action::Error {
        code: ErrorCode::from_name(&a.string(1)?)?,
        fatal: a.boolean(2)?,
        status: match number(a, 3)? {
            Some(h) => Some(u16::try_from(h).ok()?),
            None => None,
        },
        retry_in_ms: number(a, 4)?,
        id: a.string(5),
    }))
}

fn decode_state<F: WireFields + ?Sized>(a: &F) -> Option<(Relay, String)> {
    let cursor = a.string(4)?;
    let state = Relay::Action(Action::State {
        state: State::from_name(&a.string(2)?)?,
        reason: reason(a, 3)?,
        delay_ms: number(a, 5)?,
    });
    Some((state, cursor))
}

fn decode_transport<F: WireFields + ?Sized>(a: &F) -> Option<Relay> {
    Some(Relay::Action(Action::TransportChanged {
        transport: transport(a, 2)?,
        reason: reason(a, 3)?,
        previous: if a.is_undefined(4) {
            None
        } else {
            Some(transport(a, 4)?)
        },
    }))
}

/// What a post says, or `None` when it is not one of ours (or malformed). A
/// notice's cursor is the one a state or a message carries (`""` otherwise).
pub fn decode<F: WireFields + ?Sized>(a: &F) -> Option<Wire> {
    if !a.is_array() {
        return None;
    }
    let sync = a.boolean(1) == Some(true);
    let mut cursor = String::new();
    let mut index = 0;
    let notice = match a.string(0)?.as_str() {
        "h" => return Some(Wire::Hello),
        "b" => return Some(Wire::Bye),
        "c" => return Some(Wire::Reconnect),
        "m" => {
            let (m, c, i) = decode_message(a)?;
            (cursor, index) = (c, i);
            m
        }
        "s" => {
            let (state, c) = decode_state(a)?;
            cursor = c;
            state
        }
        "u" => Relay::Action(Action::UpToDate {
            last_event_id: a.string(2)?,
        }),
        "t" => decode_transport(a)?,
        "e" => decode_error(a)?,
        "r" => Relay::Action(Action::Reset {
            reason: ResetReason::from_name(&a.string(1)?)?,
        }),
        _ => return None,
    };
    Some(Wire::Notice {
        notice,
        cursor,
        sync,
        index,
    })
}
