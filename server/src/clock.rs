//! The server's clocks. The workspace forbids `Instant::now`/`SystemTime::now`
//! (the engine is sans-IO); the server is native and owns its clocks, here.

use std::time::{Duration, Instant, SystemTime};

/// Monotonic clock started with the server.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start: Instant,
}

impl Clock {
    #[allow(
        clippy::disallowed_methods,
        reason = "the native server owns its clock"
    )]
    pub fn start() -> Self {
        Clock {
            start: Instant::now(),
        }
    }

    /// Milliseconds since the server started.
    pub fn ms(&self) -> u64 {
        u64::try_from(self.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    #[allow(
        clippy::disallowed_methods,
        reason = "the native server owns its clock"
    )]
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }
}

/// Wall-clock time, for `Date`, `Last-Modified` and HTTP-date `Retry-After`.
#[allow(
    clippy::disallowed_methods,
    reason = "the native server owns its clock"
)]
pub fn wall_now() -> SystemTime {
    SystemTime::now()
}

/// `now` shifted by `skew_s` seconds (positive = the server's clock is ahead).
pub fn skewed(now: SystemTime, skew_s: i64) -> SystemTime {
    let d = Duration::from_secs(skew_s.unsigned_abs());
    if skew_s >= 0 {
        now.checked_add(d).unwrap_or(now)
    } else {
        now.checked_sub(d).unwrap_or(now)
    }
}

/// HTTP-date (IMF-fixdate) for `t`.
pub fn http_date(t: SystemTime) -> String {
    httpdate::fmt_http_date(t)
}
