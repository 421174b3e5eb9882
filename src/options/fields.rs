//! The upstream calls' option readers (`send()`, `report()`, `appender()`,
//! `ack`): a field of the app's options object read with [`get`] and
//! checked, a refusal recorded with [`fail`].

pub(crate) use tidings_core::options::STRING;
use tidings_core::options::{listed, COUNT, MS};
use tidings_core::policy::backoff::{BackoffConfig, Strategy};
use tidings_core::policy::breaker::BreakerConfig;
use tidings_core::policy::interval::{IntervalConfig, IntervalMode};
use wasm_bindgen::JsValue;

use super::{absent, fail, get, invalid, object};

/// `o[key]` when it is absent (`undefined`/`null`: the default) or an
/// object; anything else is `invalid-option` for `key`.
pub(crate) fn group(o: &JsValue, key: &str) -> JsValue {
    let g = get(o, key);
    object(key, &g);
    g
}

/// `o[key]`: absent (`None`), a boolean, or `invalid-option`.
pub(crate) fn flag(o: &JsValue, key: &str) -> Option<bool> {
    let v = get(o, key);
    if !absent(&v) && v.as_bool().is_none() {
        fail(invalid(key, "a boolean", &v));
    }
    v.as_bool()
}

/// `o[key]`: absent (`None`), a string, or `invalid-option`.
pub(crate) fn text(o: &JsValue, key: &str) -> Option<String> {
    let v = get(o, key);
    let s = v.as_string();
    if !absent(&v) && s.is_none() {
        fail(invalid(key, STRING, &v));
    }
    s
}

/// `v`: absent (`None`), the index of one of `names`, or `invalid-option`
/// (`name`): a typo in a mode must not quietly pick the default.
pub(crate) fn one_of(v: &JsValue, name: &str, names: &[&str]) -> Option<usize> {
    if absent(v) {
        return None;
    }
    let s = v.as_string().unwrap_or_default();
    let i = names.iter().position(|n| *n == s);
    if i.is_none() {
        fail(invalid(name, &listed("one of ", names), v));
    }
    i
}

/// `o[key]`: absent (`None`), a finite number ≥ 0 (truncated), or
/// `invalid-option` (`group.key`, or `key` for a top-level option: `group`
/// `""`).
pub(crate) fn ms_in(o: &JsValue, key: &str, group: &str) -> Option<u64> {
    number(o, key, group, MS)
}

/// `o[key]`: absent (`None`), a finite number ≥ 0 (truncated), or
/// `invalid-option` (`group.key`) saying `expected`.
fn number(o: &JsValue, key: &str, group: &str, expected: &str) -> Option<u64> {
    let v = get(o, key);
    if absent(&v) {
        return None;
    }
    let n = v.as_f64().filter(|n| n.is_finite() && *n >= 0.0);
    if n.is_none() {
        let mut name = String::from(group);
        if !group.is_empty() {
            name.push('.');
        }
        name.push_str(key);
        fail(invalid(&name, expected, &v));
    }
    n.map(|n| n as u64)
}

/// `*field` = `o[key]` as [`ms_in`] when given.
pub(crate) fn set_ms<T: From<u64>>(field: &mut T, o: &JsValue, key: &str, group: &str) {
    if let Some(n) = ms_in(o, key, group) {
        *field = n.into();
    }
}

/// `o[key]`: absent (`None`), a number ≥ 0 (truncated; `Infinity`:
/// `Some(None)`, no limit), or `invalid-option` (`name`).
pub(crate) fn count(o: &JsValue, key: &str, name: &str) -> Option<Option<u32>> {
    let v = get(o, key);
    if absent(&v) {
        return None;
    }
    match v.as_f64().filter(|n| *n >= 0.0) {
        Some(n) if n.is_finite() => Some(Some(n.min(u32::MAX as f64) as u32)),
        Some(_) => Some(None),
        None => {
            fail(invalid(name, COUNT, &v));
            None
        }
    }
}
/// `breaker.failureThreshold` (`Infinity`: never opens) and
/// `breaker.cooldownMs` over `c` (`subscribe()` and `report()`).
pub(crate) fn breaker(c: &mut BreakerConfig, v: &JsValue) {
    let br = group(v, "breaker");
    if let Some(n) = count(&br, "failureThreshold", "breaker.failureThreshold") {
        c.failure_threshold = n.unwrap_or(u32::MAX);
    }
    set_ms(&mut c.cooldown_ms, &br, "cooldownMs", "breaker")
}

/// `interval`: `mode`, `initialMs`, `minMs`, `maxMs` into `into` (shared by
/// `subscribe` and `report`).
pub(crate) fn interval(into: &mut IntervalConfig, v: &JsValue) {
    let i = group(v, "interval");
    if let Some(m) = one_of(
        &get(&i, "mode"),
        "interval.mode",
        &["exponential", "aimd", "rate-window", "fixed"],
    ) {
        into.mode = [
            IntervalMode::Exponential,
            IntervalMode::Aimd,
            IntervalMode::RateWindow,
            IntervalMode::Fixed,
        ][m];
    }
    set_ms(&mut into.initial_ms, &i, "initialMs", "interval");
    set_ms(&mut into.min_ms, &i, "minMs", "interval");
    set_ms(&mut into.max_ms, &i, "maxMs", "interval");
}

/// `backoff`: `strategy`, `baseMs`, `maxMs`, `floorMs` into `into` (shared
/// by `subscribe` and `send`); returns the group for the caller's own keys.
pub(crate) fn backoff(into: &mut BackoffConfig, v: &JsValue) -> JsValue {
    let b = group(v, "backoff");
    if let Some(i) = one_of(
        &get(&b, "strategy"),
        "backoff.strategy",
        &["full-jitter", "equal-jitter", "decorrelated", "none"],
    ) {
        into.strategy = [
            Strategy::FullJitter,
            Strategy::EqualJitter,
            Strategy::Decorrelated,
            Strategy::None,
        ][i];
    }
    set_ms(&mut into.base_ms, &b, "baseMs", "backoff");
    set_ms(&mut into.max_ms, &b, "maxMs", "backoff");
    set_ms(&mut into.floor_ms, &b, "floorMs", "backoff");
    b
}
