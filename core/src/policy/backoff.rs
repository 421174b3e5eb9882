//! Reconnect backoff: how long to wait after a failed attempt.
//!
//! `delay_ms = floor_ms + jitter(min(max_ms, base_ms · m · 2^k))`, where `k` is the
//! number of consecutive unhealthy attempts before this one and `m` the step
//! multiplier (1, or 2 for a 429 without a hint). The floor is
//! `max(floor_ms, server retry:, poll interval)`: the floor keeps a fleet from
//! reconnecting faster than the server asked (WHATWG HTML §9.2 "reconnection
//! time") and a failing poller from polling faster than a healthy one (ARCHITECTURE.md,
//! "Defaults"). Jitter shapes follow Marc Brooker, "Exponential Backoff and
//! Jitter", AWS Architecture Blog, 2015.
//!
//! Every delay lies in `[floor, floor + max_ms]`, clamped to
//! [`MAX_TIMER_MS`](crate::time::MAX_TIMER_MS); all arithmetic saturates.

use crate::rng::Rng;
use crate::time::clamp_timer_ms;

/// The jitter shape applied to the exponential step `d = min(max_ms, base_ms · m · 2^k)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// `U[0, d]` (default): the widest spread, so a restarted server never sees
    /// its clients come back in the same millisecond.
    #[default]
    FullJitter,
    /// `ceil(d/2) + U[0, floor(d/2)]`: never less than half the step.
    EqualJitter,
    /// `min(max_ms, U[base_ms · m, prev · 3])`, `prev` starting at `base_ms`
    /// (AWS 2015 "decorrelated jitter"). Ignores `k`; a healthy reset restarts it.
    Decorrelated,
    /// `d` exactly: no jitter (tests, single clients).
    None,
}

/// Backoff settings. Durations in milliseconds. JS names: `backoff.strategy`,
/// `backoff.baseMs`, `backoff.maxMs`, `backoff.floorMs`, `backoff.healthyAfterMs`,
/// `backoff.maxAttempts`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BackoffConfig {
    /// Jitter shape. Default [`Strategy::FullJitter`].
    pub strategy: Strategy,
    /// The first exponential step, ms. Default 500. 0 means the step never grows.
    pub base_ms: u64,
    /// Cap on the jittered part (not on the floor), ms. Default 60 000.
    pub max_ms: u64,
    /// Least delay before any reconnect, ms. Default 1000. The server's `retry:`
    /// and a poll interval raise the floor, never lower it below this.
    pub floor_ms: u64,
    /// A stream open this long with at least one byte counts as healthy and
    /// resets the attempt count (see [`Backoff::is_healthy_stream`]), ms. Default 10 000.
    pub healthy_after_ms: u64,
    /// Consecutive failed attempts before giving up; `None` (default) = retry
    /// forever at the cap. `Some(0)` behaves like `Some(1)`.
    pub max_attempts: Option<u32>,
}

impl Default for BackoffConfig {
    fn default() -> Self {
        BackoffConfig {
            strategy: Strategy::FullJitter,
            base_ms: 500,
            max_ms: 60_000,
            floor_ms: 1000,
            healthy_after_ms: 10_000,
            max_attempts: None,
        }
    }
}

/// `max_attempts` consecutive failures happened: stop with the `gave-up` error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GaveUp {
    /// Consecutive failed attempts counted, including the one that gave up.
    pub attempts: u32,
}

/// The backoff state of one connection: a plain value, no clock inside.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backoff {
    config: BackoffConfig,
    /// Consecutive unhealthy attempts (`k` for the next delay).
    attempts: u32,
    /// Last `retry:` value the server sent, ms (0 = none).
    server_retry_ms: u64,
    /// The current poll interval when this backs off a poll transport, ms (0 = none).
    interval_floor_ms: u64,
    /// Previous jittered step for [`Strategy::Decorrelated`], ms.
    prev_step_ms: u64,
}

impl Backoff {
    /// A fresh backoff: no failures yet, no server `retry:`, no interval floor.
    pub fn new(config: BackoffConfig) -> Self {
        Backoff {
            config,
            attempts: 0,
            server_retry_ms: 0,
            interval_floor_ms: 0,
            prev_step_ms: config.base_ms,
        }
    }

    /// The settings this was built with.
    pub fn config(&self) -> &BackoffConfig {
        &self.config
    }

    /// Consecutive unhealthy attempts counted so far (`k` of the next delay).
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The server's SSE `retry:` field, ms. Replaces an earlier value (WHATWG:
    /// the last `retry:` wins); it raises the floor but never lowers it below
    /// `floor_ms`. The engine should clamp absurd values (e.g. to
    /// `maxRetryAfterMs`) before passing them; the delay itself is clamped to
    /// `MAX_TIMER_MS` anyway.
    pub fn set_server_retry_ms(&mut self, retry_ms: u64) {
        self.server_retry_ms = retry_ms;
    }

    /// For poll transports: the current poll interval, ms (`None` to clear), so a
    /// failing poller never polls faster than a healthy one (ARCHITECTURE.md).
    pub fn set_interval_floor_ms(&mut self, interval_ms: Option<u64>) {
        self.interval_floor_ms = interval_ms.unwrap_or(0);
    }

    /// The effective floor: `max(floor_ms, server retry:, interval floor)`, ms.
    pub fn floor_ms(&self) -> u64 {
        self.config
            .floor_ms
            .max(self.server_retry_ms)
            .max(self.interval_floor_ms)
    }

    /// Whether a stream that stayed open `open_ms` and did or did not receive a
    /// byte was healthy (`open_ms >= healthy_after_ms && received_bytes`). A
    /// server that accepts and drops at once never resets the count (BC-11).
    pub fn is_healthy_stream(&self, open_ms: u64, received_bytes: bool) -> bool {
        received_bytes && open_ms >= self.config.healthy_after_ms
    }

    /// A healthy stream or any successful response: reset `k` (and the
    /// decorrelated state). The server `retry:` and interval floor are kept.
    pub fn record_healthy(&mut self) {
        self.attempts = 0;
        self.prev_step_ms = self.config.base_ms;
    }

    /// One more failed attempt whose delay the caller takes from elsewhere (a
    /// server-requested wait, see `engine::retry`): `k` grows as for any
    /// failure, so the next unhinted retry backs off further, but no delay is
    /// computed and no random number is drawn.
    ///
    /// # Errors
    /// [`GaveUp`] once `max_attempts` consecutive failures are counted.
    pub fn record_failure(&mut self) -> Result<(), GaveUp> {
        self.attempts = self.attempts.saturating_add(1);
        match self.config.max_attempts {
            Some(max) if self.attempts >= max => Err(GaveUp {
                attempts: self.attempts,
            }),
            _ => Ok(()),
        }
    }

    /// One more failed attempt: the delay before the next one, ms, in
    /// `[floor, floor + max_ms]` clamped to `MAX_TIMER_MS`. Same as
    /// [`Backoff::next_delay_scaled_ms`] with multiplier 1.
    ///
    /// # Errors
    /// [`GaveUp`] once `max_attempts` consecutive failures are counted.
    pub fn next_delay_ms(&mut self, rng: &mut Rng) -> Result<u64, GaveUp> {
        self.next_delay_scaled_ms(rng, 1)
    }

    /// Like [`Backoff::next_delay_ms`] with the exponential step multiplied by
    /// `step_multiplier` (0 is treated as 1): pass 2 for a 429 that carried no
    /// `Retry-After` or rate-limit hint (ARCHITECTURE.md "Defaults").
    ///
    /// # Errors
    /// [`GaveUp`] once `max_attempts` consecutive failures are counted; no random
    /// number is drawn then.
    pub fn next_delay_scaled_ms(
        &mut self,
        rng: &mut Rng,
        step_multiplier: u32,
    ) -> Result<u64, GaveUp> {
        let k = self.attempts;
        self.attempts = self.attempts.saturating_add(1);
        if let Some(max) = self.config.max_attempts {
            if self.attempts >= max {
                return Err(GaveUp {
                    attempts: self.attempts,
                });
            }
        }
        let cap = self.config.max_ms;
        let base = self
            .config
            .base_ms
            .saturating_mul(u64::from(step_multiplier.max(1)));
        let jitter = match self.config.strategy {
            Strategy::Decorrelated => {
                let hi = self.prev_step_ms.saturating_mul(3);
                let step = rng.between(base, hi).min(cap);
                self.prev_step_ms = step;
                step
            }
            strategy => {
                // 2^k saturates at 2^63 and beyond; min(cap) keeps d finite.
                let pow = 1u64.checked_shl(k).unwrap_or(u64::MAX);
                let d = base.saturating_mul(pow).min(cap);
                match strategy {
                    Strategy::FullJitter => rng.between(0, d),
                    Strategy::EqualJitter => (d - d / 2) + rng.between(0, d / 2),
                    _ => d,
                }
            }
        };
        Ok(clamp_timer_ms(self.floor_ms().saturating_add(jitter)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{any, prop_assert, prop_oneof, proptest, Just};

    fn cfg(strategy: Strategy) -> BackoffConfig {
        BackoffConfig {
            strategy,
            ..BackoffConfig::default()
        }
    }

    fn delays(config: BackoffConfig, seed: u64, n: usize) -> Vec<u64> {
        let mut b = Backoff::new(config);
        let mut rng = Rng::new(seed);
        (0..n)
            .filter_map(|_| b.next_delay_ms(&mut rng).ok())
            .collect()
    }

    #[test]
    fn defaults_match_design() {
        let c = BackoffConfig::default();
        assert_eq!(c.strategy, Strategy::FullJitter);
        assert_eq!((c.base_ms, c.max_ms, c.floor_ms), (500, 60_000, 1000));
        assert_eq!((c.healthy_after_ms, c.max_attempts), (10_000, None));
    }

    /// A failure whose delay came from the server counts for `k` and for
    /// `max_attempts`, without drawing a random number.
    #[test]
    fn record_failure_grows_k_and_gives_up() {
        let mut b = Backoff::new(BackoffConfig {
            max_attempts: Some(3),
            ..cfg(Strategy::None)
        });
        assert_eq!(b.record_failure(), Ok(()));
        assert_eq!(b.record_failure(), Ok(()));
        assert_eq!(b.attempts(), 2);
        let mut rng = Rng::new(1);
        assert_eq!(b.next_delay_ms(&mut rng), Err(GaveUp { attempts: 3 }));
        let mut b = Backoff::new(cfg(Strategy::None));
        b.record_failure().ok();
        assert_eq!(b.next_delay_ms(&mut rng), Ok(2000));
    }

    #[test]
    fn no_jitter_is_floor_plus_capped_doubling() {
        assert_eq!(
            delays(cfg(Strategy::None), 1, 10),
            [1500, 2000, 3000, 5000, 9000, 17_000, 33_000, 61_000, 61_000, 61_000]
        );
    }

    #[test]
    fn full_jitter_exact_with_seed() {
        assert_eq!(
            delays(cfg(Strategy::FullJitter), 42, 6),
            [1371, 1160, 1557, 2377, 1304, 14_892]
        );
    }

    #[test]
    fn equal_jitter_exact_with_seed() {
        assert_eq!(
            delays(cfg(Strategy::EqualJitter), 42, 6),
            [1436, 1580, 2278, 3688, 5152, 15_946]
        );
    }

    #[test]
    fn decorrelated_exact_with_seed() {
        assert_eq!(
            delays(cfg(Strategy::Decorrelated), 42, 6),
            [2242, 2016, 2210, 2577, 1660, 2785]
        );
    }

    #[test]
    fn server_retry_raises_floor_never_lowers() {
        let mut b = Backoff::new(cfg(Strategy::None));
        let mut rng = Rng::new(0);
        b.set_server_retry_ms(3000);
        assert_eq!(b.floor_ms(), 3000);
        assert_eq!(b.next_delay_ms(&mut rng), Ok(3500));
        b.set_server_retry_ms(10);
        assert_eq!(b.floor_ms(), 1000);
        assert_eq!(b.next_delay_ms(&mut rng), Ok(2000));
    }

    #[test]
    fn poll_interval_is_a_floor() {
        let mut b = Backoff::new(cfg(Strategy::None));
        b.set_interval_floor_ms(Some(20_000));
        let mut rng = Rng::new(0);
        assert_eq!(b.next_delay_ms(&mut rng), Ok(20_500));
        b.set_interval_floor_ms(None);
        assert_eq!(b.next_delay_ms(&mut rng), Ok(2000));
    }

    #[test]
    fn step_multiplier_doubles_the_step_for_429() {
        let mut b = Backoff::new(cfg(Strategy::None));
        let mut rng = Rng::new(0);
        assert_eq!(b.next_delay_scaled_ms(&mut rng, 2), Ok(2000));
        assert_eq!(b.next_delay_scaled_ms(&mut rng, 2), Ok(3000));
        assert_eq!(b.next_delay_scaled_ms(&mut rng, 0), Ok(3000));
    }

    #[test]
    fn healthy_resets_attempts() {
        let mut b = Backoff::new(cfg(Strategy::None));
        let mut rng = Rng::new(0);
        for _ in 0..5 {
            let _ = b.next_delay_ms(&mut rng);
        }
        assert_eq!(b.attempts(), 5);
        assert!(!b.is_healthy_stream(9_999, true));
        assert!(!b.is_healthy_stream(60_000, false));
        assert!(b.is_healthy_stream(10_000, true));
        b.record_healthy();
        assert_eq!(b.attempts(), 0);
        assert_eq!(b.next_delay_ms(&mut rng), Ok(1500));
    }

    #[test]
    fn extreme_values_saturate_and_clamp() {
        let config = BackoffConfig {
            strategy: Strategy::None,
            base_ms: u64::MAX,
            max_ms: u64::MAX,
            floor_ms: u64::MAX,
            healthy_after_ms: 0,
            max_attempts: None,
        };
        let mut b = Backoff::new(config);
        let mut rng = Rng::new(0);
        for _ in 0..100 {
            assert_eq!(
                b.next_delay_scaled_ms(&mut rng, u32::MAX),
                Ok(2_147_483_647)
            );
        }
    }

    /// BC-11: a server that accepts the stream and drops it at once. Short
    /// connections never reset the count, every gap honours floor + d_k/2, and
    /// the tenth consecutive failure gives up.
    #[test]
    fn bc11_accept_and_drop_never_resets_and_gives_up() {
        let config = BackoffConfig {
            strategy: Strategy::EqualJitter,
            max_attempts: Some(10),
            ..BackoffConfig::default()
        };
        let mut b = Backoff::new(config);
        let mut rng = Rng::new(11);
        for k in 0..9u32 {
            // Open for 30 ms, one byte (the server's hello), then dropped.
            if b.is_healthy_stream(30, true) {
                b.record_healthy();
            }
            assert_eq!(b.attempts(), k);
            let d_k = (500u64 << k).min(60_000);
            let gap = b.next_delay_ms(&mut rng).unwrap_or(0);
            assert!(gap >= 1000 + d_k / 2, "k={k} gap={gap}");
            assert!(gap <= 1000 + d_k, "k={k} gap={gap}");
        }
        assert_eq!(b.next_delay_ms(&mut rng), Err(GaveUp { attempts: 10 }));
        assert_eq!(b.next_delay_ms(&mut rng), Err(GaveUp { attempts: 11 }));
    }

    /// BC-13: 500 clients (500 seeds) whose server sent `retry: 1000`, all
    /// failing at once. With base 1000 the first jitter range is U[0, 1000], so
    /// every first delay is in [1000, 2000] and no 100 ms bucket holds > 20 %.
    #[test]
    fn bc13_thundering_herd_is_spread() {
        let first = |config: BackoffConfig, seed: u64| {
            let mut b = Backoff::new(config);
            b.set_server_retry_ms(1000);
            b.next_delay_ms(&mut Rng::new(seed)).unwrap_or(0)
        };
        let wide = BackoffConfig {
            base_ms: 1000,
            ..BackoffConfig::default()
        };
        let mut buckets = [0u32; 11];
        for seed in 0..500 {
            let d = first(wide, seed);
            assert!((1000..=2000).contains(&d), "{d}");
            buckets[((d - 1000) / 100) as usize] += 1;
        }
        assert!(buckets.iter().all(|&n| n <= 100), "{buckets:?}");
        // Defaults (base 500): [1000, 1500]; 5 buckets expect 20 % each, so the
        // bound there is looser (30 %): the point is that no bucket piles up.
        let mut buckets = [0u32; 6];
        for seed in 0..500 {
            let d = first(BackoffConfig::default(), seed);
            assert!((1000..=1500).contains(&d), "{d}");
            buckets[((d - 1000) / 100) as usize] += 1;
        }
        assert!(buckets.iter().all(|&n| n <= 150), "{buckets:?}");
    }

    fn any_strategy() -> impl proptest::strategy::Strategy<Value = Strategy> {
        prop_oneof![
            Just(Strategy::FullJitter),
            Just(Strategy::EqualJitter),
            Just(Strategy::Decorrelated),
            Just(Strategy::None),
        ]
    }

    proptest! {
        #[test]
        fn every_delay_in_floor_to_floor_plus_cap(
            strategy in any_strategy(),
            base_ms in prop_oneof![0u64..5000, any::<u64>()],
            max_ms in prop_oneof![0u64..100_000, any::<u64>()],
            floor_ms in prop_oneof![0u64..5000, any::<u64>()],
            retry_ms in prop_oneof![0u64..10_000, any::<u64>()],
            interval in proptest::option::of(any::<u64>()),
            max_attempts in proptest::option::of(any::<u32>()),
            steps in proptest::collection::vec((any::<u32>(), any::<bool>()), 0..200),
            seed in any::<u64>(),
        ) {
            let config = BackoffConfig {
                strategy, base_ms, max_ms, floor_ms, healthy_after_ms: 0, max_attempts,
            };
            let mut b = Backoff::new(config);
            b.set_server_retry_ms(retry_ms);
            b.set_interval_floor_ms(interval);
            let floor = b.floor_ms();
            prop_assert!(floor >= floor_ms);
            let lo = clamp_timer_ms(floor);
            let hi = clamp_timer_ms(floor.saturating_add(max_ms));
            let mut rng = Rng::new(seed);
            for (mult, healthy) in steps {
                if healthy && mult % 7 == 0 {
                    b.record_healthy();
                }
                if let Ok(d) = b.next_delay_scaled_ms(&mut rng, mult % 4) {
                    prop_assert!(lo <= d && d <= hi, "{} not in [{}, {}]", d, lo, hi);
                }
            }
        }
    }
}
