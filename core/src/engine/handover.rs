//! A fresh engine resuming from a cursor another engine reached: the
//! cross-tab coordinator's `Run { cursor }` (a tab taking over a connection,
//! or coming back from the back-forward cache).
//!
//! The cursor is where to resume, not the app's configured start: with
//! Durable Streams a `410 Gone` restarts from the configured start (`now` if
//! the app asked for `now`, else `-1`), so writing the hand-over offset into
//! [`Config::last_event_id`] would turn a 410 after a hand-over into a replay
//! of the whole stream.

use super::config::Config;
use super::Engine;

impl Engine {
    /// An engine for `config` (the app's options, kept as they are) that
    /// resumes from `cursor`. With Durable Streams a cursor that is no
    /// offset (empty: none seen yet; or malformed: the channel between tabs
    /// is open to any same-origin script) is ignored: the engine starts from
    /// the configured start.
    pub fn resuming(config: Config, seed: u64, cursor: &str) -> Engine {
        Engine::new(config, seed).resume_from(cursor)
    }

    /// This fresh engine, resuming from `cursor` when its profile accepts it.
    pub(crate) fn resume_from(self, cursor: &str) -> Engine {
        let mut e = self;
        if !e.profile().accepts_resume_cursor(cursor) {
            return e;
        }
        e.parser.set_last_event_id(cursor);
        e
    }
}
