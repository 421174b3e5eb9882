//! `persist` in a build without the `persist` feature: `subscribe` refuses
//! the option (`invalid-option`, src/options.rs), so no subscription has a
//! persisted cursor. [`Persisted`] has no value: `Option<Persisted>` is
//! always `None` and every call on it compiles to nothing.

use crate::connection::Connection;
use crate::event::Event;
use crate::options::Options;

/// No persisted cursor: an enum with no variant.
pub(crate) enum Persisted {}

/// Never a persisted cursor in this build.
pub(crate) fn open(_url: &str, _options: &mut Options) -> Option<Persisted> {
    None
}

impl Persisted {
    /// Unreachable: no value exists.
    pub fn started(&self, _conn: &Connection) {
        match *self {}
    }

    /// Unreachable: no value exists.
    pub fn handled(&self, _cursor: &str) {
        match *self {}
    }

    /// Unreachable: no value exists.
    pub fn iterate(&self) {
        match *self {}
    }

    /// Unreachable: no value exists.
    #[cfg(feature = "rust")]
    pub fn queued(&self) {
        match *self {}
    }

    /// Unreachable: no value exists.
    pub fn pulled(&self, _conn: &Connection, _cursor: &str) {
        match *self {}
    }

    /// Unreachable: no value exists.
    pub fn on_event(&self, _e: &Event) {
        match *self {}
    }

    /// Unreachable: no value exists.
    pub fn flush(&self, _conn: &Connection) {
        match *self {}
    }

    /// Unreachable: no value exists.
    pub fn flush_as(&self, _conn: &Connection, _follows: bool) {
        match *self {}
    }
}
