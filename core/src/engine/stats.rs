//! Counters for `stats()` (JS `subscription.stats()`).

/// What the engine did so far. All counters saturate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Stats {
    /// `Open` actions emitted (requests started, every transport).
    pub requests: u64,
    /// Response body bytes seen: chunks given to `handle_bytes`, raw resource
    /// bodies, and the `data` of JSON messages (their decoded size).
    pub bytes: u64,
    /// `Open` actions after the first one.
    pub reconnects: u64,
    /// Answers that said "nothing new" to a conditional request: 304, and 200
    /// whose `ETag` weakly matches the previous one.
    pub not_modified: u64,
    /// Messages dropped because their own id was delivered recently with the
    /// same content, and repeats of events never delivered (filtered,
    /// reserved names, the heartbeat: `Dedupe::is_new_undelivered`).
    pub duplicates_dropped: u64,
    /// The delay before the next attempt as last scheduled, ms (0 when the
    /// next attempt went out at once or none is scheduled).
    pub current_delay_ms: u64,
    /// The current poll interval, ms (after hints, floor and network tier).
    pub current_interval_ms: u64,
}
