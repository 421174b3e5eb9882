//! Transport selection, fallback and failback (ARCHITECTURE.md "Transports",
//! "Selection").
//!
//! - Start with the first transport of the preference list that the
//!   capabilities and options allow (`eventsource` needs `EventSource` and no
//!   custom headers; `fetch-sse` needs streaming bodies and `AbortController`;
//!   `long-poll` needs `AbortController`; `poll` needs nothing).
//! - Evidence against the current transport is an open that fails (a network
//!   error or timeout before the response head or `open`) or a stream that
//!   opens and delivers no byte before the first-event deadline (a buffering
//!   proxy, BC-15). After `fallback.after_failures` consecutive pieces of
//!   evidence on a streaming transport, EVERY streaming transport is skipped
//!   (the next allowed of `long-poll`, `poll`); after as many on `long-poll`,
//!   `poll` is used. HTTP statuses are never evidence: the server answered.
//!   One exception: `buffered-stream` evidence on `eventsource` skips only
//!   `eventsource` (the next allowed transport, `fetch-sse` by default): a
//!   native stream cannot see comments, so a healthy server that only sends
//!   comments looks buffered to it; `fetch-sse` sees them and stays, while a
//!   real buffering proxy holds `fetch-sse` too and moves it on to `long-poll`.
//! - A transport that has delivered in this session ("proven") does not
//!   collect `open-failed` evidence: a server restart that refuses a few
//!   connections must not move a whole fleet off its streams for ten minutes
//!   (the refused opens are the server's outage, not the path's). Silence
//!   after open (`buffered-stream`) still counts: a proxy can appear mid-session.
//! - A downgrade is remembered for `fallback.remember_ms` (wall clock, so the
//!   adapter can persist it); then the next attempt probes the preferred
//!   transport (`failback-probe`). The probe's first byte or event restores it;
//!   any failure of the probe reverts to the downgraded transport and
//!   remembers again.

use super::action::Reason;
use super::config::{Capabilities, Config, CrossOrigin, TransportKind};
use super::request::cursor_in_query;
use super::state::wall_after;
use crate::time::{Now, WallMs};

/// How far the selector has downgraded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    /// The preference list as allowed.
    Preferred,
    /// `eventsource` skipped (it looked buffered).
    NoNative,
    /// Streaming transports skipped.
    NoStreaming,
    /// Only `poll`.
    PollOnly,
}

/// A transport switch to announce (`TransportChanged`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Change {
    pub transport: TransportKind,
    pub previous: TransportKind,
    pub reason: Reason,
}

/// The selector's state: a few bytes, no heap.
#[derive(Clone, Debug)]
pub(crate) struct Selector {
    /// Allowed transports in preference order (`len` valid entries).
    allowed: [TransportKind; 4],
    len: u8,
    level: Level,
    current: TransportKind,
    /// Consecutive evidence against `current`.
    strikes: u32,
    /// End of the remembered downgrade (wall clock).
    until: WallMs,
    /// The current attempt(s) probe the preferred transport.
    probing: bool,
    /// Bit per transport (`TransportKind as u8`): delivered in this session.
    proven: u8,
    after_failures: u32,
    remember_ms: u64,
}

impl Selector {
    /// The selector for `config` and `caps` at `now`, and the reason to announce
    /// the first transport with (`start`, or `capability` when the first
    /// preference is not allowed). `None` when no preferred transport is allowed.
    pub fn new(config: &Config, caps: Capabilities, now: Now) -> Option<(Selector, Reason)> {
        let mut allowed = [TransportKind::Poll; 4];
        let mut len = 0u8;
        for &t in &config.transports {
            let by_options = !(t == TransportKind::EventSource && config.has_custom_headers);
            #[cfg(feature = "post-streams")]
            let by_options = by_options && super::start::can_send(config, t);
            if caps.allow(t) && by_options && usize::from(len) < allowed.len() {
                allowed[usize::from(len)] = t;
                len += 1;
            }
        }
        if len == 0 {
            return None;
        }
        let reason = if config.transports.first() == Some(&allowed[0]) {
            Reason::Start
        } else {
            Reason::Capability
        };
        let mut s = Selector {
            allowed,
            len,
            level: Level::Preferred,
            current: allowed[0],
            strikes: 0,
            until: WallMs(i64::MIN),
            probing: false,
            proven: 0,
            after_failures: config.fallback.after_failures,
            remember_ms: config.fallback.remember_ms,
        };
        if let Some((transport, until)) = config.downgrade {
            let level = match transport {
                TransportKind::FetchSse => Some(Level::NoNative),
                TransportKind::LongPoll => Some(Level::NoStreaming),
                TransportKind::Poll => Some(Level::PollOnly),
                _ => None,
            };
            if let Some(level) = level {
                if until > now.wall {
                    if let Some(target) = s.target(level).filter(|&t| t != s.current) {
                        s.level = level;
                        s.current = target;
                        s.until = until;
                    }
                }
            }
        }
        Some((s, reason))
    }

    /// A selector before start, or after a start that found no usable
    /// transport: none chosen ([`Selector::chosen`] is `None`), never
    /// downgrades.
    pub fn placeholder() -> Selector {
        Selector {
            allowed: [TransportKind::Poll; 4],
            len: 0,
            level: Level::Preferred,
            current: TransportKind::Poll,
            strikes: 0,
            until: WallMs(i64::MIN),
            probing: false,
            proven: 0,
            after_failures: 0,
            remember_ms: 0,
        }
    }

    /// The transport in use or about to be tried; `None` when none was
    /// chosen (the placeholder).
    pub fn chosen(&self) -> Option<TransportKind> {
        (self.len > 0).then_some(self.current)
    }

    fn allowed(&self) -> &[TransportKind] {
        &self.allowed[..usize::from(self.len)]
    }

    /// The transport a level uses.
    /// One loop for the four levels (three `find`s were a fold each).
    fn target(&self, level: Level) -> Option<TransportKind> {
        for &t in self.allowed() {
            let fits = match level {
                Level::Preferred => true,
                Level::NoNative => t != TransportKind::EventSource,
                Level::NoStreaming => !t.is_streaming(),
                Level::PollOnly => t == TransportKind::Poll,
            };
            if fits {
                return Some(t);
            }
        }
        None
    }

    /// The transport of the next attempt.
    pub fn current(&self) -> TransportKind {
        self.current
    }

    /// Whether attempts now probe the preferred transport.
    pub fn probing(&self) -> bool {
        self.probing
    }

    /// The remembered downgrade: the transport downgraded to and until when.
    pub fn downgrade(&self) -> Option<(TransportKind, WallMs)> {
        match self.level {
            Level::Preferred => None,
            level => self.target(level).map(|t| (t, self.until)),
        }
    }

    /// Called before every attempt: once the remembered downgrade has expired,
    /// switch to the preferred transport as a probe.
    pub fn before_attempt(&mut self, now: Now) -> Option<Change> {
        if self.level == Level::Preferred || self.probing || now.wall < self.until {
            return None;
        }
        let preferred = self.target(Level::Preferred)?;
        if preferred == self.current {
            return None;
        }
        self.probing = true;
        let previous = self.current;
        self.current = preferred;
        Some(Change {
            transport: preferred,
            previous,
            reason: Reason::FailbackProbe,
        })
    }

    /// `transport` delivered (first byte or event of a stream, or a successful
    /// response): clear the evidence; a successful probe ends the downgrade.
    /// `answered`: the server answered (marks the transport proven).
    pub fn on_success(&mut self, transport: TransportKind, answered: bool) {
        if answered {
            self.proven |= bit(transport);
        }
        if transport != self.current {
            return;
        }
        self.strikes = 0;
        if self.probing {
            self.probing = false;
            self.level = Level::Preferred;
            self.until = WallMs(i64::MIN);
        }
    }

    /// An attempt on `transport` failed; `evidence` is `open-failed` or
    /// `buffered-stream` when the failure says something about the transport.
    /// Returns the switch to announce, if any.
    pub fn on_failure(
        &mut self,
        now: Now,
        transport: TransportKind,
        evidence: Option<Reason>,
    ) -> Option<Change> {
        if transport != self.current {
            return None;
        }
        if self.probing {
            // The probe failed: back to the downgraded transport, remember again.
            self.probing = false;
            let target = self.target(self.level)?;
            self.current = target;
            self.until = wall_after(now.wall, self.remember_ms);
            return Some(Change {
                transport: target,
                previous: transport,
                reason: evidence.unwrap_or(Reason::OpenFailed),
            });
        }
        let reason = evidence?;
        if self.after_failures == 0
            || (reason == Reason::OpenFailed && self.proven & bit(transport) != 0)
        {
            return None;
        }
        self.strikes = self.strikes.saturating_add(1);
        if self.strikes < self.after_failures {
            return None;
        }
        let next = match (self.level, transport.is_streaming()) {
            (Level::Preferred, true)
                if transport == TransportKind::EventSource && reason == Reason::BufferedStream =>
            {
                Level::NoNative
            }
            (_, true) => Level::NoStreaming,
            (Level::Preferred | Level::NoNative | Level::NoStreaming, false)
                if transport == TransportKind::LongPoll =>
            {
                Level::PollOnly
            }
            _ => return None,
        };
        let target = self.target(next).filter(|&t| t != transport)?;
        self.level = next;
        self.current = target;
        self.strikes = 0;
        self.until = wall_after(now.wall, self.remember_ms);
        Some(Change {
            transport: target,
            previous: transport,
            reason,
        })
    }
}

impl Selector {
    /// The transport the streams' downgrade goes to (`long-poll` or `poll`),
    /// if any is allowed.
    pub fn requests_target(&self) -> Option<TransportKind> {
        self.target(Level::NoStreaming)
    }

    /// The news probe found the current stream held back: skip every
    /// streaming transport now, remembered for `fallback.rememberMs`; a
    /// failback probe ends. `None` when no request transport is allowed.
    pub fn held_back(&mut self, now: Now) -> Option<Change> {
        let target = self.target(Level::NoStreaming)?;
        let previous = self.current;
        self.probing = false;
        self.level = Level::NoStreaming;
        self.current = target;
        self.strikes = 0;
        self.until = wall_after(now.wall, self.remember_ms);
        Some(Change {
            transport: target,
            previous,
            reason: Reason::BufferedStream,
        })
    }

    /// Whether `f` holds for every allowed transport.
    pub fn all_allowed(&self, f: impl Fn(TransportKind) -> bool) -> bool {
        self.allowed().iter().all(|&t| f(t))
    }

    /// Whether no transport but the current one is allowed (by options and
    /// capability): then no evidence can move the connection anywhere.
    pub fn alone(&self) -> bool {
        self.allowed().iter().all(|&t| t == self.current)
    }

    /// The cursor must travel in the `Last-Event-ID` header (`reason`: the
    /// server ignored it in the query, `resume-ignored`, or a resume is about
    /// to start on a transport that cannot send the header,
    /// `resume-by-header`): keep only the allowed transports that send it
    /// (`request::cursor_in_query` is false for them, given which endpoints
    /// are `cross` origin), so no failback probe or fallback goes back to one
    /// that cannot, and, when the current transport is not among them,
    /// switch to the one the current level picks (the first, if the level
    /// picks none). The downgrade level and its memory stay (a buffering
    /// proxy is still there); a failback probe ends. `None` when the current
    /// transport stays: it sends the header, or no allowed one does (then
    /// nothing changes).
    pub fn resume_by_header(&mut self, cross: CrossOrigin, reason: Reason) -> Option<Change> {
        let sends_header = |t: TransportKind| !cursor_in_query(t, cross.contains(t));
        let mut kept = [TransportKind::Poll; 4];
        let mut len = 0u8;
        for &t in self.allowed() {
            if sends_header(t) {
                kept[usize::from(len)] = t;
                len += 1;
            }
        }
        if len == 0 {
            return None;
        }
        self.allowed = kept;
        self.len = len;
        if sends_header(self.current) {
            return None;
        }
        let previous = self.current;
        self.probing = false;
        self.strikes = 0;
        let target = match self.target(self.level) {
            Some(t) => t,
            None => {
                self.level = Level::Preferred;
                kept[0]
            }
        };
        self.current = target;
        Some(Change {
            transport: target,
            previous,
            reason,
        })
    }
}

fn bit(t: TransportKind) -> u8 {
    1 << (t as u8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn at(wall: i64) -> Now {
        Now::at(0, wall)
    }

    fn selector(config: &Config) -> Selector {
        match Selector::new(config, Capabilities::ALL, at(0)) {
            Some((s, _)) => s,
            None => panic!("no transport"),
        }
    }

    #[test]
    fn first_allowed_by_caps_and_options() {
        let mut c = Config::new("/u");
        let caps = Capabilities {
            event_source: false,
            ..Capabilities::ALL
        };
        let got = Selector::new(&c, caps, at(0)).map(|(s, r)| (s.current(), r));
        assert_eq!(got, Some((TransportKind::FetchSse, Reason::Capability)));
        c.has_custom_headers = true;
        let got = Selector::new(&c, Capabilities::ALL, at(0)).map(|(s, r)| (s.current(), r));
        assert_eq!(got, Some((TransportKind::FetchSse, Reason::Capability)));
        c.transports = vec![TransportKind::EventSource];
        assert!(Selector::new(&c, Capabilities::ALL, at(0)).is_none());
        c.transports = vec![TransportKind::LongPoll];
        let none = Capabilities::default();
        assert!(Selector::new(&c, none, at(0)).is_none());
    }

    #[test]
    fn two_strikes_skip_every_stream_then_long_poll_to_poll() {
        let mut s = selector(&Config::new("/u"));
        let es = TransportKind::EventSource;
        assert_eq!(s.on_failure(at(0), es, Some(Reason::OpenFailed)), None);
        let change = s.on_failure(at(5), es, Some(Reason::OpenFailed));
        assert_eq!(
            change,
            Some(Change {
                transport: TransportKind::LongPoll,
                previous: es,
                reason: Reason::OpenFailed
            })
        );
        assert_eq!(
            s.downgrade(),
            Some((TransportKind::LongPoll, WallMs(600_005)))
        );
        // A status failure is no evidence.
        assert_eq!(s.on_failure(at(6), TransportKind::LongPoll, None), None);
        s.on_failure(at(7), TransportKind::LongPoll, Some(Reason::OpenFailed));
        let change = s.on_failure(at(8), TransportKind::LongPoll, Some(Reason::OpenFailed));
        assert_eq!(change.map(|c| c.transport), Some(TransportKind::Poll));
        assert_eq!(s.downgrade(), Some((TransportKind::Poll, WallMs(600_008))));
        // Poll has nowhere to go.
        for _ in 0..5 {
            assert_eq!(
                s.on_failure(at(9), TransportKind::Poll, Some(Reason::OpenFailed)),
                None
            );
        }
    }

    #[test]
    fn failback_probe_success_and_failure() {
        let mut s = selector(&Config::new("/u"));
        let fs = TransportKind::FetchSse;
        s.current = fs;
        s.allowed = [
            fs,
            TransportKind::LongPoll,
            TransportKind::Poll,
            TransportKind::Poll,
        ];
        s.len = 3;
        s.on_failure(at(0), fs, Some(Reason::BufferedStream));
        s.on_failure(at(0), fs, Some(Reason::BufferedStream));
        assert_eq!(s.current(), TransportKind::LongPoll);
        assert_eq!(s.before_attempt(at(599_999)), None);
        let probe = s.before_attempt(at(600_000));
        assert_eq!(
            probe.map(|c| (c.transport, c.reason)),
            Some((fs, Reason::FailbackProbe))
        );
        assert!(s.probing());
        // The probe fails: back, remembered again.
        let back = s.on_failure(at(600_100), fs, Some(Reason::BufferedStream));
        assert_eq!(
            back.map(|c| (c.transport, c.reason)),
            Some((TransportKind::LongPoll, Reason::BufferedStream))
        );
        assert_eq!(
            s.downgrade(),
            Some((TransportKind::LongPoll, WallMs(1_200_100)))
        );
        // Next probe succeeds: restored.
        assert!(s.before_attempt(at(1_200_100)).is_some());
        s.on_success(fs, true);
        assert_eq!((s.current(), s.downgrade(), s.probing()), (fs, None, false));
    }

    #[test]
    fn proven_transport_ignores_open_failures_not_silence() {
        let mut s = selector(&Config::new("/u"));
        let es = TransportKind::EventSource;
        s.on_success(es, true);
        for _ in 0..5 {
            assert_eq!(s.on_failure(at(0), es, Some(Reason::OpenFailed)), None);
        }
        s.on_failure(at(0), es, Some(Reason::BufferedStream));
        let c = s.on_failure(at(0), es, Some(Reason::BufferedStream));
        // A silent native stream skips only itself: fetch-sse sees comments.
        assert_eq!(c.map(|c| c.transport), Some(TransportKind::FetchSse));
        assert_eq!(
            s.downgrade(),
            Some((TransportKind::FetchSse, WallMs(600_000)))
        );
        let fs = TransportKind::FetchSse;
        s.on_failure(at(1), fs, Some(Reason::BufferedStream));
        let c = s.on_failure(at(2), fs, Some(Reason::BufferedStream));
        assert_eq!(c.map(|c| c.transport), Some(TransportKind::LongPoll));
        // A remembered fetch-sse downgrade seeds the same level.
        let mut c = Config::new("/u");
        c.downgrade = Some((fs, WallMs(1000)));
        assert_eq!(selector(&c).current(), fs);
    }

    #[test]
    fn alone_and_resume_by_header() {
        let es = TransportKind::EventSource;
        let fs = TransportKind::FetchSse;
        let mut c = Config::new("/u");
        assert!(!selector(&c).alone());
        c.transports = vec![es];
        assert!(selector(&c).alone());
        // Only eventsource: nowhere to go.
        let none = CrossOrigin::NONE;
        let reason = Reason::ResumeIgnored;
        assert_eq!(selector(&c).resume_by_header(none, reason), None);
        c.transports = vec![es, fs, TransportKind::Poll];
        let mut s = selector(&c);
        // Every endpoint cross-origin: none sends the header, nothing changes.
        assert_eq!(s.resume_by_header(CrossOrigin::ALL, reason), None);
        assert_eq!(s.current(), es);
        let fs_same = CrossOrigin::ALL.with(fs, false);
        let change = s.resume_by_header(fs_same, reason);
        assert_eq!(
            change,
            Some(Change {
                transport: fs,
                previous: es,
                reason: Reason::ResumeIgnored
            })
        );
        // The current transport sends the header: nothing to do.
        assert_eq!(s.resume_by_header(fs_same, reason), None);
        assert_eq!((s.current(), s.downgrade(), s.alone()), (fs, None, true));
        // eventsource is gone for good: no failback probe to it.
        assert_eq!(s.before_attempt(at(10_000_000)), None);
    }

    #[test]
    fn seeded_downgrade_and_disabled_fallback() {
        let mut c = Config::new("/u");
        c.downgrade = Some((TransportKind::Poll, WallMs(1000)));
        let s = selector(&c);
        assert_eq!(s.current(), TransportKind::Poll);
        assert_eq!(s.downgrade(), Some((TransportKind::Poll, WallMs(1000))));
        c.downgrade = Some((TransportKind::LongPoll, WallMs(0)));
        assert_eq!(selector(&c).current(), TransportKind::EventSource);
        c.downgrade = None;
        c.fallback.after_failures = 0;
        let mut s = selector(&c);
        for _ in 0..5 {
            assert_eq!(
                s.on_failure(at(0), TransportKind::EventSource, Some(Reason::OpenFailed)),
                None
            );
        }
    }
}
