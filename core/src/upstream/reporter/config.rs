//! [`ReportConfig`]: the options of one reporter (JS `report(url, task, options)`).

use crate::policy::breaker::BreakerConfig;
use crate::policy::interval::{IntervalConfig, IntervalMode};
use crate::upstream::SendConfig;

/// Default report interval, ms (JS `interval.initialMs` of `report`): one
/// report every 10 s, the figure of the herd benchmark.
pub const DEFAULT_REPORT_INTERVAL_MS: u64 = 10_000;
/// Each interval is stretched or shortened by up to this many per mille
/// (±10 %, ARCHITECTURE.md "Jitter width by purpose": heartbeats ±10 %), so a fleet
/// that an outage or a shared event put in step drifts apart again.
pub const TICK_JITTER_PERMILLE: u64 = 100;
/// Default bound on reports kept while `keep_all` waits for the server
/// (JS `maxQueued`): 100, i.e. about 17 minutes of 10 s reports.
pub const DEFAULT_MAX_QUEUED: usize = 100;

/// What a reporter does while the page is hidden (JS `whenHidden`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HiddenPolicy {
    /// No report while hidden (default, as subscriptions pause): a report in
    /// flight finishes; on `visible` the next one goes out `U[0, 250)` ms
    /// later when one was missed, never before a server's wait.
    #[default]
    Stop,
    /// Report while hidden, at most every `interval_ms` (the interval is
    /// `max(the current interval, interval_ms)`): background tabs that must
    /// keep reporting, at a slower pace.
    Every {
        /// The slowest pace while hidden, ms.
        interval_ms: u64,
    },
    /// Hidden changes nothing.
    Continue,
}

/// The options of one reporter. Every duration is in milliseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportConfig {
    /// The report interval (JS `interval.*`): default `fixed` mode, 10 s,
    /// bounds `[1 s, 5 min]`. Every server hint (`X-Poll-Interval`,
    /// `_polling.next_interval_ms`) is clamped into the bounds. The adaptive
    /// modes treat "the task had nothing to report" as an unchanged answer
    /// (slower) and a body as a changed one (faster).
    pub interval: IntervalConfig,
    /// The first report goes `U[0, 2w]` ms after start, i.e. `w ± w` (JS
    /// `startupJitterMs`): pages that load together do not report together.
    /// `None` (default) = half the initial interval, so a fleet's first
    /// reports spread uniformly over one whole interval. `Some(0)` = at once.
    pub startup_jitter_ms: Option<u64>,
    /// While the page is hidden. Default [`HiddenPolicy::Stop`].
    pub hidden: HiddenPolicy,
    /// `false` (default): a newer report supersedes a report waiting for its
    /// retry (a fresh location replaces a stale one, and a fleet recovering
    /// from an outage sends one request per reporter per interval, the
    /// healthy rate, instead of the healthy rate plus every failed report).
    /// `true` (JS `keepAll`): every report is kept and delivered in order,
    /// one at a time, for data that must all arrive.
    pub keep_all: bool,
    /// With `keep_all`, reports waiting beyond this many drop the oldest
    /// (settled `Dropped`). Default [`DEFAULT_MAX_QUEUED`]; at least 1.
    pub max_queued: usize,
    /// Each report is one send: idempotency header, per-attempt
    /// timeout, `maxRetryAfterMs`, backoff. The backoff floor is raised to
    /// the current interval (a failing reporter never reports faster than a
    /// healthy one). Default: [`SendConfig::default`] with unlimited attempts
    /// (`u32::MAX`): a report ends when delivered, superseded or stopped.
    pub send: SendConfig,
    /// The circuit breaker (JS `breaker.failureThreshold` /
    /// `breaker.cooldownMs`): the connection engine's, with its defaults (5
    /// failed attempts in a row, 30 000 ms cool-down jittered ×[1, 1.5]).
    /// Failures with a server's wait (`Retry-After`, rate-limit reset) do
    /// not count.
    pub breaker: BreakerConfig,
}

impl Default for ReportConfig {
    fn default() -> Self {
        ReportConfig {
            interval: IntervalConfig {
                mode: IntervalMode::Fixed,
                initial_ms: DEFAULT_REPORT_INTERVAL_MS,
                ..IntervalConfig::default()
            },
            startup_jitter_ms: None,
            hidden: HiddenPolicy::Stop,
            keep_all: false,
            max_queued: DEFAULT_MAX_QUEUED,
            send: SendConfig {
                max_attempts: u32::MAX,
                ..SendConfig::default()
            },
            breaker: BreakerConfig::default(),
        }
    }
}
