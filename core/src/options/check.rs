//! The checks every option shares: a value of the right type and range, or
//! a [`Refusal`] naming the option.

use alloc::string::String;

use super::{Given, Refusal, COUNT, MS};

/// A refusal of `name` saying `expected` (the value given is what was got).
pub(super) fn refuse<T>(name: &'static str, expected: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal {
        name,
        expected: expected.into(),
        got: None,
    })
}

/// Absent (`None`), a finite number ≥ 0 (truncated), or refused saying
/// `expected`.
pub(super) fn number(
    g: &Given,
    name: &'static str,
    expected: &str,
) -> Result<Option<u64>, Refusal> {
    match *g {
        Given::Absent => Ok(None),
        Given::Number(n) if n.is_finite() && n >= 0.0 => Ok(Some(n as u64)),
        _ => refuse(name, expected),
    }
}

/// A duration: [`number`] saying [`MS`].
pub(super) fn ms(g: &Given, name: &'static str) -> Result<Option<u64>, Refusal> {
    number(g, name, MS)
}

/// Absent (`None`), a number ≥ 0 (truncated, at most `u32::MAX`;
/// `Infinity`: `Some(None)`, no limit), or refused.
pub(super) fn count(g: &Given, name: &'static str) -> Result<Option<Option<u32>>, Refusal> {
    match *g {
        Given::Absent => Ok(None),
        Given::Number(n) if n >= 0.0 && n.is_finite() => {
            Ok(Some(Some(n.min(u32::MAX as f64) as u32)))
        }
        Given::Number(n) if n >= 0.0 => Ok(Some(None)),
        _ => refuse(name, COUNT),
    }
}

/// Absent (`None`), a boolean, or refused.
pub(super) fn flag(g: &Given, name: &'static str) -> Result<Option<bool>, Refusal> {
    match *g {
        Given::Absent => Ok(None),
        Given::Bool(b) => Ok(Some(b)),
        _ => refuse(name, "a boolean"),
    }
}

/// Absent (`None`), a string, or refused.
pub(super) fn text(g: Given, name: &'static str) -> Result<Option<String>, Refusal> {
    match g {
        Given::Absent => Ok(None),
        Given::Text(s) => Ok(Some(s)),
        _ => refuse(name, super::STRING),
    }
}

/// Absent (`None`), the index of one of `names`, or refused: a typo in a
/// mode must not quietly pick the default.
pub(super) fn one_of(
    g: &Given,
    name: &'static str,
    names: &[&str],
) -> Result<Option<usize>, Refusal> {
    if *g == Given::Absent {
        return Ok(None);
    }
    if let Given::Text(s) = g {
        for (i, n) in names.iter().enumerate() {
            if n == s {
                return Ok(Some(i));
            }
        }
    }
    refuse(name, super::listed("one of ", names))
}

/// Absent (the group's defaults) or an object; anything else (a number, a
/// string, `true`, a function) is refused, never quietly "no options".
pub(super) fn object(g: &Given, name: &'static str) -> Result<(), Refusal> {
    match g {
        Given::Absent | Given::Object => Ok(()),
        _ => refuse(name, "an object"),
    }
}

/// Refused as missing from this build (feature `feature`) unless absent.
pub(super) fn built(
    g: &Given,
    has: bool,
    name: &'static str,
    feature: &str,
) -> Result<(), Refusal> {
    match has || *g == Given::Absent {
        true => Ok(()),
        false => refuse(name, super::not_built(feature)),
    }
}
