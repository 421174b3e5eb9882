//! Circuit breaker (Nygard, "Release It!", 2007; ARCHITECTURE.md "Defaults"): after
//! `failure_threshold` consecutive failures stop trying for a cool-down, then let
//! exactly one probe through.
//!
//! ```text
//! Closed --threshold failures--> Open{until} --admit at/after until--> HalfOpen (one probe)
//! HalfOpen --success--> Closed      HalfOpen --failure--> Open{new until}
//! ```
//!
//! The cool-down is jittered ±50 % to `U[0.5 · cooldown_ms, 1.5 · cooldown_ms]`
//! (the width of a failure retry, ARCHITECTURE.md "Jitter width by purpose") and
//! is never shorter than the current backoff delay (the breaker must only ever
//! slow things down). The width is for a fleet that tripped together: after a
//! restart every client's fifth failure falls within the first seconds of the
//! server's 503s (about 15 s in `make bench-herd`). Cool-downs that all last
//! at least `cooldown_ms` would leave that server without a single client
//! from the last trip until the first cool-down ends, and again between the
//! later waves of probes: in the bench, 40 s of its capacity unused and the
//! fleet back in 1.20× the physical limit, against 1.07× with half the
//! cool-down as the shortest (docs/herd.md).

use crate::rng::Rng;
use crate::time::{clamp_timer_ms, MonoMs};

/// Breaker settings (JS `breaker.failureThreshold`, `breaker.cooldownMs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BreakerConfig {
    /// Consecutive failures that open the breaker. Default 5; 0 is treated as 1.
    pub failure_threshold: u32,
    /// Base cool-down before the probe, ms. Default 30 000; jittered ×[0.5, 1.5].
    pub cooldown_ms: u64,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig {
            failure_threshold: 5,
            cooldown_ms: 30_000,
        }
    }
}

/// Where the breaker stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BreakerState {
    /// Attempts flow normally.
    #[default]
    Closed,
    /// No attempts before `until` (monotonic).
    Open {
        /// End of the cool-down.
        until: MonoMs,
    },
    /// The single probe has been admitted and its outcome is awaited.
    HalfOpen,
}

/// The answer to "may I attempt now?".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Admission {
    /// Closed: go ahead.
    Allowed,
    /// The cool-down is over: this attempt is the one probe (state reason
    /// `breaker-probe`). Report its outcome with `record_success`/`record_failure`.
    Probe,
    /// Open: wait until `until` (state reason `breaker-open`).
    Open {
        /// End of the cool-down.
        until: MonoMs,
    },
    /// The probe is still out: do not attempt.
    ProbeInFlight,
}

/// A circuit breaker: a plain value; time and randomness are arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Breaker {
    config: BreakerConfig,
    state: BreakerState,
    failures: u32,
}

impl Breaker {
    /// A closed breaker with no failures counted.
    pub fn new(config: BreakerConfig) -> Self {
        Breaker {
            config,
            state: BreakerState::Closed,
            failures: 0,
        }
    }

    /// The current state (an `Open` whose `until` has passed stays `Open` until
    /// [`Breaker::admit`] turns it into the probe).
    pub fn state(&self) -> BreakerState {
        self.state
    }

    /// Consecutive failures counted since the last success.
    pub fn consecutive_failures(&self) -> u32 {
        self.failures
    }

    /// Ask before every attempt. At or after the end of the cool-down this hands
    /// out the one probe and moves to `HalfOpen`.
    pub fn admit(&mut self, now: MonoMs) -> Admission {
        match self.state {
            BreakerState::Closed => Admission::Allowed,
            BreakerState::Open { until } if now < until => Admission::Open { until },
            BreakerState::Open { .. } => {
                self.state = BreakerState::HalfOpen;
                Admission::Probe
            }
            BreakerState::HalfOpen => Admission::ProbeInFlight,
        }
    }

    /// Any success (the probe's included, or a late answer while open): close
    /// and forget the failures.
    pub fn record_success(&mut self) {
        self.state = BreakerState::Closed;
        self.failures = 0;
    }

    /// A failed attempt at `now`. `backoff_delay_ms` is the delay the backoff
    /// just chose; the cool-down is `max(U[0.5·cooldown_ms, 1.5·cooldown_ms],
    /// backoff_delay_ms)`, clamped to `MAX_TIMER_MS`. Returns the end of the
    /// cool-down when this failure opened (or, for a failed probe, re-opened) the
    /// breaker, else `None` (no random number is drawn then). A failure reported
    /// while already open only counts.
    pub fn record_failure(
        &mut self,
        now: MonoMs,
        backoff_delay_ms: u64,
        rng: &mut Rng,
    ) -> Option<MonoMs> {
        self.failures = self.failures.saturating_add(1);
        let trips = match self.state {
            BreakerState::Closed => self.failures >= self.config.failure_threshold.max(1),
            BreakerState::HalfOpen => true,
            BreakerState::Open { .. } => false,
        };
        if !trips {
            return None;
        }
        let base = self.config.cooldown_ms;
        let jittered = rng.between(base / 2, base.saturating_add(base / 2));
        let until = now.plus(clamp_timer_ms(jittered.max(backoff_delay_ms)));
        self.state = BreakerState::Open { until };
        Some(until)
    }

    /// The app asked for the probe early (`reconnect()`): an open breaker's
    /// cool-down ends at `at` when that is sooner, so the next
    /// [`Breaker::admit`] at or after `at` hands out the probe (its failure
    /// opens the breaker again for a full cool-down). Nothing otherwise.
    pub fn probe_at(&mut self, at: MonoMs) {
        if let BreakerState::Open { until } = self.state {
            self.state = BreakerState::Open {
                until: until.min(at),
            };
        }
    }

    /// The probe ended without an outcome (aborted, page hidden): the next
    /// [`Breaker::admit`] at or after `now` hands out a new probe.
    pub fn abandon_probe(&mut self, now: MonoMs) {
        if self.state == BreakerState::HalfOpen {
            self.state = BreakerState::Open { until: now };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{any, prop_assert, proptest};

    fn failures(b: &mut Breaker, n: u32, now: u64, rng: &mut Rng) -> Option<MonoMs> {
        (0..n).fold(None, |_, _| b.record_failure(MonoMs(now), 0, rng))
    }

    #[test]
    fn defaults_match_design() {
        let c = BreakerConfig::default();
        assert_eq!((c.failure_threshold, c.cooldown_ms), (5, 30_000));
    }

    #[test]
    fn full_cycle_exact_with_seed() {
        let mut b = Breaker::new(BreakerConfig::default());
        let mut rng = Rng::new(5);
        assert_eq!(failures(&mut b, 4, 1000, &mut rng), None);
        assert_eq!(b.admit(MonoMs(1000)), Admission::Allowed);
        // The fifth failure opens it for U[15 000, 45 000] ms (seed 5: 26 603).
        let until = b.record_failure(MonoMs(1000), 8000, &mut rng);
        assert_eq!(until, Some(MonoMs(1000 + 26_603)));
        assert_eq!(
            b.state(),
            BreakerState::Open {
                until: MonoMs(27_603)
            }
        );
        assert_eq!(
            b.admit(MonoMs(27_602)),
            Admission::Open {
                until: MonoMs(27_603)
            }
        );
        // Exactly one probe.
        assert_eq!(b.admit(MonoMs(27_603)), Admission::Probe);
        assert_eq!(b.admit(MonoMs(27_604)), Admission::ProbeInFlight);
        assert_eq!(b.state(), BreakerState::HalfOpen);
        // The probe fails: open again with a new cool-down (37 569).
        let again = b.record_failure(MonoMs(37_000), 0, &mut rng);
        assert_eq!(again, Some(MonoMs(37_000 + 37_569)));
        assert_eq!(b.consecutive_failures(), 6);
        assert_eq!(
            b.admit(MonoMs(74_568)),
            Admission::Open {
                until: MonoMs(74_569)
            }
        );
        // The next probe succeeds: closed.
        assert_eq!(b.admit(MonoMs(74_569)), Admission::Probe);
        b.record_success();
        assert_eq!(b.state(), BreakerState::Closed);
        assert_eq!(b.consecutive_failures(), 0);
        assert_eq!(b.admit(MonoMs(74_570)), Admission::Allowed);
    }

    #[test]
    fn cooldown_never_shorter_than_backoff() {
        let mut b = Breaker::new(BreakerConfig {
            failure_threshold: 1,
            cooldown_ms: 30_000,
        });
        let mut rng = Rng::new(1);
        let until = b.record_failure(MonoMs(0), 60_500, &mut rng);
        assert_eq!(until, Some(MonoMs(60_500)));
    }

    #[test]
    fn success_resets_the_count() {
        let mut b = Breaker::new(BreakerConfig::default());
        let mut rng = Rng::new(1);
        failures(&mut b, 4, 0, &mut rng);
        b.record_success();
        assert_eq!(failures(&mut b, 4, 0, &mut rng), None);
        assert_eq!(b.state(), BreakerState::Closed);
    }

    /// `reconnect()` asks for the probe early: the cool-down ends at once,
    /// one probe goes, and its failure opens the breaker for a full new
    /// cool-down (seed 5: 26 603 then 37 569 ms). Closed or half-open: no
    /// change; a later `at` never lengthens the cool-down.
    #[test]
    fn an_early_probe_is_the_one_probe() {
        let mut b = Breaker::new(BreakerConfig::default());
        let mut rng = Rng::new(5);
        b.probe_at(MonoMs(0));
        assert_eq!(b.state(), BreakerState::Closed);
        let until = failures(&mut b, 5, 1000, &mut rng);
        assert_eq!(until, Some(MonoMs(27_603)));
        b.probe_at(MonoMs(40_000));
        assert_eq!(
            b.admit(MonoMs(2000)),
            Admission::Open {
                until: MonoMs(27_603)
            }
        );
        b.probe_at(MonoMs(2000));
        assert_eq!(
            b.admit(MonoMs(1999)),
            Admission::Open {
                until: MonoMs(2000)
            }
        );
        assert_eq!(b.admit(MonoMs(2000)), Admission::Probe);
        b.probe_at(MonoMs(2000));
        assert_eq!(b.state(), BreakerState::HalfOpen);
        assert_eq!(b.admit(MonoMs(2001)), Admission::ProbeInFlight);
        let again = b.record_failure(MonoMs(2100), 0, &mut rng);
        assert_eq!(again, Some(MonoMs(2100 + 37_569)));
    }

    #[test]
    fn failures_while_open_do_not_extend() {
        let mut b = Breaker::new(BreakerConfig {
            failure_threshold: 0,
            cooldown_ms: 0,
        });
        let mut rng = Rng::new(1);
        assert_eq!(b.record_failure(MonoMs(10), 0, &mut rng), Some(MonoMs(10)));
        assert_eq!(b.record_failure(MonoMs(20), 99, &mut rng), None);
        assert_eq!(b.admit(MonoMs(10)), Admission::Probe);
        b.abandon_probe(MonoMs(50));
        assert_eq!(b.admit(MonoMs(49)), Admission::Open { until: MonoMs(50) });
        assert_eq!(b.admit(MonoMs(50)), Admission::Probe);
    }

    proptest! {
        #[test]
        fn cooldown_bounds_and_no_panic(
            threshold in any::<u32>(), cooldown in any::<u64>(), backoff in any::<u64>(),
            now in any::<u64>(), seed in any::<u64>(),
        ) {
            let mut b = Breaker::new(BreakerConfig { failure_threshold: threshold % 8, cooldown_ms: cooldown });
            let mut rng = Rng::new(seed);
            let mut opened = None;
            for _ in 0..8 {
                opened = opened.or(b.record_failure(MonoMs(now), backoff, &mut rng));
            }
            let until = opened.map_or(0, |u| u.0);
            prop_assert!(opened.is_some());
            let wait = until - now;
            let lo = clamp_timer_ms((cooldown / 2).max(backoff));
            let hi = clamp_timer_ms(cooldown.saturating_add(cooldown / 2).max(backoff));
            prop_assert!(until == u64::MAX || (lo <= wait && wait <= hi));
        }
    }
}
