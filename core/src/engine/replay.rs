//! A server that resumes only from the `Last-Event-ID` header.
//!
//! A re-created native `EventSource` can carry the cursor only in the query
//! (`lastEventIdParam`), and so can every `fetch` transport cross-origin. A
//! server that reads only the header replays from its start instead, dedupe
//! drops every replayed event, and the subscription looks alive while it
//! delivers nothing it did not already have. The engine notices it: an
//! attempt that carried a cursor and whose leading events are ids already
//! delivered, from the OLDEST one remembered on and in the order they were
//! first seen, is such a replay once [`REPLAY_RUN`] of them arrived (or, with
//! fewer remembered, the whole history, at least two). A server that resumes
//! a little early (from a cursor it rounds down) replays the newest ids, not
//! the oldest, and one that resumes correctly sends a new event first: both
//! stop the watch. Dedupe keeps the first ids it saw past its capacity
//! (`policy::dedupe::FIRST_KEPT`), so a history longer than it remembers is
//! recognised too.
//!
//! Then, once per connection, an `error` with code `resume-ignored`, and a
//! move to a transport that sends the header, where one is usable (the
//! selector keeps only those: `fetch-sse` same-origin by default) and the
//! cursor may travel there (visible ASCII, `request::by_header`), at once
//! (`U[0, 100]` ms jitter, no failure counted); where none is, the error has
//! no `retryInMs` and the connection stays (replays are dropped as
//! duplicates, and the cursor never moves back to a replayed id).

use alloc::string::String;
use core::mem;

use super::action::{Action, ErrorCode, Reason};
use super::request::{by_header, cursor_in_query};
use super::retry::LONG_POLL_JITTER_MS;
use super::Engine;
use crate::time::Now;

/// Replayed ids in a row, oldest remembered first, that prove the server
/// ignored the cursor.
pub const REPLAY_RUN: usize = 3;
// The run is read from the first ids dedupe keeps in order
// (`Dedupe::position`): past them its places are ring slots.
const _: () = assert!(REPLAY_RUN <= crate::policy::dedupe::FIRST_KEPT);

/// The watch over one attempt's leading events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReplayWatch {
    /// Nothing to watch: no cursor was sent, or the events already told.
    Off,
    /// A cursor was sent; the first `run` events replayed the remembered ids
    /// from the oldest on.
    Watching { run: usize },
}

/// The connection's record of ignored resumes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ResumeCheck {
    /// The error was reported (once per connection).
    pub reported: bool,
    /// A replay was recognised; [`Engine::on_resume_ignored`] acts on it once
    /// the input's events are all processed.
    pub pending: bool,
}

impl Engine {
    /// A new attempt: watch its leading events when it carries a cursor in
    /// the query (`request::cursor_in_query`, the rule rendering uses). A
    /// request that sent `Last-Event-ID` is not watched: the header is the
    /// form every SSE server reads, and an endpoint that answers it with the
    /// same list (a `poll` of "the recent events") is not ignoring a resume
    /// the engine could send better; dedupe drops the repeats.
    pub(crate) fn watch_replay(&mut self) {
        let cross = self.config.cross_origin;
        let resumed = !self.cursor().is_empty();
        if let Some(a) = self.phase.attempt_mut() {
            if resumed && cursor_in_query(a.transport, cross.contains(a.transport)) {
                a.replay = ReplayWatch::Watching { run: 0 };
            }
        }
    }

    /// Before dedupe decides on an event: where its own id stands in the
    /// remembered order, when the live attempt is watched.
    pub(crate) fn replay_position(&self, own_id: Option<&str>) -> Option<usize> {
        let a = self.phase.attempt()?;
        if a.replay == ReplayWatch::Off {
            return None;
        }
        self.dedupe.position(own_id?)
    }

    /// After dedupe decided on an event (`duplicate`), with its `position`
    /// from before: extend the run, stop the watch, or recognise the replay.
    pub(crate) fn note_replay(&mut self, position: Option<usize>, duplicate: bool) {
        let remembered = self.dedupe.len();
        let Some(a) = self.phase.attempt_mut() else {
            return;
        };
        let ReplayWatch::Watching { run } = a.replay else {
            return;
        };
        if !duplicate || position != Some(run) {
            a.replay = ReplayWatch::Off;
            return;
        }
        let run = run + 1;
        if run >= REPLAY_RUN || (run >= 2 && run == remembered) {
            a.replay = ReplayWatch::Off;
            if !self.resume.reported {
                self.resume.reported = true;
                self.resume.pending = true;
            }
        } else {
            a.replay = ReplayWatch::Watching { run };
        }
    }

    /// Act on a recognised replay (called from `advance`): report it, and
    /// move to a transport that sends `Last-Event-ID` when one is usable.
    pub(crate) fn on_resume_ignored(&mut self, now: Now) {
        if !mem::take(&mut self.resume.pending) {
            return;
        }
        // A cursor that is not visible ASCII travels in the query on every
        // transport (`request::by_header`): no move would change what the
        // server reads.
        let cross = self.config.cross_origin;
        let change = by_header(self.cursor())
            .then(|| self.selector.resume_by_header(cross, Reason::ResumeIgnored))
            .flatten();
        let Some(change) = change else {
            self.actions.push_back(resume_error(None));
            return;
        };
        if let Some(a) = self.phase.take_attempt() {
            self.actions.push_back(Action::Abort(a.id));
        }
        self.drop_body();
        self.push_transport_change(change);
        let delay = self.rng.below(LONG_POLL_JITTER_MS + 1);
        self.actions.push_back(resume_error(Some(delay)));
        self.schedule(now, delay, Reason::ResumeIgnored);
    }
}

/// The cursor through one batch of parsed SSE items, around replayed events
/// (`Engine::take_items`). The parser gives each event the id in force at its
/// blank line, so after a replayed event, an id-less event would carry the
/// replayed id, and the cursor would move back to it or not depending on
/// where the chunk ended. Instead, once an event is dropped as a replay,
/// id-less events that carry its id take the cursor kept before it, and the
/// parser's id returns to that cursor at the end of the batch, unless an
/// event with a new id of its own (or an id-only block) came after.
#[derive(Debug, Default)]
pub(crate) struct BatchCursor {
    /// The cursor after the last event not dropped as a replay (`None`: the
    /// engine's cursor from before the batch).
    kept: Option<String>,
    /// The id of the replayed event the parser's id stands on, if any.
    replayed: Option<String>,
}

impl BatchCursor {
    /// Before an event is offered: an id-less event (`has_own_id` false)
    /// carrying the replayed id gets the kept cursor (`cursor` when none
    /// was kept in this batch). Returns whether `last_event_id` was rewritten.
    pub fn inherit(&self, last_event_id: &mut String, has_own_id: bool, cursor: &str) -> bool {
        if has_own_id || self.replayed.as_deref() != Some(last_event_id.as_str()) {
            return false;
        }
        last_event_id.clear();
        last_event_id.push_str(self.kept.as_deref().unwrap_or(cursor));
        true
    }

    /// After an event whose (possibly rewritten) cursor is `last_event_id`
    /// was offered: `replayed` (dropped as a duplicate) stands the parser on
    /// its id; any other event keeps its cursor, and ends the replay unless
    /// it inherited the kept cursor.
    pub fn after(&mut self, last_event_id: &str, replayed: bool, rewritten: bool) {
        if replayed {
            set(&mut self.replayed, last_event_id);
            return;
        }
        set(&mut self.kept, last_event_id);
        if !rewritten {
            self.replayed = None;
        }
    }

    /// At the end of the batch: the id the parser should carry on from, when
    /// it still stands on a replayed id (`parser_id`).
    pub fn restore<'a>(&'a self, parser_id: &str, cursor: &'a str) -> Option<&'a str> {
        (self.replayed.as_deref() == Some(parser_id))
            .then(|| self.kept.as_deref().unwrap_or(cursor))
    }
}

/// `slot = Some(value)`, reusing its buffer.
fn set(slot: &mut Option<String>, value: &str) {
    match slot {
        Some(s) => {
            s.clear();
            s.push_str(value);
        }
        None => *slot = Some(String::from(value)),
    }
}

fn resume_error(retry_in_ms: Option<u64>) -> Action {
    Action::Error {
        code: ErrorCode::ResumeIgnored,
        status: None,
        retry_in_ms,
        fatal: false,
        id: None,
    }
}
