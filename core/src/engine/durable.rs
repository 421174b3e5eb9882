//! The Durable Streams profile
//! ([`Protocol::DurableStreams`](super::Protocol::DurableStreams)): catch-up and
//! long-poll reads of an offset-addressed stream (PROTOCOL.md of
//! durable-streams/durable-streams, "Version 1.0" draft: §5.6, §5.7, §8, §9,
//! §10.1); its SSE mode (§5.8) is `durable_sse`. Only what differs from the default profile lives here: where the
//! cursor is read and written, what ends a stream, what a gap looks like, and
//! how a body becomes messages. Transports, lifecycle, backoff, breaker,
//! `Retry-After`, hidden/offline pauses and crossTab are the engine's.
//!
//! Rules:
//! - The cursor is the offset: `-1` (start, the default), `now` (tail) or a
//!   stored `Stream-Next-Offset`. Every request carries it as `offset`
//!   (percent-encoded). The first is a catch-up read, `now`'s too (its empty
//!   200 at the tail says `Stream-Up-To-Date`, so the app hears `uptodate`
//!   before any live read); once a response said `Stream-Up-To-Date: true` the
//!   next ones are live (`live=long-poll`) and echo the last `Stream-Cursor`
//!   as `cursor`. Those three keys go in lexicographic order (§10.1) after
//!   the app's own parameters. No request header is sent (no CORS preflight
//!   cross-origin).
//! - Offsets are opaque and compared as bytes (§8). One the server sends is
//!   refused (a `parse` error, retried with backoff like a failure) when it
//!   is empty, longer than [`MAX_OFFSET_BYTES`], holds a byte below 0x21,
//!   DEL or one of `, & = ? /`, or is a sentinel (`-1`, `now`).
//! - Exactly once by position: a 200's body is delivered only once it is
//!   complete, then the cursor moves to its `Stream-Next-Offset`. A chunk
//!   whose next offset is not greater than the cursor is a repeat: dropped
//!   (counted in `duplicates_dropped`). Messages carry no id; the id dedupe
//!   does not apply.
//! - Bodies by content type ([`body_kind`]): `application/json` → an array,
//!   one message per element (its JSON text); `text/*` → one message of text,
//!   decoded by one streaming UTF-8 decoder per connection (a character split
//!   across chunks arrives whole with the later one); anything else → one
//!   binary message ([`Message::binary`]). A body not valid for its type is a
//!   `parse` error (not fatal): it is skipped and the cursor moves past it (a
//!   re-read would be the same bytes). A body over `maxMessageBytes` is
//!   skipped as `too-large` and the cursor moves past it.
//! - `Stream-Up-To-Date: true` after a response without it (or the first) →
//!   [`Action::UpToDate`]. `Stream-Closed: true` → every message of that
//!   response is delivered, then state `closed` with reason `stream-closed`,
//!   no error, no request after it.
//! - `204` is "no news" (its `Stream-Next-Offset` is adopted: after `now` it
//!   is the tail); `404` stops (`http-status`, fatal); `410 Gone` (offset
//!   before retention, soft-deleted stream) → [`Action::Reset`] with
//!   [`ResetReason::Gone`] and one new request from the configured start
//!   (`now` if that was `now`, else `-1`) after `U[0, 100]` ms; a second 410
//!   before any 200/204 is fatal `http-status`. Only in this profile: nchan's
//!   410 stays transient (`decode::gone_is_transient`). 429/503 and
//!   `Retry-After` follow the engine's rules (cross-origin the npm reference
//!   server does not expose `Retry-After`, so backoff applies there).

use alloc::string::String;
use alloc::vec::Vec;

use super::action::{Action, ErrorCode, Message, Reason, ResetReason, State};
use super::config::TransportKind;
use super::decode::Verdict;
use super::input::{AttemptId, ResponseHead};
use super::retry::Failure;
use super::state::{Attempt, BodyKind};
use super::Engine;
use crate::policy::headers::HeaderLookup;
use crate::time::Now;
use crate::wire::with_query_param;

/// The stream's start (§8 sentinel).
pub const START_OFFSET: &str = "-1";
/// The stream's tail (§8 sentinel).
pub const NOW_OFFSET: &str = "now";
/// The longest offset accepted from a server or the app, bytes. §8 asks
/// servers to stay under 256 characters since offsets travel in every URL;
/// longer ones are refused rather than carried into every request.
pub const MAX_OFFSET_BYTES: usize = 256;

/// How a Durable Streams body is read and delivered, by its content type
/// (§9). The adapter asks [`body_kind`] too, to know how to read the body.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DurableBody {
    /// `application/json`: the body is a JSON array, one message per element
    /// (the adapter decodes it with `JSON.parse` and calls
    /// [`Engine::handle_json_chunk`]).
    Json,
    /// `text/*`: bytes, decoded as UTF-8 by the engine.
    #[default]
    Text,
    /// Anything else (or no content type): bytes, delivered as bytes.
    Bytes,
}

/// The body kind for a `Content-Type` value (media type only, ASCII
/// case-insensitive; `application/json` exactly, since a `+json` stream is
/// plain appended bytes, not JSON mode).
pub fn body_kind(content_type: Option<&str>) -> DurableBody {
    let media = content_type
        .map_or("", |ct| crate::wire::before_byte(ct, b';'))
        .trim()
        .as_bytes();
    if media.eq_ignore_ascii_case(b"application/json") {
        DurableBody::Json
    } else if media.len() > 5 && media[..5].eq_ignore_ascii_case(b"text/") {
        DurableBody::Text
    } else {
        DurableBody::Bytes
    }
}

/// Whether `offset` is usable as a cursor from a server or the app: a
/// sentinel is allowed only when `sentinel_ok` (the app's start offset).
pub fn is_valid_offset(offset: &str, sentinel_ok: bool) -> bool {
    if offset == START_OFFSET || offset == NOW_OFFSET {
        return sentinel_ok;
    }
    if offset.is_empty() || offset.len() > MAX_OFFSET_BYTES {
        return false;
    }
    // A loop, not `Iterator::any`: no closure and fold of its own in the wasm.
    for b in offset.bytes() {
        if b <= b' ' || b == 0x7f || matches!(b, b',' | b'&' | b'=' | b'?' | b'/') {
            return false;
        }
    }
    true
}

/// Whether `next` is past `cursor`: any real offset is past a sentinel;
/// otherwise byte-wise lexicographic order (§8).
pub(crate) fn advances(cursor: &str, next: &str) -> bool {
    cursor == START_OFFSET || cursor == NOW_OFFSET || cursor.is_empty() || next > cursor
}

/// The request URL: `base` with `cursor` (live requests, when known),
/// `live` (live requests: `long-poll` or `sse`, else `""`) and `offset`
/// set, each percent-encoded, in that order (lexicographic, §10.1), after
/// the app's own parameters (kept in their order; any of those three names
/// of its own is dropped); the fragment stays at the end.
pub(crate) fn render_url(base: &str, offset: &str, live: &str, cursor: &str) -> String {
    let cursor = if live.is_empty() { "" } else { cursor };
    let url = with_query_param(base, "cursor", cursor);
    let url = with_query_param(&url, "live", live);
    with_query_param(&url, "offset", offset)
}

/// The profile's state across requests.
#[derive(Debug, Default)]
pub(crate) struct Durable {
    /// The last response said `Stream-Up-To-Date: true`: requests are live.
    pub(super) up_to_date: bool,
    /// The last `Stream-Cursor`, echoed as `cursor` on live requests.
    pub(super) stream_cursor: String,
    /// The stream's body kind, from the last catch-up read's `Content-Type`
    /// (SSE mode's data events are read as it says).
    #[cfg(feature = "durable-streams")]
    pub(super) kind: DurableBody,
    /// SSE mode's live request (`durable_sse`).
    #[cfg(feature = "durable-streams")]
    pub(super) sse: Option<super::durable_sse::SseLive>,
    /// Bytes of a UTF-8 character cut off at the end of the last text chunk.
    carry: Vec<u8>,
    /// A 410 restarted the stream and no 200/204 came since: another 410 is
    /// fatal.
    gone_pending: bool,
    /// Chunks dropped because their next offset was not past the cursor.
    pub(crate) repeats: u64,
    /// The live attempt's 200, until its body is complete.
    chunk: Option<Chunk>,
}

/// A 200 whose body is being read.
#[derive(Debug)]
struct Chunk {
    id: AttemptId,
    next: String,
    up_to_date: bool,
    closed: bool,
    kind: DurableBody,
    body: Vec<u8>,
    too_large: bool,
}

/// What a complete chunk carries.
pub(super) enum Payload {
    /// Message data, one per message.
    Messages(Vec<String>, bool),
    /// Not valid for its content type.
    Invalid,
    /// Over `maxMessageBytes`.
    TooLarge,
    /// Not past the cursor (not decoded); `true` when it had a body.
    Repeat(bool),
}

/// `Stream-*: true` (§4.1: `true`, ASCII case-insensitive, else absent).
fn flag(head: &ResponseHead, name: &str) -> bool {
    head.header(name)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

impl Engine {
    /// The URL of the next request (no headers: see the module doc).
    pub(crate) fn durable_url(&self, transport: TransportKind) -> String {
        let d = &self.durable;
        let live = match (d.up_to_date, transport) {
            (false, _) => "",
            (true, TransportKind::FetchSse) => "sse",
            (true, _) => "long-poll",
        };
        render_url(
            self.config.url_for(transport),
            self.cursor(),
            live,
            &d.stream_cursor,
        )
    }

    /// Whether attempt `id`'s Durable Streams chunk (a 200 being read) is
    /// JSON; `None` when it has no chunk.
    pub(crate) fn durable_chunk(&self, id: AttemptId) -> Option<bool> {
        // Never a chunk without the profile (`Protocol::spoken`).
        if !cfg!(feature = "durable-streams") {
            return None;
        }
        let c = self.durable.chunk.as_ref().filter(|c| c.id == id)?;
        Some(c.kind == DurableBody::Json)
    }

    /// A response head of the live attempt: 2xx, 304, 408 and 410 are
    /// handled here (returns `None`); for any other status the engine's own
    /// verdict applies (returned).
    pub(crate) fn durable_head(&mut self, now: Now, head: &ResponseHead) -> Option<Verdict> {
        let status = head.status;
        match status {
            410 => self.durable_gone(now),
            200..=299 | 304 | 408 => {
                self.durable.gone_pending = false;
                if let Some(c) = head.header("stream-cursor") {
                    if is_valid_offset(c, false) {
                        self.durable.stream_cursor = String::from(c);
                    }
                }
                if matches!(status, 204 | 304 | 408) {
                    self.durable_no_news(now, head);
                } else if !self.durable_sse_opens(now, head) {
                    self.durable_chunk_head(now, head);
                }
            }
            _ => {
                let ct = head.content_type.as_deref();
                return Some(super::decode::classify(TransportKind::LongPoll, status, ct));
            }
        }
        None
    }

    /// SSE mode's live request: its 200 opens the event stream (returns
    /// `true`; `durable_sse`).
    fn durable_sse_opens(&mut self, now: Now, head: &ResponseHead) -> bool {
        #[cfg(feature = "durable-streams")]
        if self.durable_sse_attempt() {
            self.durable_sse_open(now, head);
            return true;
        }
        let _ = (now, head);
        false
    }

    /// A 200: remember its offsets until the body is complete.
    fn durable_chunk_head(&mut self, now: Now, head: &ResponseHead) {
        let next = head
            .header("stream-next-offset")
            .filter(|o| is_valid_offset(o, false));
        let Some(next) = next else {
            return self.durable_bad_answer(now);
        };
        let kind = body_kind(head.content_type.as_deref());
        #[cfg(feature = "durable-streams")]
        {
            self.durable.kind = kind;
        }
        self.durable.chunk = Some(Chunk {
            id: self.phase.attempt().map_or(AttemptId(0), |a| a.id),
            next: String::from(next),
            up_to_date: flag(head, "stream-up-to-date"),
            closed: flag(head, "stream-closed"),
            kind,
            body: Vec::new(),
            too_large: false,
        });
        if let Some(r) = self.phase.attempt_mut().and_then(Attempt::request_mut) {
            // Not the SSE parser's: bytes go to `durable_bytes`.
            r.body = BodyKind::Resource;
        }
    }

    /// A 204 (or 304, 408): nothing to deliver. Its `Stream-Next-Offset`
    /// is adopted when it moves the cursor forward (after `now`, it is the
    /// tail); `Stream-Closed` ends the stream.
    fn durable_no_news(&mut self, now: Now, head: &ResponseHead) {
        let Some(a) = self.phase.take_attempt() else {
            return;
        };
        self.actions.push_back(Action::Abort(a.id));
        if let Some(next) = head.header("stream-next-offset") {
            if is_valid_offset(next, false) && advances(self.cursor(), next) {
                self.set_cursor(next);
            }
        }
        let up_to_date = flag(head, "stream-up-to-date");
        self.durable_answered(now, &a, up_to_date, flag(head, "stream-closed"), false);
    }

    /// Body bytes of the live attempt's 200 (text and binary streams).
    pub(crate) fn durable_bytes(&mut self, id: AttemptId, bytes: &[u8]) {
        let limit = self.config.sse_limits.max_event_data_bytes;
        let Some(c) = self.durable.chunk.as_mut().filter(|c| c.id == id) else {
            return;
        };
        if c.kind == DurableBody::Json || c.too_large {
            return;
        }
        if c.body.len().saturating_add(bytes.len()) > limit {
            // Bounded memory: the chunk is skipped whole at its end.
            c.too_large = true;
            c.body = Vec::new();
            return;
        }
        c.body.extend_from_slice(bytes);
    }

    /// The body of a text or binary chunk ended: deliver it. Returns `false`
    /// when the live attempt has no chunk (the engine's own rules apply).
    pub(crate) fn durable_body_end(&mut self, now: Now, id: AttemptId) -> bool {
        if !cfg!(feature = "durable-streams") {
            return false;
        }
        let Some(c) = self.take_chunk(id) else {
            return false;
        };
        let payload = if !advances(self.cursor(), &c.next) {
            // A repeat is not decoded: the decoder's carried bytes belong to
            // the cursor's position, not to this one.
            Payload::Repeat(c.too_large || !c.body.is_empty())
        } else if c.too_large {
            // The bytes after a carried partial character are gone.
            self.durable.carry.clear();
            Payload::TooLarge
        } else if c.kind == DurableBody::Text {
            match self.decode_text(&c) {
                Some(text) => Payload::Messages(text_messages(text), false),
                None => Payload::Invalid,
            }
        } else {
            // A loop, not a collected `String`: no iterator of its own in the wasm.
            let mut bytes = String::with_capacity(c.body.len());
            for &b in &c.body {
                bytes.push(char::from(b));
            }
            Payload::Messages(text_messages(bytes), true)
        };
        self.finish_chunk(now, c, payload);
        true
    }

    /// The body of a JSON chunk, decoded by the adapter (`JSON.parse`): each
    /// element of the array as JSON text, or `None` when the body is not a
    /// JSON array (a `parse` error; the cursor moves past it). Ignored unless
    /// the live attempt's 200 said `application/json`.
    pub fn handle_json_chunk(&mut self, now: Now, id: AttemptId, elements: Option<Vec<String>>) {
        self.handle(now, super::Input::JsonChunk(id, elements));
    }

    pub(crate) fn on_json_chunk(&mut self, now: Now, id: AttemptId, elements: Option<Vec<String>>) {
        if let Some(c) = self.take_chunk(id) {
            let limit = self.config.sse_limits.max_event_data_bytes;
            let payload = match elements {
                None => Payload::Invalid,
                Some(e) if e.iter().any(|m| m.len() > limit) => Payload::TooLarge,
                Some(e) => Payload::Messages(e, false),
            };
            self.finish_chunk(now, c, payload);
        }
    }

    /// A fact about attempt `id`, no longer live: its chunk, if any, can
    /// never be read again.
    pub(crate) fn drop_stale(&mut self, id: AttemptId) {
        let _ = self.durable.chunk.take_if(|c| c.id == id);
    }

    /// The live attempt's chunk (`id`'s), taken out.
    fn take_chunk(&mut self, id: AttemptId) -> Option<Chunk> {
        let live = self.phase.attempt().is_some_and(|a| a.id == id);
        let c = self.durable.chunk.take_if(|c| c.id == id);
        if live {
            c
        } else {
            None
        }
    }

    /// Decode a text chunk with the connection's carried bytes; `None` when
    /// it is not UTF-8 (the carry is dropped: the next chunk starts fresh).
    fn decode_text(&mut self, c: &Chunk) -> Option<String> {
        let mut bytes = core::mem::take(&mut self.durable.carry);
        bytes.extend_from_slice(&c.body);
        match core::str::from_utf8(&bytes) {
            Ok(s) => Some(String::from(s)),
            // Cut inside a character at the end: keep its bytes for the next.
            Err(e) if e.error_len().is_none() && bytes.len() - e.valid_up_to() < 4 => {
                let valid = e.valid_up_to();
                self.durable.carry = bytes[valid..].to_vec();
                core::str::from_utf8(&bytes[..valid]).ok().map(String::from)
            }
            Err(_) => None,
        }
    }

    /// A complete chunk: deliver it if it moves the cursor, then move it,
    /// then tell `uptodate`, then end the stream or schedule the next read.
    fn finish_chunk(&mut self, now: Now, c: Chunk, payload: Payload) {
        let Some(a) = self.phase.take_attempt() else {
            return;
        };
        let advanced = self.commit_chunk(&c.next, payload);
        self.durable_answered(now, &a, c.up_to_date, c.closed, advanced);
    }

    /// A complete chunk (or SSE batch) ending at `next`: delivered and the
    /// cursor moved when it is past the cursor (returns `true`), else a
    /// repeat, counted when it had a body.
    pub(super) fn commit_chunk(&mut self, next: &str, payload: Payload) -> bool {
        let advanced = advances(self.cursor(), next);
        if !advanced {
            let empty = match &payload {
                Payload::Messages(m, _) => m.is_empty(),
                Payload::Repeat(body) => !body,
                _ => false,
            };
            if !empty {
                self.durable.repeats = self.durable.repeats.saturating_add(1);
            }
        } else {
            self.deliver_chunk(next, payload);
            self.set_cursor(next);
        }
        advanced
    }

    /// Deliver a chunk's messages: each carries the cursor before the chunk,
    /// the last one the chunk's next offset (resuming from any message's
    /// `lastEventId` re-reads at most the rest of its chunk, never skips).
    fn deliver_chunk(&mut self, next: &str, payload: Payload) {
        let (messages, binary) = match payload {
            Payload::Messages(m, binary) => (m, binary),
            // Not retried (a re-read is the same bytes): no `retry_in_ms`.
            Payload::Invalid => {
                return self.actions.push_back(Action::Error {
                    code: ErrorCode::Parse,
                    status: None,
                    retry_in_ms: None,
                    fatal: false,
                    id: None,
                });
            }
            Payload::TooLarge => {
                return self.skip_message(None, String::from(next));
            }
            Payload::Repeat(_) => return,
        };
        let n = messages.len();
        for (i, data) in messages.into_iter().enumerate() {
            let last_event_id = if i + 1 == n {
                String::from(next)
            } else {
                String::from(self.cursor())
            };
            self.actions
                .push_back(Action::Deliver(alloc::boxed::Box::new(Message {
                    id: String::new(),
                    last_event_id,
                    event: String::from("message"),
                    data,
                    binary,
                })));
        }
    }

    /// Record `Stream-Up-To-Date`; returns whether the connection just
    /// caught up (and tells the app).
    pub(super) fn durable_up_to_date(&mut self, up_to_date: bool) -> bool {
        let caught_up = up_to_date && !self.durable.up_to_date;
        self.durable.up_to_date = up_to_date;
        if caught_up {
            self.actions.push_back(Action::UpToDate {
                last_event_id: String::from(self.cursor()),
            });
        }
        caught_up
    }

    /// A read's answer was taken whole (`news`: it moved the cursor): tell
    /// `uptodate` if it caught up, then end the read for `Stream-Closed:
    /// true` (`stream-closed`) or for catching up with `live: false`
    /// (`up-to-date`), else schedule the next read.
    fn durable_answered(
        &mut self,
        now: Now,
        a: &Attempt,
        up_to_date: bool,
        closed: bool,
        news: bool,
    ) {
        let went_live = self.durable_up_to_date(up_to_date);
        #[cfg(feature = "durable-streams")]
        let once = self.config.live == super::Live::Off;
        #[cfg(not(feature = "durable-streams"))]
        let once = false;
        let reason = match (closed, went_live && once) {
            (true, _) => Reason::StreamClosed,
            (false, true) => Reason::UpToDate,
            (false, false) => return self.succeed_request(now, a, news || went_live),
        };
        self.durable_end_of_stream(a, reason);
    }

    /// The read ended for `reason` (`stream-closed`: the stream ended for
    /// good; `up-to-date`: caught up with `live: false`). Nothing is
    /// scheduled; every later input is ignored.
    pub(super) fn durable_end_of_stream(&mut self, a: &Attempt, reason: Reason) {
        self.mark_success(a.transport, true);
        let _ = self.phase.close();
        self.set_state(State::Closed, reason, None);
    }

    /// A 200 without a usable `Stream-Next-Offset`: its body cannot be
    /// placed, so it is not delivered; a `parse` failure under backoff.
    pub(super) fn durable_bad_answer(&mut self, now: Now) {
        let Some(a) = self.phase.take_attempt() else {
            return;
        };
        self.actions.push_back(Action::Abort(a.id));
        let f = Failure {
            status: a.status,
            ..Failure::new(ErrorCode::Parse, Reason::Backoff)
        };
        self.fail(now, &a, f);
    }

    /// `410 Gone`: reset and start over once from the configured start; a
    /// second 410 before any 200/204 stops.
    fn durable_gone(&mut self, now: Now) {
        if self.durable.gone_pending {
            return self.fatal(ErrorCode::HttpStatus, Some(410), Reason::PermanentError);
        }
        let Some(a) = self.phase.take_attempt() else {
            return;
        };
        self.actions.push_back(Action::Abort(a.id));
        self.mark_answered();
        let start = if self.config.last_event_id == NOW_OFFSET {
            NOW_OFFSET
        } else {
            START_OFFSET
        };
        self.set_cursor(start);
        self.durable = Durable {
            gone_pending: true,
            repeats: self.durable.repeats,
            ..Durable::default()
        };
        self.reset_and_restart(now, ResetReason::Gone, a.reason);
    }
}

/// One message of `data`, or none when it is empty (an empty chunk carries
/// no message).
fn text_messages(data: String) -> Vec<String> {
    if data.is_empty() {
        Vec::new()
    } else {
        alloc::vec![data]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_sort_keys_and_encode() {
        assert_eq!(render_url("/s", "-1", "", "7"), "/s?offset=-1");
        assert_eq!(
            render_url("/s?z=1&a&offset=9#f", "0_5", "long-poll", "12"),
            "/s?z=1&a&cursor=12&live=long-poll&offset=0_5#f"
        );
        assert_eq!(
            render_url("/s", "a b", "sse", ""),
            "/s?live=sse&offset=a%20b"
        );
    }

    #[test]
    fn offsets() {
        assert!(is_valid_offset("0000_0001", false));
        assert!(!is_valid_offset("-1", false) && is_valid_offset("-1", true));
        assert!(!is_valid_offset("now", false) && is_valid_offset("now", true));
        for bad in ["", "a/b", "a&b", "a=b", "a?b", "a,b", "a b", "a\nb"] {
            assert!(!is_valid_offset(bad, true), "{bad:?}");
        }
        let long = "0".repeat(MAX_OFFSET_BYTES);
        assert!(is_valid_offset(&long, false));
        assert!(!is_valid_offset(&(long + "0"), false));
        assert!(advances("-1", "0_0") && advances("now", "0_0"));
        assert!(advances("0_1", "0_2") && !advances("0_2", "0_2") && !advances("0_2", "0_1"));
    }

    #[test]
    fn kinds() {
        assert_eq!(
            body_kind(Some("Application/JSON; charset=utf-8")),
            DurableBody::Json
        );
        assert_eq!(body_kind(Some("application/ld+json")), DurableBody::Bytes);
        assert_eq!(body_kind(Some("text/plain")), DurableBody::Text);
        assert_eq!(body_kind(Some("text/")), DurableBody::Bytes);
        assert_eq!(body_kind(None), DurableBody::Bytes);
    }
}
