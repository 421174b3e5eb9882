//! The field rules and dispatch (WHATWG HTML §9.2.6, "process the field" and
//! "dispatch the event"): the buffers of the block being assembled and the
//! stream's last event ID, and the events dropped for their size.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use core::mem;

use super::event::{SseEvent, SseItem, SseSkipped};
use super::field::{parse_line, Line};
use super::limits::{reserve_within, SseLimit, SseLimits};
use super::line::Piece;

/// The event type used when a block sets none.
const DEFAULT_EVENT_TYPE: &str = "message";

/// The state the spec attaches to a stream (data, event type and last event ID
/// buffers) plus the stream's "last event ID string" (the cursor).
///
/// Invariant: when `id_set` is false, `id_buffer == cursor`. Dispatch copies the
/// buffer to the cursor, a new stream copies the cursor to the buffer, and
/// [`Block::set_cursor`] sets both; so only a block with its own `id` line has
/// anything to copy.
#[derive(Clone, Debug, Default)]
pub(crate) struct Block {
    /// The data buffer: each `data` value followed by LF.
    data: String,
    /// The event type buffer.
    event_type: String,
    /// The last event ID buffer.
    id_buffer: String,
    /// Whether this block had a valid `id` line.
    id_set: bool,
    /// The last event ID string: the cursor to resume from.
    cursor: String,
    /// The block passed a limit (the first one, and its value): it is dropped
    /// at its blank line, and its data is no longer buffered.
    oversize: Option<(SseLimit, usize)>,
    /// The block had a `data` line (kept in `data` unless `oversize`).
    had_data: bool,
    /// Its last `event` line was past the line limit: the type is unknown.
    event_unknown: bool,
    /// Its last `id` line was past the line limit: the id is unknown.
    id_unknown: bool,
}

impl Block {
    /// The stream's last event ID string (updated at each dispatch).
    pub(crate) fn cursor(&self) -> &str {
        &self.cursor
    }

    /// Set the cursor (and the buffer) from outside, e.g. a stored cursor.
    pub(crate) fn set_cursor(&mut self, id: &str) {
        self.cursor.clear();
        self.cursor.push_str(id);
        self.id_buffer.clear();
        self.id_buffer.push_str(id);
        self.id_set = false;
        self.id_unknown = false;
    }

    /// Whether a block has started but not been dispatched: some `data`,
    /// `event` or `id` line since the last blank line.
    pub(crate) fn is_pending(&self) -> bool {
        self.had_data
            || !self.event_type.is_empty()
            || self.id_set
            || self.event_unknown
            || self.id_unknown
    }

    /// The limit the pending block passed, if it did and had data (so its
    /// blank line would report it as skipped).
    pub(crate) fn oversize(&self) -> Option<SseLimit> {
        self.oversize
            .filter(|_| self.had_data)
            .map(|(limit, _)| limit)
    }

    /// Bytes held for the block being assembled (data and event type).
    pub(crate) fn buffered_bytes(&self) -> usize {
        self.data.len() + self.event_type.len()
    }

    /// Start a new stream: drop the partial block, keep the cursor. Per the WPT
    /// test `format-field-id-2`, the last event ID carries over a reconnection.
    pub(crate) fn new_stream(&mut self) {
        self.data.clear();
        self.event_type.clear();
        self.end_block();
    }

    /// Forget everything of the block but its buffers' memory.
    fn end_block(&mut self) {
        self.id_buffer.clone_from(&self.cursor);
        self.id_set = false;
        self.oversize = None;
        self.had_data = false;
        self.event_unknown = false;
        self.id_unknown = false;
    }

    /// Mark the block as past `limit`: from now on its data is dropped, and
    /// the memory it held is given back.
    fn mark_oversize(&mut self, limit: SseLimit, limit_bytes: usize) {
        if self.oversize.is_none() {
            self.oversize = Some((limit, limit_bytes));
        }
        self.data = String::new();
    }

    /// Process one piece from the line splitter.
    pub(crate) fn on_piece(&mut self, piece: Piece<'_>, limits: SseLimits, out: &mut Vec<SseItem>) {
        match piece {
            Piece::Line(line) => self.on_line(line, limits.max_event_data_bytes, out),
            Piece::Overlong { head, .. } => self.on_overlong(head, limits.max_line_bytes, out),
        }
    }

    /// A line past the line limit, known by its first bytes: a comment still
    /// shows the connection is alive; a `data`, `event` or `id` line makes the
    /// block too large (its value cannot be kept); any other field is ignored,
    /// as it would be whole (`retry`: a value that long overflows).
    fn on_overlong(&mut self, head: &[u8], max_line_bytes: usize, out: &mut Vec<SseItem>) {
        match parse_line(head) {
            Line::Comment => out.push(SseItem::Comment),
            Line::Field { name: b"data", .. } => {
                self.had_data = true;
                self.mark_oversize(SseLimit::Line, max_line_bytes);
            }
            Line::Field { name: b"event", .. } => {
                self.event_type.clear();
                self.event_unknown = true;
                self.mark_oversize(SseLimit::Line, max_line_bytes);
            }
            Line::Field { name: b"id", .. } => {
                // The spec would take this id (unless it holds U+0000): it
                // cannot be kept, so the cursor stays where it is.
                self.id_buffer.clone_from(&self.cursor);
                self.id_set = false;
                self.id_unknown = true;
                self.mark_oversize(SseLimit::Line, max_line_bytes);
            }
            _ => {}
        }
    }

    /// Process one complete line (terminator removed).
    pub(crate) fn on_line(
        &mut self,
        line: &[u8],
        max_event_data_bytes: usize,
        out: &mut Vec<SseItem>,
    ) {
        match parse_line(line) {
            Line::Blank => self.dispatch(out),
            Line::Comment => out.push(SseItem::Comment),
            Line::Field { name, value } => match name {
                b"data" => self.append_data(value, max_event_data_bytes),
                b"event" => {
                    self.event_type.clear();
                    self.event_type.push_str(&super::utf8::lossy(value));
                    self.event_unknown = false;
                }
                // U+0000 is the byte 0 in UTF-8 and no invalid sequence
                // decodes to it, so checking the bytes is exact.
                b"id" if !value.contains(&0) => {
                    self.id_buffer.clear();
                    self.id_buffer.push_str(&super::utf8::lossy(value));
                    self.id_set = true;
                    self.id_unknown = false;
                }
                b"retry" => {
                    if let Some(ms) = parse_retry_ms(value) {
                        out.push(SseItem::RetryMs(ms));
                    }
                }
                _ => {}
            },
        }
    }

    /// `data`: append the value and an LF, within the limit; past it the
    /// block is too large and its data is dropped.
    fn append_data(&mut self, value: &[u8], max_bytes: usize) {
        self.had_data = true;
        if self.oversize.is_some() {
            return;
        }
        let value: Cow<'_, str> = super::utf8::lossy(value);
        let additional = value.len() + 1;
        if self.data.len() + additional > max_bytes {
            self.mark_oversize(SseLimit::EventData, max_bytes);
            return;
        }
        let reserve = reserve_within(self.data.len(), self.data.capacity(), additional, max_bytes);
        self.data.reserve_exact(reserve);
        self.data.push_str(&value);
        self.data.push('\n');
    }

    /// A blank line: commit the id, then emit the event if there is data (or
    /// report it skipped when it passed a limit).
    fn dispatch(&mut self, out: &mut Vec<SseItem>) {
        if self.id_set {
            self.cursor.clone_from(&self.id_buffer);
        }
        let id = self.id_set.then(|| self.id_buffer.clone());
        if let Some((limit, limit_bytes)) = self.oversize {
            if self.had_data {
                let event = (!self.event_unknown).then(|| {
                    if self.event_type.is_empty() {
                        String::from(DEFAULT_EVENT_TYPE)
                    } else {
                        mem::take(&mut self.event_type)
                    }
                });
                out.push(SseItem::Skipped(SseSkipped {
                    limit,
                    limit_bytes,
                    event,
                    id,
                    last_event_id: self.cursor.clone(),
                }));
            }
            self.event_type.clear();
            self.end_block();
            return;
        }
        if !self.had_data {
            self.event_type.clear();
            self.end_block();
            return;
        }
        let mut data = mem::take(&mut self.data);
        if data.ends_with('\n') {
            data.pop();
        }
        let event = if self.event_type.is_empty() {
            String::from(DEFAULT_EVENT_TYPE)
        } else {
            mem::take(&mut self.event_type)
        };
        self.end_block();
        out.push(SseItem::Event(SseEvent {
            event,
            data,
            id,
            last_event_id: self.cursor.clone(),
        }));
    }
}

/// A `retry` value: a non-empty run of ASCII digits, base 10, in ms. Anything
/// else, including a value that overflows `u64`, is `None` (ignored).
fn parse_retry_ms(value: &[u8]) -> Option<u64> {
    crate::wire::parse_decimal(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: usize = 1 << 20;

    fn run(block: &mut Block, lines: &[&[u8]]) -> Result<Vec<SseItem>, core::convert::Infallible> {
        let mut out = Vec::new();
        for line in lines {
            block.on_line(line, MAX, &mut out);
        }
        Ok(out)
    }

    fn event(event: &str, data: &str, id: Option<&str>, last: &str) -> SseItem {
        SseItem::Event(SseEvent {
            event: event.into(),
            data: data.into(),
            id: id.map(Into::into),
            last_event_id: last.into(),
        })
    }

    #[test]
    fn retry_accepts_digits_only() {
        assert_eq!(parse_retry_ms(b"0"), Some(0));
        assert_eq!(parse_retry_ms(b"100"), Some(100));
        assert_eq!(parse_retry_ms(b"007"), Some(7));
        assert_eq!(
            parse_retry_ms(b"18446744073709551615"),
            Some(18_446_744_073_709_551_615)
        );
        assert_eq!(parse_retry_ms(b"18446744073709551616"), None);
        assert_eq!(parse_retry_ms(b"99999999999999999999999"), None);
        for bad in [
            &b""[..],
            b" 1",
            b"1 ",
            b"1.5",
            b"-1",
            b"+1",
            b"1e3",
            b"abc",
            b"\xD9\xA1",
        ] {
            assert_eq!(parse_retry_ms(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn retry_line_is_reported_in_order() {
        let mut block = Block::default();
        let out = run(
            &mut block,
            &[
                b"retry: 1500",
                b"retry: x",
                b"retry",
                b"retry:",
                b"retry:  1",
                b"retry:2",
            ],
        );
        assert_eq!(out, Ok(vec![SseItem::RetryMs(1500), SseItem::RetryMs(2)]));
    }

    #[test]
    fn data_lines_join_with_lf() {
        let mut block = Block::default();
        let out = run(&mut block, &[b"data: a", b"data:", b"data: b", b""]);
        assert_eq!(out, Ok(vec![event("message", "a\n\nb", None, "")]));
    }

    #[test]
    fn event_sets_and_empty_event_resets_the_type() {
        let mut block = Block::default();
        let out = run(
            &mut block,
            &[
                b"event: a",
                b"data: 1",
                b"",
                b"event: a",
                b"event:",
                b"data: 2",
                b"",
            ],
        );
        assert_eq!(
            out,
            Ok(vec![
                event("a", "1", None, ""),
                event("message", "2", None, "")
            ])
        );
    }

    #[test]
    fn block_without_data_dispatches_nothing_and_resets_the_type() {
        let mut block = Block::default();
        let out = run(&mut block, &[b"event: lonely", b"", b"data: x", b""]);
        assert_eq!(out, Ok(vec![event("message", "x", None, "")]));
    }

    #[test]
    fn id_persists_and_own_id_is_marked() {
        let mut block = Block::default();
        let out = run(
            &mut block,
            &[
                b"id: 1", b"data: a", b"", b"data: b", b"", b"id", b"data: c", b"",
            ],
        );
        assert_eq!(
            out,
            Ok(vec![
                event("message", "a", Some("1"), "1"),
                event("message", "b", None, "1"),
                event("message", "c", Some(""), ""),
            ])
        );
        assert_eq!(block.cursor(), "");
    }

    #[test]
    fn id_with_nul_is_ignored() {
        let mut block = Block::default();
        block.set_cursor("7");
        let out = run(&mut block, &[b"id: a\0b", b"data: x", b""]);
        assert_eq!(out, Ok(vec![event("message", "x", None, "7")]));
        let out = run(&mut block, &[b"id: 8", b"id: \0", b"data: y", b""]);
        assert_eq!(out, Ok(vec![event("message", "y", Some("8"), "8")]));
    }

    #[test]
    fn id_only_block_moves_the_cursor_without_an_event() {
        let mut block = Block::default();
        let out = run(&mut block, &[b"id: 5", b""]);
        assert_eq!(out, Ok(vec![]));
        assert_eq!(block.cursor(), "5");
        let out = run(&mut block, &[b"data: x", b""]);
        assert_eq!(out, Ok(vec![event("message", "x", None, "5")]));
    }

    #[test]
    fn undispatched_id_is_not_the_cursor_and_new_stream_drops_it() {
        let mut block = Block::default();
        let out = run(
            &mut block,
            &[b"id: 1", b"data: a", b"", b"id: 2", b"data: b"],
        );
        assert_eq!(out, Ok(vec![event("message", "a", Some("1"), "1")]));
        assert_eq!(block.cursor(), "1");
        assert!(block.is_pending());
        block.new_stream();
        assert!(!block.is_pending());
        let out = run(&mut block, &[b"data: c", b""]);
        assert_eq!(out, Ok(vec![event("message", "c", None, "1")]));
    }

    #[test]
    fn unknown_and_case_variant_fields_are_ignored() {
        let mut block = Block::default();
        let out = run(
            &mut block,
            &[
                b"Data: x",
                b"DATA: x",
                b"ID: 3",
                b"Event: e",
                b"foo: bar",
                b" ",
                b"",
            ],
        );
        assert_eq!(out, Ok(vec![]));
        assert_eq!(block.cursor(), "");
        assert!(!block.is_pending());
    }

    #[test]
    fn comments_are_reported() {
        let mut block = Block::default();
        let out = run(&mut block, &[b": hi", b":", b""]);
        assert_eq!(out, Ok(vec![SseItem::Comment, SseItem::Comment]));
    }

    #[test]
    fn invalid_utf8_decodes_to_replacement_characters() {
        let mut block = Block::default();
        let out = run(
            &mut block,
            &[
                b"event: \xFFe",
                b"id: \xC3",
                b"data: a\xE2\x82b\xF0\x9F\x98\x80",
                b"",
            ],
        );
        assert_eq!(
            out,
            Ok(vec![event(
                "\u{FFFD}e",
                "a\u{FFFD}b\u{1F600}",
                Some("\u{FFFD}"),
                "\u{FFFD}"
            )])
        );
    }

    fn skipped(
        limit: SseLimit,
        bytes: usize,
        event: Option<&str>,
        id: Option<&str>,
        last: &str,
    ) -> SseItem {
        SseItem::Skipped(SseSkipped {
            limit,
            limit_bytes: bytes,
            event: event.map(Into::into),
            id: id.map(Into::into),
            last_event_id: last.into(),
        })
    }

    #[test]
    fn data_limit_counts_the_lf_of_each_line() {
        let mut block = Block::default();
        let mut out = Vec::new();
        // 4 bytes: "ab\n" + "\n" fits exactly, one more LF does not.
        block.on_line(b"data: ab", 4, &mut out);
        block.on_line(b"data", 4, &mut out);
        assert_eq!(block.oversize(), None);
        block.on_line(b"data", 4, &mut out);
        assert_eq!(block.oversize(), Some(SseLimit::EventData));
        assert_eq!(block.data.capacity(), 0);
        assert!(out.is_empty());
    }

    #[test]
    fn oversize_event_is_skipped_with_its_id_and_the_next_one_delivered() {
        let mut block = Block::default();
        let mut out = Vec::new();
        for line in [
            &b"id: 7"[..],
            b"event: big",
            b"data: 12345",
            b"data: more",
            b"",
            b"data: ok",
            b"",
        ] {
            block.on_line(line, 4, &mut out);
        }
        assert_eq!(
            out,
            [
                skipped(SseLimit::EventData, 4, Some("big"), Some("7"), "7"),
                event("message", "ok", None, "7"),
            ]
        );
        assert_eq!(block.cursor(), "7");
        // The id may come after the data, as in any block.
        out.clear();
        for line in [&b"data: 12345"[..], b"id: 8", b""] {
            block.on_line(line, 4, &mut out);
        }
        assert_eq!(
            out,
            [skipped(
                SseLimit::EventData,
                4,
                Some("message"),
                Some("8"),
                "8"
            )]
        );
    }

    #[test]
    fn overlong_lines_by_field() {
        let limits = SseLimits {
            max_line_bytes: 10,
            max_event_data_bytes: 100,
        };
        let mut block = Block::default();
        block.set_cursor("1");
        let mut out = Vec::new();
        let overlong = |head: &'static [u8]| Piece::Overlong {
            head,
            truncated: true,
        };
        // A comment is a comment; unknown fields and `retry` are ignored.
        for piece in [
            overlong(b": hb.."),
            overlong(b"retry:"),
            overlong(b"foobar"),
            Piece::Line(b""),
        ] {
            block.on_piece(piece, limits, &mut out);
        }
        assert_eq!(out, [SseItem::Comment]);
        assert!(!block.is_pending());
        // `data`: skipped, the id line still moves the cursor.
        out.clear();
        for piece in [Piece::Line(b"id: 2"), overlong(b"data: "), Piece::Line(b"")] {
            block.on_piece(piece, limits, &mut out);
        }
        assert_eq!(
            out,
            [skipped(SseLimit::Line, 10, Some("message"), Some("2"), "2")]
        );
        // `event`: the type is unknown.
        out.clear();
        for piece in [
            overlong(b"event:"),
            Piece::Line(b"data: x"),
            Piece::Line(b""),
        ] {
            block.on_piece(piece, limits, &mut out);
        }
        assert_eq!(out, [skipped(SseLimit::Line, 10, None, None, "2")]);
        // `id`: unknown, the cursor stays; a later id line wins again.
        out.clear();
        for piece in [
            overlong(b"id: 33"),
            Piece::Line(b"data: x"),
            Piece::Line(b""),
        ] {
            block.on_piece(piece, limits, &mut out);
        }
        assert_eq!(
            out,
            [skipped(SseLimit::Line, 10, Some("message"), None, "2")]
        );
        out.clear();
        for piece in [
            overlong(b"id: 33"),
            Piece::Line(b"id: 4"),
            Piece::Line(b"data: x"),
            Piece::Line(b""),
        ] {
            block.on_piece(piece, limits, &mut out);
        }
        assert_eq!(
            out,
            [skipped(SseLimit::Line, 10, Some("message"), Some("4"), "4")]
        );
        // Without data nothing is dispatched, as for any block.
        out.clear();
        for piece in [overlong(b"event:"), Piece::Line(b"")] {
            block.on_piece(piece, limits, &mut out);
        }
        assert!(out.is_empty());
        assert!(!block.is_pending());
    }

    #[test]
    fn data_capacity_stays_within_the_limit() {
        let mut block = Block::default();
        let mut out = Vec::new();
        let limit = 10_000;
        let mut lines = 0;
        while block.oversize().is_none() {
            block.on_line(b"data: 123456789", limit, &mut out);
            lines += 1;
            if block.oversize().is_none() {
                assert!(block.data.capacity() <= limit, "{}", block.data.capacity());
            }
        }
        assert_eq!(lines, 1001);
        assert_eq!(block.data.len(), 0);
    }
}
