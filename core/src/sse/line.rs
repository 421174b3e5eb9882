//! Cutting the byte stream into lines (WHATWG HTML §9.2.6): strip one leading
//! BOM, end lines at CRLF, LF or a lone CR, and keep the partial last line
//! between chunks, within the line limit.
//!
//! Lines are kept as bytes and decoded by the caller once complete, so a UTF-8
//! sequence split across chunks decodes as if it had arrived whole (CR and LF
//! are ASCII and never inside a multi-byte sequence).
//!
//! A line longer than the limit is not buffered: its bytes are dropped up to
//! its terminator, keeping only its first [`HEAD_BYTES`] (enough to tell a
//! comment or the field it names), and it is reported as [`Piece::Overlong`]
//! when its terminator arrives. Memory stays bounded and the stream goes on
//! with the next line.

use alloc::vec::Vec;
use core::mem;

use super::limits::reserve_within;
use super::scan::find_line_end;

/// The UTF-8 byte order mark, U+FEFF.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Bytes kept of a line longer than the limit: the longest field name the
/// parser knows (`event`, `retry`: 5 bytes) and its colon. A line whose first
/// 6 bytes hold no colon names a field of 6 bytes or more: an unknown one.
pub(crate) const HEAD_BYTES: usize = 6;

/// Where the splitter stands with respect to the leading BOM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bom {
    /// At the start of the stream: this many bytes of the BOM (0..=2) have
    /// arrived, and were held back, not buffered as line content.
    Expecting(u8),
    /// Past the start of the stream.
    Done,
}

/// A line longer than the limit, being dropped up to its terminator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Skip {
    /// Its first bytes.
    head: [u8; HEAD_BYTES],
    /// How many of `head` are set.
    len: usize,
    /// The line has more bytes than `head`.
    truncated: bool,
}

impl Skip {
    /// Take more bytes of the line: the first ones fill `head`.
    fn absorb(&mut self, bytes: &[u8]) {
        let take = HEAD_BYTES.saturating_sub(self.len).min(bytes.len());
        if let (Some(dst), Some(src)) = (
            self.head.get_mut(self.len..self.len + take),
            bytes.get(..take),
        ) {
            dst.copy_from_slice(src);
        }
        self.len += take;
        self.truncated |= bytes.len() > take;
    }

    fn head(&self) -> &[u8] {
        self.head.get(..self.len).unwrap_or_default()
    }
}

/// What the splitter hands on (terminators removed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// A line within the limit.
    Line(&'a [u8]),
    /// A line longer than the limit, dropped: its first bytes (at most
    /// [`HEAD_BYTES`]), and whether it had more.
    Overlong {
        /// The first bytes of the line.
        head: &'a [u8],
        /// The line was longer than `head`.
        truncated: bool,
    },
}

/// The line splitter of one stream.
#[derive(Clone, Debug)]
pub(crate) struct LineSplitter {
    /// The partial line: bytes after the last terminator, at most the limit.
    partial: Vec<u8>,
    /// The BOM state.
    bom: Bom,
    /// The last byte seen ended a line with CR: an LF first in the next chunk
    /// belongs to that CRLF and is skipped.
    after_cr: bool,
    /// The current line passed the limit and is being dropped.
    skip: Option<Skip>,
}

impl Default for LineSplitter {
    fn default() -> Self {
        LineSplitter {
            partial: Vec::new(),
            bom: Bom::Expecting(0),
            after_cr: false,
            skip: None,
        }
    }
}

impl LineSplitter {
    /// Bytes of the partial line held.
    pub(crate) fn buffered_bytes(&self) -> usize {
        self.partial.len()
    }

    /// The buffer's capacity (tests check it stays within the limit).
    #[cfg(test)]
    pub(crate) fn capacity_bytes(&self) -> usize {
        self.partial.capacity()
    }

    /// Whether part of a line (or of a BOM) has arrived without its end.
    pub(crate) fn is_pending(&self) -> bool {
        !self.partial.is_empty()
            || self.skip.is_some()
            || matches!(self.bom, Bom::Expecting(n) if n > 0)
    }

    /// The first bytes of a line being dropped for passing the limit, while
    /// its terminator has not arrived.
    pub(crate) fn overlong_head(&self) -> Option<&[u8]> {
        self.skip.as_ref().map(Skip::head)
    }

    /// Start a new stream: drop the partial line, expect a BOM again.
    pub(crate) fn new_stream(&mut self) {
        self.partial.clear();
        self.bom = Bom::Expecting(0);
        self.after_cr = false;
        self.skip = None;
    }

    /// Append to the partial line. Past the limit the line is dropped
    /// instead: its head is kept and the buffer's memory given back.
    fn push_partial(&mut self, bytes: &[u8], max_line_bytes: usize) {
        if self.skip.is_none() && self.partial.len() + bytes.len() > max_line_bytes {
            self.start_skip();
        }
        if let Some(skip) = self.skip.as_mut() {
            skip.absorb(bytes);
            return;
        }
        let reserve = reserve_within(
            self.partial.len(),
            self.partial.capacity(),
            bytes.len(),
            max_line_bytes,
        );
        self.partial.reserve_exact(reserve);
        self.partial.extend_from_slice(bytes);
    }

    /// The current line passed the limit: keep its head, free the buffer.
    fn start_skip(&mut self) {
        let mut skip = Skip::default();
        skip.absorb(&self.partial);
        self.partial = Vec::new();
        self.skip = Some(skip);
    }

    /// Consume the BOM bytes at the start of `chunk`; return the rest.
    fn strip_bom<'c>(&mut self, chunk: &'c [u8], max_line_bytes: usize) -> &'c [u8] {
        let Bom::Expecting(held) = self.bom else {
            return chunk;
        };
        let mut matched = usize::from(held);
        let mut taken = 0usize;
        while matched < BOM.len() {
            match chunk.get(taken) {
                // The chunk ended inside a possible BOM: hold what we have.
                None => {
                    // `matched` is at most 2 here.
                    self.bom = Bom::Expecting(matched as u8);
                    return &[];
                }
                Some(b) if BOM.get(matched) == Some(b) => {
                    matched += 1;
                    taken += 1;
                }
                Some(_) => break,
            }
        }
        self.bom = Bom::Done;
        if matched == BOM.len() {
            return chunk.get(taken..).unwrap_or_default();
        }
        // Not a BOM: the bytes held from earlier chunks are line content; the
        // ones matched in this chunk are still in `chunk` and parsed from there.
        self.push_partial(
            BOM.get(..usize::from(held)).unwrap_or_default(),
            max_line_bytes,
        );
        chunk
    }

    /// Split `chunk` into lines, calling `on_piece` with each complete line
    /// (terminator removed) in order, or with the head of each line that
    /// passed `max_line_bytes` once its terminator arrives. Bytes of an
    /// over-long line past the limit are never buffered.
    pub(crate) fn feed<F>(&mut self, chunk: &[u8], max_line_bytes: usize, mut on_piece: F)
    where
        F: FnMut(Piece<'_>),
    {
        let mut rest = self.strip_bom(chunk, max_line_bytes);
        if rest.is_empty() {
            return;
        }
        if mem::take(&mut self.after_cr) {
            if let Some((b'\n', after)) = rest.split_first() {
                rest = after;
            }
        }
        loop {
            let Some(end) = self.line_end(rest, max_line_bytes) else {
                // No terminator: `rest` is the start of a line (or nothing).
                self.push_partial(rest, max_line_bytes);
                return;
            };
            let (content, terminator_onwards) = rest.split_at_checked(end).unwrap_or((rest, &[]));
            let Some((&terminator, after)) = terminator_onwards.split_first() else {
                self.push_partial(rest, max_line_bytes);
                return;
            };
            self.complete_line(content, max_line_bytes, &mut on_piece);
            rest = after;
            if terminator == b'\r' {
                match rest.split_first() {
                    Some((b'\n', after_lf)) => rest = after_lf,
                    Some(_) => {}
                    // A CR as the chunk's last byte: the line is done now; an
                    // LF starting the next chunk completes the CRLF.
                    None => self.after_cr = true,
                }
            }
            if rest.is_empty() {
                return;
            }
        }
    }

    /// Where the line at the start of `rest` ends (the index of its CR or
    /// LF), or `None` when no terminator is within reach. Looks no further
    /// than one byte past the limit: with no terminator within reach the line
    /// is too long whatever follows, and the rest of it is dropped (a skip
    /// starts, and only its end matters).
    #[inline]
    fn line_end(&mut self, rest: &[u8], max_line_bytes: usize) -> Option<usize> {
        if self.skip.is_some() {
            return find_line_end(rest);
        }
        let room = max_line_bytes.saturating_sub(self.partial.len());
        let window = rest.get(..room.saturating_add(1)).unwrap_or(rest);
        match find_line_end(window) {
            None if rest.len() > room => {
                self.start_skip();
                find_line_end(rest)
            }
            end => end,
        }
    }

    /// A line ended with `content` as its last bytes: hand it (or the head
    /// of the over-long line it ends) to `on_piece`.
    #[inline]
    fn complete_line<F>(&mut self, content: &[u8], max_line_bytes: usize, on_piece: &mut F)
    where
        F: FnMut(Piece<'_>),
    {
        if let Some(mut skip) = self.skip.take() {
            skip.absorb(content);
            on_piece(Piece::Overlong {
                head: skip.head(),
                truncated: skip.truncated,
            });
        } else if self.partial.is_empty() {
            on_piece(Piece::Line(content));
        } else {
            self.push_partial(content, max_line_bytes);
            let mut line = mem::take(&mut self.partial);
            on_piece(Piece::Line(&line));
            line.clear();
            self.partial = line;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::String;

    const MAX: usize = 1 << 20;

    /// Feed `chunks` and render each line as a string; an over-long line as
    /// "!" + its head, and "+" when it was longer than the head.
    fn lines_of(chunks: &[&[u8]], max: usize) -> Vec<String> {
        let mut splitter = LineSplitter::default();
        let mut lines = Vec::new();
        for chunk in chunks {
            splitter.feed(chunk, max, |piece| {
                lines.push(match piece {
                    Piece::Line(line) => String::from_utf8_lossy(line).into_owned(),
                    Piece::Overlong { head, truncated } => {
                        let mut s = String::from("!");
                        s.push_str(&String::from_utf8_lossy(head));
                        if truncated {
                            s.push('+');
                        }
                        s
                    }
                })
            });
        }
        lines
    }

    #[test]
    fn three_line_endings() {
        assert_eq!(lines_of(&[b"a\r\nb\nc\rd"], MAX), ["a", "b", "c"]);
        assert_eq!(lines_of(&[b"\r\n\n\r\r"], MAX), ["", "", "", ""]);
        assert_eq!(lines_of(&[b"\n\r"], MAX), ["", ""]);
    }

    #[test]
    fn crlf_split_across_chunks_is_one_ending() {
        assert_eq!(lines_of(&[b"a\r", b"\nb\n"], MAX), ["a", "b"]);
        assert_eq!(lines_of(&[b"a\r", b"", b"\nb\n"], MAX), ["a", "b"]);
        assert_eq!(lines_of(&[b"a\r", b"\r"], MAX), ["a", ""]);
        assert_eq!(lines_of(&[b"a\r", b"\n", b"\n"], MAX), ["a", ""]);
    }

    #[test]
    fn lone_cr_at_chunk_end_ends_the_line_immediately() {
        assert_eq!(lines_of(&[b"data: z\r"], MAX), ["data: z"]);
        assert_eq!(lines_of(&[b"data: z\r", b"\r"], MAX), ["data: z", ""]);
    }

    #[test]
    fn partial_lines_join_across_chunks() {
        assert_eq!(
            lines_of(&[b"da", b"ta: ", b"x\ny", b"z\n"], MAX),
            ["data: x", "yz"]
        );
        assert_eq!(lines_of(&[b"no end"], MAX), Vec::<String>::new());
    }

    #[test]
    fn bom_is_stripped_once_even_when_split() {
        assert_eq!(lines_of(&[b"\xEF\xBB\xBFa\n"], MAX), ["a"]);
        assert_eq!(lines_of(&[b"\xEF", b"\xBB", b"\xBF", b"a\n"], MAX), ["a"]);
        assert_eq!(lines_of(&[b"\xEF\xBB", b"\xBFa\n"], MAX), ["a"]);
        assert_eq!(lines_of(&[b"", b"\xEF\xBB\xBF", b"\n"], MAX), [""]);
        // Only one BOM, and only at the very start.
        assert_eq!(
            lines_of(&[b"\xEF\xBB\xBF\xEF\xBB\xBFa\n"], MAX),
            ["\u{FEFF}a"]
        );
        assert_eq!(lines_of(&[b"a\xEF\xBB\xBF\n"], MAX), ["a\u{FEFF}"]);
    }

    #[test]
    fn broken_bom_is_line_content() {
        assert_eq!(lines_of(&[b"\xEF\xBBa\n"], MAX), ["\u{FFFD}a"]);
        assert_eq!(lines_of(&[b"\xEF", b"\xBB", b"a\n"], MAX), ["\u{FFFD}a"]);
        assert_eq!(lines_of(&[b"\xEF", b"\n"], MAX), ["\u{FFFD}"]);
        assert_eq!(
            lines_of(&[b"\xEF", b"\xEF\xBB\xBF\n"], MAX),
            ["\u{FFFD}\u{FEFF}"]
        );
    }

    #[test]
    fn new_stream_expects_a_bom_again() {
        let mut splitter = LineSplitter::default();
        let mut lines = Vec::new();
        let mut collect = |chunk: &[u8], splitter: &mut LineSplitter| {
            splitter.feed(chunk, MAX, |piece| {
                if let Piece::Line(line) = piece {
                    lines.push(line.to_vec());
                }
            })
        };
        collect(b"\xEF\xBB\xBFa\npartial", &mut splitter);
        assert!(splitter.is_pending());
        splitter.new_stream();
        assert!(!splitter.is_pending());
        collect(b"\xEF\xBB\xBFb\n", &mut splitter);
        assert_eq!(lines, [b"a".to_vec(), b"b".to_vec()]);
    }

    #[test]
    fn after_cr_does_not_survive_a_new_stream() {
        let mut splitter = LineSplitter::default();
        let mut count = 0;
        splitter.feed(b"a\r", MAX, |_| count += 1);
        splitter.new_stream();
        splitter.feed(b"\n", MAX, |_| count += 1);
        assert_eq!(count, 2);
    }

    #[test]
    fn line_limit_is_inclusive() {
        assert_eq!(lines_of(&[b"abcd\n"], 4), ["abcd"]);
        assert_eq!(lines_of(&[b"ab", b"cd", b"\n"], 4), ["abcd"]);
        assert_eq!(lines_of(&[b"abcd\r", b"\n"], 4), ["abcd"]);
        assert_eq!(lines_of(&[b"abcde\n"], 4), ["!abcde"]);
        assert_eq!(lines_of(&[b"ab", b"cde"], 4), Vec::<String>::new());
        assert_eq!(
            lines_of(&[b"ok\nabcdefgh\r\nnext\n"], 4),
            ["ok", "!abcdef+", "next"]
        );
        // A stripped BOM does not count.
        assert_eq!(lines_of(&[b"\xEF\xBB\xBFabcd\n"], 4), ["abcd"]);
    }

    #[test]
    fn overlong_line_is_dropped_to_its_end_and_the_stream_goes_on() {
        // Split anywhere, CR LF across chunks, the head from the buffered part.
        assert_eq!(
            lines_of(&[b"data: 12", b"34567", b"89\r", b"\ndata: x\n"], 8),
            ["!data: +", "data: x"]
        );
        assert_eq!(
            lines_of(&[b"da", b"ta", b": 123456789\n\n"], 8),
            ["!data: +", ""]
        );
        // A held BOM prefix past a tiny limit is part of the dropped line.
        assert_eq!(
            lines_of(&[b"\xEF", b"\xBBa\n", b"b\n"], 1),
            ["!\u{FFFD}a", "b"]
        );
        assert_eq!(lines_of(&[b"\xEF\xBBa\nb\n"], 1), ["!\u{FFFD}a", "b"]);
    }

    #[test]
    fn long_line_is_dropped_without_buffering_past_the_limit() {
        let mut splitter = LineSplitter::default();
        let limit = 1000;
        let chunk = [b'x'; 300];
        let mut pieces = 0;
        for _ in 0..100 {
            splitter.feed(&chunk, limit, |_| pieces += 1);
            assert!(splitter.buffered_bytes() <= limit);
            assert!(splitter.capacity_bytes() <= limit);
        }
        // Past the limit the buffer's memory was given back.
        assert_eq!(splitter.buffered_bytes(), 0);
        assert_eq!(splitter.capacity_bytes(), 0);
        assert_eq!(splitter.overlong_head(), Some(&b"xxxxxx"[..]));
        assert!(splitter.is_pending());
        splitter.feed(b"\nok\n", limit, |p| {
            pieces += 1;
            if pieces == 2 {
                assert_eq!(p, Piece::Line(b"ok"));
            }
        });
        assert_eq!(pieces, 2);
        assert_eq!(splitter.overlong_head(), None);
    }
}
