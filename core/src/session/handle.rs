//! [`Session::handle`]: each input to the machines it concerns, in the order
//! the rules need.

use super::{Input, PageFact, Session, TabFact};
use crate::engine::{Engine, ReconnectAnswer};
use crate::machine::Lifecycle;
use crate::time::Now;

impl Session {
    /// Feed one fact at `now`, then drain [`Session::poll`]. Every input is
    /// ignored once closed, and before [`Input::Start`] but page facts and
    /// [`Input::Close`].
    pub fn handle(&mut self, now: Now, input: Input<'_>) {
        let now = self.clock.observe(now);
        match (self.life, input) {
            (Lifecycle::Done, _) => {}
            (_, Input::Page(fact)) => self.page_fact(now, fact),
            // Also before the start: a connection closed in the task that
            // made it must never start.
            (_, Input::Close) => self.close(now),
            (Lifecycle::New, Input::Start { caps, support }) => {
                self.caps = caps;
                self.life.start();
                self.tabs.handle_start(now, support);
                self.drain_tabs(now);
            }
            (Lifecycle::New, _) | (_, Input::Start { .. }) => {}
            (_, Input::Engine(fact)) => {
                self.engine.handle(now, fact);
                self.drain_engine(now);
            }
            (_, Input::Tab(fact)) => self.tab_fact(now, fact),
            (_, Input::Timer) => self.timer(now),
            (_, Input::Reconnect { online }) => self.reconnect(now, online),
        }
    }

    /// The coordinator first, then the engine; remembered for a fresh engine.
    fn page_fact(&mut self, now: Now, fact: PageFact) {
        let t = &mut self.tabs;
        match fact {
            PageFact::Hidden(h) => t.handle_visibility(now, h),
            PageFact::Frozen(f) => t.handle_frozen(now, f),
            PageFact::PageHide => t.handle_page_hide(now),
            PageFact::PageShow { persisted } => t.handle_page_show(now, persisted),
            PageFact::Online(_) | PageFact::Network(_) => {}
        }
        self.drain_tabs(now);
        match fact {
            PageFact::Hidden(h) => self.page.hidden = h,
            PageFact::Online(o) => self.page.online = o,
            PageFact::Network(n) => self.page.network = Some(n),
            _ => {}
        }
        to_engine(&mut self.engine, now, fact);
        self.drain_engine(now);
    }

    fn tab_fact(&mut self, now: Now, fact: TabFact) {
        let t = &mut self.tabs;
        match fact {
            TabFact::LockGranted => t.handle_lock_granted(now),
            TabFact::LockStolen => t.handle_lock_stolen(now),
            TabFact::LockFailed => t.handle_lock_failed(now),
            TabFact::Wire(w) => t.handle_wire(now, w),
        }
        self.drain_tabs(now);
    }

    /// The one timer: the calm status first (its change is told with the
    /// engine's own), the coordinator when its steal is due, then the engine.
    fn timer(&mut self, now: Now) {
        if let Some(c) = self.calm.handle_timer(now.mono) {
            self.tell_status(c);
        }
        if self.tabs_until.is_some_and(|t| t <= now.mono) {
            self.tabs.handle_timer(now);
            self.drain_tabs(now);
        }
        self.engine.handle_timer(now);
        self.drain_engine(now);
    }

    /// The app's `reconnect()`: the coordinator's `Reconnect` gives it to
    /// this tab's engine (`drain_tabs`), a follower posts it to the leader.
    fn reconnect(&mut self, now: Now, online: bool) {
        self.answer = match self.follows() {
            true => ReconnectAnswer::Leader,
            false => ReconnectAnswer::Closed,
        };
        self.page.online = online;
        self.tabs.handle_reconnect(now);
        self.drain_tabs(now);
    }

    /// The coordinator first (a leader says `bye`, nothing more is relayed),
    /// then the engine.
    fn close(&mut self, now: Now) {
        self.tabs.handle_close(now);
        self.drain_tabs(now);
        self.engine.handle_close(now);
        self.drain_engine(now);
        self.life.finish();
    }

    /// The coordinator's `Run`: a fresh engine from `cursor`, told the
    /// page's state, started.
    pub(super) fn run(&mut self, now: Now, cursor: &str) {
        self.halt(Some(cursor));
        let page = self.page;
        let e = &mut self.engine;
        if page.hidden {
            e.handle_visibility(now, true);
        }
        if !page.online {
            e.handle_online(now, false);
        }
        if let Some(hint) = page.network {
            e.handle_network_hint(now, hint);
        }
        e.handle_start(now, self.caps);
        self.drain_engine(now);
    }

    /// Replace the engine (`Halt`: by an idle one; `Run`: by one resuming
    /// from `cursor`), aborting the old one's live request.
    pub(super) fn halt(&mut self, cursor: Option<&str>) {
        let fresh = self.fresh_engine(cursor);
        let old = core::mem::replace(&mut self.engine, fresh);
        if let Some(id) = old.live_attempt() {
            self.work.push_back(super::SessionAction::Abort(id));
        }
        if let Some(id) = old.news_probe() {
            self.work.push_back(super::SessionAction::Abort(id));
        }
        self.engine_until = None;
    }
}

/// What a page fact means for the engine.
fn to_engine(e: &mut Engine, now: Now, fact: PageFact) {
    match fact {
        PageFact::Hidden(h) => e.handle_visibility(now, h),
        PageFact::Frozen(f) => e.handle_frozen(now, f),
        PageFact::Online(o) => e.handle_online(now, o),
        PageFact::Network(hint) => e.handle_network_hint(now, hint),
        PageFact::PageHide => e.handle_frozen(now, true),
        // A first load also fires pageshow (persisted = false): only a
        // page restored from the back-forward cache was frozen.
        PageFact::PageShow { persisted: true } => e.handle_frozen(now, false),
        PageFact::PageShow { persisted: false } => {}
    }
}
