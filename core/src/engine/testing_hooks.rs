//! Read-only views the fuzz invariants need (`testing` feature only; never
//! in the wasm bundle).

use super::Engine;

impl Engine {
    /// The backoff floor in force, ms: `max(backoff.floorMs, the server's
    /// retry:, a poll's current interval)` (`engine::retry`, rule 1).
    pub fn backoff_floor_ms(&self) -> u64 {
        self.backoff.floor_ms()
    }
}
