//! Draining the engine and the coordinator: their actions become the
//! adapter's work, the coordinator's `Run`/`Halt`/`Reconnect` are carried
//! out here, and what subscribers hear passes the coordinator (own notices)
//! and the calm status on its way out.

use alloc::boxed::Box;
use alloc::vec;

use super::{Delivery, Session, SessionAction};
use crate::calm::Change;
use crate::crosstab::{Relay, TabAction};
use crate::engine::{Action, ErrorCode, Message};
use crate::time::Now;

impl Session {
    /// Drain the engine until its `Wait`.
    pub(super) fn drain_engine(&mut self, now: Now) {
        loop {
            let action = self.engine.poll();
            if cfg!(feature = "debug") && self.debug && !matches!(action, Action::Wait { .. }) {
                self.work.push_back(SessionAction::Debug(action.clone()));
            }
            match action {
                Action::Wait { until } => {
                    self.engine_until = until;
                    return;
                }
                Action::Open(req) => self.work.push_back(SessionAction::Open(req)),
                Action::Abort(id) => self.work.push_back(SessionAction::Abort(id)),
                Action::Probe(id) => self.work.push_back(SessionAction::Probe(id)),
                // The debug log's alone.
                Action::Note(_) | Action::Ignored { .. } => {}
                Action::Deliver(msg) => self.own_message(now, msg),
                // This tab's app's `headers` failed: never relayed.
                a @ Action::Error {
                    code: ErrorCode::Headers,
                    ..
                } => self.tell(now, SessionAction::Tell(a)),
                other => self.own_action(now, other),
            }
        }
    }

    /// Drain the coordinator until its `Wait`, carrying out what concerns
    /// this tab's engine and subscribers.
    pub(super) fn drain_tabs(&mut self, now: Now) {
        loop {
            let work = match self.tabs.poll() {
                TabAction::Wait { until } => {
                    self.tabs_until = until;
                    return;
                }
                TabAction::Post(w) => SessionAction::Post(Box::new(w)),
                TabAction::RequestLock { steal } => SessionAction::RequestLock { steal },
                TabAction::DropLock => SessionAction::DropLock,
                TabAction::OpenChannel => SessionAction::OpenChannel,
                TabAction::CloseChannel => SessionAction::CloseChannel,
                TabAction::Run { cursor } => {
                    self.run(now, &cursor);
                    continue;
                }
                TabAction::Halt => {
                    self.halt(None);
                    continue;
                }
                TabAction::Reconnect => {
                    self.answer = self.engine.handle_reconnect(now, self.page.online);
                    self.drain_engine(now);
                    continue;
                }
                TabAction::Tell(relay) => {
                    self.tell(now, relayed(relay));
                    continue;
                }
            };
            self.work.push_back(work);
        }
    }

    /// A delivery of this tab's engine: the coordinator first (a leader
    /// relays it), told when fresh.
    fn own_message(&mut self, now: Now, msg: Box<Message>) {
        let transport = self.engine.transport();
        let cursor = self.engine.last_event_id();
        let fresh = self.tabs.handle_own_message(&msg, transport, cursor);
        self.drain_tabs(now);
        if fresh {
            let d = Delivery {
                msg: *msg,
                transport,
                own: true,
            };
            self.tell(now, SessionAction::Messages(vec![d]));
        }
    }

    /// Another notice of this tab's engine, as [`Session::own_message`].
    fn own_action(&mut self, now: Now, action: Action) {
        let fresh = self
            .tabs
            .handle_own_action(&action, self.engine.last_event_id());
        self.drain_tabs(now);
        if fresh {
            self.tell(now, SessionAction::Tell(action));
        }
    }

    /// Queue `notice` for subscribers (messages join a batch queued just
    /// before them), then the status change a state causes.
    pub(super) fn tell(&mut self, now: Now, notice: SessionAction) {
        let change = match &notice {
            SessionAction::Tell(Action::State { state, reason, .. }) => {
                self.calm.handle_state(now.mono, *state, *reason)
            }
            _ => None,
        };
        match (notice, self.told.back_mut()) {
            (SessionAction::Messages(mut more), Some(SessionAction::Messages(batch))) => {
                batch.append(&mut more)
            }
            (notice, _) => self.told.push_back(notice),
        }
        if let Some(c) = change {
            self.tell_status(c);
        }
    }

    pub(super) fn tell_status(&mut self, change: Change) {
        self.told.push_back(SessionAction::Status(change));
    }
}

/// A notice relayed from the leader tab, as subscribers hear it.
fn relayed(relay: Relay) -> SessionAction {
    match relay {
        Relay::Message(msg, transport) => SessionAction::Messages(vec![Delivery {
            msg,
            transport,
            own: false,
        }]),
        Relay::Action(a) => SessionAction::Tell(a),
    }
}
