//! How long the server asked us to wait: `Retry-After` (RFC 9110 §10.2.3), then
//! the rate-limit reset headers, clamped to `maxRetryAfterMs`; and the
//! `X-Poll-Interval` hint.
//!
//! A wait is measured against the response's `Date` header when it has a valid
//! one (RFC 9110 §6.6.1: the origin's clock), because client clocks are wrong;
//! only without it does the client's wall clock serve. A date already past means
//! "no extra wait" (0), never "skip the backoff floor": the engine waits
//! `max(this wait, its backoff floor)` plus a small herd spread (see
//! `engine::retry`). Garbage is ignored.

use super::headers::HeaderLookup;
use super::http_date::parse_http_date_near;
use crate::time::{WallMs, MAX_TIMER_MS};

/// Default cap on any server-requested wait, ms (JS `maxRetryAfterMs`).
pub const DEFAULT_MAX_RETRY_AFTER_MS: u64 = 300_000;

/// A `RateLimit-Reset` / `X-RateLimit-Reset` value at or above this is an epoch
/// time in seconds (GitHub style, 2001-09-09 onwards), below it delta-seconds.
pub const EPOCH_SECONDS_THRESHOLD: u64 = 1_000_000_000;

/// Which header the wait came from (maps to the state reasons `retry-after` and
/// `rate-limit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaitSource {
    /// `Retry-After`.
    RetryAfter,
    /// `RateLimit-Reset` or `X-RateLimit-Reset`.
    RateLimitReset,
}

/// A server-requested wait, already clamped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ServerWait {
    /// Milliseconds to wait, `<= min(max_retry_after_ms, MAX_TIMER_MS)`. 0 when
    /// the requested date has already passed.
    pub wait_ms: u64,
    /// The header it came from.
    pub source: WaitSource,
    /// The requested wait in ms when it was longer than the cap (report it), else `None`.
    pub clamped_from_ms: Option<u64>,
}

/// The server's wait from a response head (meant for 429 and 503, but read
/// whatever the caller passes): `Retry-After` if valid, else `RateLimit-Reset`,
/// else `X-RateLimit-Reset`. `now` is the client's wall clock when the head
/// arrived. The result is clamped to `min(max_retry_after_ms, MAX_TIMER_MS)`.
/// `None` when no header is present and valid (then: backoff, doubled for 429).
pub fn server_wait<H: HeaderLookup + ?Sized>(
    headers: &H,
    now: WallMs,
    max_retry_after_ms: u64,
) -> Option<ServerWait> {
    let reference = server_clock(headers, now);
    let (raw_ms, source) = headers
        .header("Retry-After")
        .and_then(|v| retry_after_ms(v, reference))
        .map(|ms| (ms, WaitSource::RetryAfter))
        .or_else(|| {
            ["RateLimit-Reset", "X-RateLimit-Reset"]
                .iter()
                .find_map(|name| rate_limit_reset_ms(headers.header(name)?, reference))
                .map(|ms| (ms, WaitSource::RateLimitReset))
        })?;
    let cap = max_retry_after_ms.min(MAX_TIMER_MS);
    Some(ServerWait {
        wait_ms: raw_ms.min(cap),
        source,
        clamped_from_ms: (raw_ms > cap).then_some(raw_ms),
    })
}

/// The time at the origin when the response was generated: its `Date` header
/// if present and a valid HTTP-date, else the client's `now`.
pub fn server_clock<H: HeaderLookup + ?Sized>(headers: &H, now: WallMs) -> WallMs {
    headers
        .header("Date")
        .and_then(|d| parse_http_date_near(d, now))
        .map_or(now, WallMs)
}

/// One `Retry-After` value, unclamped, ms: `delay-seconds` (`1*DIGIT`,
/// saturating) or an HTTP-date measured against `reference` (0 if past).
/// `None` for anything else (fractions, signs, junk).
pub fn retry_after_ms(value: &str, reference: WallMs) -> Option<u64> {
    let value = crate::wire::trim_ows(value);
    match delta_seconds(value) {
        Some(s) => Some(s.saturating_mul(1000)),
        None => parse_http_date_near(value, reference).map(|at| ms_until(at, reference)),
    }
}

/// One `RateLimit-Reset` / `X-RateLimit-Reset` value, unclamped, ms: digits
/// only; `>= 1_000_000_000` is epoch seconds measured against `reference` (0 if
/// past), smaller is delta-seconds. `None` for anything else.
pub fn rate_limit_reset_ms(value: &str, reference: WallMs) -> Option<u64> {
    let secs = delta_seconds(crate::wire::trim_ows(value))?;
    if secs >= EPOCH_SECONDS_THRESHOLD {
        let at = i64::try_from(secs.saturating_mul(1000)).unwrap_or(i64::MAX);
        Some(ms_until(at, reference))
    } else {
        Some(secs * 1000)
    }
}

/// `X-Poll-Interval` (GitHub: seconds) to ms: digits with an optional fraction
/// (`"60"`, `"2.5"`; digits beyond milliseconds are truncated; saturating).
/// `None` for anything else (signs, exponents, `".5"`, `"5."`). Unclamped: the
/// interval policy clamps every hint into `[min_ms, max_ms]`.
pub fn poll_interval_hint_ms(value: &str) -> Option<u64> {
    let value = crate::wire::trim_ows(value);
    let (whole, frac) = match crate::wire::split_once_byte(value, b'.') {
        Some((w, f)) => (w, Some(f)),
        None => (value, None),
    };
    let mut ms = delta_seconds(whole)?.saturating_mul(1000);
    if let Some(frac) = frac {
        delta_seconds(frac)?; // all digits, at least one
        for (scale, b) in [100, 10, 1].into_iter().zip(frac.bytes()) {
            ms = ms.saturating_add(scale * u64::from(b - b'0'));
        }
    }
    Some(ms)
}

/// `1*DIGIT` as a saturating u64.
fn delta_seconds(s: &str) -> Option<u64> {
    let mut n = 0u64;
    for &b in s.as_bytes() {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.saturating_mul(10).saturating_add(u64::from(b - b'0'));
    }
    (!s.is_empty()).then_some(n)
}

/// Milliseconds from `reference` to `at`, 0 if `at` is not later.
fn ms_until(at: i64, reference: WallMs) -> u64 {
    u64::try_from(at.saturating_sub(reference.0)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{any, prop_assert, proptest};

    /// Sun, 06 Nov 1994 08:49:37 GMT.
    const T: i64 = 784_111_777_000;
    const MAX: u64 = DEFAULT_MAX_RETRY_AFTER_MS;

    fn wait(h: &[(&str, &str)], now: i64) -> Option<ServerWait> {
        server_wait(h, WallMs(now), MAX)
    }

    fn ra(wait_ms: u64) -> Option<ServerWait> {
        Some(ServerWait {
            wait_ms,
            source: WaitSource::RetryAfter,
            clamped_from_ms: None,
        })
    }

    #[test]
    fn delta_seconds_form() {
        assert_eq!(wait(&[("Retry-After", "120")], T), ra(120_000));
        assert_eq!(wait(&[("retry-after", " 0 ")], T), ra(0));
    }

    /// The client's clock is an hour ahead; `Date` says the real time; the
    /// server asks for a date 120 s after `Date`: wait 120 s, not 0.
    #[test]
    fn http_date_against_date_header_with_skewed_client_clock() {
        let client = T + 3_600_000;
        let h = [
            ("Date", "Sun, 06 Nov 1994 08:49:37 GMT"),
            ("Retry-After", "Sun, 06 Nov 1994 08:51:37 GMT"),
        ];
        assert_eq!(wait(&h, client), ra(120_000));
        // Without Date, the client clock is all there is: the date looks past.
        assert_eq!(wait(&h[1..], client), ra(0));
        assert_eq!(wait(&h[1..], T), ra(120_000));
        // A garbage Date falls back to the client clock too.
        let bad = [("Date", "yesterday"), h[1]];
        assert_eq!(wait(&bad, T + 60_000), ra(60_000));
    }

    #[test]
    fn past_date_is_zero_wait() {
        let h = [
            ("Date", "Sun, 06 Nov 1994 08:49:37 GMT"),
            ("Retry-After", "Sat, 05 Nov 1994 08:49:37 GMT"),
        ];
        assert_eq!(wait(&h, 0), ra(0));
    }

    #[test]
    fn clamped_and_reported() {
        let got = wait(&[("Retry-After", "86400")], T);
        assert_eq!(
            got,
            Some(ServerWait {
                wait_ms: 300_000,
                source: WaitSource::RetryAfter,
                clamped_from_ms: Some(86_400_000),
            })
        );
        let huge = server_wait(
            &[("Retry-After", "99999999999999999999999")],
            WallMs(0),
            u64::MAX,
        );
        assert_eq!(huge.map(|w| w.wait_ms), Some(MAX_TIMER_MS));
        assert_eq!(huge.and_then(|w| w.clamped_from_ms), Some(u64::MAX));
    }

    #[test]
    fn garbage_retry_after_falls_through_to_rate_limit() {
        let h = [
            ("Retry-After", "1.5"),
            ("X-RateLimit-Reset", "30"),
            ("RateLimit-Reset", "soon"),
        ];
        assert_eq!(
            wait(&h, T),
            Some(ServerWait {
                wait_ms: 30_000,
                source: WaitSource::RateLimitReset,
                clamped_from_ms: None,
            })
        );
        assert_eq!(wait(&[("Retry-After", "-5"), ("Date", "x")], T), None);
        assert_eq!(wait(&[], T), None);
    }

    #[test]
    fn rate_limit_reset_epoch_seconds_against_date() {
        // Date says 1_700_000_000 s; reset at +45 s; client clock 10 min behind.
        let h = [
            ("Date", "Tue, 14 Nov 2023 22:13:20 GMT"),
            ("RateLimit-Reset", "1700000045"),
            ("X-RateLimit-Reset", "1"),
        ];
        let got = wait(&h, 1_700_000_000_000 - 600_000);
        assert_eq!(
            got.map(|w| (w.wait_ms, w.source)),
            Some((45_000, WaitSource::RateLimitReset))
        );
        assert_eq!(
            rate_limit_reset_ms("1000000000", WallMs(1_700_000_000_000)),
            Some(0)
        );
        assert_eq!(
            rate_limit_reset_ms("1000000000", WallMs(999_999_999_000)),
            Some(1000)
        );
        assert_eq!(
            rate_limit_reset_ms("999999999", WallMs(T)),
            Some(999_999_999_000)
        );
        assert_eq!(rate_limit_reset_ms("", WallMs(T)), None);
    }

    #[test]
    fn poll_interval_hint() {
        assert_eq!(poll_interval_hint_ms("60"), Some(60_000));
        assert_eq!(poll_interval_hint_ms(" 2.5 "), Some(2500));
        assert_eq!(poll_interval_hint_ms("0.0456"), Some(45));
        assert_eq!(poll_interval_hint_ms("0"), Some(0));
        for bad in ["", ".5", "5.", "-1", "1e3", "1.2.3", "+2", "١"] {
            assert_eq!(poll_interval_hint_ms(bad), None, "{bad:?}");
        }
        assert_eq!(
            poll_interval_hint_ms("99999999999999999999.9"),
            Some(u64::MAX)
        );
    }

    proptest! {
        #[test]
        fn never_panics_and_stays_under_cap(
            ra in ".*", rl in ".*", date in ".*", now in any::<i64>(), max in any::<u64>(),
            secs in any::<u64>(),
        ) {
            let secs = secs.to_string();
            let h = [("Retry-After", ra.as_str()), ("Date", date.as_str()), ("RateLimit-Reset", rl.as_str()), ("X-RateLimit-Reset", secs.as_str())];
            if let Some(w) = server_wait(&h, WallMs(now), max) {
                prop_assert!(w.wait_ms <= max.min(MAX_TIMER_MS));
                prop_assert!(w.clamped_from_ms.is_none_or(|c| c > w.wait_ms));
            }
            let _ = poll_interval_hint_ms(&ra);
        }
    }
}
