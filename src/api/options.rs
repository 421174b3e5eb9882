//! `subscribe()` options as the app passes them (JS names, camelCase). Every
//! duration is a number of milliseconds and says so in its name (`…Ms`).
//! The full table, with defaults, is in the README and DESIGN.md.

use serde::Deserialize;

/// How message data reaches the app.
#[derive(Deserialize, Default, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Parse {
    /// The data string as sent (default).
    #[default]
    Text,
    /// `JSON.parse(data)`; a failure is an `error` event with code `parse`.
    Json,
}

/// The subscription options read so far. Unknown keys are ignored, so an app
/// written against a newer version keeps working.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct Options {
    /// Named event types delivered besides `message`. Default `[]`.
    pub events: Vec<String>,
    /// `"text"` (default) or `"json"`.
    pub parse: Parse,
    /// Send cookies cross-origin. Default `false`.
    pub with_credentials: bool,
    /// Initial cursor (resume from a stored id). Default `""`.
    pub last_event_id: String,
    /// Query parameter carrying the cursor. Default `"lastEventId"` (nchan: `last_event_id`).
    pub last_event_id_param: Option<String>,
    /// Seeds the jitter PRNG, for reproducible tests. Default: random (`crypto.getRandomValues`).
    pub seed: Option<f64>,
    /// Least delay before any reconnect, in ms. Default 1000.
    pub backoff: Backoff,
}

/// `backoff.*` options.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct Backoff {
    /// Least delay before any reconnect, ms (default 1000).
    pub floor_ms: Option<f64>,
    /// Exponential step, ms (default 500).
    pub base_ms: Option<f64>,
    /// Cap of the exponential part, ms (default 60 000).
    pub max_ms: Option<f64>,
}

impl Options {
    /// Read options from a JS value; `undefined`/`null` give the defaults.
    /// Errors: a value of the wrong shape (e.g. `events: 3`).
    pub fn from_js(v: wasm_bindgen::JsValue) -> Result<Self, serde_wasm_bindgen::Error> {
        if v.is_undefined() || v.is_null() {
            return Ok(Options::default());
        }
        serde_wasm_bindgen::from_value(v)
    }

    /// The cursor's query parameter name.
    pub fn cursor_param(&self) -> &str {
        self.last_event_id_param.as_deref().unwrap_or("lastEventId")
    }
}
