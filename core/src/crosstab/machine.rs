//! [`CrossTab`]: the machine (see the module doc of [`crate::crosstab`]).

use crate::fifo::Fifo;
use alloc::string::String;

use super::offsets::{Positions, Stamp};
use super::{Mirror, Relay, Support, TabAction, Wire, SEEN_IDS, STEAL_AFTER_MS, STEAL_JITTER_MS};
use crate::engine::{Action, Message, Reason, ResetReason, State, TransportKind};
use crate::machine::Lifecycle;
use crate::policy::dedupe::Dedupe;
use crate::rng::Rng;
use crate::time::{MonoMs, Monotone, Now};

/// This tab's part in one connection, with what only that part keeps.
#[derive(Clone, Copy, Debug)]
enum Role {
    /// Not coordinating: this tab runs its own engine (no locks or channel,
    /// or they failed). Also the role before start.
    Solo,
    /// Queued for the lock; the leader's notices are told here.
    Follower(Follower),
    /// Holds the lock and runs the engine.
    Leader(Leader),
}

/// What a follower keeps: the steal timer, and what it heard of the leader.
#[derive(Clone, Copy, Debug, Default)]
struct Follower {
    steal_at: Option<MonoMs>,
    /// The leader said `bye`: no steal until a leader speaks again.
    leader_gone: bool,
    /// The app called `reconnect()` here after its leader gave up: a lock
    /// granted now runs this tab's engine (the leader's tab may be gone,
    /// and nobody else queues). Cleared when a leader runs again.
    revive: bool,
}

/// What a leader keeps for newcomers, from its own engine only (a new one
/// on every grant). Plain values, so a role change drops nothing; the
/// cursor it re-posts at is the tab's `own_cursor`.
#[derive(Clone, Copy, Debug, Default)]
struct Leader {
    /// Its engine's last transport change (`transport`, `previous`,
    /// `reason`).
    last_transport: Option<(TransportKind, Option<TransportKind>, Reason)>,
    /// Its engine's last state (`state`, `reason`, `delay_ms`).
    last_state: Option<(State, Reason, Option<u64>)>,
    /// Durable Streams: its engine said `uptodate` since its last `reset`
    /// (a newcomer's app waits for its "caught up").
    up_to_date: bool,
}

/// The cross-tab coordinator of one connection in one tab. Every input takes
/// [`Now`]; after every input drain [`CrossTab::poll`] until
/// [`TabAction::Wait`]. No input sequence panics.
#[derive(Clone, Debug)]
pub struct CrossTab {
    role: Role,
    life: Lifecycle,
    hidden: bool,
    mirror: Mirror,
    /// Ids delivered in this tab.
    seen: Dedupe,
    /// This tab's engine's cursor, as of its last notice (a leader's
    /// re-posts carry it).
    own_cursor: String,
    /// This tab's subscriptions heard `uptodate` since the last `reset`, at
    /// this offset.
    up_to_date_at: Option<String>,
    /// Durable Streams: messages are placed by offset (`offsets.rs`).
    positions: Option<Positions>,
    /// A leader's index of its messages in their chunk (`offsets.rs`).
    stamp: Stamp,
    /// Back from the back-forward cache: the cursor this tab left with.
    restored_from: Option<String>,
    /// A lock request is queued or held.
    locking: bool,
    channel: bool,
    rng: Rng,
    clock: Monotone,
    actions: Fifo<TabAction>,
}

impl CrossTab {
    /// A coordinator for a connection that starts from `cursor` (the
    /// `lastEventId` option); `seed` seeds the steal jitter.
    pub fn new(cursor: String, seed: u64) -> Self {
        CrossTab {
            role: Role::Solo,
            life: Lifecycle::New,
            hidden: false,
            mirror: Mirror {
                state: State::Connecting,
                reason: Reason::Start,
                transport: None,
                last_event_id: cursor,
            },
            seen: Dedupe::new(SEEN_IDS),
            own_cursor: String::new(),
            up_to_date_at: None,
            positions: None,
            stamp: Stamp::default(),
            restored_from: None,
            locking: false,
            channel: false,
            rng: Rng::new(seed),
            clock: Monotone::default(),
            actions: Fifo::new(),
        }
    }

    /// Durable Streams (`protocol: "durable-streams"`): drop a message whose
    /// place in the stream this tab delivered already, by offset (its
    /// messages carry no id). The start is the cursor given to [`CrossTab::new`].
    pub fn with_offsets(mut self) -> Self {
        self.positions = Some(Positions::new(&self.mirror.last_event_id));
        self
    }

    /// The leader's connection as this tab knows it, while this tab follows
    /// (`None` when it leads or runs alone: its own engine knows).
    pub fn following(&self) -> Option<&Mirror> {
        matches!(self.role, Role::Follower(_)).then_some(&self.mirror)
    }

    /// Whether this tab leads.
    pub fn is_leader(&self) -> bool {
        matches!(self.role, Role::Leader(_))
    }

    /// The next action; drain until [`TabAction::Wait`].
    #[must_use = "an action not carried out is lost"]
    pub fn poll(&mut self) -> TabAction {
        self.actions.pop_front().unwrap_or(TabAction::Wait {
            until: self.clock.wait_until(self.steal_at()),
        })
    }

    fn steal_at(&self) -> Option<MonoMs> {
        match &self.role {
            Role::Follower(f) => f.steal_at,
            _ => None,
        }
    }

    fn begin(&mut self, now: Now) -> bool {
        self.clock.observe(now);
        !self.life.is_done()
    }

    fn push(&mut self, a: TabAction) {
        self.actions.push_back(a);
    }

    // ----- inputs ------------------------------------------------------

    /// Start (a second call is ignored). Without Web Locks or a channel:
    /// `Run` from the initial cursor, solo for good. Otherwise say `hello`
    /// and queue for the lock.
    pub fn handle_start(&mut self, now: Now, support: Support) {
        if !self.begin(now) || !self.life.start() {
            return;
        }
        self.channel = support.channel;
        if !(support.locks && support.channel) {
            self.go_alone();
            return;
        }
        self.role = Role::Follower(Follower::default());
        self.push(TabAction::Post(Wire::Hello));
        self.request_lock(false);
    }

    /// This tab holds the lock: lead, from the last cursor it saw. Ignored
    /// unless following with a request queued (a grant resolving after
    /// `pagehide` withdrew it), and after the leader stopped for good.
    pub fn handle_lock_granted(&mut self, now: Now) {
        if !self.begin(now) || !self.locking {
            return;
        }
        let Role::Follower(f) = &self.role else {
            return;
        };
        if self.mirror.state == State::Closed && !f.revive {
            return;
        }
        // A newcomer hears the new engine's notices, never those of this
        // tab's earlier reign.
        self.role = Role::Leader(Leader::default());
        // Its own engine resumes from the cursor: the server fills any gap.
        self.restored_from = None;
        self.stamp = Stamp::default();
        let cursor = self.mirror.last_event_id.clone();
        self.push(TabAction::Run { cursor });
    }

    /// Another tab stole the lock: halt, queue again, and ask the new leader
    /// for its transport and state (what it said while this tab led was not
    /// for this tab's subscriptions).
    pub fn handle_lock_stolen(&mut self, now: Now) {
        if !self.begin(now) || !self.is_leader() {
            return;
        }
        self.role = Role::Follower(Follower::default());
        self.push(TabAction::Halt);
        self.request_lock(false);
        self.push(TabAction::Post(Wire::Hello));
    }

    /// Web Locks refused this tab (missing, `request` threw, or its promise
    /// rejected before a grant): stop coordinating and run alone (a leader
    /// keeps its running engine).
    pub fn handle_lock_failed(&mut self, now: Now) {
        if !self.begin(now) || matches!(self.role, Role::Solo) {
            return;
        }
        self.locking = false;
        self.push(TabAction::DropLock);
        if self.channel {
            self.channel = false;
            self.push(TabAction::CloseChannel);
        }
        if self.is_leader() {
            self.role = Role::Solo;
        } else {
            self.go_alone();
        }
    }

    /// The page became hidden or visible.
    pub fn handle_visibility(&mut self, now: Now, hidden: bool) {
        if !self.begin(now) {
            return;
        }
        self.hidden = hidden;
        self.consider_steal();
    }

    /// `freeze` / `resume`: a frozen tab runs no timer, so a pending steal is
    /// dropped; resumed, it is considered again.
    pub fn handle_frozen(&mut self, now: Now, frozen: bool) {
        if !self.begin(now) {
            return;
        }
        if frozen {
            self.cancel_steal();
        } else {
            self.consider_steal();
        }
    }

    /// `pagehide`: a leader says `bye`, halts and tells its subscriptions
    /// `paused` (`frozen`); every tab drops its lock and closes its channel.
    pub fn handle_page_hide(&mut self, now: Now) {
        if !self.begin(now) || matches!(self.role, Role::Solo) {
            return;
        }
        self.cancel_steal();
        if self.is_leader() {
            self.role = Role::Follower(Follower::default());
            self.push(TabAction::Post(Wire::Bye));
            self.push(TabAction::Halt);
            let paused = Relay::Action(Action::State {
                state: State::Paused,
                reason: Reason::Frozen,
                delay_ms: None,
            });
            self.note(&paused, "", 0);
            self.push(TabAction::Tell(paused));
        }
        if self.locking {
            self.locking = false;
            self.push(TabAction::DropLock);
        }
        if self.channel {
            self.channel = false;
            self.push(TabAction::CloseChannel);
        }
    }

    /// `pageshow`; with `persisted` (back from the back-forward cache): open
    /// the channel, say `hello`, queue for the lock, and remember the cursor
    /// to compare with the leader's next state.
    pub fn handle_page_show(&mut self, now: Now, persisted: bool) {
        if !self.begin(now) || !persisted {
            return;
        }
        if !matches!(self.role, Role::Follower(_)) {
            return;
        }
        self.restored_from = Some(self.mirror.last_event_id.clone());
        if !self.channel {
            self.channel = true;
            self.push(TabAction::OpenChannel);
            self.push(TabAction::Post(Wire::Hello));
        }
        if !self.locking && self.mirror.state != State::Closed {
            self.request_lock(false);
        }
    }

    /// The timer fired: steal if still due.
    pub fn handle_timer(&mut self, now: Now) {
        if !self.begin(now) {
            return;
        }
        let Role::Follower(f) = &mut self.role else {
            return;
        };
        let Some(at) = f.steal_at else { return };
        if at > now.mono {
            return;
        }
        f.steal_at = None;
        // Another tab may have taken over meanwhile.
        if !self.hidden && self.leader_paused_hidden() {
            self.request_lock(true);
        }
    }

    /// The app called `reconnect()` in this tab: a leader or a solo tab
    /// gives it to its own engine; a follower asks the leader, whose engine
    /// decides (nothing here: the rules are the engine's).
    pub fn handle_reconnect(&mut self, now: Now) {
        if !self.begin(now) {
            return;
        }
        match self.role {
            Role::Follower(_) if self.channel => {
                self.push(TabAction::Post(Wire::Reconnect));
                self.queue_to_revive();
            }
            Role::Follower(_) => {}
            Role::Leader(_) | Role::Solo => self.push(TabAction::Reconnect),
        }
    }

    /// A follower's `reconnect()` after the leader gave up (a `closed` for
    /// `gave-up`, which `reconnect()` may revive; not a permanent error):
    /// queue for the lock too, as the leader's tab may have gone since and
    /// no other tab queues. A leader still there holds the lock and hears
    /// the post first; granted, this tab runs from the cursor.
    fn queue_to_revive(&mut self) {
        let gave_up = self.mirror.state == State::Closed && self.mirror.reason == Reason::GaveUp;
        if let (true, false, Role::Follower(f)) = (gave_up, self.locking, &mut self.role) {
            f.revive = true;
            self.request_lock(false);
        }
    }

    /// The connection closed in this tab (its last subscription): a leader
    /// says `bye`; the lock and the channel go. Every later input is ignored.
    pub fn handle_close(&mut self, now: Now) {
        if !self.begin(now) {
            return;
        }
        self.life.finish();
        if self.is_leader() && self.channel {
            self.push(TabAction::Post(Wire::Bye));
        }
        if self.locking {
            self.push(TabAction::DropLock);
        }
        if self.channel {
            self.push(TabAction::CloseChannel);
        }
        self.role = Role::Solo;
    }

    /// A message this tab's own engine delivers, carried by `transport`,
    /// with the engine's cursor `cursor`. Returns whether this tab's
    /// subscriptions hear it (`false`: a message already delivered here, by
    /// the other leader of a steal). No clock: it schedules nothing, and it
    /// runs once per message on the hot path. Only a leader does any work
    /// (relays it, remembers its id); a solo tab or a follower returns `true`.
    pub fn handle_own_message(
        &mut self,
        msg: &Message,
        transport: Option<TransportKind>,
        cursor: &str,
    ) -> bool {
        if !self.is_leader() || self.life.is_done() {
            return true;
        }
        let index = self.stamp.index(&msg.last_event_id, cursor);
        self.own(Relay::Message(msg.clone(), transport), cursor, index)
    }

    /// Another notice of this tab's own engine (a state or transport change,
    /// an error, a reset), as [`CrossTab::handle_own_message`]. A leader also
    /// remembers its last transport change and state for newcomers.
    pub fn handle_own_action(&mut self, action: &Action, cursor: &str) -> bool {
        let Role::Leader(l) = &mut self.role else {
            return true;
        };
        if self.life.is_done() {
            return true;
        }
        let Some(a) = relayed(action) else {
            return true;
        };
        match a {
            Action::State {
                state,
                reason,
                delay_ms,
            } => l.last_state = Some((state, reason, delay_ms)),
            Action::TransportChanged {
                transport,
                previous,
                reason,
            } => l.last_transport = Some((transport, previous, reason)),
            Action::UpToDate { .. } => l.up_to_date = true,
            Action::Reset { .. } => l.up_to_date = false,
            _ => {}
        }
        self.own(Relay::Action(a), cursor, 0)
    }

    fn own(&mut self, notice: Relay, cursor: &str, index: u32) -> bool {
        self.own_cursor.clear();
        self.own_cursor.push_str(cursor);
        let fresh = self.note(&notice, cursor, index);
        post(&mut self.actions, notice, cursor, index, false);
        fresh
    }

    /// A message from another tab.
    pub fn handle_wire(&mut self, now: Now, wire: Wire) {
        if !self.begin(now) || matches!(self.role, Role::Solo) {
            return;
        }
        match wire {
            Wire::Bye => {
                if let Role::Follower(f) = &mut self.role {
                    f.leader_gone = true;
                    f.steal_at = None;
                }
            }
            Wire::Hello => self.repost(),
            Wire::Reconnect => {
                if self.is_leader() {
                    self.push(TabAction::Reconnect);
                }
            }
            Wire::Notice {
                notice,
                cursor,
                sync,
                index,
            } => self.on_notice(notice, &cursor, sync, index),
        }
    }

    // ----- rules -------------------------------------------------------

    fn go_alone(&mut self) {
        self.role = Role::Solo;
        let cursor = self.mirror.last_event_id.clone();
        self.push(TabAction::Run { cursor });
    }

    fn request_lock(&mut self, steal: bool) {
        self.locking = true;
        self.push(TabAction::RequestLock { steal });
    }

    /// A newcomer said `hello`: the leader re-posts its last transport change
    /// and state, marked `sync`.
    fn repost(&mut self) {
        let Role::Leader(l) = self.role else {
            return;
        };
        let (q, cursor) = (&mut self.actions, &self.own_cursor);
        if let Some((transport, previous, reason)) = l.last_transport {
            let a = Action::TransportChanged {
                transport,
                previous,
                reason,
            };
            post(q, Relay::Action(a), cursor, 0, true);
        }
        if let Some((state, reason, delay_ms)) = l.last_state {
            let a = Action::State {
                state,
                reason,
                delay_ms,
            };
            post(q, Relay::Action(a), cursor, 0, true);
        }
        // Still up to date (live answers keep saying so) where the cursor is
        // now: the newcomer must not resume from the older offset of the
        // moment it first caught up.
        if l.up_to_date {
            let last_event_id = cursor.clone();
            let a = Action::UpToDate { last_event_id };
            post(q, Relay::Action(a), cursor, 0, true);
        }
    }

    /// A notice relayed by the leader.
    fn on_notice(&mut self, notice: Relay, cursor: &str, sync: bool, index: u32) {
        // A leader tells its own state; a message from a second leader (the
        // moment a steal overlaps) is still news when this tab has not seen it.
        let relayable = match &notice {
            Relay::Message(..) => true,
            Relay::Action(a) => !self.is_leader() && is_relayed(a),
        };
        if !relayable {
            return;
        }
        let is_state = matches!(notice, Relay::Action(Action::State { .. }));
        // Back from the back-forward cache: when the leader's cursor moved on
        // meanwhile, this tab missed what was relayed (nobody keeps it).
        if is_state && self.restored_from.take().is_some_and(|c| c != cursor) {
            self.push(TabAction::Tell(Relay::Action(Action::Reset {
                reason: ResetReason::Unresumable,
            })));
        }
        if (sync && self.known(&notice)) || !self.note(&notice, cursor, index) {
            return;
        }
        let closed = matches!(
            notice,
            Relay::Action(Action::State {
                state: State::Closed,
                ..
            })
        );
        self.push(TabAction::Tell(notice));
        if closed {
            // The leader stopped for good (a fatal error): never take over.
            self.cancel_steal();
            if self.locking {
                self.locking = false;
                self.push(TabAction::DropLock);
            }
        } else {
            if is_state {
                if let Role::Follower(f) = &mut self.role {
                    f.revive = false;
                }
                self.requeue();
            }
            self.consider_steal();
        }
    }

    /// The leader reports a state other than `closed` (it runs again after
    /// it stopped: `reconnect()` revived a connection that gave up): queue
    /// for the lock again, as every tab dropped it then. Only on a state: a
    /// re-post for a newcomer (a transport change) does not say it runs.
    fn requeue(&mut self) {
        if matches!(self.role, Role::Follower(_)) && !self.locking && self.channel {
            self.request_lock(false);
        }
    }

    /// Update what this tab knows from `notice` (`cursor`: the leader's, as
    /// a state or a message carries it; `index`: a message's in its chunk).
    /// `false` for a message already delivered here (by id, or by offset),
    /// and for an `uptodate` at the offset this tab last heard one for.
    fn note(&mut self, notice: &Relay, cursor: &str, index: u32) -> bool {
        let m = &mut self.mirror;
        match notice {
            Relay::Message(msg, transport) => {
                let new_here = match &mut self.positions {
                    Some(p) if msg.id.is_empty() => p.deliver(&msg.last_event_id, cursor, index),
                    _ => true,
                };
                if !new_here
                    || !self
                        .seen
                        .should_deliver(Some(&msg.id), &msg.event, &msg.data)
                {
                    return false;
                }
                m.last_event_id.clone_from(&msg.last_event_id);
                m.transport = *transport;
            }
            Relay::Action(Action::State { state, reason, .. }) => {
                if let Role::Follower(f) = &mut self.role {
                    f.leader_gone = false;
                }
                m.state = *state;
                m.reason = *reason;
                if !cursor.is_empty() {
                    m.last_event_id = cursor.into();
                    if let Some(p) = &mut self.positions {
                        p.reached(cursor);
                    }
                }
            }
            Relay::Action(Action::TransportChanged { transport, .. }) => {
                m.transport = Some(*transport);
            }
            Relay::Action(Action::Reset { .. }) => {
                self.seen.clear();
                self.up_to_date_at = None;
                if let Some(p) = &mut self.positions {
                    p.clear();
                }
            }
            // Durable Streams: an offset reached without a message (a 204
            // from `now` names the tail) is where a new leader resumes. The
            // same offset again is a new leader catching up to it: told once.
            Relay::Action(Action::UpToDate { last_event_id }) => {
                m.last_event_id.clone_from(last_event_id);
                if let Some(p) = &mut self.positions {
                    p.reached(last_event_id);
                }
                if self.up_to_date_at.as_ref() == Some(last_event_id) {
                    return false;
                }
                self.up_to_date_at = Some(last_event_id.clone());
            }
            Relay::Action(_) => {}
        }
        true
    }

    /// A re-post for a newcomer that says nothing new to this tab.
    fn known(&self, notice: &Relay) -> bool {
        match notice {
            Relay::Action(Action::State { state, .. }) => self.mirror.state == *state,
            Relay::Action(Action::TransportChanged { transport, .. }) => {
                self.mirror.transport == Some(*transport)
            }
            Relay::Action(Action::UpToDate { .. }) => self.up_to_date_at.is_some(),
            _ => false,
        }
    }

    fn leader_paused_hidden(&self) -> bool {
        matches!(&self.role, Role::Follower(f) if !f.leader_gone)
            && self.mirror.state == State::Paused
            && matches!(self.mirror.reason, Reason::Hidden | Reason::Frozen)
    }

    /// The visibility rule: a visible follower takes over from a leader that
    /// paused because it is hidden or frozen, after
    /// `STEAL_AFTER_MS + U[0, STEAL_JITTER_MS)`.
    fn consider_steal(&mut self) {
        if self.steal_at().is_some() || self.hidden || !self.channel || !self.leader_paused_hidden()
        {
            return;
        }
        let delay = STEAL_AFTER_MS + self.rng.below(STEAL_JITTER_MS);
        let at = self.clock.latest().plus(delay);
        if let Role::Follower(f) = &mut self.role {
            f.steal_at = Some(at);
        }
    }

    fn cancel_steal(&mut self) {
        if let Role::Follower(f) = &mut self.role {
            f.steal_at = None;
        }
    }
}

/// Queue a leader's post of `notice` at its `cursor` (`sync`: a re-post for
/// a newcomer).
fn post(q: &mut Fifo<TabAction>, notice: Relay, cursor: &str, index: u32, sync: bool) {
    q.push_back(TabAction::Post(Wire::Notice {
        notice,
        cursor: cursor.into(),
        index,
        sync,
    }));
}

/// Whether `a` travels between tabs (see [`relayed`]).
fn is_relayed(a: &Action) -> bool {
    matches!(
        a,
        Action::State { .. }
            | Action::TransportChanged { .. }
            | Action::Error { .. }
            | Action::Reset { .. }
            | Action::UpToDate { .. }
    )
}

/// The copy of `a` that travels between tabs: states, transport changes,
/// errors and resets (a `Skipped` notice or a request action never does, and
/// a forged one is ignored). Field by field: they are all `Copy`, and a
/// derived clone of the whole `Action` would carry every variant's code.
fn relayed(a: &Action) -> Option<Action> {
    Some(match *a {
        Action::State {
            state,
            reason,
            delay_ms,
        } => Action::State {
            state,
            reason,
            delay_ms,
        },
        Action::TransportChanged {
            transport,
            previous,
            reason,
        } => Action::TransportChanged {
            transport,
            previous,
            reason,
        },
        Action::Error {
            code,
            status,
            retry_in_ms,
            fatal,
            ref id,
        } => Action::Error {
            code,
            status,
            retry_in_ms,
            fatal,
            id: id.clone(),
        },
        Action::Reset { reason } => Action::Reset { reason },
        Action::UpToDate { ref last_event_id } => Action::UpToDate {
            last_event_id: last_event_id.clone(),
        },
        _ => return None,
    })
}
