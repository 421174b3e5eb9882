//! Each option's rule: its check, the rules between it and the options
//! read before it, and where it goes in [`Parsed`](super::Parsed).

use alloc::string::String;
use alloc::vec::Vec;

use super::check::{built, count, flag, ms, number, object, one_of, refuse, text};
use super::{listed, not_built, Given, Reader, Refusal, Slot};
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
    /// `g`, the value of `slot`, checked and kept.
    pub(super) fn apply(&mut self, slot: Slot, g: Given) -> Result<(), Refusal> {
        match slot {
            s if s <= Slot::LostAfterMs => self.page(s, g),
            s if s <= Slot::MaxMessageBytes => self.cursor(s, g),
            s if s <= Slot::EndData => self.stream(s, g),
            s => self.timing(s, &g),
        }
    }

    /// `parse` … `lostAfterMs`: the page's own options.
    fn page(&mut self, slot: Slot, g: Given) -> Result<(), Refusal> {
        let (p, name, built) = (&mut self.parsed, slot.path(), self.built);
        match slot {
            Slot::Parse => p.json = one_of(&g, name, &["text", "json"])? == Some(1),
            Slot::WithCredentials => p.with_credentials = flag(&g, name)? == Some(true),
            Slot::Debug => {
                // `true` or the app's function (kept by the adapter).
                p.debug = g == Given::Function || flag(&g, name)? == Some(true);
                if p.debug && !built.debug {
                    return refuse(name, not_built("debug"));
                }
            }
            Slot::CrossTab => {
                p.cross_tab = flag(&g, name)? == Some(true);
                if p.cross_tab && !built.cross_tab {
                    return refuse(name, not_built("cross-tab"));
                }
            }
            Slot::Seed => match g {
                Given::Absent => {}
                Given::Number(n) if n.is_finite() => p.seed = Some(n as u64),
                _ => return refuse(name, "a finite number"),
            },
            Slot::Persist => {
                let scope = one_of(&g, name, &SCOPES)?;
                p.persist = scope.map(|i| ([Scope::Session, Scope::Local][i], None));
            }
            Slot::PersistKey => {
                let key = text(g, name)?;
                if key
                    .as_ref()
                    .is_some_and(|k| k.is_empty() || p.persist.is_none())
                {
                    return refuse(name, "a non-empty string, with persist");
                }
                if let Some((scope, k)) = &mut p.persist {
                    if !built.persist {
                        let got = Some(String::from(SCOPES[*scope as usize]));
                        let expected = not_built("persist");
                        return Err(Refusal {
                            name: "persist",
                            expected,
                            got,
                        });
                    }
                    *k = key;
                }
            }
            Slot::LostAfterMs => set(&mut p.lost_after_ms, ms(&g, name)?),
            // `signal`: the browser's to check.
            _ => {}
        }
        Ok(())
    }

    /// `urls` … `maxMessageBytes`: where to connect and from which cursor.
    fn cursor(&mut self, slot: Slot, g: Given) -> Result<(), Refusal> {
        let (c, name) = (&mut self.parsed.config, slot.path());
        let urls = &mut c.urls;
        match slot {
            Slot::Urls => object(&g, name)?,
            // Resolved against the page by the adapter first.
            Slot::UrlEventSource => urls.eventsource = text(g, "urls")?,
            Slot::UrlFetchSse => urls.fetch_sse = text(g, "urls")?,
            Slot::UrlLongPoll => urls.long_poll = text(g, "urls")?,
            Slot::UrlPoll => urls.poll = text(g, "urls")?,
            Slot::Transports => transports(&mut c.transports, g)?,
            Slot::Events => c.events = events(g)?,
            Slot::LastEventId => {
                if let Some(id) = text(g, name)? {
                    if !is_usable_event_id(&id) {
                        return refuse(name, "a string without U+0000, CR or LF");
                    }
                    c.last_event_id = id;
                }
            }
            Slot::LastEventIdParam => {
                if let Some(param) = text(g, name)? {
                    // `""` would name no parameter: a cursor never sent.
                    if param.is_empty() {
                        return refuse(name, "a non-empty string");
                    }
                    c.last_event_id_param = param;
                }
            }
            Slot::MaxMessageBytes => {
                if let Some(n) = number(&g, name, "a non-negative number of bytes")? {
                    let n = n.min(u32::MAX as u64) as usize;
                    c.sse_limits = SseLimits {
                        max_line_bytes: n,
                        max_event_data_bytes: n,
                    };
                }
            }
            _ => return self.durable_streams(slot, g),
        }
        Ok(())
    }

    /// `protocol`, `offset` (the start cursor) and `live`; after `live` (the
    /// last, or `offset` where `live` is not read) the offset's rule.
    fn durable_streams(&mut self, slot: Slot, g: Given) -> Result<(), Refusal> {
        let (c, name, has) = (
            &mut self.parsed.config,
            slot.path(),
            self.built.durable_streams,
        );
        const WITHOUT: &str = "none without protocol \"durable-streams\"";
        match slot {
            Slot::Protocol => {
                let durable = one_of(&g, name, &["default", "durable-streams"])? == Some(1);
                if durable {
                    built(&g, has, name, "durable-streams")?;
                    c.protocol = Protocol::DurableStreams;
                }
            }
            Slot::Offset => {
                built(&g, has, name, "durable-streams")?;
                if let Some(offset) = text(g, name)? {
                    if c.protocol != Protocol::DurableStreams {
                        return refuse(name, WITHOUT);
                    }
                    c.last_event_id = offset;
                }
            }
            _ => {
                let live = one_of(&g, name, &["long-poll", "sse"])?;
                if live.is_some() && c.protocol != Protocol::DurableStreams {
                    return refuse(name, WITHOUT);
                }
                #[cfg(feature = "durable-streams")]
                {
                    c.sse_live = live == Some(1);
                }
                let cursor = &c.last_event_id;
                let durable = c.protocol == Protocol::DurableStreams;
                if durable && !cursor.is_empty() && !is_valid_offset(cursor, true) {
                    let expected = String::from("\"-1\", \"now\" or a valid offset");
                    let got = Some(cursor.clone());
                    return Err(Refusal {
                        name: "offset",
                        expected,
                        got,
                    });
                }
            }
        }
        Ok(())
    }

    /// `headers` … `end.data`: how each request is made.
    fn stream(&mut self, slot: Slot, g: Given) -> Result<(), Refusal> {
        let (c, name) = (&mut self.parsed.config, slot.path());
        match slot {
            // Checked by the browser (`Headers`) before it comes here.
            Slot::Headers => c.has_custom_headers = g != Given::Absent,
            Slot::Url => match g {
                Given::Absent => {}
                Given::Function => c.url_function = true,
                _ => return refuse(name, "a function"),
            },
            Slot::HeartbeatEvent => {
                if let Some(h) = text(g, name)? {
                    if h == "message"
                        || RESERVED_EVENTS.contains(&h.as_str())
                        || c.events.contains(&h)
                    {
                        let not = "a name not in events, other than \"message\", ";
                        return refuse(name, listed(not, &RESERVED_EVENTS));
                    }
                    c.heartbeat_event = h;
                }
            }
            Slot::PauseWhenHidden => match g {
                Given::Absent | Given::Object => {}
                Given::Bool(on) => c.pause_when_hidden = on.then_some(0),
                _ => return refuse(name, "a boolean or an object"),
            },
            Slot::PauseAfterMs => {
                if let Some(n) = ms(&g, name)? {
                    c.pause_when_hidden = Some(n);
                }
            }
            _ => return self.request(slot, g),
        }
        Ok(())
    }

    /// `backoff` … `fallback`: the retry and timing policies.
    fn timing(&mut self, slot: Slot, g: &Given) -> Result<(), Refusal> {
        let (c, name) = (&mut self.parsed.config, slot.path());
        let (b, i) = (&mut c.backoff, &mut c.interval);
        match slot {
            Slot::BackoffStrategy => {
                let names = ["full-jitter", "equal-jitter", "decorrelated", "none"];
                set(
                    &mut b.strategy,
                    one_of(g, name, &names)?.map(|s| STRATEGIES[s]),
                );
            }
            Slot::BackoffBaseMs => set(&mut b.base_ms, ms(g, name)?),
            Slot::BackoffMaxMs => set(&mut b.max_ms, ms(g, name)?),
            Slot::BackoffFloorMs => set(&mut b.floor_ms, ms(g, name)?),
            Slot::BackoffHealthyAfterMs => set(&mut b.healthy_after_ms, ms(g, name)?),
            Slot::BackoffMaxAttempts => set(&mut b.max_attempts, count(g, name)?),
            Slot::MaxRetryAfterMs => set(&mut c.max_retry_after_ms, ms(g, name)?),
            Slot::BreakerFailureThreshold => set(&mut c.breaker.failure_threshold, limit(g, name)?),
            Slot::BreakerCooldownMs => set(&mut c.breaker.cooldown_ms, ms(g, name)?),
            Slot::IntervalMode => {
                let names = ["exponential", "aimd", "rate-window", "fixed"];
                set(&mut i.mode, one_of(g, name, &names)?.map(|m| MODES[m]));
            }
            Slot::IntervalInitialMs => set(&mut i.initial_ms, ms(g, name)?),
            Slot::IntervalMinMs => set(&mut i.min_ms, ms(g, name)?),
            Slot::IntervalMaxMs => set(&mut i.max_ms, ms(g, name)?),
            Slot::WatchdogIdleTimeoutMs => set(&mut c.watchdog.idle_timeout_ms, ms(g, name)?),
            Slot::WatchdogFirstEventTimeoutMs => {
                set(&mut c.watchdog.first_event_timeout_ms, ms(g, name)?)
            }
            Slot::LongPollTimeoutMs => set(&mut c.long_poll.timeout_ms, ms(g, name)?),
            Slot::FallbackAfterFailures => set(&mut c.fallback.after_failures, limit(g, name)?),
            Slot::FallbackRememberMs => set(&mut c.fallback.remember_ms, ms(g, name)?),
            // The groups: `backoff`, `breaker`, `interval`, `watchdog`, …
            _ => object(g, name)?,
        }
        Ok(())
    }

    /// `method`, `body`, `resume` and `end` (`{ event?, data? }`): a stream
    /// started by the app's own request (`engine::start`), made at `end.data`.
    fn request(&mut self, slot: Slot, g: Given) -> Result<(), Refusal> {
        let (r, name) = (&mut self.request, slot.path());
        built(
            &g,
            self.built.post_streams || slot > Slot::End,
            name,
            "post-streams",
        )?;
        match slot {
            Slot::Method => r.method = text(g, name)?,
            Slot::Body => r.body = g != Given::Absent,
            Slot::Resume => match g {
                Given::Function => r.resume = Some(true),
                g => r.resume = one_of(&g, name, &["replay"])?.map(|_| false),
            },
            Slot::End => object(&g, name)?,
            Slot::EndEvent => r.end_event = text(g, name)?,
            _ => {
                let data = text(g, name)?;
                #[cfg(feature = "post-streams")]
                self.start_rules(data);
                #[cfg(not(feature = "post-streams"))]
                drop(data);
            }
        }
        Ok(())
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
fn limit(g: &Given, name: &'static str) -> Result<Option<u32>, Refusal> {
    Ok(count(g, name)?.map(|n| n.unwrap_or(u32::MAX)))
}

/// `*field` = `value` when given.
fn set<T>(field: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *field = v;
    }
}

/// `transports`: absent (the default), or a non-empty array of transport
/// names.
fn transports(into: &mut Vec<TransportKind>, g: Given) -> Result<(), Refusal> {
    if g == Given::Absent {
        return Ok(());
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
        return refuse("transports", listed("a non-empty array of ", &NAMES));
    }
    *into = kinds;
    Ok(())
}

/// `events`: absent, or an array of non-empty strings that are not the
/// subscription's own event types. `message` is always delivered, so it is
/// dropped here (listed twice, a native `EventSource` would deliver each
/// message twice); so are repeats.
fn events(g: Given) -> Result<Vec<String>, Refusal> {
    let mut out: Vec<String> = Vec::new();
    let expected = "an array of non-empty names other than ";
    let names = match g {
        Given::Absent => return Ok(out),
        Given::List(names) => names,
        _ => return refuse("events", listed(expected, &RESERVED_EVENTS)),
    };
    for name in names {
        let name = name.unwrap_or_default();
        if name.is_empty() || RESERVED_EVENTS.contains(&name.as_str()) {
            return refuse("events", listed(expected, &RESERVED_EVENTS));
        }
        if name != "message" && !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}
