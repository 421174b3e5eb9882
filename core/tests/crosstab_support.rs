//! A virtual browser profile for cross-tab tests: N [`CrossTab`] machines,
//! one Web Lock (a holder and a FIFO queue; `steal` takes it at once and the
//! holder hears it was stolen), one `BroadcastChannel` (a post reaches every
//! other tab with its channel open, in order), and a timer per tab fired
//! exactly at its `Wait`. Lock grants and posts are delivered on later
//! "tasks" (a FIFO), never inside the action that caused them, as browsers
//! do. Shared by the `crosstab_*` tests through `#[path]`.
#![allow(dead_code)]

use std::collections::VecDeque;

use tidings_core::crosstab::{CrossTab, Relay, Support, TabAction, Wire};
use tidings_core::engine::{Action, Message, Reason, State, TransportKind};
use tidings_core::time::{MonoMs, Now};

pub const WALL0: i64 = 1_700_000_000_000;

/// One tab.
pub struct Tab {
    pub m: CrossTab,
    pub running: bool,
    /// Cursors every `Run` started from.
    pub runs: Vec<String>,
    pub halts: u32,
    /// `Reconnect`s its engine was given.
    pub reconnects: u32,
    /// What its subscriptions heard (relayed or its own), in order.
    pub told: Vec<Relay>,
    pub timer: Option<MonoMs>,
    pub channel: bool,
    pub locks_requested: Vec<bool>,
    /// The lock API throws for this tab.
    pub lock_throws: bool,
}

/// Something delivered to a tab on a later task.
#[derive(Debug)]
pub enum Task {
    Granted(usize),
    Stolen(usize),
    Failed(usize),
    Wire(usize, Wire),
}

pub struct Profile {
    pub tabs: Vec<Tab>,
    pub holder: Option<usize>,
    pub queue: VecDeque<usize>,
    pub tasks: VecDeque<Task>,
    pub now: u64,
    /// Every post, by whom.
    pub posts: Vec<(usize, Wire)>,
}

pub fn now_at(ms: u64) -> Now {
    Now::at(ms, WALL0 + ms as i64)
}

pub fn msg(n: u32) -> Relay {
    Relay::Message(
        Message {
            id: n.to_string(),
            last_event_id: n.to_string(),
            event: "message".into(),
            data: format!("m{n}"),
            binary: false,
        },
        Some(TransportKind::FetchSse),
    )
}

pub fn state(state: State, reason: Reason) -> Relay {
    Relay::Action(Action::State {
        state,
        reason,
        delay_ms: None,
    })
}

impl Default for Profile {
    fn default() -> Self {
        Self::new()
    }
}

/// An input for one tab's machine.
type Input = Box<dyn FnOnce(&mut CrossTab, Now)>;

impl Profile {
    pub fn new() -> Profile {
        Profile {
            tabs: Vec::new(),
            holder: None,
            queue: VecDeque::new(),
            tasks: VecDeque::new(),
            now: 0,
            posts: Vec::new(),
        }
    }

    /// Open a tab (`locks`: Web Locks present) and let every task run.
    pub fn open(&mut self, cursor: &str, seed: u64, hidden: bool, locks: bool) -> usize {
        self.open_with(CrossTab::new(cursor.into(), seed), hidden, locks)
    }

    /// Open a tab with this machine (e.g. `with_offsets`).
    pub fn open_with(&mut self, m: CrossTab, hidden: bool, locks: bool) -> usize {
        let i = self.tabs.len();
        self.tabs.push(Tab {
            m,
            running: false,
            runs: Vec::new(),
            halts: 0,
            reconnects: 0,
            told: Vec::new(),
            timer: None,
            channel: true,
            locks_requested: Vec::new(),
            lock_throws: false,
        });
        let n = now_at(self.now);
        self.tabs[i].m.handle_visibility(n, hidden);
        let support = Support {
            locks,
            channel: true,
        };
        self.tabs[i].m.handle_start(n, support);
        self.drain(i);
        i
    }

    pub fn now(&self) -> Now {
        now_at(self.now)
    }

    /// Feed tab `i` an input, then drain it.
    pub fn feed(&mut self, i: usize, f: impl FnOnce(&mut CrossTab, Now)) {
        let n = self.now();
        f(&mut self.tabs[i].m, n);
        self.drain(i);
    }

    /// The leader's engine emits `notice` (cursor `cursor`); returns whether
    /// its own subscriptions heard it.
    pub fn emit(&mut self, i: usize, notice: Relay, cursor: &str) -> bool {
        let m = &mut self.tabs[i].m;
        let told = match &notice {
            Relay::Message(msg, t) => m.handle_own_message(msg, *t, cursor),
            Relay::Action(a) => m.handle_own_action(a, cursor),
        };
        if told {
            self.tabs[i].told.push(notice);
        }
        self.drain(i);
        told
    }

    fn drain(&mut self, i: usize) {
        loop {
            match self.tabs[i].m.poll() {
                TabAction::Wait { until } => {
                    self.tabs[i].timer = until;
                    return;
                }
                a => self.render(i, a),
            }
        }
    }

    fn render(&mut self, i: usize, a: TabAction) {
        match a {
            TabAction::Post(w) => {
                assert!(self.tabs[i].channel, "tab {i} posts on a closed channel");
                self.posts.push((i, w.clone()));
                for j in 0..self.tabs.len() {
                    if j != i && self.tabs[j].channel {
                        self.tasks.push_back(Task::Wire(j, w.clone()));
                    }
                }
            }
            TabAction::RequestLock { steal } => self.request(i, steal),
            TabAction::DropLock => self.release(i),
            TabAction::OpenChannel => self.tabs[i].channel = true,
            TabAction::CloseChannel => self.tabs[i].channel = false,
            TabAction::Run { cursor } => {
                self.tabs[i].running = true;
                self.tabs[i].runs.push(cursor);
            }
            TabAction::Halt => {
                self.tabs[i].running = false;
                self.tabs[i].halts += 1;
            }
            TabAction::Tell(r) => self.tabs[i].told.push(r),
            TabAction::Reconnect => self.tabs[i].reconnects += 1,
            TabAction::Wait { .. } => unreachable!(),
        }
    }

    fn request(&mut self, i: usize, steal: bool) {
        self.tabs[i].locks_requested.push(steal);
        // A new request replaces the tab's old one (dropped first).
        self.release(i);
        if self.tabs[i].lock_throws {
            self.tasks.push_back(Task::Failed(i));
            return;
        }
        if steal {
            if let Some(h) = self.holder.replace(i) {
                self.tasks.push_back(Task::Stolen(h));
            }
            self.tasks.push_back(Task::Granted(i));
        } else if self.holder.is_none() {
            self.holder = Some(i);
            self.tasks.push_back(Task::Granted(i));
        } else {
            self.queue.push_back(i);
        }
    }

    fn release(&mut self, i: usize) {
        self.queue.retain(|&q| q != i);
        // A grant not yet delivered to `i` is withdrawn with its request.
        self.tasks
            .retain(|t| !matches!(t, Task::Granted(g) if *g == i));
        if self.holder == Some(i) {
            self.holder = self.queue.pop_front();
            if let Some(next) = self.holder {
                self.tasks.push_back(Task::Granted(next));
            }
        }
    }

    /// The tab closes or crashes: the browser releases its lock; it hears
    /// nothing more.
    pub fn kill(&mut self, i: usize) {
        self.tabs[i].channel = false;
        self.tabs[i].running = false;
        self.tasks.retain(|t| match t {
            Task::Granted(j) | Task::Stolen(j) | Task::Failed(j) | Task::Wire(j, _) => *j != i,
        });
        self.release(i);
    }

    /// Run every queued task (and what it causes).
    pub fn settle(&mut self) {
        for _ in 0..10_000 {
            let Some(t) = self.tasks.pop_front() else {
                return;
            };
            let (i, f): (usize, Input) = match t {
                Task::Granted(i) => (i, Box::new(|m, n| m.handle_lock_granted(n))),
                Task::Stolen(i) => (i, Box::new(|m, n| m.handle_lock_stolen(n))),
                Task::Failed(i) => (i, Box::new(|m, n| m.handle_lock_failed(n))),
                Task::Wire(i, w) => (i, Box::new(move |m, n| m.handle_wire(n, w))),
            };
            self.feed(i, f);
        }
        panic!("tasks never settle");
    }

    /// Move virtual time to `t`, firing every tab timer due on the way (in
    /// time order), settling after each.
    pub fn advance_to(&mut self, t: u64) {
        self.settle();
        loop {
            let due = (0..self.tabs.len())
                .filter_map(|i| self.tabs[i].timer.map(|at| (at.0, i)))
                .filter(|(at, _)| *at <= t)
                .min();
            let Some((at, i)) = due else { break };
            self.now = self.now.max(at);
            self.tabs[i].timer = None;
            self.feed(i, |m, n| m.handle_timer(n));
            self.settle();
        }
        self.now = self.now.max(t);
    }

    /// Tabs whose engine runs.
    pub fn running(&self) -> Vec<usize> {
        (0..self.tabs.len())
            .filter(|&i| self.tabs[i].running)
            .collect()
    }

    /// The message numbers tab `i`'s subscriptions heard, in order.
    pub fn heard(&self, i: usize) -> Vec<u32> {
        self.tabs[i]
            .told
            .iter()
            .filter_map(|r| match r {
                Relay::Message(m, _) => m.data[1..].parse().ok(),
                _ => None,
            })
            .collect()
    }

    /// The states tab `i`'s subscriptions heard, in order.
    pub fn states(&self, i: usize) -> Vec<(State, Reason)> {
        self.tabs[i]
            .told
            .iter()
            .filter_map(|r| match r {
                Relay::Action(Action::State { state, reason, .. }) => Some((*state, *reason)),
                _ => None,
            })
            .collect()
    }
}
