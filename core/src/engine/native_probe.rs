//! What a native `EventSource` failure means, once the adapter's status probe
//! has answered.
//!
//! A native `EventSource` hides the status and headers of a connection it
//! fails (WHATWG HTML §9.2.3 "fail the connection"). When it fails before it
//! ever opened, the engine asks for one `fetch` of the same URL
//! ([`Action::Probe`]) and the adapter reports what that probe saw through
//! [`Engine::handle_native_probe`]; the verdict is made here, by the engine's
//! one media-type rule.

use super::decode::MediaType;
use super::input::{AttemptId, ResponseHead, TransportError};
use super::{Action, Engine};
use crate::time::Now;

impl Engine {
    /// [`TransportError::NativeFailed`]: the browser failed native attempt
    /// `id`. Before it opened (no `open`, no event), the first time: ask why
    /// with [`Action::Probe`] and keep the attempt live for the answer; else a
    /// [`TransportError::Network`].
    pub(crate) fn on_native_failed(&mut self, now: Now, id: AttemptId) {
        let ask = self
            .phase
            .attempt_mut()
            .filter(|a| a.opened_at.is_none())
            .and_then(|a| a.native_mut())
            .is_some_and(|n| !core::mem::replace(&mut n.probed, true));
        if ask {
            self.actions.push_back(Action::Probe(id));
        } else {
            self.on_transport_error(now, TransportError::Network);
        }
    }

    /// The answer of the status probe for native attempt `id`, which failed
    /// before it opened. `head` is the probe's response head, or `None` when
    /// the probe failed as well.
    ///
    /// - a head other than `200 text/event-stream` is taken as the attempt's
    ///   own head (a 204 stops with `no-content`, a 503 waits for its
    ///   `Retry-After`, a wrong content type stops with `bad-content-type`);
    /// - `200 text/event-stream`: the path, CORS and endpoint work, so the
    ///   server refused that one connection (a one-shot 503, 429 or 204 whose
    ///   status is gone): [`TransportError::ServerRefused`], an `http-status`
    ///   failure without a status, backoff, no evidence against the transport;
    /// - `None`: unreachable or refused by CORS, [`TransportError::Network`];
    /// - whatever the head, the attempt ends: a head it cannot take (a
    ///   second one, or one that would leave it live) is a
    ///   [`TransportError::Network`], as the browser's failure was.
    pub fn handle_native_probe(&mut self, now: Now, id: AttemptId, head: Option<&ResponseHead>) {
        self.handle(now, super::Input::NativeProbe(id, head));
    }

    pub(crate) fn on_native_probe(&mut self, now: Now, id: AttemptId, head: Option<&ResponseHead>) {
        match head {
            Some(h)
                if h.status == 200
                    && MediaType::of(h.content_type.as_deref()) == MediaType::EventStream =>
            {
                self.on_transport_error(now, TransportError::ServerRefused);
            }
            Some(h) => self.on_response_head(now, id, h),
            None => self.on_transport_error(now, TransportError::Network),
        }
        // The EventSource behind a probe has failed, whatever the probe saw:
        // a head the attempt cannot take (it had one already, or it would
        // open or wait on it) still ends it, as the browser's own failure
        // would. Left live, it would hang until a watchdog, or for ever with
        // both watchdogs off (found by `make fuzz`, fuzz/regressions/engine/).
        if self.live_attempt() == Some(id) {
            self.on_transport_error(now, TransportError::Network);
        }
    }
}
