//! Cutting the byte stream into lines (WHATWG HTML §9.2.6): strip one leading
//! BOM, end lines at CRLF, LF or a lone CR, and keep the partial last line
//! between chunks, within the line limit.
//!
//! Lines are kept as bytes and decoded by the caller once complete, so a UTF-8
//! sequence split across chunks decodes as if it had arrived whole (CR and LF
//! are ASCII and never inside a multi-byte sequence).

use alloc::vec::Vec;
use core::mem;

use super::limits::{reserve_within, SseError, SseLimit};
use super::scan::find_line_end;

/// The UTF-8 byte order mark, U+FEFF.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Where the splitter stands with respect to the leading BOM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bom {
    /// At the start of the stream: this many bytes of the BOM (0..=2) have
    /// arrived, and were held back, not buffered as line content.
    Expecting(u8),
    /// Past the start of the stream.
    Done,
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
}

impl Default for LineSplitter {
    fn default() -> Self {
        LineSplitter {
            partial: Vec::new(),
            bom: Bom::Expecting(0),
            after_cr: false,
        }
    }
}

/// The error for a line longer than `max_line_bytes`.
fn line_too_long(max_line_bytes: usize) -> SseError {
    SseError::TooLarge {
        limit: SseLimit::Line,
        limit_bytes: max_line_bytes,
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
        !self.partial.is_empty() || matches!(self.bom, Bom::Expecting(n) if n > 0)
    }

    /// Start a new stream: drop the partial line, expect a BOM again.
    pub(crate) fn new_stream(&mut self) {
        self.partial.clear();
        self.bom = Bom::Expecting(0);
        self.after_cr = false;
    }

    /// After an error: like [`LineSplitter::new_stream`], and give the buffer's
    /// memory back.
    pub(crate) fn release(&mut self) {
        self.partial = Vec::new();
        self.new_stream();
    }

    /// Append to the partial line, failing if it would pass the limit.
    fn push_partial(&mut self, bytes: &[u8], max_line_bytes: usize) -> Result<(), SseError> {
        if self.partial.len() + bytes.len() > max_line_bytes {
            return Err(line_too_long(max_line_bytes));
        }
        let reserve = reserve_within(
            self.partial.len(),
            self.partial.capacity(),
            bytes.len(),
            max_line_bytes,
        );
        self.partial.reserve_exact(reserve);
        self.partial.extend_from_slice(bytes);
        Ok(())
    }

    /// Consume the BOM bytes at the start of `chunk`; return the rest.
    fn strip_bom<'c>(
        &mut self,
        chunk: &'c [u8],
        max_line_bytes: usize,
    ) -> Result<&'c [u8], SseError> {
        let Bom::Expecting(held) = self.bom else {
            return Ok(chunk);
        };
        let mut matched = usize::from(held);
        let mut taken = 0usize;
        while matched < BOM.len() {
            match chunk.get(taken) {
                // The chunk ended inside a possible BOM: hold what we have.
                None => {
                    // `matched` is at most 2 here.
                    self.bom = Bom::Expecting(matched as u8);
                    return Ok(&[]);
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
            return Ok(chunk.get(taken..).unwrap_or_default());
        }
        // Not a BOM: the bytes held from earlier chunks are line content; the
        // ones matched in this chunk are still in `chunk` and parsed from there.
        self.push_partial(
            BOM.get(..usize::from(held)).unwrap_or_default(),
            max_line_bytes,
        )?;
        Ok(chunk)
    }

    /// Split `chunk` into lines, calling `on_line` with each complete line
    /// (terminator removed) in order. Fails as soon as a line, complete or
    /// partial, passes `max_line_bytes`; the bytes beyond the limit are neither
    /// scanned nor buffered. Errors of `on_line` are passed through.
    pub(crate) fn feed<F>(
        &mut self,
        chunk: &[u8],
        max_line_bytes: usize,
        mut on_line: F,
    ) -> Result<(), SseError>
    where
        F: FnMut(&[u8]) -> Result<(), SseError>,
    {
        let mut rest = self.strip_bom(chunk, max_line_bytes)?;
        if rest.is_empty() {
            return Ok(());
        }
        if mem::take(&mut self.after_cr) {
            if let Some((b'\n', after)) = rest.split_first() {
                rest = after;
            }
        }
        loop {
            // Look no further than one byte past the limit: if no terminator
            // is within reach, the line is too long whatever follows.
            let room = max_line_bytes.saturating_sub(self.partial.len());
            let window = rest.get(..room.saturating_add(1)).unwrap_or(rest);
            let Some(end) = find_line_end(window) else {
                // No terminator: `rest` is the start of a line (or nothing).
                return self.push_partial(rest, max_line_bytes);
            };
            let (content, terminator_onwards) = rest.split_at_checked(end).unwrap_or((rest, &[]));
            let Some((&terminator, after)) = terminator_onwards.split_first() else {
                return self.push_partial(rest, max_line_bytes);
            };
            if self.partial.is_empty() {
                on_line(content)?;
            } else {
                self.push_partial(content, max_line_bytes)?;
                let mut line = mem::take(&mut self.partial);
                let result = on_line(&line);
                line.clear();
                self.partial = line;
                result?;
            }
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
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::String;

    const MAX: usize = 1 << 20;

    /// Feed `chunks` and render each line as a string, "!" for an error.
    fn lines_of(chunks: &[&[u8]], max: usize) -> Vec<String> {
        let mut splitter = LineSplitter::default();
        let mut lines = Vec::new();
        for chunk in chunks {
            let result = splitter.feed(chunk, max, |line| {
                lines.push(String::from_utf8_lossy(line).into_owned());
                Ok(())
            });
            if result.is_err() {
                lines.push("!".into());
                break;
            }
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
            splitter.feed(chunk, MAX, |line| {
                lines.push(line.to_vec());
                Ok(())
            })
        };
        assert_eq!(collect(b"\xEF\xBB\xBFa\npartial", &mut splitter), Ok(()));
        assert!(splitter.is_pending());
        splitter.new_stream();
        assert!(!splitter.is_pending());
        assert_eq!(collect(b"\xEF\xBB\xBFb\n", &mut splitter), Ok(()));
        assert_eq!(lines, [b"a".to_vec(), b"b".to_vec()]);
    }

    #[test]
    fn after_cr_does_not_survive_a_new_stream() {
        let mut splitter = LineSplitter::default();
        let mut count = 0;
        assert_eq!(
            splitter.feed(b"a\r", MAX, |_| {
                count += 1;
                Ok(())
            }),
            Ok(())
        );
        splitter.new_stream();
        assert_eq!(
            splitter.feed(b"\n", MAX, |_| {
                count += 1;
                Ok(())
            }),
            Ok(())
        );
        assert_eq!(count, 2);
    }

    #[test]
    fn line_limit_is_inclusive() {
        assert_eq!(lines_of(&[b"abcd\n"], 4), ["abcd"]);
        assert_eq!(lines_of(&[b"ab", b"cd", b"\n"], 4), ["abcd"]);
        assert_eq!(lines_of(&[b"abcd\r", b"\n"], 4), ["abcd"]);
        assert_eq!(lines_of(&[b"abcde\n"], 4), ["!"]);
        assert_eq!(lines_of(&[b"ab", b"cde"], 4), ["!"]);
        assert_eq!(lines_of(&[b"ok\nabcde"], 4), ["ok", "!"]);
        // A stripped BOM does not count.
        assert_eq!(lines_of(&[b"\xEF\xBB\xBFabcd\n"], 4), ["abcd"]);
    }

    #[test]
    fn long_line_fails_without_scanning_or_buffering_past_the_limit() {
        let mut splitter = LineSplitter::default();
        let limit = 1000;
        let chunk = [b'x'; 300];
        let mut fed = 0;
        let result = loop {
            match splitter.feed(&chunk, limit, |_| Ok(())) {
                Ok(()) => fed += 1,
                Err(e) => break e,
            }
            assert!(splitter.buffered_bytes() <= limit);
            assert!(splitter.capacity_bytes() <= limit);
        };
        assert_eq!(fed, 3);
        assert_eq!(result, line_too_long(limit));
        assert_eq!(splitter.buffered_bytes(), 900);
    }

    #[test]
    fn errors_from_the_line_callback_pass_through() {
        let mut splitter = LineSplitter::default();
        let err = line_too_long(1);
        let mut seen = 0;
        let result = splitter.feed(b"a\nb\n", MAX, |_| {
            seen += 1;
            Err(err)
        });
        assert_eq!(result, Err(err));
        assert_eq!(seen, 1);
    }
}
