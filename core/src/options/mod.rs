//! `subscribe()`'s options checked and turned into the engine's [`Config`]
//! and the page's own options ([`Parsed`]), for both APIs of the browser
//! crate (docs/options.md is the table of every option, its default and
//! what is refused).
//!
//! The adapter reads one option at a time, in the order of
//! [`slots::TABLE`], as the [`Reader`] asks for it ([`Reader::ask`]), and
//! hands over what it found ([`Given`]); the reader checks it against the
//! options before it and keeps it, or refuses it ([`Refusal`]: the option's
//! name, what was expected and, where it is not the value given, what was
//! got). The adapter reads nothing after a refusal, so no getter of the app
//! runs after it. `undefined` and `null` are [`Given::Absent`]: the default.
//! What only the browser can check (an `AbortSignal`, a `headers` object,
//! a URL resolved against the page) the adapter checks itself before it
//! hands the slot over.

mod apply;
mod check;
pub mod slots;

use alloc::string::String;
use alloc::vec::Vec;

pub use slots::Slot;

use crate::calm::DEFAULT_LOST_AFTER_MS;
use crate::engine::Config;
use crate::persist::Scope;

/// One option's value as the adapter found it.
#[derive(Clone, Debug, PartialEq)]
pub enum Given {
    /// `undefined` or `null`: the default.
    Absent,
    /// A boolean.
    Bool(bool),
    /// A number (any: `NaN` and the infinities too).
    Number(f64),
    /// A string.
    Text(String),
    /// An array, for the options that take one ([`Slot::wants_list`]): each
    /// element that is a string, `None` for any other.
    List(Vec<Option<String>>),
    /// A function.
    Function,
    /// Any other object (an array where no list is taken).
    Object,
    /// Anything else (a symbol, a bigint).
    Other,
}

/// Why an option is refused: the adapter's `invalid-option` error says
/// `invalid option: <name>: expected <expected>, got <got>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The option's name (`"backoff.baseMs"`; a `urls` entry is `"urls"`).
    pub name: &'static str,
    /// What it must be (`"a non-negative number of milliseconds"`:
    /// [`Expected::text`]).
    pub expected: Expected,
    /// What was got when it is not the value given: the cursor a Durable
    /// Streams `offset` refusal names (it may come from `lastEventId`).
    /// `None`: the value given for the slot.
    pub got: Option<String>,
}

/// What a refused option must be, as [`text`](Expected::text) says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    /// This text.
    Is(&'static str),
    /// The text, then each name quoted, comma-separated ([`listed`]).
    Listed(&'static str, &'static [&'static str]),
    /// None: the build was made without this cargo feature ([`not_built`]).
    NotBuilt(&'static str),
}

impl Expected {
    /// The words of an `invalid-option` message after `expected`.
    pub fn text(self) -> String {
        match self {
            Expected::Is(t) => String::from(t),
            Expected::Listed(prefix, names) => listed(prefix, names),
            Expected::NotBuilt(feature) => not_built(feature),
        }
    }
}

/// The parts of the browser crate this build has (its cargo features): an
/// option whose part is missing is refused, never silently ignored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Built {
    /// `crossTab` (feature `cross-tab`).
    pub cross_tab: bool,
    /// `protocol: "durable-streams"`, `offset`, `live` (`durable-streams`).
    pub durable_streams: bool,
    /// `persist`, `persistKey` (`persist`).
    pub persist: bool,
    /// `method`, `body`, `resume`, `end` (`post-streams`).
    pub post_streams: bool,
    /// `debug` (`debug`).
    pub debug: bool,
}

/// What `subscribe()`'s options make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The engine's configuration, [`Config::sanitized`] by
    /// [`Reader::finish`].
    pub config: Config,
    /// `parse: "json"` (default `"text"`).
    pub json: bool,
    /// `withCredentials`. Default `false`.
    pub with_credentials: bool,
    /// `debug`: `true` or a function. Default `false`.
    pub debug: bool,
    /// `crossTab`. Default `false`.
    pub cross_tab: bool,
    /// `seed` (a finite number, truncated). Default `None`: random.
    pub seed: Option<u64>,
    /// `persist` and `persistKey`. Default `None`.
    pub persist: Option<(Scope, Option<String>)>,
    /// `lostAfterMs`. Default 5000.
    pub lost_after_ms: u64,
}

/// `method`, `body` and `resume` as read, until `end` makes the start rules.
#[derive(Default)]
struct Request {
    method: Option<String>,
    body: bool,
    /// `None`: absent; `Some(true)`: a function.
    resume: Option<bool>,
    end_event: Option<String>,
}

/// Reads `subscribe()`'s options one [`Slot`] at a time.
pub struct Reader {
    parsed: Parsed,
    built: Built,
    next: usize,
    request: Request,
    /// The first refusal, once one is made.
    refusal: Option<Refusal>,
}

impl Reader {
    /// Before the first option, for the resolved subscribe `url`.
    pub fn new(url: &str, built: Built) -> Reader {
        Reader {
            parsed: Parsed {
                config: Config::new(url),
                json: false,
                with_credentials: false,
                debug: false,
                cross_tab: false,
                seed: None,
                persist: None,
                lost_after_ms: DEFAULT_LOST_AFTER_MS,
            },
            built,
            next: 0,
            request: Request::default(),
            refusal: None,
        }
    }

    /// The option to read next; `None` once every one is read. `live` is
    /// skipped in a build without Durable Streams (it does nothing there).
    pub fn ask(&mut self) -> Option<Slot> {
        let slot = Slot::at(self.next)?;
        self.next += 1;
        if slot == Slot::Live && !self.built.durable_streams {
            return self.ask();
        }
        Some(slot)
    }

    /// The value of the slot [`ask`](Self::ask) gave last: kept, or
    /// refused (read nothing more then).
    pub fn feed(&mut self, given: &Given) -> Result<(), Refusal> {
        let slot = Slot::at(self.next.wrapping_sub(1)).unwrap_or(Slot::Parse);
        self.apply(slot, given);
        self.refusal.take().map_or(Ok(()), Err)
    }

    /// What the options make, with the engine's defaults and floors applied
    /// ([`Config::sanitized`]).
    pub fn finish(self) -> Parsed {
        let mut parsed = self.parsed;
        parsed.config = parsed.config.sanitized();
        parsed
    }
}

/// `expected` of a duration (`…Ms`).
pub const MS: &str = "a non-negative number of milliseconds";
/// `expected` of a count.
pub const COUNT: &str = "a non-negative number or Infinity";
/// `expected` of a string option.
pub const STRING: &str = "a string";

/// `prefix` and `names`, each quoted, comma-separated (`one of "a", "b"`).
pub fn listed(prefix: &str, names: &[&str]) -> String {
    let mut out = String::from(prefix);
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push('"');
        out.push_str(n);
        out.push('"');
    }
    out
}

/// `expected` of an option this build was compiled without (the
/// "tidings/receive" entry, or a Rust app without the cargo `feature`).
pub fn not_built(feature: &str) -> String {
    let parts = [
        "none in this build; the \"tidings\" entry has it (feature \"",
        feature,
        "\")",
    ];
    parts.concat()
}
