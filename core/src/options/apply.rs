//! Each option's rule: its check, the rules between it and the options
//! read before it, and where it goes in [`Parsed`](super::Parsed).

use alloc::string::String;
use alloc::vec::Vec;

use super::check::{built, count, flag, ms, number, object, one_of, refuse, text};
use super::{Expected, Given, Reader, Refusal, Slot};
use crate::engine::{
    is_usable_event_id, is_valid_offset, Protocol, TransportKind, RESERVED_EVENTS,
};
use crate::persist::Scope;
use crate::policy::backoff::Strategy;
use crate::policy::interval::IntervalMode;
use crate::sse::SseLimits;

/// The names `persist` takes, by [`Scope`].
const SCOPES: [&str; 2] = ["session", "local"];

impl Reader {
    /// `g`, the value of `slot`, checked and kept; a refusal is recorded.
    pub(super) fn apply(&mut self, slot: Slot, g: &Given) {
        match slot {
            s if s <= Slot::LostAfterMs => self.page(s, g),
            s if s <= Slot::MaxMessageBytes => self.cursor(s, g),
            s if s <= Slot::EndData => self.stream(s, g),
            s => self.timing(s, g),
        }
    }

    /// `parse` … `lostAfterMs`: the page's own options.
    fn page(&mut self, slot: Slot, g: &Given) {
        let (p, r, name, built) = (&mut self.parsed, &mut self.refusal, slot.path(), self.built);
        match slot {
            Slot::Parse => p.json = one_of(r, g, name, &["text", "json"]) == Some(1),
            Slot::WithCredentials => p.with_credentials = flag(r, g, name) == Some(true),
            Slot::Debug => {
                // `true` or the app's function (kept by the adapter).
                p.debug = *g == Given::Function || flag(r, g, name) == Some(true);
                if p.debug {
                    built_or(r, built.debug, name, "debug");
                }
            }
            Slot::CrossTab => {
                p.cross_tab = flag(r, g, name) == Some(true);
                if p.cross_tab {
                    built_or(r, built.cross_tab, name, "cross-tab");
                }
            }
            Slot::Seed => match *g {
                Given::Absent => {}
                Given::Number(n) if n.is_finite() => p.seed = Some(n as u64),
                _ => refuse(r, name, Expected::Is("a finite number")),
            },
            Slot::Persist => {
                let scope = one_of(r, g, name, &SCOPES);
                p.persist = scope.map(|i| ([Scope::Session, Scope::Local][i], None));
            }
            Slot::PersistKey => {
                let key = text(r, g, name);
                if key
                    .as_ref()
                    .is_some_and(|k| k.is_empty() || p.persist.is_none())
                {
                    refuse(r, name, Expected::Is("a non-empty string, with persist"));
                }
                if let Some((scope, k)) = &mut p.persist {
                    if !built.persist {
                        let got = Some(String::from(SCOPES[*scope as usize]));
                        let expected = Expected::NotBuilt("persist");
                        *r = r.take().or(Some(Refusal {
                            name: "persist",
                            expected,
                            got,
                        }));
                    }
                    *k = key;
                }
            }
            Slot::LostAfterMs => set(&mut p.lost_after_ms, ms(r, g, name)),
            // `signal`: the browser's to check.
            _ => {}
        }
    }

    /// `urls` … `maxMessageBytes`: where to connect and from which cursor.
    fn cursor(&mut self, slot: Slot, g: &Given) {
        let (c, r, name) = (&mut self.parsed.config, &mut self.refusal, slot.path());
        let urls = &mut c.urls;
        match slot {
            Slot::Urls => object(r, g, name),
            // Resolved against the page by the adapter first.
            Slot::UrlEventSource => urls.eventsource = text(r, g, "urls"),
            Slot::UrlFetchSse => urls.fetch_sse = text(r, g, "urls"),
            Slot::UrlLongPoll => urls.long_poll = text(r, g, "urls"),
            Slot::UrlPoll => urls.poll = text(r, g, "urls"),
            Slot::Transports => transports(r, &mut c.transports, g),
            Slot::Events => c.events = events(r, g),
            Slot::LastEventId => {
                if let Some(id) = text(r, g, name) {
                    if !is_usable_event_id(&id) {
                        refuse(r, name, Expected::Is("a string without U+0000, CR or LF"));
                    }
                    c.last_event_id = id;
                }
            }
            Slot::LastEventIdParam => {
                if let Some(param) = text(r, g, name) {
                    // `""` would name no parameter: a cursor never sent.
                    if param.is_empty() {
                        refuse(r, name, Expected::Is("a non-empty string"));
                    }
                    c.last_event_id_param = param;
                }
            }
            Slot::MaxMessageBytes => {
                if let Some(n) = number(r, g, name, "a non-negative number of bytes") {
                    let n = n.min(u32::MAX as u64) as usize;
                    c.sse_limits = SseLimits {
                        max_line_bytes: n,
                        max_event_data_bytes: n,
                    };
                }
            }
            _ => self.durable_streams(slot, g),
        }
    }

    /// `protocol`, `offset` (the start cursor) and `live`; after `live` (not
    /// read without Durable Streams, where no offset is taken) the offset's
    /// rule.
    fn durable_streams(&mut self, slot: Slot, g: &Given) {
        let (c, r, name) = (&mut self.parsed.config, &mut self.refusal, slot.path());
        let has = self.built.durable_streams;
        const WITHOUT: Expected = Expected::Is("none without protocol \"durable-streams\"");
        match slot {
            Slot::Protocol => {
                if one_of(r, g, name, &["default", "durable-streams"]) == Some(1) {
                    built(r, g, has, name, "durable-streams");
                    c.protocol = Protocol::DurableStreams;
                }
            }
            Slot::Offset => {
                built(r, g, has, name, "durable-streams");
                if let Some(offset) = text(r, g, name) {
                    if c.protocol != Protocol::DurableStreams {
                        refuse(r, name, WITHOUT);
                    }
                    c.last_event_id = offset;
                }
            }
            _ => {
                let live = one_of(r, g, name, &["long-poll", "sse"]);
                let durable = c.protocol == Protocol::DurableStreams;
                if live.is_some() && !durable {
                    refuse(r, name, WITHOUT);
                }
                #[cfg(feature = "durable-streams")]
                {
                    c.sse_live = live == Some(1);
                }
                let cursor = &c.last_event_id;
                if durable && !cursor.is_empty() && !is_valid_offset(cursor, true) {
                    let expected = Expected::Is("\"-1\", \"now\" or a valid offset");
                    let got = Some(cursor.clone());
                    *r = r.take().or(Some(Refusal {
                        name: "offset",
                        expected,
                        got,
                    }));
                }
            }
        }
    }

    /// `headers` … `end.data`: how each request is made.
    fn stream(&mut self, slot: Slot, g: &Given) {
        let (c, r, name) = (&mut self.parsed.config, &mut self.refusal, slot.path());
        match slot {
            // Checked by the browser (`Headers`) before it comes here.
            Slot::Headers => c.has_custom_headers = *g != Given::Absent,
            Slot::Url => match g {
                Given::Absent => {}
                Given::Function => c.url_function = true,
                _ => refuse(r, name, Expected::Is("a function")),
            },
            Slot::HeartbeatEvent => {
                if let Some(h) = text(r, g, name) {
                    if h == "message"
                        || RESERVED_EVENTS.contains(&h.as_str())
                        || c.events.contains(&h)
                    {
                        let not = "a name not in events, other than \"message\", ";
                        refuse(r, name, Expected::Listed(not, &RESERVED_EVENTS));
                    }
                    c.heartbeat_event = h;
                }
            }
            Slot::PauseWhenHidden => match g {
                Given::Absent | Given::Object => {}
                Given::Bool(on) => c.pause_when_hidden = on.then_some(0),
                _ => refuse(r, name, Expected::Is("a boolean or an object")),
            },
            Slot::PauseAfterMs => {
                if let Some(n) = ms(r, g, name) {
                    c.pause_when_hidden = Some(n);
                }
            }
            _ => self.request(slot, g),
        }
    }

    /// `backoff` … `fallback`: the retry and timing policies.
    fn timing(&mut self, slot: Slot, g: &Given) {
        let (c, r, name) = (&mut self.parsed.config, &mut self.refusal, slot.path());
        let (b, i) = (&mut c.backoff, &mut c.interval);
        match slot {
            Slot::BackoffStrategy => {
                const NAMES: [&str; 4] = ["full-jitter", "equal-jitter", "decorrelated", "none"];
                set(
                    &mut b.strategy,
                    one_of(r, g, name, &NAMES).map(|s| STRATEGIES[s]),
                );
            }
            Slot::BackoffBaseMs => set(&mut b.base_ms, ms(r, g, name)),
            Slot::BackoffMaxMs => set(&mut b.max_ms, ms(r, g, name)),
            Slot::BackoffFloorMs => set(&mut b.floor_ms, ms(r, g, name)),
            Slot::BackoffHealthyAfterMs => set(&mut b.healthy_after_ms, ms(r, g, name)),
            Slot::BackoffMaxAttempts => set(&mut b.max_attempts, count(r, g, name)),
            Slot::MaxRetryAfterMs => set(&mut c.max_retry_after_ms, ms(r, g, name)),
            Slot::BreakerFailureThreshold => {
                set(&mut c.breaker.failure_threshold, limit(r, g, name))
            }
            Slot::BreakerCooldownMs => set(&mut c.breaker.cooldown_ms, ms(r, g, name)),
            Slot::IntervalMode => {
                const NAMES: [&str; 4] = ["exponential", "aimd", "rate-window", "fixed"];
                set(&mut i.mode, one_of(r, g, name, &NAMES).map(|m| MODES[m]));
            }
            Slot::IntervalInitialMs => set(&mut i.initial_ms, ms(r, g, name)),
            Slot::IntervalMinMs => set(&mut i.min_ms, ms(r, g, name)),
            Slot::IntervalMaxMs => set(&mut i.max_ms, ms(r, g, name)),
            Slot::WatchdogIdleTimeoutMs => set(&mut c.watchdog.idle_timeout_ms, ms(r, g, name)),
            Slot::WatchdogFirstEventTimeoutMs => {
                set(&mut c.watchdog.first_event_timeout_ms, ms(r, g, name))
            }
            Slot::LongPollTimeoutMs => set(&mut c.long_poll.timeout_ms, ms(r, g, name)),
            Slot::FallbackAfterFailures => set(&mut c.fallback.after_failures, limit(r, g, name)),
            Slot::FallbackRememberMs => set(&mut c.fallback.remember_ms, ms(r, g, name)),
            // The groups: `backoff`, `breaker`, `interval`, `watchdog`, …
            _ => object(r, g, name),
        }
    }

    /// `method`, `body`, `resume` and `end` (`{ event?, data? }`): a stream
    /// started by the app's own request (`engine::start`), made at `end.data`.
    fn request(&mut self, slot: Slot, g: &Given) {
        let (q, r, name) = (&mut self.request, &mut self.refusal, slot.path());
        // `end.event` and `end.data` are read only from an `end` let through.
        built(
            r,
            g,
            self.built.post_streams || slot > Slot::End,
            name,
            "post-streams",
        );
        match slot {
            Slot::Method => q.method = text(r, g, name),
            Slot::Body => q.body = *g != Given::Absent,
            Slot::Resume => match g {
                Given::Function => q.resume = Some(true),
                g => q.resume = one_of(r, g, name, &["replay"]).map(|_| false),
            },
            Slot::End => object(r, g, name),
            Slot::EndEvent => q.end_event = text(r, g, name),
            _ => {
                let data = text(r, g, name);
                #[cfg(feature = "post-streams")]
                self.start_rules(data);
                #[cfg(not(feature = "post-streams"))]
                drop(data);
            }
        }
    }

    /// The start rules of `method`, `body`, `resume` and `end` (`data`: `end.data`).
    #[cfg(feature = "post-streams")]
    fn start_rules(&mut self, data: Option<String>) {
        use crate::engine::start::{EndRule, RequestStart, Resume, StartRules};
        let r = core::mem::take(&mut self.request);
        let asked = r.method.is_some() || r.body || r.resume.is_some();
        let request = asked.then(|| RequestStart {
            method: r.method.unwrap_or_else(|| String::from("GET")),
            body: r.body,
            resume: [Resume::Replay, Resume::Request][usize::from(r.resume == Some(true))],
        });
        let end = EndRule {
            event: r.end_event,
            data,
        };
        if request.is_some() || end.event.is_some() || end.data.is_some() {
            self.parsed.config.start = Some(alloc::sync::Arc::new(StartRules { request, end }));
        }
    }
}

/// `backoff.strategy`'s values, in the order of its names.
const STRATEGIES: [Strategy; 4] = [
    Strategy::FullJitter,
    Strategy::EqualJitter,
    Strategy::Decorrelated,
    Strategy::None,
];

/// `interval.mode`'s values, in the order of its names.
const MODES: [IntervalMode; 4] = [
    IntervalMode::Exponential,
    IntervalMode::Aimd,
    IntervalMode::RateWindow,
    IntervalMode::Fixed,
];

/// A count whose `Infinity` is no limit at all (`u32::MAX`).
fn limit(r: &mut Option<Refusal>, g: &Given, name: &'static str) -> Option<u32> {
    count(r, g, name).map(|n| n.unwrap_or(u32::MAX))
}

/// Refused as missing from this build (feature `feature`) unless `has`.
fn built_or(r: &mut Option<Refusal>, has: bool, name: &'static str, feature: &'static str) {
    if !has {
        refuse(r, name, Expected::NotBuilt(feature));
    }
}

/// `*field` = `value` when given.
fn set<T>(field: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *field = v;
    }
}

/// `transports`: absent (the default), or a non-empty array of transport
/// names.
fn transports(r: &mut Option<Refusal>, into: &mut Vec<TransportKind>, g: &Given) {
    if *g == Given::Absent {
        return;
    }
    let mut kinds = Vec::new();
    if let Given::List(names) = g {
        for n in names {
            match n.as_deref().and_then(TransportKind::from_name) {
                Some(k) => kinds.push(k),
                None => {
                    kinds.clear();
                    break;
                }
            }
        }
    }
    if kinds.is_empty() {
        const NAMES: [&str; 4] = [
            TransportKind::ALL[0].as_str(),
            TransportKind::ALL[1].as_str(),
            TransportKind::ALL[2].as_str(),
            TransportKind::ALL[3].as_str(),
        ];
        return refuse(
            r,
            "transports",
            Expected::Listed("a non-empty array of ", &NAMES),
        );
    }
    *into = kinds;
}

/// `events`: absent, or an array of non-empty strings that are not the
/// subscription's own event types. `message` is always delivered, so it is
/// dropped here (listed twice, a native `EventSource` would deliver each
/// message twice); so are repeats.
fn events(r: &mut Option<Refusal>, g: &Given) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let bad = Expected::Listed("an array of non-empty names other than ", &RESERVED_EVENTS);
    let names = match g {
        Given::Absent => return out,
        Given::List(names) => names,
        _ => {
            refuse(r, "events", bad);
            return out;
        }
    };
    for name in names {
        let name = name.as_deref().unwrap_or_default();
        if name.is_empty() || RESERVED_EVENTS.contains(&name) {
            refuse(r, "events", bad);
            break;
        }
        if name != "message" && !out.iter().any(|n| n == name) {
            out.push(String::from(name));
        }
    }
    out
}
