//! The checks every option shares: a value of the right type and range, or
//! a [`Refusal`] naming the option, recorded in `r` unless one came first
//! (the reading stops at the first: the value handed back then is a
//! default nobody keeps).

use alloc::string::String;

use super::{Expected, Given, Refusal, COUNT, MS};

/// Records the refusal of `name` saying `expected` (the value given is
/// what was got), unless one came first.
#[inline(never)]
pub(super) fn refuse(r: &mut Option<Refusal>, name: &'static str, expected: Expected) {
    if r.is_none() {
        *r = Some(Refusal {
            name,
            expected,
            got: None,
        });
    }
}

/// Absent (`None`), a finite number ≥ 0 (truncated), or refused saying
/// `expected`.
pub(super) fn number(
    r: &mut Option<Refusal>,
    g: &Given,
    name: &'static str,
    expected: &'static str,
) -> Option<u64> {
    match *g {
        Given::Number(n) if n.is_finite() && n >= 0.0 => Some(n as u64),
        Given::Absent => None,
        _ => {
            refuse(r, name, Expected::Is(expected));
            None
        }
    }
}

/// A duration: [`number`] saying [`MS`].
pub(super) fn ms(r: &mut Option<Refusal>, g: &Given, name: &'static str) -> Option<u64> {
    number(r, g, name, MS)
}

/// Absent (`None`), a number ≥ 0 (truncated, at most `u32::MAX`;
/// `Infinity`: `Some(None)`, no limit), or refused.
pub(super) fn count(r: &mut Option<Refusal>, g: &Given, name: &'static str) -> Option<Option<u32>> {
    match *g {
        Given::Number(n) if n >= 0.0 && n.is_finite() => Some(Some(n.min(u32::MAX as f64) as u32)),
        Given::Number(n) if n >= 0.0 => Some(None),
        Given::Absent => None,
        _ => {
            refuse(r, name, Expected::Is(COUNT));
            None
        }
    }
}

/// Absent (`None`), a boolean, or refused.
pub(super) fn flag(r: &mut Option<Refusal>, g: &Given, name: &'static str) -> Option<bool> {
    match *g {
        Given::Bool(b) => Some(b),
        Given::Absent => None,
        _ => {
            refuse(r, name, Expected::Is("a boolean"));
            None
        }
    }
}

/// Absent (`None`), a string, or refused.
pub(super) fn text(r: &mut Option<Refusal>, g: &Given, name: &'static str) -> Option<String> {
    match g {
        Given::Text(s) => Some(s.clone()),
        Given::Absent => None,
        _ => {
            refuse(r, name, Expected::Is(super::STRING));
            None
        }
    }
}

/// Absent (`None`), the index of one of `names`, or refused: a typo in a
/// mode must not quietly pick the default.
pub(super) fn one_of(
    r: &mut Option<Refusal>,
    g: &Given,
    name: &'static str,
    names: &'static [&'static str],
) -> Option<usize> {
    if *g == Given::Absent {
        return None;
    }
    if let Given::Text(s) = g {
        for (i, n) in names.iter().enumerate() {
            if n == s {
                return Some(i);
            }
        }
    }
    refuse(r, name, Expected::Listed("one of ", names));
    None
}

/// Absent (the group's defaults) or an object; anything else (a number, a
/// string, `true`, a function) is refused, never quietly "no options".
pub(super) fn object(r: &mut Option<Refusal>, g: &Given, name: &'static str) {
    if !matches!(g, Given::Absent | Given::Object) {
        refuse(r, name, Expected::Is("an object"));
    }
}

/// Refused as missing from this build (feature `feature`) unless absent.
pub(super) fn built(
    r: &mut Option<Refusal>,
    g: &Given,
    has: bool,
    name: &'static str,
    feature: &'static str,
) {
    if !has && *g != Given::Absent {
        refuse(r, name, Expected::NotBuilt(feature));
    }
}
