//! The network tier that stretches the poll interval (DESIGN.md "Network
//! tiers": RTT < 50 ms ×1, < 200 ms ×3, < 1 s ×6, worse or `saveData` → the
//! maximum), from the client's own measured request times first and the
//! browser's estimate second (issue 19).
//!
//! Why measured: `navigator.connection.rtt` is the browser's estimate, not a
//! measurement of this server. Chromium reports 100 ms (`effectiveType`
//! `"4g"`) on loopback and on most desktops, where a round trip takes well
//! under 1 ms, so the estimate alone stretched every adaptive poll interval
//! ×3 (`make bench`: tidings polled every 30 ms where a fetch loop polled
//! every 10 ms). The engine already sees when each `poll` request went out
//! (`Open`) and when its response head arrived: that time is one round trip
//! plus the server's lookup (a 304 is cheap), so it bounds the RTT from above.
//! The tier's RTT is the smallest of the last [`RTT_SAMPLES`] such times, as
//! TCP keeps a minimum RTT: a queue or a slow answer adds to a sample and
//! never takes away, so one slow answer does not stretch the interval, and
//! a network that really became slow does after [`RTT_SAMPLES`] answers.
//!
//! Until one request was measured (or when none succeeds: only answers are
//! samples), the browser's `rtt` decides (or its `effectiveType`'s typical
//! RTT; unknown = fast). `saveData` is the user's choice, not a measurement:
//! it always gives the maximum interval.

use crate::policy::interval::NetworkTier;

/// How many measured request times the tier looks at (the smallest wins).
pub const RTT_SAMPLES: usize = 4;

/// What is known about the network: the browser's report and the client's
/// own measured request times.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetworkView {
    /// `navigator.connection.rtt` (or the effective type's typical RTT), ms.
    reported_rtt_ms: Option<u64>,
    /// `navigator.connection.saveData`.
    save_data: bool,
    /// The last measured request times, ms (a ring; `len` of them valid).
    samples: [u32; RTT_SAMPLES],
    len: u8,
    next: u8,
}

impl NetworkView {
    /// The browser's report: its RTT estimate (ms; `None` = none) and `saveData`.
    pub fn set_reported(&mut self, rtt_ms: Option<u64>, save_data: bool) {
        self.reported_rtt_ms = rtt_ms;
        self.save_data = save_data;
    }

    /// A `poll` request's time from `Open` to its response head, ms.
    pub fn record_request_ms(&mut self, ms: u64) {
        let slot = usize::from(self.next) % RTT_SAMPLES;
        if let Some(s) = self.samples.get_mut(slot) {
            *s = u32::try_from(ms).unwrap_or(u32::MAX);
        }
        self.next = u8::try_from((slot + 1) % RTT_SAMPLES).unwrap_or(0);
        self.len = self
            .len
            .saturating_add(1)
            .min(u8::try_from(RTT_SAMPLES).unwrap_or(u8::MAX));
    }

    /// The smallest of the last [`RTT_SAMPLES`] measured request times, ms.
    pub fn measured_rtt_ms(&self) -> Option<u64> {
        self.samples
            .iter()
            .take(usize::from(self.len))
            .min()
            .map(|&ms| u64::from(ms))
    }

    /// The tier: `saveData` → the maximum; else the measured RTT, else the
    /// reported one (module doc).
    pub fn tier(&self) -> NetworkTier {
        let rtt = self.measured_rtt_ms().or(self.reported_rtt_ms);
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
    fn the_smallest_of_the_last_four() {
        let mut n = NetworkView::default();
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
        n.record_request_ms(u64::MAX);
        assert_eq!(n.measured_rtt_ms(), Some(120));
        for _ in 0..4 {
            n.record_request_ms(u64::MAX);
        }
        assert_eq!(n.measured_rtt_ms(), Some(u64::from(u32::MAX)));
        assert_eq!(n.tier(), NetworkTier::Worst);
    }
}
