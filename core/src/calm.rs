//! The calm connection status: what a "connection lost"
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
    use Reason as R;
    use State as S;

    /// One step of a scenario: an input at `ms` and, where given, what it
    /// must answer, or a look at the status between inputs.
    #[derive(Debug)]
    enum Step {
        /// `handle_state(ms, state, reason)`, its answer not checked.
        Feed(u64, State, Reason),
        /// `handle_state(ms, state, reason)` answers this.
        Then(u64, State, Reason, Option<Change>),
        /// `handle_timer(ms)` answers this.
        Timer(u64, Option<Change>),
        /// `deadline()` is this (ms).
        Deadline(Option<u64>),
        /// `status()` is this.
        Is(Status),
    }
    use Status::{Closed, Connected, Offline, Reconnecting};
    use Step::*;

    /// `Some((status, reason))`: a change a step expects.
    fn to(status: Status, reason: Reason) -> Option<Change> {
        Some((status, reason))
    }

    /// Runs `steps` on a fresh `Calm::new(lost_after_ms)`; a failure names
    /// the scenario (`name`, the test it was) and the step.
    fn scenario(name: &str, lost_after_ms: u64, steps: &[Step]) {
        let mut c = Calm::new(lost_after_ms);
        for (i, step) in steps.iter().enumerate() {
            let at = format!("{name}, step {i}: {step:?}");
            match *step {
                Feed(ms, state, reason) => {
                    c.handle_state(MonoMs(ms), state, reason);
                }
                Then(ms, state, reason, want) => {
                    assert_eq!(c.handle_state(MonoMs(ms), state, reason), want, "{at}");
                }
                Timer(ms, want) => assert_eq!(c.handle_timer(MonoMs(ms)), want, "{at}"),
                Deadline(ms) => assert_eq!(c.deadline(), ms.map(MonoMs), "{at}"),
                Is(status) => assert_eq!(c.status(), status, "{at}"),
            }
        }
    }

    /// A restart blip shorter than `lostAfterMs` shows nothing; the first
    /// open says `connected`.
    #[test]
    fn a_blip_shows_nothing() {
        scenario(
            "a_blip_shows_nothing",
            5000,
            &[
                Then(0, S::Connecting, R::Start, None),
                Deadline(Some(5000)),
                Then(40, S::Open, R::Start, to(Connected, R::Start)),
                Deadline(None),
                Then(9000, S::Waiting, R::Backoff, None),
                Timer(10_000, None),
                Then(10_500, S::Connecting, R::Backoff, None),
                Deadline(Some(14_000)),
                Then(13_999, S::Open, R::Backoff, None),
                Timer(14_000, None),
                Is(Status::Connected),
            ],
        );
    }

    /// Down `lostAfterMs` without interruption: `reconnecting` with the
    /// latest reason, then `connected` at once when back.
    #[test]
    fn lost_after_the_threshold_then_back() {
        scenario(
            "lost_after_the_threshold_then_back",
            5000,
            &[
                Feed(0, S::Open, R::Start),
                Feed(1000, S::Waiting, R::Backoff),
                Feed(2000, S::Connecting, R::Backoff),
                Feed(2100, S::Waiting, R::RetryAfter),
                Timer(5999, None),
                Timer(6000, to(Reconnecting, R::RetryAfter)),
                Deadline(None),
                Then(7000, S::Connecting, R::RetryAfter, None),
                Then(7050, S::Open, R::RetryAfter, to(Connected, R::RetryAfter)),
            ],
        );
    }

    /// Offline: reported after the threshold as `offline`; once lost it
    /// follows the browser at once.
    #[test]
    fn offline_after_the_threshold() {
        scenario(
            "offline_after_the_threshold",
            3000,
            &[
                Feed(0, S::Open, R::Start),
                Then(100, S::Paused, R::Offline, None),
                Timer(3100, to(Offline, R::Offline)),
                Then(4000, S::Connecting, R::Online, to(Reconnecting, R::Online)),
                Then(4100, S::Paused, R::Offline, to(Offline, R::Offline)),
            ],
        );
    }

    /// A hidden or frozen page holds the status and stops the clock.
    #[test]
    fn hidden_holds() {
        scenario(
            "hidden_holds",
            5000,
            &[
                Feed(0, S::Open, R::Start),
                Feed(100, S::Waiting, R::Backoff),
                Then(200, S::Paused, R::Hidden, None),
                Deadline(None),
                Timer(60_000, None),
                Then(60_000, S::Connecting, R::Visible, None),
                Deadline(Some(65_000)),
                Is(Status::Connected),
            ],
        );
    }

    /// Closed at once; revived after `gave-up` as `reconnecting`.
    #[test]
    fn closed_and_revived() {
        scenario(
            "closed_and_revived",
            5000,
            &[
                Feed(0, S::Connecting, R::Start),
                Then(10, S::Closed, R::GaveUp, to(Closed, R::GaveUp)),
                Deadline(None),
                Then(
                    20,
                    S::Connecting,
                    R::Reconnect,
                    to(Reconnecting, R::Reconnect),
                ),
                Then(30, S::Open, R::Reconnect, to(Connected, R::Reconnect)),
            ],
        );
    }

    /// A first connect that takes longer than the threshold is
    /// `reconnecting` (it is trying again), not `connecting` forever.
    #[test]
    fn a_slow_first_connect_is_reported() {
        scenario(
            "a_slow_first_connect_is_reported",
            5000,
            &[
                Feed(0, S::Connecting, R::Start),
                Feed(300, S::Waiting, R::Backoff),
                Timer(5000, to(Reconnecting, R::Backoff)),
            ],
        );
    }
    /// Two subscribers of one shared connection: the one that closed reads
    /// `closed` for good, while the other follows the connection through a
    /// loss, a `gave-up` and a revival.
    #[test]
    fn a_closed_subscriber_reads_closed_whatever_the_connection_does() {
        let mut c = Calm::new(5000);
        let (mut a, b) = (Subscriber::new(), Subscriber::new());
        c.handle_state(MonoMs(0), State::Connecting, Reason::Start);
        assert_eq!(
            [a.status(Some(c.status())), b.status(Some(c.status()))],
            [Status::Connecting; 2]
        );
        c.handle_state(MonoMs(40), State::Open, Reason::Start);
        assert_eq!(a.status(Some(c.status())), Status::Connected);
        a.handle_close();
        a.handle_close();
        assert!(a.is_closed() && !b.is_closed());
        assert_eq!(a.status(Some(c.status())), Status::Closed);
        assert_eq!(a.state(Some(State::Open)), State::Closed);
        assert_eq!(b.state(Some(State::Open)), State::Open);
        c.handle_state(MonoMs(1000), State::Waiting, Reason::Backoff);
        c.handle_timer(MonoMs(6000));
        assert_eq!(b.status(Some(c.status())), Status::Reconnecting);
        assert_eq!(a.status(Some(c.status())), Status::Closed);
        c.handle_state(MonoMs(7000), State::Closed, Reason::GaveUp);
        c.handle_state(MonoMs(8000), State::Connecting, Reason::Reconnect);
        c.handle_state(MonoMs(8050), State::Open, Reason::Reconnect);
        assert_eq!(b.status(Some(c.status())), Status::Connected);
        assert_eq!(a.status(Some(c.status())), Status::Closed);
        // A JS subscription lets go of its connection at `close()`.
        assert_eq!(a.status(None), Status::Closed);
        assert_eq!(b.status(None), Status::Closed);
        assert_eq!(b.state(None), State::Closed);
    }
}
