//! Property tests of the event-stream parser: chunking never changes the
//! result, arbitrary bytes never panic, the limits bound memory, the parser
//! agrees with a plain, non-incremental reading of WHATWG HTML §9.2.6, and an
//! event past a limit is skipped with nothing else changed. The reference
//! reading lives in `tidings_core::testing::sse_reference`, which the fuzz
//! target `sse` checks against too.

use proptest::prelude::*;
use tidings_core::sse::{SseEvent, SseItem, SseLimit, SseLimits, SseParser, SseSkipped};
// The WHATWG reading and the helpers are shared with the fuzz target `sse`.
use tidings_core::testing::sse_reference::{reference, run, split};

/// Tokens that make event streams interesting: field names, colons, spaces,
/// all three line endings, NUL, BOM pieces, digits, UTF-8 fragments.
fn token() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => Just(b"data".to_vec()),
        2 => Just(b"event".to_vec()),
        2 => Just(b"id".to_vec()),
        2 => Just(b"retry".to_vec()),
        4 => Just(b":".to_vec()),
        3 => Just(b" ".to_vec()),
        5 => Just(b"\n".to_vec()),
        4 => Just(b"\r".to_vec()),
        3 => Just(b"\r\n".to_vec()),
        1 => Just(b"\0".to_vec()),
        1 => Just(vec![0xEF, 0xBB, 0xBF]),
        1 => Just(vec![0xEF]),
        1 => Just(vec![0xE2, 0x82]),
        1 => Just(vec![0xAC]),
        2 => "[0-9]{1,3}".prop_map(String::into_bytes),
        1 => Just(b"99999999999999999999999".to_vec()),
        3 => "[a-zA-Z \t]{1,4}".prop_map(String::into_bytes),
        2 => any::<u8>().prop_map(|b| vec![b]),
    ]
}

fn stream_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => proptest::collection::vec(token(), 0..60).prop_map(|t| t.concat()),
        1 => proptest::collection::vec(any::<u8>(), 0..200),
        1 => proptest::collection::vec(
            prop_oneof![Just(b'\r'), Just(b'\n'), Just(b':'), Just(b'd'), Just(b' ')],
            0..100
        ),
    ]
}

fn limits() -> impl Strategy<Value = SseLimits> {
    prop_oneof![
        2 => Just(SseLimits::DEFAULT),
        1 => (0usize..40, 0usize..40).prop_map(|(line, data)| SseLimits {
            max_line_bytes: line,
            max_event_data_bytes: data,
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Any split of any input gives the same items, error, discard flag and
    /// last event ID as the whole input in one feed, and as one byte per feed.
    #[test]
    fn chunking_does_not_change_the_result(
        body in stream_bytes(),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
        limits in limits(),
    ) {
        let whole = run(&mut SseParser::with_limits(limits), &[&body]);
        let chunks = split(&body, &cuts);
        let chunked = run(&mut SseParser::with_limits(limits), &chunks);
        prop_assert_eq!(&chunked, &whole);
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        let bytewise = run(&mut SseParser::with_limits(limits), &bytes);
        prop_assert_eq!(&bytewise, &whole);
    }

    /// The same holds across several bodies on one parser (new connections):
    /// the cursor carries over identically.
    #[test]
    fn chunking_does_not_change_multi_body_results(
        bodies in proptest::collection::vec((stream_bytes(), proptest::collection::vec(any::<usize>(), 0..6)), 1..4),
        initial in "[a-z0-9]{0,3}",
    ) {
        let mut whole_parser = SseParser::new();
        whole_parser.set_last_event_id(&initial);
        let mut chunked_parser = whole_parser.clone();
        for (body, cuts) in &bodies {
            let whole = run(&mut whole_parser, &[body]);
            let chunked = run(&mut chunked_parser, &split(body, cuts));
            prop_assert_eq!(chunked, whole);
        }
    }

    /// With limits out of reach, the parser agrees with the plain reading.
    #[test]
    fn agrees_with_the_reference_reading(
        body in stream_bytes(),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
        initial in prop_oneof![Just(String::new()), "[a-z0-9]{1,3}"],
    ) {
        let mut parser = SseParser::new();
        parser.set_last_event_id(&initial);
        let outcome = run(&mut parser, &split(&body, &cuts));
        let (items, last_event_id) = reference(&body, &initial);
        prop_assert_eq!(outcome.skipping, None);
        prop_assert_eq!(outcome.items, items);
        prop_assert_eq!(outcome.last_event_id, last_event_id);
    }

    /// Without a line ending, the buffered bytes never pass the line limit,
    /// whatever the chunking: a line past it is dropped, not buffered.
    #[test]
    fn input_without_newlines_stays_within_the_line_limit(
        body in proptest::collection::vec(any::<u8>().prop_filter("no CR/LF", |b| *b != b'\r' && *b != b'\n'), 0..400),
        cuts in proptest::collection::vec(any::<usize>(), 0..20),
        max_line_bytes in 0usize..300,
    ) {
        let mut parser = SseParser::with_limits(SseLimits {
            max_line_bytes,
            max_event_data_bytes: SseLimits::DEFAULT_BYTES,
        });
        let mut items = Vec::new();
        for chunk in split(&body, &cuts) {
            parser.feed(chunk, &mut items);
            prop_assert!(parser.buffered_bytes() <= max_line_bytes);
        }
        prop_assert!(items.is_empty());
        // A stripped leading BOM does not count towards the line, and a
        // body that is only the start of a BOM is held back.
        let bom = [0xEF, 0xBB, 0xBF];
        let line_len = if body.len() < 3 && bom.starts_with(&body) {
            0
        } else {
            body.strip_prefix(&bom[..]).unwrap_or(&body).len()
        };
        let expected = if line_len > max_line_bytes { 0 } else { line_len };
        prop_assert_eq!(parser.buffered_bytes(), expected);
    }

    /// An event past a limit, anywhere among ordinary events, in any split and
    /// with any line ending: exactly that event becomes `Skipped` (with its id,
    /// which still moves the cursor) and everything else is as without it.
    #[test]
    fn an_oversize_event_is_skipped_and_nothing_else_changes(
        events in proptest::collection::vec((proptest::option::of("[a-z0-9]{1,4}"), "[a-z ]{0,6}"), 1..6),
        big in any::<prop::sample::Index>(),
        big_lines in 1usize..4,
        big_id_first in any::<bool>(),
        ending in prop_oneof![Just("\n"), Just("\r"), Just("\r\n")],
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
        limit in 8usize..40,
    ) {
        let big = big.index(events.len());
        let line_limit = limit + 16;
        let mut body = String::new();
        let mut expected = Vec::new();
        let mut cursor = String::new();
        for (i, (id, data)) in events.iter().enumerate() {
            if let Some(id) = id {
                cursor = id.clone();
            }
            let id_line = id.as_ref().map(|id| format!("id: {id}{ending}")).unwrap_or_default();
            if big_id_first {
                body.push_str(&id_line);
            }
            if i == big {
                // One line past the line limit, or lines within it whose
                // data together passes the data limit.
                let (lines, len, which, limit_bytes) = if big_lines == 1 {
                    (1, line_limit, SseLimit::Line, line_limit)
                } else {
                    (big_lines, limit / 2 + 1, SseLimit::EventData, limit)
                };
                for _ in 0..lines {
                    body.push_str(&format!("data: {}{ending}", "x".repeat(len)));
                }
                expected.push(SseItem::Skipped(SseSkipped {
                    limit: which,
                    limit_bytes,
                    event: Some("message".into()),
                    id: id.clone(),
                    last_event_id: cursor.clone(),
                }));
            } else {
                body.push_str(&format!("data: {data}{ending}"));
                expected.push(SseItem::Event(SseEvent {
                    event: "message".into(),
                    data: data.clone(),
                    id: id.clone(),
                    last_event_id: cursor.clone(),
                }));
            }
            if !big_id_first {
                body.push_str(&id_line);
            }
            body.push_str(ending);
        }
        let limits = SseLimits { max_line_bytes: line_limit, max_event_data_bytes: limit };
        let bytes = body.as_bytes();
        let outcome = run(&mut SseParser::with_limits(limits), &split(bytes, &cuts));
        prop_assert_eq!(outcome.items, expected);
        prop_assert_eq!(outcome.skipping, None);
        prop_assert_eq!(outcome.last_event_id, cursor);
    }

    /// With any input, the buffered bytes stay within the sum of the limits.
    #[test]
    fn buffered_bytes_stay_within_the_limits(
        body in stream_bytes(),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
        limits in limits(),
    ) {
        let mut parser = SseParser::with_limits(limits);
        let mut items = Vec::new();
        let bound = 2 * limits.max_line_bytes + limits.max_event_data_bytes;
        for chunk in split(&body, &cuts) {
            parser.feed(chunk, &mut items);
            prop_assert!(parser.buffered_bytes() <= bound);
        }
    }
}
