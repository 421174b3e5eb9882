//! The poll interval: how long a `poll` transport waits between requests.
//!
//! It lives in `[min_ms, max_ms]` whatever happens: speeds up when answers
//! change, slows down on 304/unchanged, obeys server hints (`X-Poll-Interval`,
//! JSON `_polling.next_interval_ms`, SSE `retry:` as a floor) within the clamps,
//! and stretches on slow networks (adaptive modes only: a `fixed` interval and
//! a server hint are never stretched). Numbers from ARCHITECTURE.md "Numbers from the
//! design study": AIMD +1 s / halve; the change-rate window of 10 answers;
//! network tiers ×1 / ×3 / ×6 / max.

use crate::time::MAX_TIMER_MS;

/// AIMD additive step per unchanged answer, ms.
pub const AIMD_STEP_MS: u64 = 1000;
/// Answers the [`IntervalMode::RateWindow`] mode looks at.
pub const RATE_WINDOW_LEN: u8 = 10;

/// How answers move the interval (JS `interval.mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IntervalMode {
    /// ×2 per unchanged answer, ÷2 per changed one (default: reaches 5 min from
    /// 1 s in 9 polls, where AIMD needs about 300).
    #[default]
    Exponential,
    /// +[`AIMD_STEP_MS`] per unchanged answer, ÷2 per changed one.
    Aimd,
    /// From the share of changed answers among the last [`RATE_WINDOW_LEN`]:
    /// more than 70 % → 1 s, more than 30 % → 5 s, more than 10 % → 30 s, else
    /// 5 min (each clamped). Stays at the current interval until the window is full.
    RateWindow,
    /// Never adapts to answers nor to the network tier (server hints and the
    /// floor still apply).
    Fixed,
}

/// Poll interval settings, ms (JS `interval.mode`, `interval.initialMs`,
/// `interval.minMs`, `interval.maxMs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IntervalConfig {
    /// Policy. Default [`IntervalMode::Exponential`].
    pub mode: IntervalMode,
    /// First interval, ms. Default 5000; clamped into the bounds.
    pub initial_ms: u64,
    /// Lower bound, ms. Default 1000. Raised to 1 if 0; swapped with `max_ms` if larger.
    pub min_ms: u64,
    /// Upper bound, ms. Default 300 000. Lowered to `MAX_TIMER_MS` if above it.
    pub max_ms: u64,
}

impl Default for IntervalConfig {
    fn default() -> Self {
        IntervalConfig {
            mode: IntervalMode::Exponential,
            initial_ms: 5000,
            min_ms: 1000,
            max_ms: 300_000,
        }
    }
}

/// Network quality as the browser reports it (`navigator.connection`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum NetworkTier {
    /// RTT < 50 ms, or unknown: the interval as configured (×1).
    #[default]
    Fast,
    /// RTT < 200 ms: ×3.
    Medium,
    /// RTT < 1 s: ×6.
    Slow,
    /// RTT ≥ 1 s or `saveData`: the maximum interval.
    Worst,
}

impl NetworkTier {
    /// The tier for a reported round-trip time (ms; `None` = not reported) and
    /// the `saveData` flag.
    pub fn from_rtt(rtt_ms: Option<u64>, save_data: bool) -> Self {
        match rtt_ms {
            _ if save_data => NetworkTier::Worst,
            None => NetworkTier::Fast,
            Some(r) if r < 50 => NetworkTier::Fast,
            Some(r) if r < 200 => NetworkTier::Medium,
            Some(r) if r < 1000 => NetworkTier::Slow,
            Some(_) => NetworkTier::Worst,
        }
    }

    /// The stretch factor; `None` means "use the maximum interval".
    pub fn stretch(self) -> Option<u64> {
        match self {
            NetworkTier::Fast => Some(1),
            NetworkTier::Medium => Some(3),
            NetworkTier::Slow => Some(6),
            NetworkTier::Worst => None,
        }
    }
}

/// The poll interval state of one connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PollInterval {
    mode: IntervalMode,
    min_ms: u64,
    max_ms: u64,
    /// The policy's interval before tier and floor, always in `[min_ms, max_ms]`.
    base_ms: u64,
    /// Last answers, newest in bit 0 (1 = changed); `window_len` of them valid.
    window: u16,
    window_len: u8,
    floor_ms: u64,
    tier: NetworkTier,
    /// `base_ms` is a server hint (until the next answer): not stretched.
    hinted: bool,
}

impl PollInterval {
    /// A fresh interval at `initial_ms`, with the bounds sanitized (never panics).
    pub fn new(config: IntervalConfig) -> Self {
        let (lo, hi) = if config.min_ms > config.max_ms {
            (config.max_ms, config.min_ms)
        } else {
            (config.min_ms, config.max_ms)
        };
        // Clamping both ends into [1, MAX_TIMER_MS] keeps lo <= hi.
        let min_ms = lo.clamp(1, MAX_TIMER_MS);
        let max_ms = hi.clamp(1, MAX_TIMER_MS);
        PollInterval {
            mode: config.mode,
            min_ms,
            max_ms,
            base_ms: config.initial_ms.clamp(min_ms, max_ms),
            window: 0,
            window_len: 0,
            floor_ms: 0,
            tier: NetworkTier::Fast,
            hinted: false,
        }
    }

    /// The sanitized lower bound, ms.
    pub fn min_ms(&self) -> u64 {
        self.min_ms
    }

    /// The sanitized upper bound, ms.
    pub fn max_ms(&self) -> u64 {
        self.max_ms
    }

    /// The policy's own interval (before the tier stretch and the floor), ms.
    pub fn base_ms(&self) -> u64 {
        self.base_ms
    }

    /// The wait before the next poll, ms: `clamp(max(base · stretch, floor), min, max)`,
    /// or `max_ms` on the worst tier. No stretch (any tier) in the `fixed` mode
    /// or when the interval is the server's hint: the tier only stretches what
    /// the client chose itself.
    pub fn current_ms(&self) -> u64 {
        let stretch = if self.mode == IntervalMode::Fixed || self.hinted {
            Some(1)
        } else {
            self.tier.stretch()
        };
        let stretched = match stretch {
            Some(f) => self.base_ms.saturating_mul(f),
            None => self.max_ms,
        };
        self.clamp(stretched.max(self.floor_ms))
    }

    /// One answer arrived: `changed` is false for 304 or an unchanged 200 (see
    /// `validators`), true otherwise. Call before applying that response's hint.
    pub fn record_answer(&mut self, changed: bool) {
        self.hinted = false;
        self.window = (self.window << 1) | u16::from(changed);
        self.window_len = self.window_len.saturating_add(1).min(RATE_WINDOW_LEN);
        let b = self.base_ms;
        let next = match (self.mode, changed) {
            (IntervalMode::Fixed, _) => b,
            (IntervalMode::Exponential | IntervalMode::Aimd, true) => b / 2,
            (IntervalMode::Exponential, false) => b.saturating_mul(2),
            (IntervalMode::Aimd, false) => b.saturating_add(AIMD_STEP_MS),
            (IntervalMode::RateWindow, _) if self.window_len < RATE_WINDOW_LEN => b,
            (IntervalMode::RateWindow, _) => {
                let mask = (1u16 << RATE_WINDOW_LEN) - 1;
                // Changed answers out of 10: > 7 is > 70 %, > 3 is > 30 %, > 1 is > 10 %.
                match (self.window & mask).count_ones() {
                    8.. => 1000,
                    4.. => 5000,
                    2.. => 30_000,
                    _ => 300_000,
                }
            }
        };
        self.base_ms = self.clamp(next);
    }

    /// A server interval hint, ms (`X-Poll-Interval` via
    /// `retry_after::poll_interval_hint_ms`, or `_polling.next_interval_ms`):
    /// becomes the interval, clamped into `[min_ms, max_ms]`; the adaptive modes
    /// continue from there. A server can slow clients down, never make them hammer.
    /// Until the next answer it is the wait as is: the network tier does not
    /// stretch the server's decision.
    pub fn apply_server_hint_ms(&mut self, hint_ms: u64) {
        self.base_ms = self.clamp(hint_ms);
        self.hinted = true;
    }

    /// A lasting floor, ms (an SSE `retry:` seen in a long-poll or poll body);
    /// `None` clears it. Still clamped to `max_ms`.
    pub fn set_floor_ms(&mut self, floor_ms: Option<u64>) {
        self.floor_ms = floor_ms.unwrap_or(0);
    }

    /// The current network tier (see [`NetworkTier::from_rtt`]).
    pub fn set_network_tier(&mut self, tier: NetworkTier) {
        self.tier = tier;
    }

    fn clamp(&self, ms: u64) -> u64 {
        ms.clamp(self.min_ms, self.max_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{any, prop_assert, prop_oneof, proptest, Just};
    use proptest::strategy::Strategy as _;

    fn with(mode: IntervalMode) -> PollInterval {
        PollInterval::new(IntervalConfig {
            mode,
            ..IntervalConfig::default()
        })
    }

    fn run(p: &mut PollInterval, answers: &[bool]) -> Vec<u64> {
        answers
            .iter()
            .map(|&c| {
                p.record_answer(c);
                p.current_ms()
            })
            .collect()
    }

    #[test]
    fn exponential_doubles_and_halves_within_bounds() {
        let mut p = with(IntervalMode::Exponential);
        assert_eq!(p.current_ms(), 5000);
        let got = run(&mut p, &[false; 7]);
        assert_eq!(
            got,
            [10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]
        );
        let got = run(&mut p, &[true; 10]);
        assert_eq!(got[..3], [150_000, 75_000, 37_500]);
        assert_eq!(got[9], 1000);
    }

    #[test]
    fn aimd_adds_a_second_and_halves() {
        let mut p = with(IntervalMode::Aimd);
        assert_eq!(
            run(&mut p, &[false, false, true, true, true]),
            [6000, 7000, 3500, 1750, 1000]
        );
    }

    #[test]
    fn rate_window_thresholds() {
        let mut p = with(IntervalMode::RateWindow);
        // Not full yet: stays at the initial interval.
        assert_eq!(run(&mut p, &[true; 9]), [5000; 9]);
        assert_eq!(run(&mut p, &[true]), [1000]); // 10/10 changed
                                                  // Changed out of the last 10: 9, 8 → 1 s (> 70 %).
        assert_eq!(run(&mut p, &[false; 2]), [1000; 2]);
        // 7, 6, 5, 4 → 5 s (> 30 %).
        assert_eq!(run(&mut p, &[false; 4]), [5000; 4]);
        // 3, 2 → 30 s (> 10 %); 1 → 5 min.
        assert_eq!(run(&mut p, &[false; 3]), [30_000, 30_000, 300_000]);
    }

    #[test]
    fn fixed_ignores_answers_but_obeys_hints() {
        let mut p = with(IntervalMode::Fixed);
        assert_eq!(run(&mut p, &[true, false, false]), [5000; 3]);
        p.apply_server_hint_ms(60_000);
        assert_eq!(p.current_ms(), 60_000);
        p.apply_server_hint_ms(10);
        assert_eq!(p.current_ms(), 1000);
        p.apply_server_hint_ms(u64::MAX);
        assert_eq!(p.current_ms(), 300_000);
    }

    #[test]
    fn floor_and_tiers() {
        let mut p = with(IntervalMode::Exponential);
        p.set_floor_ms(Some(8000));
        assert_eq!(p.current_ms(), 8000);
        p.set_floor_ms(None);
        p.set_network_tier(NetworkTier::from_rtt(Some(120), false));
        assert_eq!(p.current_ms(), 15_000);
        p.set_network_tier(NetworkTier::from_rtt(Some(999), false));
        assert_eq!(p.current_ms(), 30_000);
        p.set_network_tier(NetworkTier::from_rtt(Some(10), true));
        assert_eq!(p.current_ms(), 300_000);
        assert_eq!(p.base_ms(), 5000);
        assert_eq!(NetworkTier::from_rtt(None, false), NetworkTier::Fast);
        assert_eq!(NetworkTier::from_rtt(Some(49), false), NetworkTier::Fast);
        assert_eq!(NetworkTier::from_rtt(Some(1000), false), NetworkTier::Worst);
    }

    #[test]
    fn bad_bounds_are_sanitized() {
        let p = PollInterval::new(IntervalConfig {
            mode: IntervalMode::Aimd,
            initial_ms: 0,
            min_ms: 10_000,
            max_ms: 2000,
        });
        assert_eq!(
            (p.min_ms(), p.max_ms(), p.current_ms()),
            (2000, 10_000, 2000)
        );
        let p = PollInterval::new(IntervalConfig {
            mode: IntervalMode::Exponential,
            initial_ms: u64::MAX,
            min_ms: 0,
            max_ms: u64::MAX,
        });
        assert_eq!(
            (p.min_ms(), p.max_ms(), p.current_ms()),
            (1, MAX_TIMER_MS, MAX_TIMER_MS)
        );
    }

    #[derive(Clone, Debug)]
    enum Op {
        Answer(bool),
        Hint(u64),
        Floor(Option<u64>),
        Tier(Option<u64>, bool),
    }

    proptest! {
        #[test]
        fn never_leaves_bounds(
            mode in prop_oneof![Just(IntervalMode::Exponential), Just(IntervalMode::Aimd), Just(IntervalMode::RateWindow), Just(IntervalMode::Fixed)],
            initial_ms in any::<u64>(),
            min_ms in prop_oneof![0u64..10_000, any::<u64>()],
            max_ms in prop_oneof![0u64..1_000_000, any::<u64>()],
            ops in proptest::collection::vec(prop_oneof![
                any::<bool>().prop_map(Op::Answer),
                any::<u64>().prop_map(Op::Hint),
                proptest::option::of(any::<u64>()).prop_map(Op::Floor),
                (proptest::option::of(any::<u64>()), any::<bool>()).prop_map(|(r, s)| Op::Tier(r, s)),
            ], 0..100),
        ) {
            let mut p = PollInterval::new(IntervalConfig { mode, initial_ms, min_ms, max_ms });
            let (lo, hi) = (p.min_ms(), p.max_ms());
            prop_assert!(1 <= lo && lo <= hi && hi <= MAX_TIMER_MS);
            prop_assert!(lo == min_ms.min(max_ms).clamp(1, MAX_TIMER_MS));
            for op in ops {
                match op {
                    Op::Answer(c) => p.record_answer(c),
                    Op::Hint(h) => p.apply_server_hint_ms(h),
                    Op::Floor(f) => p.set_floor_ms(f),
                    Op::Tier(r, s) => p.set_network_tier(NetworkTier::from_rtt(r, s)),
                }
                let c = p.current_ms();
                prop_assert!(lo <= c && c <= hi, "{} not in [{}, {}]", c, lo, hi);
                prop_assert!(lo <= p.base_ms() && p.base_ms() <= hi);
            }
        }
    }
}
