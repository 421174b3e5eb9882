//! [`Message`]: one server message, as the JS `message` event carries it,
//! with typed JSON decoding.

use serde::de::DeserializeOwned;

use super::Error;

/// One message (a `message` or a named event listed in `events`).
///
/// ```no_run
/// # async fn run(mut sub: tidings::Subscription) -> Result<(), tidings::Error> {
/// #[derive(serde::Deserialize)]
/// struct Price { symbol: String, cents: u64 }
/// while let Some(msg) = sub.next().await {
///     let price: Price = msg.json()?; // Error::Decode when it is not a Price
///     println!("{} {} {}", msg.id, price.symbol, price.cents);
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Message {
    /// The event's own id, or `""` when its block set none.
    pub id: String,
    /// The cursor after this message (resume from here).
    pub last_event_id: String,
    /// The event type: `"message"`, or a name listed in `events`.
    pub event: String,
    /// The data as sent. For a binary Durable Streams body (`binary`), one
    /// `char` per byte: see [`Message::bytes`].
    pub data: String,
    /// The transport that carried it: `"eventsource"`, `"fetch-sse"`,
    /// `"long-poll"` or `"poll"`.
    pub transport: &'static str,
    /// The data is bytes, not text.
    pub binary: bool,
}

impl Message {
    /// The data decoded as JSON into `T`: the browser's `JSON.parse`, then
    /// `serde-wasm-bindgen` (docs/rust.md has the measurement against
    /// `serde_json` that chose it). Not JSON, or not a `T`, is
    /// [`Error::Decode`] (JS code `parse`), never a panic.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, Error> {
        let value = js_sys::JSON::parse(&self.data).map_err(|e| self.decode_error(&e))?;
        serde_wasm_bindgen::from_value(value).map_err(|e| Error::Decode {
            id: self.id.clone(),
            reason: e.to_string(),
        })
    }

    /// The data as bytes: for a binary message each `char` is one byte; for
    /// text, its UTF-8.
    pub fn bytes(&self) -> Vec<u8> {
        match self.binary {
            true => self.data.chars().map(|c| c as u8).collect(),
            false => self.data.as_bytes().to_vec(),
        }
    }

    fn decode_error(&self, thrown: &wasm_bindgen::JsValue) -> Error {
        let reason = js_sys::Reflect::get(thrown, &"message".into())
            .ok()
            .and_then(|m| m.as_string())
            .unwrap_or_else(|| String::from("not JSON"));
        Error::Decode {
            id: self.id.clone(),
            reason,
        }
    }

    pub(crate) fn from_engine(m: &tidings_core::engine::Message, transport: &'static str) -> Self {
        Message {
            id: m.id.clone(),
            last_event_id: m.last_event_id.clone(),
            event: m.event.clone(),
            data: m.data.clone(),
            transport,
            binary: m.binary,
        }
    }
}
