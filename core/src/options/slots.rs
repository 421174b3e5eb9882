//! The options `subscribe()` reads, in the order it reads them: the first
//! refusal in this order is the one reported, and nothing after it is read.

/// One option of `subscribe()` (its place in [`TABLE`]): the adapter reads
/// the value of [`key`](Slot::key) from the options object, or, for a
/// grouped option ([`in_group`](Slot::in_group)), from the value of the
/// last top-level option read (its group: `backoff`, `urls`, …).
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Slot {
    Parse,
    WithCredentials,
    Debug,
    CrossTab,
    Seed,
    Signal,
    Persist,
    PersistKey,
    LostAfterMs,
    Urls,
    UrlEventSource,
    UrlFetchSse,
    UrlLongPoll,
    UrlPoll,
    Transports,
    Events,
    LastEventId,
    Protocol,
    Offset,
    Live,
    LastEventIdParam,
    MaxMessageBytes,
    Headers,
    Url,
    HeartbeatEvent,
    PauseWhenHidden,
    PauseAfterMs,
    Method,
    Body,
    Resume,
    End,
    EndEvent,
    EndData,
    Backoff,
    BackoffStrategy,
    BackoffBaseMs,
    BackoffMaxMs,
    BackoffFloorMs,
    BackoffHealthyAfterMs,
    BackoffMaxAttempts,
    MaxRetryAfterMs,
    Breaker,
    BreakerFailureThreshold,
    BreakerCooldownMs,
    Interval,
    IntervalMode,
    IntervalInitialMs,
    IntervalMinMs,
    IntervalMaxMs,
    Watchdog,
    WatchdogIdleTimeoutMs,
    WatchdogFirstEventTimeoutMs,
    LongPoll,
    LongPollTimeoutMs,
    Fallback,
    FallbackAfterFailures,
    FallbackRememberMs,
}

/// Every [`Slot`] in reading order, with its name as a refusal says it
/// (`group.key`).
pub const TABLE: [(Slot, &str); 57] = [
    (Slot::Parse, "parse"),
    (Slot::WithCredentials, "withCredentials"),
    (Slot::Debug, "debug"),
    (Slot::CrossTab, "crossTab"),
    (Slot::Seed, "seed"),
    (Slot::Signal, "signal"),
    (Slot::Persist, "persist"),
    (Slot::PersistKey, "persistKey"),
    (Slot::LostAfterMs, "lostAfterMs"),
    (Slot::Urls, "urls"),
    (Slot::UrlEventSource, "urls.eventsource"),
    (Slot::UrlFetchSse, "urls.fetch-sse"),
    (Slot::UrlLongPoll, "urls.long-poll"),
    (Slot::UrlPoll, "urls.poll"),
    (Slot::Transports, "transports"),
    (Slot::Events, "events"),
    (Slot::LastEventId, "lastEventId"),
    (Slot::Protocol, "protocol"),
    (Slot::Offset, "offset"),
    (Slot::Live, "live"),
    (Slot::LastEventIdParam, "lastEventIdParam"),
    (Slot::MaxMessageBytes, "maxMessageBytes"),
    (Slot::Headers, "headers"),
    (Slot::Url, "url"),
    (Slot::HeartbeatEvent, "heartbeatEvent"),
    (Slot::PauseWhenHidden, "pauseWhenHidden"),
    (Slot::PauseAfterMs, "pauseWhenHidden.afterMs"),
    (Slot::Method, "method"),
    (Slot::Body, "body"),
    (Slot::Resume, "resume"),
    (Slot::End, "end"),
    (Slot::EndEvent, "end.event"),
    (Slot::EndData, "end.data"),
    (Slot::Backoff, "backoff"),
    (Slot::BackoffStrategy, "backoff.strategy"),
    (Slot::BackoffBaseMs, "backoff.baseMs"),
    (Slot::BackoffMaxMs, "backoff.maxMs"),
    (Slot::BackoffFloorMs, "backoff.floorMs"),
    (Slot::BackoffHealthyAfterMs, "backoff.healthyAfterMs"),
    (Slot::BackoffMaxAttempts, "backoff.maxAttempts"),
    (Slot::MaxRetryAfterMs, "maxRetryAfterMs"),
    (Slot::Breaker, "breaker"),
    (Slot::BreakerFailureThreshold, "breaker.failureThreshold"),
    (Slot::BreakerCooldownMs, "breaker.cooldownMs"),
    (Slot::Interval, "interval"),
    (Slot::IntervalMode, "interval.mode"),
    (Slot::IntervalInitialMs, "interval.initialMs"),
    (Slot::IntervalMinMs, "interval.minMs"),
    (Slot::IntervalMaxMs, "interval.maxMs"),
    (Slot::Watchdog, "watchdog"),
    (Slot::WatchdogIdleTimeoutMs, "watchdog.idleTimeoutMs"),
    (
        Slot::WatchdogFirstEventTimeoutMs,
        "watchdog.firstEventTimeoutMs",
    ),
    (Slot::LongPoll, "longPoll"),
    (Slot::LongPollTimeoutMs, "longPoll.timeoutMs"),
    (Slot::Fallback, "fallback"),
    (Slot::FallbackAfterFailures, "fallback.afterFailures"),
    (Slot::FallbackRememberMs, "fallback.rememberMs"),
];

impl Slot {
    /// The slot read `i`-th; `None` past the last.
    pub fn at(i: usize) -> Option<Slot> {
        TABLE.get(i).map(|&(s, _)| s)
    }

    /// Its name in a refusal: `"backoff.baseMs"`.
    pub fn path(self) -> &'static str {
        TABLE[self as usize].1
    }

    /// The property the adapter reads: the path after its group (`"baseMs"`).
    pub fn key(self) -> &'static str {
        let p = self.path();
        match p.as_bytes().iter().position(|&b| b == b'.') {
            Some(dot) => &p[dot + 1..],
            None => p,
        }
    }

    /// Read from the last top-level option's value (its group), not from
    /// the options object.
    pub fn in_group(self) -> bool {
        self.key().len() != self.path().len()
    }

    /// An array of names (`transports`, `events`): the adapter gives its
    /// elements ([`Given::List`](super::Given::List)).
    pub fn wants_list(self) -> bool {
        matches!(self, Slot::Transports | Slot::Events)
    }
}
