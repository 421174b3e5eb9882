//! The network tier that stretches the poll interval (ARCHITECTURE.md "Network
//! tiers": RTT < 50 ms ×1, < 200 ms ×3, < 1 s ×6, worse or `saveData` → the
//! maximum), from the browser's estimate lowered by the client's own
//! measured request times.
//!
//! Why measured: `navigator.connection.rtt` is the browser's estimate, not a
//! measurement of this server. Chromium reports 100 ms (`effectiveType`
//! `"4g"`) on loopback and on most desktops, where a round trip takes well
//! under 1 ms, so the estimate alone stretched every adaptive poll interval
//! ×3 (`make bench`: tidings polled every 30 ms where a fetch loop polled
//! every 10 ms). The engine sees when each `poll` request went out (`Open`)
//! and when its response head arrived: that time is one round trip plus the
//! server's work and any queue on the way, so it is an upper bound of the
//! RTT. The tier's RTT is the smallest of the browser's estimate and the last
//! [`RTT_SAMPLES`] measured times: a fast answer proves the path fast and
//! lowers the tier, while a slow one (a loaded server or machine, a cold
//! connection's handshakes) never raises it above the browser's report, which
//! sees all of the page's traffic. A browser that reports nothing (Firefox,
//! Safari) keeps the configured interval, as before.
//!
//! `saveData` is the user's choice, not a measurement: it always gives the
//! maximum interval.

use crate::policy::interval::NetworkTier;

/// How many measured request times the tier looks at (the smallest wins).
pub const RTT_SAMPLES: usize = 4;

/// What is known about the network: the browser's report and the client's
/// own measured request times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetworkView {
    /// `navigator.connection.rtt` (or the effective type's typical RTT), ms.
    reported_rtt_ms: Option<u64>,
    /// `navigator.connection.saveData`.
    save_data: bool,
    /// The last measured request times, ms (a ring; `u32::MAX` = none yet).
    samples: [u32; RTT_SAMPLES],
    next: u8,
}

impl Default for NetworkView {
    fn default() -> Self {
        NetworkView {
            reported_rtt_ms: None,
            save_data: false,
            samples: [u32::MAX; RTT_SAMPLES],
            next: 0,
        }
    }
}

impl NetworkView {
    /// The browser's report: its RTT estimate (ms; `None` = none) and `saveData`.
    pub fn set_reported(&mut self, rtt_ms: Option<u64>, save_data: bool) {
        self.reported_rtt_ms = rtt_ms;
        self.save_data = save_data;
    }

    /// A `poll` request's time from `Open` to its response head, ms.
    pub fn record_request_ms(&mut self, ms: u64) {
        if let Some(s) = self.samples.get_mut(usize::from(self.next) % RTT_SAMPLES) {
            *s = u32::try_from(ms).unwrap_or(u32::MAX - 1).min(u32::MAX - 1);
        }
        self.next = self.next.wrapping_add(1);
    }

    /// The smallest of the last [`RTT_SAMPLES`] measured request times, ms.
    pub fn measured_rtt_ms(&self) -> Option<u64> {
        let mut min = u32::MAX;
        for &s in &self.samples {
            min = min.min(s);
        }
        (min != u32::MAX).then_some(u64::from(min))
    }

    /// The tier: `saveData` → the maximum; else the smaller of the reported
    /// RTT and the measured one; nothing reported → fast (module doc).
    pub fn tier(&self) -> NetworkTier {
        let rtt = self
            .reported_rtt_ms
            .map(|r| self.measured_rtt_ms().map_or(r, |m| m.min(r)));
        NetworkTier::from_rtt(rtt, self.save_data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_times_win_over_the_report() {
        let mut n = NetworkView::default();
        assert_eq!(n.tier(), NetworkTier::Fast);
        // Chromium on loopback.
        n.set_reported(Some(100), false);
        assert_eq!(n.tier(), NetworkTier::Medium);
        n.record_request_ms(2);
        assert_eq!(n.measured_rtt_ms(), Some(2));
        assert_eq!(n.tier(), NetworkTier::Fast);
        n.set_reported(Some(30), true);
        assert_eq!(n.tier(), NetworkTier::Worst);
    }

    #[test]
    fn the_smallest_of_the_last_four_never_above_the_report() {
        let mut n = NetworkView::default();
        // Nothing reported: the configured interval, whatever is measured.
        n.record_request_ms(600);
        assert_eq!(n.tier(), NetworkTier::Fast);
        // 3g-like report; one fast answer, then slow ones.
        n.set_reported(Some(2000), false);
        n.record_request_ms(20);
        for _ in 0..3 {
            n.record_request_ms(600);
            assert_eq!(n.tier(), NetworkTier::Fast, "one fast answer is enough");
        }
        n.record_request_ms(600);
        assert_eq!(n.measured_rtt_ms(), Some(600));
        assert_eq!(n.tier(), NetworkTier::Slow);
        n.record_request_ms(120);
        assert_eq!(n.tier(), NetworkTier::Medium);
        // A loaded machine: slow answers never stretch past the report.
        n.set_reported(Some(100), false);
        for _ in 0..4 {
            n.record_request_ms(u64::MAX);
        }
        assert_eq!(n.measured_rtt_ms(), Some(u64::from(u32::MAX - 1)));
        assert_eq!(n.tier(), NetworkTier::Medium);
        n.set_reported(Some(0), false);
        assert_eq!(n.tier(), NetworkTier::Fast);
    }
}
