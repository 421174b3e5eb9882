//! The header parsers the engine trusts with its waits and its cursor:
//! `Retry-After` (RFC 9110 §10.2.3), HTTP-date (§5.6.7), `RateLimit-Reset` /
//! `X-RateLimit-Reset`, `X-Poll-Interval`, and the `ETag` / `Last-Modified`
//! validators (§13.1). Arbitrary text never panics and every parse agrees with
//! a plain reading of the grammar.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use arbitrary::Arbitrary;

use crate::policy::http_date::{format_imf_fixdate, parse_http_date, parse_http_date_near};
use crate::policy::retry_after::{
    poll_interval_hint_ms, rate_limit_reset_ms, retry_after_ms, server_wait,
    EPOCH_SECONDS_THRESHOLD,
};
use crate::policy::validators::{weak_eq, Outcome, Validators};
use crate::time::{WallMs, MAX_TIMER_MS};

/// Interesting values to mix with arbitrary text.
const VALUES: [&str; 12] = [
    "5",
    "0",
    " 120 ",
    "18446744073709551616",
    "1700000030",
    "Tue, 14 Nov 2023 22:13:50 GMT",
    "Tuesday, 14-Nov-23 22:13:50 GMT",
    "Tue Nov 14 22:13:50 2023",
    "Sun, 06 Nov 1994 08:49:60 GMT",
    "W/\"x-1\"",
    "\"7\"",
    "2.5",
];

/// A header value: one of [`VALUES`] or arbitrary text.
#[derive(Arbitrary, Debug, Clone)]
pub enum Value {
    /// `VALUES[i % len]`.
    Known(u8),
    /// Anything.
    Raw(String),
}

impl Value {
    /// The text.
    pub fn text(&self) -> &str {
        match self {
            Value::Known(i) => VALUES[usize::from(*i) % VALUES.len()],
            Value::Raw(s) => s,
        }
    }
}

/// One fuzz case of the wait hints.
#[derive(Arbitrary, Debug, Clone)]
pub struct HintCase {
    /// `Retry-After`, `Date`, `RateLimit-Reset`, `X-RateLimit-Reset`, `X-Poll-Interval`.
    pub values: [Option<Value>; 5],
    /// The client's wall clock, ms.
    pub now_ms: i64,
    /// `maxRetryAfterMs`.
    pub max_retry_after_ms: u64,
    /// An instant to format and parse back, s.
    pub instant_s: i64,
}

const NAMES: [&str; 5] = [
    "retry-after",
    "date",
    "ratelimit-reset",
    "x-ratelimit-reset",
    "x-poll-interval",
];

fn digits(s: &str) -> Option<u128> {
    let s = s.trim_matches([' ', '\t']);
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Saturate like the parser: more than 39 digits is past u128 too.
    Some(s.parse::<u128>().unwrap_or(u128::MAX))
}

fn sat_ms(secs: u128) -> u64 {
    u64::try_from(secs.saturating_mul(1000)).unwrap_or(u64::MAX)
}

/// The oracles of [`HintCase`].
///
/// # Errors
/// A description of the first disagreement.
pub fn check_hints(case: &HintCase) -> Result<(), String> {
    let now = WallMs(case.now_ms);
    let headers: Vec<(String, String)> = NAMES
        .iter()
        .zip(&case.values)
        .filter_map(|(n, v)| Some((String::from(*n), String::from(v.as_ref()?.text()))))
        .collect();
    for (name, v) in &headers {
        check_value(name, v, now)?;
    }
    if let Some(w) = server_wait(&headers, now, case.max_retry_after_ms) {
        let cap = case.max_retry_after_ms.min(MAX_TIMER_MS);
        if w.wait_ms > cap || w.clamped_from_ms.is_some_and(|c| c <= cap) {
            return Err(format!("{w:?} against the cap {cap}"));
        }
    }
    // IMF-fixdate round trip (the years the format can hold).
    let ms = case.instant_s.saturating_mul(1000);
    if let Some(text) = format_imf_fixdate(ms) {
        if parse_http_date(&text) != Some(ms) {
            return Err(format!("{text} did not parse back to {ms}"));
        }
    }
    Ok(())
}

fn check_value(name: &str, v: &str, now: WallMs) -> Result<(), String> {
    if let Some(at) = parse_http_date(v) {
        if at % 1000 != 0 {
            return Err(format!("{v:?} parsed to {at}, not whole seconds"));
        }
        if let Some(again) = format_imf_fixdate(at).and_then(|t| parse_http_date(&t)) {
            if again != at {
                return Err(format!("{v:?} → {at} → {again}"));
            }
        }
    }
    let _ = parse_http_date_near(v, now);
    let ra = retry_after_ms(v, now);
    let expected = match digits(v) {
        Some(s) => Some(sat_ms(s)),
        None => parse_http_date_near(v.trim_matches([' ', '\t']), now)
            .map(|at| u64::try_from(at.saturating_sub(now.0)).unwrap_or(0)),
    };
    if ra != expected {
        return Err(format!("Retry-After {v:?}: {ra:?}, expected {expected:?}"));
    }
    let rl = rate_limit_reset_ms(v, now);
    let expected = digits(v).map(|s| {
        if s >= u128::from(EPOCH_SECONDS_THRESHOLD) {
            let at = i64::try_from(sat_ms(s)).unwrap_or(i64::MAX);
            u64::try_from(at.saturating_sub(now.0)).unwrap_or(0)
        } else {
            sat_ms(s)
        }
    });
    if rl != expected {
        return Err(format!("{name} {v:?}: {rl:?}, expected {expected:?}"));
    }
    let pi = poll_interval_hint_ms(v);
    if let Some(s) = digits(v) {
        if pi != Some(sat_ms(s)) {
            return Err(format!("X-Poll-Interval {v:?}: {pi:?}"));
        }
    }
    Ok(())
}

/// One fuzz case of the validators: a sequence of responses.
#[derive(Arbitrary, Debug, Clone)]
pub struct ValidatorCase {
    /// (status index, `ETag`, `Last-Modified`).
    pub responses: Vec<(u8, Option<Value>, Option<Value>)>,
}

const STATUSES: [u16; 5] = [200, 304, 204, 500, 412];

fn sendable(v: &str) -> bool {
    !v.is_empty() && !v.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f)
}

/// The oracles of [`ValidatorCase`]: 200 and 304 store each sendable
/// validator byte for byte and keep the old one otherwise; other statuses
/// change nothing; what is sent back is always sendable; a 200 repeating the
/// stored tag (weakly) and date is `Unchanged`.
///
/// # Errors
/// A description of the first disagreement.
pub fn check_validators(case: &ValidatorCase) -> Result<(), String> {
    let mut val = Validators::new();
    for (s, etag, lm) in &case.responses {
        let status = STATUSES[usize::from(*s) % STATUSES.len()];
        let mut headers: Vec<(String, String)> = Vec::new();
        let etag = etag.as_ref().map(Value::text);
        let lm = lm.as_ref().map(Value::text);
        if let Some(e) = etag {
            headers.push(("etag".into(), e.into()));
        }
        if let Some(l) = lm {
            headers.push(("last-modified".into(), l.into()));
        }
        let before = val.clone();
        let outcome = val.update(status, &headers);
        // Header values are read with surrounding spaces and tabs trimmed.
        let etag = etag.map(|e| e.trim_matches([' ', '\t']));
        let lm = lm.map(|l| l.trim_matches([' ', '\t']));
        let expect = |old: &Option<String>, new: Option<&str>| match new {
            Some(n) if sendable(n) && matches!(status, 200 | 304) => Some(String::from(n)),
            _ => old.clone(),
        };
        let want = Validators {
            etag: expect(&before.etag, etag),
            last_modified: expect(&before.last_modified, lm),
        };
        if val != want {
            return Err(format!("{status} {headers:?}: {val:?}, expected {want:?}"));
        }
        let same = match (&before.etag, etag.filter(|e| sendable(e))) {
            (Some(old), Some(new)) => {
                weak_eq(old, new)
                    && match (&before.last_modified, lm.filter(|l| sendable(l))) {
                        (Some(a), Some(b)) => a == b,
                        _ => true,
                    }
            }
            _ => false,
        };
        let want_outcome = match status {
            304 => Outcome::NotModified,
            200 if same => Outcome::Unchanged,
            200 => Outcome::Changed,
            _ => Outcome::Other,
        };
        if outcome != want_outcome {
            return Err(format!(
                "{status} {headers:?} after {before:?}: {outcome:?}"
            ));
        }
        if val.request_headers().any(|(_, v)| !sendable(v)) {
            return Err(format!("unsendable request header from {val:?}"));
        }
    }
    Ok(())
}
