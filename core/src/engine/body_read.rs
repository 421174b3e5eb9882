//! How the adapter reads a `fetch` response body: decided with the verdict
//! on its head, so the body is read as the engine will take it (a prefix
//! test in the adapter once took `text/event-streamx` for a stream).

use super::input::AttemptId;
use super::state::{BodyKind, PerTransport};
use super::Engine;

/// How to read the body of a `fetch` response ([`Engine::body_read`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyRead {
    /// Chunk by chunk as it arrives, each to `handle_bytes`, then
    /// `handle_stream_end`: event streams, Durable Streams text and bytes,
    /// and any body the engine does not use.
    Chunks,
    /// Whole, as text, to `handle_body_resource` (a raw resource).
    Text,
    /// Whole, as text, a JSON long-poll / poll body, checked with
    /// `JSON.parse`: its fact is [`json_body`](super::json_body)'s.
    Json,
    /// Whole, as text, a Durable Streams JSON array: its elements to
    /// `handle_json_chunk`.
    JsonArray,
}

impl Engine {
    /// How to read the body of attempt `id`, asked right after its response
    /// head was handled. By the verdict on that head: `long-poll` and `poll`
    /// by its media type (`text/event-stream` chunks, JSON as [`BodyRead::Json`],
    /// anything else as text), a Durable Streams 200 by its body kind (JSON as
    /// [`BodyRead::JsonArray`], else chunks); [`BodyRead::Chunks`] for streams
    /// and for anything but the live attempt with a head that has a body.
    pub fn body_read(&self, id: AttemptId) -> BodyRead {
        let Some(a) = self.read_attempt(id) else {
            return BodyRead::Chunks;
        };
        match (&a.per, self.durable_chunk(id)) {
            // On `long-poll`, or `fetch-sse` in SSE mode's catch-up reads.
            (_, Some(true)) => BodyRead::JsonArray,
            (PerTransport::Request(r), None) => match r.body {
                BodyKind::Json => BodyRead::Json,
                BodyKind::Resource => BodyRead::Text,
                BodyKind::EventStream | BodyKind::Pending => BodyRead::Chunks,
            },
            _ => BodyRead::Chunks,
        }
    }
}
