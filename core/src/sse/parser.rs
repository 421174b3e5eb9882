//! [`SseParser`]: the incremental event-stream parser (WHATWG HTML §9.2.6).

use alloc::vec::Vec;

use super::block::Block;
use super::event::SseItem;
use super::field::{parse_line, Line};
use super::limits::{SseLimit, SseLimits};
use super::line::LineSplitter;

/// An incremental parser for `text/event-stream` bodies (WHATWG HTML §9.2.6
/// "Interpreting an event stream").
///
/// Feed the body's bytes with [`SseParser::feed`] in any chunking; call
/// [`SseParser::finish`] when the body ends and [`SseParser::new_stream`] (or
/// `finish`) before the next connection's body. One parser serves a whole
/// `EventSource`-like session: the last event ID outlives connections.
///
/// Rules, all from §9.2.6:
/// - the body is UTF-8; one leading BOM is stripped (also when split across
///   chunks); malformed bytes decode to U+FFFD;
/// - a line ends at CRLF, LF or a lone CR; a CR ending one chunk and an LF
///   starting the next are one ending; a line ended by a CR is processed when
///   the CR arrives;
/// - an empty line dispatches, `:` starts a comment, otherwise
///   `name[: value]` with one leading space removed from the value; names are
///   case-sensitive, unknown names are ignored;
/// - `event`, `data`, `id` (ignored if it contains U+0000) and `retry` (ASCII
///   digits only) as described on [`SseEvent`](super::SseEvent) and
///   [`SseItem`];
/// - a blank line commits the block's id to [`SseParser::last_event_id`] (even
///   with no data), then emits an event if the block had `data`;
/// - at the end of a body, a partial line and a partial block are discarded.
///
/// Memory is bounded by the [`SseLimits`]: about `max_line_bytes` for the
/// partial line, `max_event_data_bytes` for the event's data, and
/// `max_line_bytes` each for the event type and last event ID. An event past a
/// limit is dropped as its bytes arrive and reported as
/// [`SseItem::Skipped`] at its blank line (its `id` still moves the cursor);
/// the body goes on with the next event. The parser never panics, whatever
/// the bytes.
#[derive(Clone, Debug)]
pub struct SseParser {
    /// The limits.
    limits: SseLimits,
    /// Line splitting state of the current body.
    lines: LineSplitter,
    /// The block being assembled, and the cursor.
    block: Block,
}

impl Default for SseParser {
    /// [`SseParser::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl SseParser {
    /// A parser with the default limits ([`SseLimits::DEFAULT`], 1 MiB each)
    /// and an empty last event ID.
    pub fn new() -> Self {
        Self::with_limits(SseLimits::DEFAULT)
    }

    /// A parser with the given limits and an empty last event ID.
    pub fn with_limits(limits: SseLimits) -> Self {
        SseParser {
            limits,
            lines: LineSplitter::default(),
            block: Block::default(),
        }
    }

    /// The limits this parser enforces.
    pub fn limits(&self) -> SseLimits {
        self.limits
    }

    /// The stream's last event ID (the cursor to send as `Last-Event-ID` when
    /// reconnecting): the id committed by the last dispatched block that had a
    /// valid `id` line, or the value given to
    /// [`SseParser::set_last_event_id`]; `""` initially. An `id` line in a
    /// block that has not been dispatched yet (no blank line) does not count.
    pub fn last_event_id(&self) -> &str {
        self.block.cursor()
    }

    /// Set the last event ID, e.g. to a cursor the application stored. Call it
    /// between bodies (before the first [`SseParser::feed`] or after
    /// [`SseParser::finish`]); it also becomes the id that events without their
    /// own `id` line report. Any string is taken as is, U+0000 included.
    pub fn set_last_event_id(&mut self, id: &str) {
        self.block.set_cursor(id);
    }

    /// Parse the next chunk of the body, pushing the items it completes onto
    /// `out` in stream order. A chunk may be any length, empty included, and
    /// split anywhere (inside a CRLF, a UTF-8 sequence or the BOM).
    ///
    /// A line past [`SseLimits::max_line_bytes`] or an event whose data passes
    /// [`SseLimits::max_event_data_bytes`] is not buffered: the event is
    /// dropped as it arrives and reported as [`SseItem::Skipped`] where it
    /// would have been dispatched (see [`SseLimits`] for which lines count).
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseItem>) {
        let limits = self.limits;
        let block = &mut self.block;
        self.lines.feed(chunk, limits.max_line_bytes, |piece| {
            block.on_piece(piece, limits, out)
        });
    }

    /// The limit passed by an event being dropped whose blank line has not
    /// arrived yet (a line past the line limit still arriving counts when it
    /// is a `data`, `event` or `id` line), else `None`. An adapter whose body
    /// ends or is aborted now can still say an event was too large.
    pub fn skipping(&self) -> Option<SseLimit> {
        let line = self
            .lines
            .overlong_head()
            .and_then(|head| match parse_line(head) {
                Line::Field {
                    name: b"data" | b"event" | b"id",
                    ..
                } => Some(SseLimit::Line),
                _ => None,
            });
        self.block.oversize().or(line)
    }

    /// The body ended: discard the partial line and partial block (§9.2.6:
    /// "once the end of the file is reached, any pending data must be
    /// discarded"), and get ready for the next body as
    /// [`SseParser::new_stream`] does. Returns whether anything was discarded:
    /// a line without its terminator, or a block with `data`, `event` or `id`
    /// lines but no blank line.
    pub fn finish(&mut self) -> bool {
        let discarded = self.lines.is_pending() || self.block.is_pending();
        self.new_stream();
        discarded
    }

    /// Start a new body (a new connection's response): empty data and type
    /// buffers, no partial line, a BOM expected again, no event being
    /// skipped. The
    /// last event ID is kept, and events of the new body without their own `id`
    /// line report it (WPT `eventsource/format-field-id-2`).
    pub fn new_stream(&mut self) {
        self.lines.new_stream();
        self.block.new_stream();
    }

    /// Bytes held for the body so far: the partial line plus the data and
    /// event type of the block being assembled. Bounded by
    /// `max_line_bytes + max_event_data_bytes + max_line_bytes`.
    pub fn buffered_bytes(&self) -> usize {
        self.lines.buffered_bytes() + self.block.buffered_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sse::{SseEvent, SseLimit};
    use alloc::string::String;

    fn event(event: &str, data: &str, id: Option<&str>, last: &str) -> SseItem {
        SseItem::Event(SseEvent {
            event: event.into(),
            data: data.into(),
            id: id.map(Into::into),
            last_event_id: last.into(),
        })
    }

    fn message(data: &str) -> SseItem {
        event("message", data, None, "")
    }

    /// The items, and the limit of an event still being skipped.
    fn feed_all(parser: &mut SseParser, chunks: &[&[u8]]) -> (Vec<SseItem>, Option<SseLimit>) {
        let mut out = Vec::new();
        for chunk in chunks {
            parser.feed(chunk, &mut out);
        }
        (out, parser.skipping())
    }

    fn items(chunks: &[&[u8]]) -> Vec<SseItem> {
        let (out, error) = feed_all(&mut SseParser::new(), chunks);
        assert_eq!(error, None);
        out
    }

    // Rule 1: UTF-8, one BOM, U+FFFD.
    #[test]
    fn bom_stripped_once_and_split() {
        assert_eq!(items(&[b"\xEF\xBB\xBFdata: a\n\n"]), [message("a")]);
        assert_eq!(
            items(&[b"\xEF", b"\xBB", b"\xBFdata: a\n\n"]),
            [message("a")]
        );
        // A second BOM makes the first line's name "\u{FEFF}data": unknown.
        assert_eq!(items(&[b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n"]), []);
        // No BOM at all is fine too.
        assert_eq!(items(&[b"data: a\n\n"]), [message("a")]);
    }

    #[test]
    fn utf8_split_across_chunks_and_malformed_bytes() {
        assert_eq!(
            items(&[b"data: \xE2\x82", b"\xAC \xF0\x9F", b"\x98\x80\n\n"]),
            [message("\u{20AC} \u{1F600}")]
        );
        assert_eq!(
            items(&[b"data: \xE2\x82", b"\n", b"data: \xFF\xC0\x80\n\n"]),
            [message("\u{FFFD}\n\u{FFFD}\u{FFFD}\u{FFFD}")]
        );
    }

    // Rule 2: line endings.
    #[test]
    fn line_endings_bc02() {
        assert_eq!(
            items(&[b"data: A\r\n", b"data: B\r", b"\n", b"data: C\r\n", b"\r\n"]),
            [message("A\nB\nC")]
        );
        assert_eq!(
            items(&[b"data: first\r\ndata: second\n\n"]),
            [message("first\nsecond")]
        );
        assert_eq!(
            items(&[b"data: x\r\rdata: y\r\r"]),
            [message("x"), message("y")]
        );
    }

    #[test]
    fn lone_cr_dispatches_when_it_arrives() {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        parser.feed(b"data: z\r", &mut out);
        assert_eq!(out, []);
        parser.feed(b"\r", &mut out);
        assert_eq!(out, [message("z")]);
        assert!(!parser.finish());
        assert_eq!(out, [message("z")]);
    }

    // Rule 3: blank, comment, fields.
    #[test]
    fn whitespace_line_is_not_blank() {
        assert_eq!(items(&[b"data: q\n \ndata: r\n\n"]), [message("q\nr")]);
        assert_eq!(items(&[b"data: q\n\t\n"]), []);
    }

    #[test]
    fn comments_are_reported_and_do_not_dispatch() {
        assert_eq!(
            items(&[b": keepalive\n\n:\ndata: a\n: mid\n\n"]),
            [
                SseItem::Comment,
                SseItem::Comment,
                SseItem::Comment,
                message("a")
            ]
        );
    }

    #[test]
    fn value_rules() {
        assert_eq!(
            items(&[b"data\n\ndata\ndata\n\ndata:x\n\ndata:  y\n\ndata: a:b: c\n\n"]),
            [
                message(""),
                message("\n"),
                message("x"),
                message(" y"),
                message("a:b: c")
            ]
        );
    }

    // Rule 4 and 5: fields and dispatch.
    #[test]
    fn event_type_and_reset() {
        assert_eq!(
            items(&[b"event: add\ndata: 1\n\nevent: custom\nevent:\ndata: z\n\ndata: w\n\n"]),
            [event("add", "1", None, ""), message("z"), message("w")]
        );
    }

    #[test]
    fn retry_items() {
        assert_eq!(
            items(&[
                b"retry: 100\nretry: 1x\nretry: -1\nretry:\nretry: 99999999999999999999\nretry:5\n"
            ]),
            [SseItem::RetryMs(100), SseItem::RetryMs(5)]
        );
    }

    #[test]
    fn ids_persist_clear_and_ignore_nul() {
        let mut parser = SseParser::new();
        let (out, error) = feed_all(
            &mut parser,
            &[b"id: 1\ndata: a\n\ndata: b\n\nid: x\0y\ndata: c\n\nid\ndata: d\n\ndata: e\n\n"],
        );
        assert_eq!(error, None);
        assert_eq!(
            out,
            [
                event("message", "a", Some("1"), "1"),
                event("message", "b", None, "1"),
                event("message", "c", None, "1"),
                event("message", "d", Some(""), ""),
                event("message", "e", None, ""),
            ]
        );
        assert_eq!(parser.last_event_id(), "");
    }

    #[test]
    fn id_only_block_moves_the_cursor() {
        let mut parser = SseParser::new();
        let (out, _) = feed_all(&mut parser, &[b"id: 200\n\n"]);
        assert_eq!(out, []);
        assert_eq!(parser.last_event_id(), "200");
    }

    // Rule 6: end of stream and reconnection.
    #[test]
    fn finish_discards_partial_event_and_keeps_committed_id() {
        let mut parser = SseParser::new();
        let (out, _) = feed_all(
            &mut parser,
            &[
                b"retry: 100\nid: 8\ndata: a\n\n",
                b"event: partial\nid: 9\ndata: b\n",
            ],
        );
        assert_eq!(
            out,
            [SseItem::RetryMs(100), event("message", "a", Some("8"), "8")]
        );
        assert_eq!(parser.last_event_id(), "8");
        assert!(parser.finish());
        assert_eq!(parser.last_event_id(), "8");
        let (out, _) = feed_all(&mut parser, &[b"data: c\n\n"]);
        assert_eq!(out, [event("message", "c", None, "8")]);
    }

    #[test]
    fn finish_discards_a_partial_line() {
        let mut parser = SseParser::new();
        let (out, _) = feed_all(&mut parser, &[b"data: a\n\ndata: b"]);
        assert_eq!(out, [message("a")]);
        assert!(parser.finish());
        assert!(!parser.finish());
        // The partial "data: b" does not leak into the next body.
        let (out, _) = feed_all(&mut parser, &[b"\n\n"]);
        assert_eq!(out, []);
    }

    #[test]
    fn finish_reports_a_held_bom_prefix_and_nothing_otherwise() {
        let mut parser = SseParser::new();
        assert!(!parser.finish());
        let (out, _) = feed_all(&mut parser, &[b"\xEF\xBB"]);
        assert_eq!(out, []);
        assert!(parser.finish());
        let (out, _) = feed_all(&mut parser, &[b"event: x\n"]);
        assert_eq!(out, []);
        assert!(parser.finish());
    }

    #[test]
    fn new_stream_expects_a_bom_and_keeps_the_cursor() {
        let mut parser = SseParser::new();
        parser.set_last_event_id("s0");
        let (out, _) = feed_all(&mut parser, &[b"data: a\n\nid: 9\ndata: part"]);
        assert_eq!(out, [event("message", "a", None, "s0")]);
        parser.new_stream();
        let (out, _) = feed_all(&mut parser, &[b"\xEF\xBB\xBFdata: b\n\n"]);
        assert_eq!(out, [event("message", "b", None, "s0")]);
        assert_eq!(parser.last_event_id(), "s0");
    }

    // Rule 8: limits.
    fn skipped(limit: SseLimit, bytes: usize, id: Option<&str>, last: &str) -> SseItem {
        SseItem::Skipped(crate::sse::SseSkipped {
            limit,
            limit_bytes: bytes,
            event: Some("message".into()),
            id: id.map(Into::into),
            last_event_id: last.into(),
        })
    }

    #[test]
    fn overlong_line_skips_its_event_and_frees_memory() {
        let limits = SseLimits {
            max_line_bytes: 10,
            max_event_data_bytes: 100,
        };
        let mut parser = SseParser::with_limits(limits);
        assert_eq!(parser.limits(), limits);
        let mut out = Vec::new();
        parser.feed(b"id: 1\ndata: a\n\nid: 2\ndata: 12", &mut out);
        assert_eq!(parser.buffered_bytes(), 8);
        assert_eq!(parser.skipping(), None);
        parser.feed(b"345", &mut out);
        assert_eq!(out, [event("message", "a", Some("1"), "1")]);
        assert_eq!(parser.skipping(), Some(SseLimit::Line));
        assert_eq!(parser.buffered_bytes(), 0);
        assert_eq!(parser.lines.capacity_bytes(), 0);
        // The rest of the line is dropped unread; the blank line reports the
        // event skipped with its id, which is the cursor now; the next event
        // is delivered.
        parser.feed(&[b'x'; 5000], &mut out);
        assert_eq!(parser.buffered_bytes(), 0);
        parser.feed(b"\n\ndata: b\n\n", &mut out);
        assert_eq!(
            out[1..],
            [
                skipped(SseLimit::Line, 10, Some("2"), "2"),
                event("message", "b", None, "2")
            ]
        );
        assert_eq!(parser.last_event_id(), "2");
        assert_eq!(parser.skipping(), None);
    }

    #[test]
    fn skipped_event_cut_off_by_the_end_of_the_body_is_discarded() {
        let mut parser = SseParser::with_limits(SseLimits {
            max_line_bytes: 10,
            max_event_data_bytes: 100,
        });
        let mut out = Vec::new();
        parser.feed(b"id: 1\ndata: 0123456789", &mut out);
        assert_eq!(parser.skipping(), Some(SseLimit::Line));
        assert!(parser.finish());
        assert_eq!(parser.skipping(), None);
        assert_eq!(parser.last_event_id(), "");
        // An over-long comment or unknown field is no skipped event.
        parser.feed(b": 0123456789", &mut out);
        assert_eq!(parser.skipping(), None);
        parser.feed(b"\nfoo: 0123456789\n\n", &mut out);
        assert_eq!(out, [SseItem::Comment]);
    }

    #[test]
    fn data_limit_counts_lf_per_line() {
        let mut parser = SseParser::with_limits(SseLimits {
            max_line_bytes: 1 << 20,
            max_event_data_bytes: 65_536,
        });
        let mut out = Vec::new();
        let mut lines = 0usize;
        while parser.skipping().is_none() && lines < 100_000 {
            parser.feed(b"data:\n", &mut out);
            lines += 1;
        }
        assert_eq!(lines, 65_537);
        assert_eq!(parser.skipping(), Some(SseLimit::EventData));
        assert_eq!(parser.buffered_bytes(), 0);
        parser.feed(b"data:\n\n", &mut out);
        assert_eq!(out, [skipped(SseLimit::EventData, 65_536, None, "")]);
    }

    #[test]
    fn data_exactly_at_the_limit_is_delivered() {
        let mut parser = SseParser::with_limits(SseLimits {
            max_line_bytes: 100,
            max_event_data_bytes: 6,
        });
        let mut out = Vec::new();
        parser.feed(b"data: ab\ndata: cd\n\n", &mut out);
        assert_eq!(out, [message("ab\ncd")]);
    }

    #[test]
    fn default_limits_are_one_mebibyte() {
        let parser = SseParser::default();
        assert_eq!(parser.limits(), SseLimits::DEFAULT);
        assert_eq!(parser.last_event_id(), "");
        let line = String::from("data: ") + &"x".repeat(1_048_570);
        let mut p = SseParser::new();
        let mut out = Vec::new();
        p.feed(line.as_bytes(), &mut out);
        p.feed(b"\n\n", &mut out);
        assert_eq!(out.len(), 1);
        let mut p = SseParser::new();
        let mut out = Vec::new();
        p.feed((line + "x\n\n").as_bytes(), &mut out);
        assert_eq!(out, [skipped(SseLimit::Line, 1_048_576, None, "")]);
    }
}
