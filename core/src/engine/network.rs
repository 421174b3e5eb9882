//! The poll interval's network tier: the browser's report
//! (`navigator.connection`) and the engine's own measured `poll` request
//! times, combined by `policy::network::NetworkView` (the rule is
//! documented there).

use super::config::TransportKind;
use super::input::{EffectiveType, NetworkHint};
use super::Engine;

impl Engine {
    /// `navigator.connection` changed.
    pub(crate) fn on_network_hint(&mut self, hint: NetworkHint) {
        let rtt = hint
            .rtt_ms
            .or_else(|| hint.effective_type.map(EffectiveType::typical_rtt_ms));
        self.network.set_reported(rtt, hint.save_data);
        self.apply_network_tier();
    }

    /// A response head of a `transport` request arrived `ms` after its
    /// `Open`: on `poll`, a measured request time (a held long-poll or a
    /// stream's time to open says nothing about the round trip).
    pub(crate) fn on_request_time(&mut self, transport: TransportKind, ms: u64) {
        if transport == TransportKind::Poll {
            self.network.record_request_ms(ms);
            self.apply_network_tier();
        }
    }

    fn apply_network_tier(&mut self) {
        self.interval.set_network_tier(self.network.tier());
        self.stats.current_interval_ms = self.interval.current_ms();
    }
}
