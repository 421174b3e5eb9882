//! The Durable Streams profile's SSE mode ([`Live::Sse`], JS `live:
//! "sse"`; PROTOCOL.md §5.8): once a catch-up read said
//! `Stream-Up-To-Date`, the live reads are `live=sse` on `fetch-sse`, an
//! event stream parsed by the engine's SSE parser whose events go here
//! instead of to the default dispatch.
//!
//! Rules:
//! - `event: data` adds its data to the pending batch: text as is; with
//!   `stream-sse-data-encoding: base64` on the head, or on a stream whose
//!   catch-up read said a binary content type, the data (its lines
//!   joined, every `\n` and `\r` removed) decoded as RFC 4648 base64
//!   ([`base64`]), bytes; on a JSON stream (known from the catch-up read's
//!   `Content-Type`: an SSE response says `text/event-stream`) a JSON array,
//!   one message per element. Data that is not valid for its kind makes
//!   the batch invalid (a non-fatal `parse` error at its control event, the
//!   cursor moves past it); a batch over `maxMessageBytes` is skipped as
//!   `too-large`.
//! - `event: control` (a JSON object: `streamNextOffset`, `streamCursor`,
//!   `upToDate`, `streamClosed`) commits the batch as a complete catch-up
//!   body is committed: delivered when its offset is past the cursor, the
//!   cursor moved, `uptodate` on the transition, the cursor echoed on the
//!   next request. `streamClosed: true` ends the stream; nothing reconnects.
//!   One that is not a JSON object, or whose `streamNextOffset` is missing or
//!   no offset, fails the request (`parse`, under backoff): the batch is
//!   dropped, never delivered without its offset, and the next request reads
//!   again from the last committed offset. The reader is the engine's own
//!   (`json_text`): a control event arrives in the middle of a body's bytes,
//!   and the parser's other events of those bytes wait on its verdict.
//! - Any other event type, a comment, `retry:` and `id:` are skipped: only
//!   control events move the offset.
//! - A body that ends after at least one control event is the server's
//!   periodic close (§5.8, "roughly every ~60 seconds"): a success, the next
//!   request at once from the cursor (within the long-poll spread), no
//!   backoff, the state stays `open`. One that ends before any control event
//!   is a failure under backoff, so a server that closes at once makes no
//!   tight loop. Data after the last control event is dropped and read again.
//!
//! [`Live::Sse`]: super::Live::Sse

use alloc::string::String;
use alloc::vec::Vec;

use super::action::{Action, Reason, State};
use super::decode::MediaType;
use super::durable::{is_valid_offset, DurableBody, Payload};
use super::input::{AttemptId, ResponseHead};
use super::json_text::{array_elements, control_fields};
use super::Engine;
use crate::policy::headers::HeaderLookup;
use crate::sse::SseItem;
use crate::time::Now;

/// The response header that says the data events are base64 (§5.8). An
/// adapter hands it over besides [`ENGINE_RESPONSE_HEADERS`] in builds with
/// the Durable Streams profile.
///
/// [`ENGINE_RESPONSE_HEADERS`]: crate::policy::headers::ENGINE_RESPONSE_HEADERS
pub const SSE_DATA_ENCODING_HEADER: &str = "stream-sse-data-encoding";

/// The live SSE request's state.
#[derive(Debug)]
pub(crate) struct SseLive {
    /// Its attempt.
    id: AttemptId,
    /// `stream-sse-data-encoding: base64`.
    base64: bool,
    /// Control events committed on it.
    controls: u32,
    /// The data since the last control event.
    batch: Batch,
}

/// The data events since the last control event.
#[derive(Debug, Default)]
struct Batch {
    /// JSON: one per element; text and bytes: one, the data joined (bytes
    /// one char per byte, as [`Message::binary`](super::Message::binary) says).
    messages: Vec<String>,
    /// Data bytes received, against `maxMessageBytes`.
    size: usize,
    invalid: bool,
    too_large: bool,
}

impl Batch {
    /// Add one data event's `data`, read as `kind` says.
    fn add(&mut self, data: &str, kind: DurableBody, limit: usize) {
        self.size = self.size.saturating_add(data.len());
        if self.size > limit {
            // Bounded memory: the batch is skipped whole at its control.
            self.too_large = true;
            self.messages = Vec::new();
        }
        if self.invalid || self.too_large {
            return;
        }
        let joined = match kind {
            DurableBody::Json => match array_elements(data) {
                Some(mut e) => return self.messages.append(&mut e),
                None => None,
            },
            DurableBody::Bytes => base64(data),
            DurableBody::Text => Some(String::from(data)),
        };
        match (joined, self.messages.last_mut()) {
            (None, _) => self.invalid = true,
            (Some(s), Some(m)) => m.push_str(&s),
            (Some(s), None) => self.messages.push(s),
        }
    }

    /// What the batch carries at its control event.
    fn payload(mut self, binary: bool) -> Payload {
        if self.too_large {
            Payload::TooLarge
        } else if self.invalid {
            Payload::Invalid
        } else {
            // An empty payload is no message.
            self.messages.retain(|m| !m.is_empty());
            Payload::Messages(self.messages, binary)
        }
    }
}

/// `text` as RFC 4648 base64 (standard alphabet, `=` padding), after every
/// `\n` and `\r` is removed (§5.8: servers may split it across `data:`
/// lines), one char per byte (as [`Message::binary`](super::Message::binary)
/// data is); `None` unless the rest is a multiple of 4 characters of the
/// alphabet with at most two `=` at its end.
pub fn base64(text: &str) -> Option<String> {
    // A loop, not a filtered `collect` (its iterator code in the wasm).
    let mut s: Vec<u8> = Vec::with_capacity(text.len());
    for &b in text.as_bytes() {
        if !matches!(b, b'\n' | b'\r') {
            s.push(b);
        }
    }
    if s.len() % 4 != 0 {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    let (mut pad, mut acc) = (0, 0u32);
    for (i, &c) in s.iter().enumerate() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            // Padding only in the last two places.
            b'=' if i + 2 >= s.len() => {
                pad += 1;
                0
            }
            _ => return None,
        };
        if pad > 0 && c != b'=' {
            return None;
        }
        acc = acc << 6 | u32::from(v);
        if i % 4 == 3 {
            // The last group's padded bytes are not data.
            let n = if i + 1 == s.len() { 3 - pad } else { 3 };
            for &b in &acc.to_be_bytes()[1..=n] {
                out.push(char::from(b));
            }
            acc = 0;
        }
    }
    Some(out)
}

impl Engine {
    /// The live request of SSE mode: `live=sse` on `fetch-sse` once caught up.
    pub(crate) fn durable_sse_attempt(&self) -> bool {
        self.durable.up_to_date
            && self
                .phase
                .attempt()
                .is_some_and(|a| a.transport == super::TransportKind::FetchSse)
    }

    /// A 200 to the live SSE request: an event stream opens (state `open`
    /// unless it already was, between two requests); anything else is a
    /// `parse` failure under backoff, its body not read.
    pub(crate) fn durable_sse_open(&mut self, now: Now, head: &ResponseHead) {
        if MediaType::of(head.content_type.as_deref()) != MediaType::EventStream {
            return self.durable_bad_answer(now);
        }
        // A binary stream's data is base64 (§5.8, a MUST): known from the
        // catch-up read too, for a server that does not expose the header
        // cross-origin (`@durable-streams/server` 0.3.7 does not).
        let base64 = self.durable.kind == DurableBody::Bytes
            || head
                .header(SSE_DATA_ENCODING_HEADER)
                .is_some_and(|v| v.eq_ignore_ascii_case("base64"));
        let Some(a) = self.phase.attempt_mut() else {
            return;
        };
        a.opened_at = Some(now.mono);
        let shown = core::mem::replace(&mut a.open, true);
        let (id, reason) = (a.id, a.reason);
        self.new_body();
        self.durable.sse = Some(SseLive {
            id,
            base64,
            controls: 0,
            batch: Batch::default(),
        });
        if !shown {
            self.set_state(State::Open, reason, None);
        }
    }

    /// The parsed events of SSE attempt `id`'s bytes (`before`: the cursor
    /// before them; the parser moves it on `id:` lines, the offset only
    /// moves at control events).
    pub(crate) fn durable_sse_items(
        &mut self,
        now: Now,
        id: AttemptId,
        items: &mut Vec<SseItem>,
        before: &str,
    ) {
        self.set_cursor(before);
        let kind = self.durable.kind;
        let limit = self.config.sse_limits.max_event_data_bytes;
        for item in items.drain(..) {
            let (event, data) = match &item {
                SseItem::Event(e) => (Some(e.event.as_str()), Some(e.data.as_str())),
                SseItem::Skipped(s) => (s.event.as_deref(), None),
                _ => (None, None),
            };
            let Some(live) = self.durable.sse.as_mut().filter(|s| s.id == id) else {
                continue;
            };
            let kind = if live.base64 {
                DurableBody::Bytes
            } else {
                kind
            };
            match (event, data) {
                (Some("data"), Some(d)) => live.batch.add(d, kind, limit),
                (Some("data"), None) => live.batch.too_large = true,
                (Some("control"), d) => self.durable_control(now, d.unwrap_or("")),
                _ => {}
            }
        }
    }

    /// A control event: commit the batch, or fail the request. After the
    /// request ends (failed, closed), the rest of its bytes' events are
    /// ignored (`durable.sse` is gone).
    fn durable_control(&mut self, now: Now, data: &str) {
        let c = control_fields(data).filter(|c| is_valid_offset(c.next, false));
        let (Some(c), Some(live)) = (c, self.durable.sse.as_mut()) else {
            self.durable.sse = None;
            self.drop_body();
            return self.durable_bad_answer(now);
        };
        live.controls = live.controls.saturating_add(1);
        let payload = core::mem::take(&mut live.batch).payload(live.base64);
        if let Some(cursor) = c.cursor.filter(|s| is_valid_offset(s, false)) {
            self.durable.stream_cursor = String::from(cursor);
        }
        self.commit_chunk(c.next, payload);
        // A closed stream at its final offset is up to date (§5.8).
        self.durable_up_to_date(c.up_to_date || c.closed);
        if c.closed {
            self.durable.sse = None;
            if let Some(a) = self.phase.take_attempt() {
                self.actions.push_back(Action::Abort(a.id));
                self.durable_end_of_stream(&a, Reason::StreamClosed);
            }
        }
    }

    /// The body of SSE attempt `id` ended: after a control event the
    /// server's periodic close, a success (returns `true`); before any, the
    /// engine's rule for a stream that ended (returns `false`).
    pub(crate) fn durable_sse_end(&mut self, now: Now, id: AttemptId) -> bool {
        let live = self.durable.sse.take_if(|s| s.id == id);
        if live.is_none_or(|s| s.controls == 0) {
            return false;
        }
        let Some(a) = self.phase.take_attempt() else {
            return false;
        };
        self.drop_body();
        self.succeed_request(now, &a, false);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_rfc4648() {
        // RFC 4648 §10's vectors.
        for (text, bytes) in [
            ("", ""),
            ("Zg==", "f"),
            ("Zm8=", "fo"),
            ("Zm9v", "foo"),
            ("Zm9vYg==", "foob"),
            ("Zm9vYmE=", "fooba"),
            ("Zm9vYmFy", "foobar"),
            ("Zm9v\nYmFy\r\n", "foobar"),
        ] {
            assert_eq!(base64(text).as_deref(), Some(bytes), "{text:?}");
        }
        assert_eq!(base64("/+8A").as_deref(), Some("\u{ff}\u{ef}\u{0}"));
        for bad in [
            "Zg=", "Z===", "Zg=a", "=Zg=", "Zm 9v", "Zm9v-_==", "Zg==Zg==",
        ] {
            assert_eq!(base64(bad), None, "{bad:?}");
        }
    }
}
