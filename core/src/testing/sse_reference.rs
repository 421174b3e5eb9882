//! The event-stream parser against a plain, non-incremental reading of WHATWG
//! HTML §9.2.6 ("Interpreting an event stream"), and against itself under
//! other chunkings.

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use arbitrary::Arbitrary;

use crate::sse::{SseEvent, SseItem, SseLimit, SseLimits, SseParser};

/// Everything observable after feeding one body: the items, the limit of an
/// event still being skipped at the end, what `finish` reported, and the last
/// event ID.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The items, in order.
    pub items: Vec<SseItem>,
    /// [`SseParser::skipping`] before `finish`.
    pub skipping: Option<SseLimit>,
    /// What [`SseParser::finish`] returned.
    pub discarded: bool,
    /// [`SseParser::last_event_id`] at the end.
    pub last_event_id: String,
}

/// Feed `chunks` one by one, then `finish`.
pub fn run(parser: &mut SseParser, chunks: &[&[u8]]) -> Outcome {
    let mut items = Vec::new();
    for chunk in chunks {
        parser.feed(chunk, &mut items);
    }
    let skipping = parser.skipping();
    let discarded = parser.finish();
    Outcome {
        items,
        skipping,
        discarded,
        last_event_id: parser.last_event_id().to_owned(),
    }
}

/// Cut `input` at the given positions (taken modulo its length + 1, sorted).
pub fn split<'a>(input: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
    cuts.sort_unstable();
    let mut chunks = Vec::new();
    let mut start = 0;
    for cut in cuts {
        chunks.push(&input[start..cut]);
        start = cut;
    }
    chunks.push(&input[start..]);
    chunks
}

/// Split decoded text into lines (CRLF, CR, LF); the unterminated rest is
/// dropped, as at the end of a body.
fn lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                lines.push(core::mem::take(&mut current));
            }
            '\n' => lines.push(core::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    lines
}

/// The reading's state while it processes lines.
struct Reading {
    items: Vec<SseItem>,
    data: String,
    event_type: String,
    id_buffer: String,
    last_event_id: String,
    own_id: Option<String>,
}

impl Reading {
    fn dispatch(&mut self) {
        self.last_event_id = self.id_buffer.clone();
        if self.data.is_empty() {
            self.event_type.clear();
            self.own_id = None;
            return;
        }
        self.data.pop();
        let event = if self.event_type.is_empty() {
            "message".to_owned()
        } else {
            core::mem::take(&mut self.event_type)
        };
        self.items.push(SseItem::Event(SseEvent {
            event,
            data: core::mem::take(&mut self.data),
            id: self.own_id.take(),
            last_event_id: self.last_event_id.clone(),
        }));
    }

    fn field(&mut self, name: &str, value: &str) {
        match name {
            "event" => self.event_type = value.to_owned(),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
            }
            "id" if !value.contains('\0') => {
                self.id_buffer = value.to_owned();
                self.own_id = Some(value.to_owned());
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.items.push(SseItem::RetryMs(ms));
                }
            }
            _ => {}
        }
    }
}

/// A plain reading of §9.2.6 over the whole body at once: decode, strip the
/// BOM, split lines, process fields. No limits, no incremental state. Returns
/// the items and the last event ID.
pub fn reference(body: &[u8], initial_last_event_id: &str) -> (Vec<SseItem>, String) {
    let text = String::from_utf8_lossy(body);
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(&text);
    let mut r = Reading {
        items: Vec::new(),
        data: String::new(),
        event_type: String::new(),
        id_buffer: initial_last_event_id.to_owned(),
        last_event_id: initial_last_event_id.to_owned(),
        own_id: None,
    };
    for line in lines(text) {
        if line.is_empty() {
            r.dispatch();
        } else if line.starts_with(':') {
            r.items.push(SseItem::Comment);
        } else {
            let (name, value) = match line.find(':') {
                Some(i) => {
                    let value = &line[i + 1..];
                    (&line[..i], value.strip_prefix(' ').unwrap_or(value))
                }
                None => (line.as_str(), ""),
            };
            r.field(name, value);
        }
    }
    (r.items, r.last_event_id)
}

/// One fuzz case: a body, where it is cut into chunks, the initial cursor,
/// and small limits for the chunking check.
#[derive(Arbitrary, Debug, Clone)]
pub struct SseCase {
    /// The body.
    pub body: Vec<u8>,
    /// Chunk boundaries (modulo the body's length + 1).
    pub cuts: Vec<u16>,
    /// The initial cursor.
    pub initial: String,
    /// `max_line_bytes` and `max_event_data_bytes` for the limited run.
    pub limits: (u8, u8),
}

/// The oracles: with limits out of reach the parser in any chunking agrees
/// with [`reference`]; with small limits, any chunking and one byte per feed
/// agree with one feed of the whole body, and the buffered bytes stay within
/// `2 · line + data` limits.
///
/// # Errors
/// A description of the first disagreement.
pub fn check(case: &SseCase) -> Result<(), String> {
    let cuts: Vec<usize> = case.cuts.iter().map(|&c| usize::from(c)).collect();
    let chunks = split(&case.body, &cuts);
    let mut parser = SseParser::new();
    parser.set_last_event_id(&case.initial);
    let outcome = run(&mut parser, &chunks);
    let (items, last_event_id) = reference(&case.body, &case.initial);
    if outcome.skipping.is_some()
        || outcome.items != items
        || outcome.last_event_id != last_event_id
    {
        return Err(format!(
            "parser {outcome:?} != WHATWG reading {items:?} / {last_event_id:?}"
        ));
    }
    let limits = SseLimits {
        max_line_bytes: usize::from(case.limits.0),
        max_event_data_bytes: usize::from(case.limits.1),
    };
    let whole = run(&mut SseParser::with_limits(limits), &[&case.body]);
    let mut limited = SseParser::with_limits(limits);
    let bound = 2 * limits.max_line_bytes + limits.max_event_data_bytes;
    let mut got = Vec::new();
    for chunk in &chunks {
        limited.feed(chunk, &mut got);
        if limited.buffered_bytes() > bound {
            return Err(format!(
                "{} bytes buffered, bound {bound}",
                limited.buffered_bytes()
            ));
        }
    }
    let chunked = run(&mut limited, &[]);
    let chunked = Outcome {
        items: [got, chunked.items].concat(),
        ..chunked
    };
    if chunked != whole {
        return Err(format!("limited: chunked {chunked:?} != whole {whole:?}"));
    }
    let bytes: Vec<&[u8]> = case.body.chunks(1).collect();
    let bytewise = run(&mut SseParser::with_limits(limits), &bytes);
    if bytewise != whole {
        return Err(format!("limited: bytewise {bytewise:?} != whole {whole:?}"));
    }
    Ok(())
}
