//! [`Error`]: what `subscribe` refuses, what a connection reports, and what a
//! message that does not decode gives. Its [`Error::code`] is the JS
//! `error.code` of the same failure; [`Error::Connection`] is what the JS
//! `error` events carry too (`src/event/js.rs` renders it).

use std::fmt;

use tidings_core::engine::ErrorCode;

/// A tidings error. `code()` gives the JS `error.code`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// `invalid-url`: the URL (or a `url_for` entry) does not resolve
    /// against the page to an `http:`/`https:` URL with a host.
    InvalidUrl,
    /// `invalid-option`: an option the JS API would refuse too (the JS
    /// name, such as `events` or `backoff.baseMs`; `headers` for a header the
    /// browser's `Headers` refuses). See the docs/options.md.
    InvalidOption {
        /// The JS option name.
        option: String,
        /// What was expected and what was given, as the JS message says it
        /// after the name: `expected a string, got 5 (number)`.
        detail: String,
    },
    /// The connection's own `error` event (JS codes such as `http-status`,
    /// `network-or-cors`, `gave-up`): see [`ErrorCode`].
    Connection {
        /// What went wrong.
        code: ErrorCode,
        /// The HTTP status involved, if any.
        status: Option<u16>,
        /// Milliseconds until the next attempt, when one is scheduled.
        retry_in_ms: Option<u64>,
        /// The subscription stopped for good (its message stream ends).
        fatal: bool,
        /// With [`ErrorCode::TooLarge`]: the skipped message's own id (`""`
        /// when its block set none); `None` for every other code (JS
        /// `error.id`).
        id: Option<String>,
    },
    /// `parse`: `Message::json` (Rust API) could not decode the
    /// message's data (not JSON, or not the shape of the type asked for).
    /// The subscription goes on.
    Decode {
        /// The message's own id (`""` when it had none).
        id: String,
        /// What the decoder said.
        reason: String,
    },
}

impl Error {
    /// The JS `error.code` of this error: `invalid-url`, `invalid-option`,
    /// `parse`, or the connection's code.
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidUrl => "invalid-url",
            Error::InvalidOption { .. } => "invalid-option",
            Error::Connection { code, .. } => code.as_str(),
            Error::Decode { .. } => "parse",
        }
    }

    /// Whether the subscription stopped for good because of it.
    pub fn is_fatal(&self) -> bool {
        matches!(self, Error::Connection { fatal: true, .. })
    }

    /// The JS API's refusal (an `Error` with `code` and `message
    /// "invalid option: <name>: expected …, got …"`) as a Rust value.
    #[cfg(feature = "rust")]
    pub(crate) fn from_js(e: &wasm_bindgen::JsValue) -> Error {
        let field = |k: &str| {
            js_sys::Reflect::get(e, &wasm_bindgen::JsValue::from_str(k))
                .ok()
                .and_then(|v| v.as_string())
                .unwrap_or_default()
        };
        match field("code").as_str() {
            "invalid-url" => Error::InvalidUrl,
            _ => {
                let message = field("message");
                let rest = message.strip_prefix("invalid option: ").unwrap_or(&message);
                let (option, detail) = rest.split_once(": expected ").unwrap_or((rest, ""));
                let mut expected = String::from("expected ");
                expected.push_str(detail);
                Error::InvalidOption {
                    option: option.into(),
                    detail: expected,
                }
            }
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidUrl => {
                f.write_str("invalid-url: url must be relative, or http: or https: with a host")
            }
            Error::InvalidOption { option, detail } => {
                write!(f, "invalid-option: {option}: {detail}")
            }
            Error::Connection {
                code,
                status,
                retry_in_ms,
                fatal,
                ..
            } => {
                write!(f, "{}", code.as_str())?;
                if let Some(s) = status {
                    write!(f, " (HTTP {s})")?;
                }
                match (fatal, retry_in_ms) {
                    (true, _) => f.write_str(", stopped"),
                    (false, Some(ms)) => write!(f, ", retrying in {ms} ms"),
                    (false, None) => Ok(()),
                }
            }
            Error::Decode { id, reason } => write!(f, "parse: message {id:?}: {reason}"),
        }
    }
}

impl std::error::Error for Error {}
