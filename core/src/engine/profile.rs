//! The protocol profile: the config's [`Protocol`] (JS `protocol`), the one
//! place where the engine asks which server family it speaks. Everything
//! else (transports' lifecycle, selection, backoff, breaker, pauses) is the
//! same for every profile; what differs is answered here, at named hooks:
//!
//! - [`Protocol::shape_config`]: what the options become (Durable Streams:
//!   long-poll only, the start offset `-1` by default);
//! - [`Protocol::accepts_resume_cursor`]: which hand-over cursor a fresh
//!   engine resumes from (`engine::handover`);
//! - [`Protocol::cursor_by_header`]: whether the cursor may travel as
//!   `Last-Event-ID`, so that a resume moves to a transport that sends it
//!   (`engine::carrier`);
//! - [`Protocol::gaps_by_id`]: whether a gap shows in the ids
//!   (`engine::gap`);
//! - [`Engine::render_request`]: the URL and headers of a request;
//! - [`Engine::judge_head`]: the verdict on a response head;
//! - [`Engine::parsed_items`]: what the SSE parser read (Durable Streams: SSE
//!   mode's data and control events);
//! - [`Engine::unparsed_bytes`]: body bytes the SSE parser does not read.
//!
//! Small `match`es on a `Copy` enum, no trait object: this code ships in the
//! wasm, and each hook inlines to one comparison.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::config::{Config, Protocol, TransportKind};
use super::decode::Verdict;
use super::durable::{is_valid_offset, START_OFFSET};
use super::input::{AttemptId, ResponseHead};
use super::request;
use super::Engine;
use crate::sse::SseItem;
use crate::time::Now;

impl Protocol {
    /// The profile spoken: a core built without its `durable-streams`
    /// feature speaks only the default one (the browser side refuses the
    /// option there), so a wasm without the feature leaves the profile's
    /// code out.
    pub(crate) const fn spoken(self) -> Protocol {
        if cfg!(feature = "durable-streams") {
            self
        } else {
            Protocol::Default
        }
    }

    /// Hook: fit the normalized options to the profile. Durable Streams: one
    /// transport, `long-poll` (catch-up and `live=long-poll` reads), or
    /// `fetch-sse` with `Live::Sse` (catch-up and `live=sse`
    /// reads); the cursor is an offset, [`START_OFFSET`] when none is given.
    pub(crate) fn shape_config(self, c: &mut Config) {
        match self.spoken() {
            Protocol::Default => {}
            Protocol::DurableStreams => {
                #[cfg(feature = "durable-streams")]
                let sse = c.live == super::Live::Sse;
                #[cfg(not(feature = "durable-streams"))]
                let sse = false;
                c.transports = vec![if sse {
                    TransportKind::FetchSse
                } else {
                    TransportKind::LongPoll
                }];
                if c.last_event_id.is_empty() {
                    c.last_event_id = String::from(START_OFFSET);
                }
            }
        }
    }

    /// Hook: whether a fresh engine resumes from `cursor`, another engine's
    /// (the cross-tab hand-over). Default: any. Durable Streams: only an
    /// offset or a sentinel (empty: none seen yet; malformed: the channel
    /// between tabs is open to any same-origin script).
    pub(crate) fn accepts_resume_cursor(self, cursor: &str) -> bool {
        match self.spoken() {
            Protocol::Default => true,
            Protocol::DurableStreams => is_valid_offset(cursor, true),
        }
    }

    /// Hook: whether the cursor may travel as `Last-Event-ID` (Durable
    /// Streams: the offset always goes in the query, with no header).
    pub(crate) fn cursor_by_header(self) -> bool {
        self.spoken() == Protocol::Default
    }

    /// Hook: whether the ids show a gap (Durable Streams messages carry no
    /// id; their offsets place them).
    pub(crate) fn gaps_by_id(self) -> bool {
        self.spoken() == Protocol::Default
    }

    /// Hook: whether a silent stream gets the news probe (`news_probe`;
    /// Durable Streams reads have their own catch-up and live modes).
    pub(crate) fn probes_news(self) -> bool {
        self == Protocol::Default
    }
}

impl Engine {
    /// The profile this connection speaks.
    pub(crate) fn profile(&self) -> Protocol {
        self.config.protocol.spoken()
    }

    /// Hook: the URL and headers of the next request on `transport`.
    pub(crate) fn render_request(
        &self,
        transport: TransportKind,
    ) -> (String, Vec<(String, String)>) {
        match self.profile() {
            Protocol::Default => {
                let cursor = request::Cursor {
                    id: self.cursor(),
                    query_too: self.query_too,
                };
                request::render(&self.config, transport, cursor, &self.validators)
            }
            Protocol::DurableStreams => (self.durable_url(transport), Vec::new()),
        }
    }

    /// Hook: judge the first head of the live attempt on `transport`, held
    /// `held_ms`: `None` when the profile's rules handled it.
    pub(crate) fn judge_head(
        &mut self,
        now: Now,
        transport: TransportKind,
        held_ms: u64,
        head: &ResponseHead,
    ) -> Option<Verdict> {
        match self.profile() {
            Protocol::Default => self.default_head(now, transport, held_ms, head),
            Protocol::DurableStreams => self.durable_head(now, head),
        }
    }

    /// Hook: the items the SSE parser read from attempt `id`'s bytes
    /// (`before`: the cursor before them). Default: dispatched as events.
    /// Durable Streams: SSE mode's data and control events.
    #[cfg_attr(not(feature = "durable-streams"), allow(unused_variables))]
    pub(crate) fn parsed_items(
        &mut self,
        now: Now,
        id: AttemptId,
        items: &mut Vec<SseItem>,
        before: &str,
    ) {
        match self.profile() {
            Protocol::Default => self.take_items(items, before),
            #[cfg(feature = "durable-streams")]
            Protocol::DurableStreams => self.durable_sse_items(now, id, items, before),
            #[cfg(not(feature = "durable-streams"))]
            Protocol::DurableStreams => {}
        }
    }

    /// Hook: body bytes of attempt `id` that the SSE parser does not read.
    /// Default: none to read (a head that was not usable). Durable Streams:
    /// a chunk's body, kept until it is complete.
    pub(crate) fn unparsed_bytes(&mut self, id: AttemptId, bytes: &[u8]) {
        match self.profile() {
            Protocol::Default => {}
            Protocol::DurableStreams => self.durable_bytes(id, bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Durable Streams ids are empty and its offset is a query parameter:
    /// neither the gap watch nor the move to a header transport applies.
    #[test]
    fn durable_streams_tracks_no_ids_and_sends_no_header() {
        let (d, s) = (Protocol::DurableStreams, Protocol::Default);
        assert_eq!((s.gaps_by_id(), s.cursor_by_header()), (true, true));
        assert_eq!((d.gaps_by_id(), d.cursor_by_header()), (false, false));
    }
}
