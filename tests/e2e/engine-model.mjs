// The engine's delay rules, written again in JS from core/src/rng.rs,
// core/src/policy/backoff.rs and core/src/engine/retry.rs, so a browser test
// can compute the exact delay a seeded client must wait and compare it with
// what the server's request log saw. An independent re-statement: if the
// engine drifts from its documented rule, these tests say so.

const MASK = (1n << 64n) - 1n;

/** SplitMix64 with Lemire's multiply-shift `below` (core/src/rng.rs). */
export class Rng {
  constructor(seed) { this.state = BigInt.asUintN(64, BigInt(seed)); }
  nextU64() {
    this.state = (this.state + 0x9E3779B97F4A7C15n) & MASK;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & MASK;
    return z ^ (z >> 31n);
  }
  /** Uniform in [0, bound); 0 when bound is 0. */
  below(bound) {
    if (bound === 0) return 0;
    return Number((this.nextU64() * BigInt(bound)) >> 64n);
  }
  /** Uniform in [lo, hi]. */
  between(lo, hi) { return hi <= lo ? lo : lo + this.below(hi - lo + 1); }
}

export const BACKOFF_DEFAULTS = { floorMs: 1000, baseMs: 500, maxMs: 60000 };

/**
 * The engine's retry delays for one connection (full jitter, the default):
 * after a counted failure `floor + U[0, min(cap, base·m·2^k)]`; after a
 * healthy stream ends, one draw for the plain backoff (discarded) then
 * `floor + U[0, max(floor, base))`; after a server-requested wait `w` (as asked, never plus backoff):
 * `max(w, floor) + U[0, min(max(w, floor) / 10, 1000)]`, k grows, no backoff draw.
 */
export class Model {
  constructor(seed, backoff = {}) {
    this.rng = new Rng(seed);
    this.b = { ...BACKOFF_DEFAULTS, ...backoff };
    this.k = 0;
    this.serverRetryMs = 0;
  }
  floor() { return Math.max(this.b.floorMs, this.serverRetryMs); }
  /**
   * A counted failure (open failed, status retry, unhealthy stream end). `waitMs`: the
   * server-requested wait (Retry-After, rate-limit reset) when the answer had one, already
   * clamped; `undefined` when it had none.
   */
  failure({ waitMs, multiplier = 1 } = {}) {
    const k = this.k++;
    if (waitMs !== undefined) {
      const asked = Math.max(waitMs, this.floor());
      return asked + this.rng.between(0, Math.min(Math.floor(asked / 10), 1000));
    }
    const d = Math.min(this.b.maxMs, this.b.baseMs * multiplier * 2 ** k);
    return this.floor() + this.rng.between(0, d);
  }
  /** A stream that had been healthy ended (k resets first). */
  healthyEnd() {
    this.k = 0;
    this.failure();
    this.k = 0;
    const floor = this.floor();
    return floor + this.rng.below(Math.max(floor, this.b.baseMs));
  }
  /**
   * A long-poll answer with news, `heldMs` after its request went out: the next request after
   * U[0, min(heldMs / 10, 100)] ms (core/src/engine/retry.rs long_poll_spread_max_ms).
   * Without `heldMs` (a "no news" answer), U[0, 100] after the pacing.
   */
  longPollNext(heldMs) {
    this.k = 0;
    const max = heldMs === undefined ? 100 : Math.min(Math.floor(heldMs / 10), 100);
    return this.rng.below(max + 1);
  }
}
