//! A small seeded PRNG for jitter. The engine owns one, seeded by the adapter
//! (from `crypto.getRandomValues`, or the `seed` option), so a test that fixes
//! the seed can assert exact delays.

/// SplitMix64 (Steele, Lea, Flood 2014): 64 bits of state, passes BigCrush,
/// tiny code. Not cryptographic: jitter only needs spread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator from a 64-bit seed. Every seed, 0 included, is valid.
    pub const fn new(seed: u64) -> Self {
        Rng { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `[0, bound)`; 0 when `bound` is 0.
    /// Uses Lemire's multiply-shift (bias below 2^-32 for the bounds we use).
    pub fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 {
            return 0;
        }
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }

    /// A uniform integer in `[lo, hi]` (inclusive); `lo` when `hi <= lo`.
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.below((hi - lo).saturating_add(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_seed_fixed_sequence() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        let xs: [u64; 3] = [a.next_u64(), a.next_u64(), a.next_u64()];
        assert_eq!(xs, [b.next_u64(), b.next_u64(), b.next_u64()]);
        assert_ne!(xs[0], xs[1]);
    }

    #[test]
    fn below_stays_in_range() {
        let mut r = Rng::new(7);
        for _ in 0..10_000 {
            assert!(r.below(10) < 10);
        }
        assert_eq!(r.below(0), 0);
        assert_eq!(r.between(5, 5), 5);
        assert_eq!(r.between(9, 3), 9);
    }
}
