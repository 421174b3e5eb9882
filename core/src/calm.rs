//! The calm connection status (issue 22 item 3): what a "connection lost"
//! banner should show, without flickering through short blips.
//!
//! [`Calm`] is fed the connection's state changes (the engine's own, or the
//! leader tab's relayed ones) with the monotonic time, and its one deadline
//! when it is due. It says:
//! - `connecting` before the connection was first established;
//! - `connected` as soon as a transport opens or a request is answered (the
//!   engine's state `open`: a quiet stream never sends a message, so "back"
//!   cannot wait for one);
//! - `reconnecting` only once the connection has been down for
//!   `lostAfterMs` without interruption (`offline` instead when the browser
//!   is offline by then): a blip shorter than that (a server restart, a
//!   proxy recycling a stream) shows nothing;
//! - `closed` at once when it stopped (`close()`, a fatal error).
//!
//! A connection is shared by the subscriptions to the same URL and options:
//! what one subscription reads is its [`Subscriber`] view, `closed` for good
//! from its own `close()` on.
//!
//! Down means any state but `open`, except a pause for a hidden or frozen
//! page: nobody sees the page then, so the status holds and the clock starts
//! again when it comes back. Once lost, the status follows at once:
//! `offline` ↔ `reconnecting` as the browser reports, `connected` when back.
//! A revived subscription (`reconnect()` after `gave-up`) is `reconnecting`.
//! Every change carries the reason of the state that caused it.

use crate::engine::{Reason, State};
use crate::time::MonoMs;

/// Default `lostAfterMs`: how long a connection must be down before the
/// status says so, ms. Measured on the reference server's restart fault
/// (`POST /_restart`: connections dropped, new ones refused for 1000 ms;
/// README "Connection status"): five restarts with the default options were
/// back open after 1031, 1591, 1264, 1337 and 1418 ms (the backoff floor
/// plus its spread). 5000 ms is three times the longest, room for a loaded
/// machine or a slower restart, and still reports a real outage in seconds.
pub const DEFAULT_LOST_AFTER_MS: u64 = 5000;

/// What the app shows (JS `status`, event `statuschange`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Status {
    /// Not established yet since `subscribe`.
    #[default]
    Connecting,
    /// A transport is open, or requests are being answered.
    Connected,
    /// Down for at least `lostAfterMs`, trying again.
    Reconnecting,
    /// Down for at least `lostAfterMs`, and the browser is offline.
    Offline,
    /// Stopped (closed by the app, or a fatal error).
    Closed,
}

impl Status {
    /// The JS name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Status::Connecting => "connecting",
            Status::Connected => "connected",
            Status::Reconnecting => "reconnecting",
            Status::Offline => "offline",
            Status::Closed => "closed",
        }
    }

    /// Lost: the app has been told the connection is down.
    fn lost(self) -> bool {
        matches!(self, Status::Reconnecting | Status::Offline)
    }
}

/// A status change: the new status and the reason of the state behind it.
pub type Change = (Status, Reason);

/// The calm status of one connection: a plain value; time is an argument.
#[derive(Clone, Debug, Default)]
pub struct Calm {
    lost_after_ms: u64,
    status: Status,
    /// Down since, and the reason of the latest down state.
    down: Option<(MonoMs, Reason)>,
    /// The latest state is a pause for offline.
    offline: bool,
}

impl Calm {
    /// `connecting`, reporting a loss after `lost_after_ms` down.
    pub fn new(lost_after_ms: u64) -> Self {
        Calm {
            lost_after_ms,
            ..Calm::default()
        }
    }

    /// The current status.
    pub fn status(&self) -> Status {
        self.status
    }

    /// When [`Calm::handle_timer`] must be called: the end of the current
    /// down time's `lostAfterMs`, if a loss is not reported yet.
    pub fn deadline(&self) -> Option<MonoMs> {
        let (since, _) = self.down?;
        (!self.status.lost() && self.status != Status::Closed)
            .then(|| since.plus(self.lost_after_ms))
    }

    /// The connection's state changed at `now`.
    pub fn handle_state(&mut self, now: MonoMs, state: State, reason: Reason) -> Option<Change> {
        if self.status == Status::Closed && state != State::Closed {
            // Revived (`reconnect()` after `gave-up`): it was down already.
            self.down = Some((now, reason));
            self.offline = false;
            return self.set(Status::Reconnecting, reason);
        }
        self.offline = state == State::Paused && reason == Reason::Offline;
        match state {
            State::Open => {
                self.down = None;
                self.set(Status::Connected, reason)
            }
            State::Closed => {
                self.down = None;
                self.set(Status::Closed, reason)
            }
            State::Paused if matches!(reason, Reason::Hidden | Reason::Frozen) => {
                self.down = None;
                None
            }
            _ => self.went_down(now, reason),
        }
    }

    /// A down state: start the clock (or keep it), or, once lost, say
    /// `offline` / `reconnecting` as the browser reports.
    fn went_down(&mut self, now: MonoMs, reason: Reason) -> Option<Change> {
        let since = self.down.map_or(now, |(since, _)| since);
        self.down = Some((since, reason));
        if self.status.lost() {
            return self.set(self.lost_status(), reason);
        }
        self.handle_timer(now)
    }

    /// The deadline may have passed at `now`: report the loss.
    pub fn handle_timer(&mut self, now: MonoMs) -> Option<Change> {
        let due = self.deadline().is_some_and(|d| d <= now);
        let (_, reason) = self.down?;
        if due {
            self.set(self.lost_status(), reason)
        } else {
            None
        }
    }

    fn lost_status(&self) -> Status {
        if self.offline {
            Status::Offline
        } else {
            Status::Reconnecting
        }
    }

    fn set(&mut self, status: Status, reason: Reason) -> Option<Change> {
        if status == self.status {
            return None;
        }
        self.status = status;
        Some((status, reason))
    }
}

/// One subscriber's view of a (possibly shared) connection (JS
/// `Subscription.status` / `state`, Rust `Subscription::status` / `state`):
/// the connection's own while subscribed; `closed` for good from the
/// subscriber's own `close()` (or drop, or its `signal`) on. Connections are
/// shared by subscriptions to the same URL and options, so a closed
/// subscriber's connection may go on for the others, and even be revived by
/// one of them (`reconnect()` after `gave-up`): the closed one reads none of
/// it, and hears no more events either.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Subscriber {
    closed: bool,
}

impl Subscriber {
    /// A subscriber of a connection: it reads the connection's status.
    pub const fn new() -> Self {
        Subscriber { closed: false }
    }

    /// The subscriber closed: from now on it reads `closed`. Idempotent.
    pub fn handle_close(&mut self) {
        self.closed = true;
    }

    /// Whether it closed (its connection is no concern of it any more).
    pub const fn is_closed(self) -> bool {
        self.closed
    }

    /// The status it reads, `connection` being its connection's
    /// ([`Calm::status`]; `None` when the subscriber no longer holds one: a
    /// closed JS subscription lets go of its connection at `close()`).
    pub fn status(self, connection: Option<Status>) -> Status {
        match connection {
            Some(s) if !self.closed => s,
            _ => Status::Closed,
        }
    }

    /// The engine state it reads, `connection` being its connection's.
    pub fn state(self, connection: Option<State>) -> State {
        match connection {
            Some(s) if !self.closed => s,
            _ => State::Closed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> MonoMs {
        MonoMs(ms)
    }

    /// A restart blip shorter than `lostAfterMs` shows nothing; the first
    /// open says `connected`.
    #[test]
    fn a_blip_shows_nothing() {
        let mut c = Calm::new(5000);
        assert_eq!(c.handle_state(t(0), State::Connecting, Reason::Start), None);
        assert_eq!(c.deadline(), Some(t(5000)));
        assert_eq!(
            c.handle_state(t(40), State::Open, Reason::Start),
            Some((Status::Connected, Reason::Start))
        );
        assert_eq!(c.deadline(), None);
        assert_eq!(
            c.handle_state(t(9000), State::Waiting, Reason::Backoff),
            None
        );
        assert_eq!(c.handle_timer(t(10_000)), None);
        assert_eq!(
            c.handle_state(t(10_500), State::Connecting, Reason::Backoff),
            None
        );
        assert_eq!(c.deadline(), Some(t(14_000)));
        assert_eq!(
            c.handle_state(t(13_999), State::Open, Reason::Backoff),
            None
        );
        assert_eq!(c.handle_timer(t(14_000)), None);
        assert_eq!(c.status(), Status::Connected);
    }

    /// Down `lostAfterMs` without interruption: `reconnecting` with the
    /// latest reason, then `connected` at once when back.
    #[test]
    fn lost_after_the_threshold_then_back() {
        let mut c = Calm::new(5000);
        c.handle_state(t(0), State::Open, Reason::Start);
        c.handle_state(t(1000), State::Waiting, Reason::Backoff);
        c.handle_state(t(2000), State::Connecting, Reason::Backoff);
        c.handle_state(t(2100), State::Waiting, Reason::RetryAfter);
        assert_eq!(c.handle_timer(t(5999)), None);
        assert_eq!(
            c.handle_timer(t(6000)),
            Some((Status::Reconnecting, Reason::RetryAfter))
        );
        assert_eq!(c.deadline(), None);
        assert_eq!(
            c.handle_state(t(7000), State::Connecting, Reason::RetryAfter),
            None
        );
        assert_eq!(
            c.handle_state(t(7050), State::Open, Reason::RetryAfter),
            Some((Status::Connected, Reason::RetryAfter))
        );
    }

    /// Offline: reported after the threshold as `offline`; once lost it
    /// follows the browser at once.
    #[test]
    fn offline_after_the_threshold() {
        let mut c = Calm::new(3000);
        c.handle_state(t(0), State::Open, Reason::Start);
        assert_eq!(c.handle_state(t(100), State::Paused, Reason::Offline), None);
        assert_eq!(
            c.handle_timer(t(3100)),
            Some((Status::Offline, Reason::Offline))
        );
        assert_eq!(
            c.handle_state(t(4000), State::Connecting, Reason::Online),
            Some((Status::Reconnecting, Reason::Online))
        );
        assert_eq!(
            c.handle_state(t(4100), State::Paused, Reason::Offline),
            Some((Status::Offline, Reason::Offline))
        );
    }

    /// A hidden or frozen page holds the status and stops the clock.
    #[test]
    fn hidden_holds() {
        let mut c = Calm::new(5000);
        c.handle_state(t(0), State::Open, Reason::Start);
        c.handle_state(t(100), State::Waiting, Reason::Backoff);
        assert_eq!(c.handle_state(t(200), State::Paused, Reason::Hidden), None);
        assert_eq!(c.deadline(), None);
        assert_eq!(c.handle_timer(t(60_000)), None);
        assert_eq!(
            c.handle_state(t(60_000), State::Connecting, Reason::Visible),
            None
        );
        assert_eq!(c.deadline(), Some(t(65_000)));
        assert_eq!(c.status(), Status::Connected);
    }

    /// Closed at once; revived after `gave-up` as `reconnecting`.
    #[test]
    fn closed_and_revived() {
        let mut c = Calm::new(5000);
        c.handle_state(t(0), State::Connecting, Reason::Start);
        assert_eq!(
            c.handle_state(t(10), State::Closed, Reason::GaveUp),
            Some((Status::Closed, Reason::GaveUp))
        );
        assert_eq!(c.deadline(), None);
        assert_eq!(
            c.handle_state(t(20), State::Connecting, Reason::Reconnect),
            Some((Status::Reconnecting, Reason::Reconnect))
        );
        assert_eq!(
            c.handle_state(t(30), State::Open, Reason::Reconnect),
            Some((Status::Connected, Reason::Reconnect))
        );
    }

    /// A first connect that takes longer than the threshold is
    /// `reconnecting` (it is trying again), not `connecting` forever.
    #[test]
    fn a_slow_first_connect_is_reported() {
        let mut c = Calm::new(5000);
        c.handle_state(t(0), State::Connecting, Reason::Start);
        c.handle_state(t(300), State::Waiting, Reason::Backoff);
        assert_eq!(
            c.handle_timer(t(5000)),
            Some((Status::Reconnecting, Reason::Backoff))
        );
    }
    /// Two subscribers of one shared connection: the one that closed reads
    /// `closed` for good, while the other follows the connection through a
    /// loss, a `gave-up` and a revival.
    #[test]
    fn a_closed_subscriber_reads_closed_whatever_the_connection_does() {
        let mut c = Calm::new(5000);
        let (mut a, b) = (Subscriber::new(), Subscriber::new());
        c.handle_state(t(0), State::Connecting, Reason::Start);
        assert_eq!(
            [a.status(Some(c.status())), b.status(Some(c.status()))],
            [Status::Connecting; 2]
        );
        c.handle_state(t(40), State::Open, Reason::Start);
        assert_eq!(a.status(Some(c.status())), Status::Connected);
        a.handle_close();
        a.handle_close();
        assert!(a.is_closed() && !b.is_closed());
        assert_eq!(a.status(Some(c.status())), Status::Closed);
        assert_eq!(a.state(Some(State::Open)), State::Closed);
        assert_eq!(b.state(Some(State::Open)), State::Open);
        c.handle_state(t(1000), State::Waiting, Reason::Backoff);
        c.handle_timer(t(6000));
        assert_eq!(b.status(Some(c.status())), Status::Reconnecting);
        assert_eq!(a.status(Some(c.status())), Status::Closed);
        c.handle_state(t(7000), State::Closed, Reason::GaveUp);
        c.handle_state(t(8000), State::Connecting, Reason::Reconnect);
        c.handle_state(t(8050), State::Open, Reason::Reconnect);
        assert_eq!(b.status(Some(c.status())), Status::Connected);
        assert_eq!(a.status(Some(c.status())), Status::Closed);
        // A JS subscription lets go of its connection at `close()`.
        assert_eq!(a.status(None), Status::Closed);
        assert_eq!(b.status(None), Status::Closed);
        assert_eq!(b.state(None), State::Closed);
    }
}
