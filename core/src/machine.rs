//! The shape every machine of the core follows (ARCHITECTURE.md
//! "Machines"): one [`Machine::Input`] enum handed to
//! [`Machine::handle`] with the time it happened, a `#[must_use]`
//! [`Machine::poll`] drained until its terminal `Wait { until }`, one
//! [`Lifecycle`] instead of `started` / `closed` booleans, and the one
//! clock guard ([`crate::time::Monotone`]).
//!
//! The trait costs nothing until a driver is generic over it: the browser's
//! upstream driver is (one drive loop for every upstream machine); the
//! engine's and the cross-tab coordinator's drivers call their machines
//! directly.

use crate::time::{MonoMs, Now};

/// A sans-IO machine: facts in ([`Machine::handle`]), actions out
/// ([`Machine::poll`] until the terminal `Wait`). It never reads a clock or
/// an ambient random source, never panics on any input, and ignores every
/// input once its [`Lifecycle`] is [`Lifecycle::Done`].
pub trait Machine {
    /// One fact the adapter reports (`'a`: a fact may borrow the adapter's
    /// bytes, as the engine's do).
    type Input<'a>;
    /// What the adapter does next; one variant is `Wait { until }`.
    type Action;

    /// The input the timer armed from the last `Wait` feeds when it fires.
    const TIMER: Self::Input<'static>;

    /// Feed one fact that happened at `now` (both clocks, read together).
    fn handle(&mut self, now: Now, input: Self::Input<'_>);

    /// The next action; after the last one, `Wait { until }` (`None`: no
    /// timer). Drain after every [`Machine::handle`].
    #[must_use = "an action not carried out is lost"]
    fn poll(&mut self) -> Self::Action;

    /// `Err(until)` when `action` is the terminal `Wait { until }`, else
    /// the action back.
    fn split_wait(action: Self::Action) -> Result<Self::Action, Option<MonoMs>>;

    /// [`Machine::poll`] with the terminal `Wait { until }` split off as
    /// `Err(until)`, so a generic driver can loop without knowing the
    /// action type.
    fn next(&mut self) -> Result<Self::Action, Option<MonoMs>> {
        Self::split_wait(self.poll())
    }
}

/// Where a machine is in its life, one value instead of `started` /
/// `closing` / `closed` / `settled` booleans that must agree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Lifecycle {
    /// Made, not started: facts are noted, nothing is issued.
    #[default]
    New,
    /// Started: taking facts and acting on them.
    Running,
    /// Finishing what it holds, taking nothing new (an appender's close
    /// waiting for its pending values).
    Closing,
    /// Settled, stopped or closed for good: every later input is ignored.
    Done,
}

impl Lifecycle {
    /// `New` → `Running`; `true` when it started now (a second start is
    /// ignored).
    pub fn start(&mut self) -> bool {
        let fresh = *self == Lifecycle::New;
        if fresh {
            *self = Lifecycle::Running;
        }
        fresh
    }

    /// → `Done`; `true` the first time.
    pub fn finish(&mut self) -> bool {
        !core::mem::replace(self, Lifecycle::Done).is_done()
    }

    /// Settled, stopped or closed for good.
    pub const fn is_done(self) -> bool {
        matches!(self, Lifecycle::Done)
    }

    /// Started and not done (`Running` or `Closing`).
    pub const fn is_live(self) -> bool {
        matches!(self, Lifecycle::Running | Lifecycle::Closing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifecycle_starts_once_and_finishes_once() {
        let mut l = Lifecycle::default();
        assert!(!l.is_live());
        assert!(l.start());
        assert!(!l.start(), "a second start is ignored");
        assert!(l.is_live());
        l = Lifecycle::Closing;
        assert!(!l.start() && l.is_live());
        assert!(l.finish());
        assert!(!l.finish(), "finished once");
        assert!(l.is_done() && !l.is_live() && !l.start());
    }
}
