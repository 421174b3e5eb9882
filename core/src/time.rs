//! The two clocks the engine is told about. The engine never reads a clock:
//! every input carries a [`Now`], so tests drive virtual time with exact numbers.

/// Monotonic time in milliseconds (the browser's `performance.now()`, floored).
/// Only differences are meaningful; it never jumps backwards, but it may stand
/// still while the device sleeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MonoMs(pub u64);

/// The earlier of two deadlines, either of which may be unset (`None`): a
/// `match`, where the minimum over an array of options links a `Flatten`
/// iterator's code for each machine that does it.
pub fn earlier(a: Option<MonoMs>, b: Option<MonoMs>) -> Option<MonoMs> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Wall-clock time in milliseconds since the Unix epoch (`Date.now()`). Used to
/// resolve HTTP-dates (`Retry-After`, `Date`) and to notice sleep and clock jumps.
/// It can jump in either direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WallMs(pub i64);

/// Both clocks, read together by the adapter at the moment a fact happened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Now {
    /// Monotonic milliseconds.
    pub mono: MonoMs,
    /// Wall milliseconds since the Unix epoch.
    pub wall: WallMs,
}

impl Now {
    /// A `Now` from raw millisecond values (monotonic, wall).
    pub const fn at(mono_ms: u64, wall_ms: i64) -> Self {
        Now {
            mono: MonoMs(mono_ms),
            wall: WallMs(wall_ms),
        }
    }

    /// This instant moved `ms` milliseconds forward on both clocks (saturating).
    pub const fn plus_ms(self, ms: u64) -> Self {
        Now {
            mono: MonoMs(self.mono.0.saturating_add(ms)),
            wall: WallMs(self.wall.0.saturating_add(ms as i64)),
        }
    }
}

impl MonoMs {
    /// `self + ms`, saturating.
    pub const fn plus(self, ms: u64) -> Self {
        MonoMs(self.0.saturating_add(ms))
    }

    /// Milliseconds from `earlier` to `self`, 0 if `earlier` is later.
    pub const fn since(self, earlier: MonoMs) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

/// The longest wait a browser timer accepts: `setTimeout` treats a delay above
/// 2^31−1 ms as 0 (HTML §8.6 timers use a signed 32-bit delay), so every wait the
/// engine hands out is clamped to this.
pub const MAX_TIMER_MS: u64 = (1u64 << 31) - 1;

/// Clamp a delay to [`MAX_TIMER_MS`].
pub const fn clamp_timer_ms(ms: u64) -> u64 {
    if ms > MAX_TIMER_MS {
        MAX_TIMER_MS
    } else {
        ms
    }
}

/// The monotone-clock guard every machine holds: the latest monotonic
/// time it was told. An input whose `mono` is earlier (a caller's clock read
/// before an earlier input's) is taken as happening at the latest time
/// seen, and no `Wait` asks for a time already past.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Monotone(MonoMs);

impl Monotone {
    /// `now`, its monotonic part never before any earlier input's; wall
    /// time is passed through (it may jump either way).
    pub fn observe(&mut self, now: Now) -> Now {
        self.0 = now.mono.max(self.0);
        Now {
            mono: self.0,
            wall: now.wall,
        }
    }

    /// The latest monotonic time seen (0 before the first input).
    pub fn latest(self) -> MonoMs {
        self.0
    }

    /// `deadline`, never before the latest time seen (a `Wait { until }`).
    pub fn wait_until(self, deadline: Option<MonoMs>) -> Option<MonoMs> {
        deadline.map(|t| t.max(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotone_never_goes_back_and_waits_not_in_the_past() {
        let mut m = Monotone::default();
        assert_eq!(m.observe(Now::at(100, 5)), Now::at(100, 5));
        assert_eq!(m.observe(Now::at(40, 7)), Now::at(100, 7));
        assert_eq!(m.wait_until(Some(MonoMs(60))), Some(MonoMs(100)));
        assert_eq!(m.wait_until(Some(MonoMs(160))), Some(MonoMs(160)));
        assert_eq!(m.wait_until(None), None);
        assert_eq!(m.observe(Now::at(150, 1)), Now::at(150, 1));
    }

    #[test]
    fn timer_clamp_is_2_pow_31_minus_1() {
        assert_eq!(clamp_timer_ms(u64::MAX), 2_147_483_647);
        assert_eq!(clamp_timer_ms(5), 5);
    }

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(MonoMs(u64::MAX).plus(5), MonoMs(u64::MAX));
        assert_eq!(MonoMs(3).since(MonoMs(10)), 0);
        assert_eq!(Now::at(1, 2).plus_ms(10), Now::at(11, 12));
    }
}
