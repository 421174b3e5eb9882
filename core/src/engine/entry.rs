//! The one input entry: every fact the adapter reports is an [`Input`],
//! handed to [`Engine::handle`], which applies the rules every input shares
//! once (a closed connection ignores everything; a fact about an attempt
//! that is no longer live is ignored; due deadlines are processed after
//! each input) and leaves each fact's own logic to a small function.

use alloc::string::String;
use alloc::vec::Vec;

use super::config::Capabilities;
use super::input::{AttemptId, IncomingMessage, NetworkHint, ResponseHead, TransportError};
use super::Engine;
use crate::time::Now;

/// One fact reported by the adapter. The `handle_*` methods of [`Engine`]
/// are shorthands for [`Engine::handle`] with one of these, and document each
/// fact's rule.
#[derive(Debug)]
pub enum Input<'a> {
    /// See [`Engine::handle_start`].
    Start(Capabilities),
    /// See [`Engine::handle_close`].
    Close,
    /// See [`Engine::handle_timer`].
    Timer,
    /// See [`Engine::handle_visibility`].
    Visibility {
        /// `document.visibilityState == "hidden"`.
        hidden: bool,
    },
    /// See [`Engine::handle_online`].
    Online(bool),
    /// See [`Engine::handle_frozen`].
    Frozen(bool),
    /// See [`Engine::handle_network_hint`].
    NetworkHint(NetworkHint),
    /// See [`Engine::handle_opened`].
    Opened(AttemptId),
    /// See [`Engine::handle_response_head`].
    ResponseHead(AttemptId, &'a ResponseHead),
    /// See [`Engine::handle_native_probe`].
    NativeProbe(AttemptId, Option<&'a ResponseHead>),
    /// See [`Engine::handle_bytes`].
    Bytes(AttemptId, &'a [u8]),
    /// See [`Engine::handle_native_event`].
    NativeEvent {
        /// The attempt (its `EventSource`).
        id: AttemptId,
        /// The event's type (`""` = `message`).
        event_type: &'a str,
        /// The event's data.
        data: &'a str,
        /// The event's `lastEventId`.
        last_event_id: &'a str,
    },
    /// See [`Engine::handle_messages`].
    Messages {
        /// The attempt.
        id: AttemptId,
        /// The decoded messages (`None`: an entry that is not one).
        msgs: Vec<Option<IncomingMessage>>,
        /// `_polling.next_interval_ms`, ms.
        polling_hint_ms: Option<u64>,
    },
    /// See [`Engine::handle_body_resource`].
    BodyResource(AttemptId, String),
    /// See [`Engine::handle_json_chunk`].
    JsonChunk(AttemptId, Option<Vec<String>>),
    /// See [`Engine::handle_transport_error`].
    TransportError(AttemptId, TransportError),
    /// See [`Engine::handle_stream_end`].
    StreamEnd(AttemptId),
    /// See [`Engine::handle_headers_failed`].
    HeadersFailed(AttemptId),
    /// See [`Engine::handle_reconnect`].
    Reconnect {
        /// `navigator.onLine`, read when the app called `reconnect()`.
        online: bool,
    },
}

impl Input<'_> {
    /// The attempt this fact is about, if it is about one.
    fn attempt(&self) -> Option<AttemptId> {
        match self {
            Input::Opened(id)
            | Input::ResponseHead(id, _)
            | Input::NativeProbe(id, _)
            | Input::Bytes(id, _)
            | Input::NativeEvent { id, .. }
            | Input::Messages { id, .. }
            | Input::BodyResource(id, _)
            | Input::JsonChunk(id, _)
            | Input::TransportError(id, _)
            | Input::StreamEnd(id)
            | Input::HeadersFailed(id) => Some(*id),
            _ => None,
        }
    }
}

impl Engine {
    /// Feed one fact at `now`. Ignored once the connection is closed; a
    /// second [`Input::Start`] is ignored (its clock too); a fact about an
    /// attempt other than the live one only lets due deadlines run. Drain
    /// [`Engine::poll`] afterwards.
    pub fn handle(&mut self, now: Now, input: Input<'_>) {
        if self.started && matches!(input, Input::Start(_)) {
            return;
        }
        match input {
            Input::Reconnect { online } => _ = self.revive_if_gave_up(online),
            // Closed by the app for good, even after it gave up.
            Input::Close => self.user.revivable = false,
            _ => {}
        }
        let Some(now) = self.begin(now) else { return };
        let id = input.attempt();
        let probe = self.probe_turn(id, &input);
        match id {
            Some(id) if self.live_attempt() != Some(id) => self.drop_stale(id),
            _ => self.dispatch(now, input),
        }
        if probe {
            self.probe_back(now);
        }
        self.advance(now);
    }

    /// Route a fact to its own rule.
    fn dispatch(&mut self, now: Now, input: Input<'_>) {
        match input {
            Input::Start(caps) => self.on_start(now, caps),
            Input::Close => self.on_close(),
            Input::Timer => self.on_timer(now),
            Input::Visibility { hidden } => self.on_visibility(now, hidden),
            Input::Online(online) => self.on_online(now, online),
            Input::Frozen(frozen) => self.on_frozen(now, frozen),
            Input::NetworkHint(hint) => self.on_network_hint(hint),
            Input::Opened(_) => self.on_opened(now),
            Input::ResponseHead(id, head) => self.on_response_head(now, id, head),
            Input::NativeProbe(id, head) => self.on_native_probe(now, id, head),
            Input::Bytes(id, bytes) => self.on_bytes(now, id, bytes),
            Input::NativeEvent {
                event_type,
                data,
                last_event_id,
                ..
            } => self.on_native_event(now, event_type, data, last_event_id),
            Input::Messages {
                msgs,
                polling_hint_ms,
                ..
            } => self.on_messages(now, msgs, polling_hint_ms),
            Input::BodyResource(_, body) => self.on_body_resource(now, body),
            Input::JsonChunk(id, elements) => self.on_json_chunk(now, id, elements),
            Input::TransportError(id, TransportError::NativeFailed) => {
                self.on_native_failed(now, id)
            }
            Input::TransportError(_, error) => self.on_transport_error(now, error),
            Input::StreamEnd(id) => self.on_stream_end(now, id),
            Input::HeadersFailed(_) => self.on_headers_failed(now),
            Input::Reconnect { online } => self.on_reconnect(now, online),
        }
    }
}

impl crate::machine::Machine for Engine {
    type Input<'a> = Input<'a>;
    type Action = super::Action;
    const TIMER: Self::Input<'static> = Input::Timer;

    fn handle(&mut self, now: Now, input: Input<'_>) {
        Engine::handle(self, now, input);
    }

    fn poll(&mut self) -> super::Action {
        Engine::poll(self)
    }

    fn split_wait(action: super::Action) -> Result<super::Action, Option<crate::time::MonoMs>> {
        match action {
            super::Action::Wait { until } => Err(until),
            a => Ok(a),
        }
    }
}
