//! The real-world event-stream cases of `tests/fixtures/sse/*.json` (see the
//! README there), fed to [`SseParser`] one write per `feed`, and again with
//! each response's writes concatenated into one `feed`.

use std::ops::Range;

use serde::Deserialize;
use tidings_core::sse::{SseEvent, SseItem, SseLimit, SseLimits, SseParser, SseSkipped};

/// The fixture files, by name. `every_fixture_file_is_tested` checks that this
/// list is the whole directory.
const FIXTURES: &[(&str, &str)] = &[
    (
        "bc02-line-endings.json",
        include_str!("../../tests/fixtures/sse/bc02-line-endings.json"),
    ),
    (
        "bc03-field-parsing.json",
        include_str!("../../tests/fixtures/sse/bc03-field-parsing.json"),
    ),
    (
        "bc05-partial-event-at-fin.json",
        include_str!("../../tests/fixtures/sse/bc05-partial-event-at-fin.json"),
    ),
    (
        "bc07-id-rules.json",
        include_str!("../../tests/fixtures/sse/bc07-id-rules.json"),
    ),
    (
        "bc08-cursor-across-reconnects.json",
        include_str!("../../tests/fixtures/sse/bc08-cursor-across-reconnects.json"),
    ),
    (
        "bc16-size-limits.json",
        include_str!("../../tests/fixtures/sse/bc16-size-limits.json"),
    ),
];

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Variant {
    case: String,
    variant: String,
    #[allow(dead_code)]
    title: String,
    #[allow(dead_code)]
    source: String,
    #[serde(default)]
    initial_last_event_id: String,
    limits: Option<Limits>,
    writes: Option<Vec<String>>,
    end: Option<End>,
    events_after_write: Option<Vec<usize>>,
    responses: Option<Vec<Response>>,
    generate: Option<Generate>,
    cursor_before_each_response: Option<Vec<String>>,
    expected: Vec<ExpectedEvent>,
    expected_retry_ms: Option<Vec<u64>>,
    expected_comments: Option<usize>,
    expected_skipped: Option<Vec<ExpectedSkipped>>,
    expected_skipping: Option<ExpectedSkipping>,
    final_last_event_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Limits {
    max_line_bytes: usize,
    max_event_data_bytes: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
enum End {
    Fin,
    Hang,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Response {
    writes: Vec<String>,
    end: End,
    events_after_write: Option<Vec<usize>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Generate {
    prefix: String,
    repeat: String,
    count: usize,
    suffix: String,
    write_bytes: usize,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ExpectedEvent {
    event: String,
    data: ExpectedData,
    last_event_id: String,
    id: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ExpectedData {
    Text(String),
    Repeat { repeat: String, count: usize },
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ExpectedSkipped {
    limit: String,
    limit_bytes: usize,
    event: Option<String>,
    id: Option<String>,
    last_event_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ExpectedSkipping {
    limit: String,
    from_write: usize,
}

fn limit_named(name: &str) -> SseLimit {
    match name {
        "line" => SseLimit::Line,
        "eventData" => SseLimit::EventData,
        other => panic!("unknown limit {other}"),
    }
}

/// One response body: its bytes and the byte range of each write.
struct Body {
    bytes: Vec<u8>,
    writes: Vec<Range<usize>>,
    end: End,
    events_after_write: Option<Vec<usize>>,
}

impl Body {
    fn from_writes(writes: &[String], end: End, events_after_write: Option<Vec<usize>>) -> Self {
        let mut bytes = Vec::new();
        let mut ranges = Vec::new();
        for write in writes {
            let start = bytes.len();
            bytes.extend_from_slice(write.as_bytes());
            ranges.push(start..bytes.len());
        }
        Body {
            bytes,
            writes: ranges,
            end,
            events_after_write,
        }
    }

    fn generated(g: &Generate, end: End) -> Self {
        assert!(g.write_bytes > 0, "writeBytes must be positive");
        let mut bytes =
            Vec::with_capacity(g.prefix.len() + g.repeat.len() * g.count + g.suffix.len());
        let mut writes = Vec::new();
        bytes.extend_from_slice(g.prefix.as_bytes());
        if !g.prefix.is_empty() {
            writes.push(0..bytes.len());
        }
        let body_start = bytes.len();
        bytes.extend_from_slice(g.repeat.repeat(g.count).as_bytes());
        let body_end = bytes.len();
        let mut start = body_start;
        while start < body_end {
            let end = (start + g.write_bytes).min(body_end);
            writes.push(start..end);
            start = end;
        }
        bytes.extend_from_slice(g.suffix.as_bytes());
        if !g.suffix.is_empty() {
            writes.push(body_end..bytes.len());
        }
        Body {
            bytes,
            writes,
            end,
            events_after_write: None,
        }
    }
}

impl Variant {
    fn name(&self) -> String {
        format!("{} {}", self.case, self.variant)
    }

    fn limits(&self) -> SseLimits {
        self.limits
            .as_ref()
            .map_or(SseLimits::DEFAULT, |l| SseLimits {
                max_line_bytes: l.max_line_bytes,
                max_event_data_bytes: l.max_event_data_bytes,
            })
    }

    fn bodies(&self) -> Vec<Body> {
        let forms = [
            self.writes.is_some(),
            self.responses.is_some(),
            self.generate.is_some(),
        ];
        assert_eq!(
            forms.iter().filter(|f| **f).count(),
            1,
            "{}: exactly one of writes, responses, generate",
            self.name()
        );
        if let Some(responses) = &self.responses {
            assert!(self.end.is_none() && self.events_after_write.is_none());
            return responses
                .iter()
                .map(|r| Body::from_writes(&r.writes, r.end, r.events_after_write.clone()))
                .collect();
        }
        let end = self
            .end
            .unwrap_or_else(|| panic!("{}: end missing", self.name()));
        if let Some(writes) = &self.writes {
            return vec![Body::from_writes(
                writes,
                end,
                self.events_after_write.clone(),
            )];
        }
        let generate = self.generate.as_ref().map(|g| Body::generated(g, end));
        generate.into_iter().collect()
    }

    fn expected_events(&self) -> Vec<SseEvent> {
        self.expected
            .iter()
            .map(|e| SseEvent {
                event: e.event.clone(),
                data: match &e.data {
                    ExpectedData::Text(text) => text.clone(),
                    ExpectedData::Repeat { repeat, count } => repeat.repeat(*count),
                },
                id: e.id.clone(),
                last_event_id: e.last_event_id.clone(),
            })
            .collect()
    }

    fn expected_skipped(&self) -> Vec<SseItem> {
        self.expected_skipped
            .iter()
            .flatten()
            .map(|e| {
                SseItem::Skipped(SseSkipped {
                    limit: limit_named(&e.limit),
                    limit_bytes: e.limit_bytes,
                    event: e.event.clone(),
                    id: e.id.clone(),
                    last_event_id: e.last_event_id.clone(),
                })
            })
            .collect()
    }
}

/// How the writes of a response reach the parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// One `feed` per write.
    PerWrite,
    /// Each response's writes concatenated into one `feed`.
    Concatenated,
}

/// What one run observed.
#[derive(Default)]
struct Observed {
    items: Vec<SseItem>,
    /// The first time an event was being skipped after a write: the limit,
    /// and the write's index (per-write mode).
    skipping: Option<(SseLimit, usize)>,
    cursors_before: Vec<String>,
    events_after_write: Vec<Vec<usize>>,
    final_last_event_id: String,
}

fn event_count(items: &[SseItem]) -> usize {
    items
        .iter()
        .filter(|i| matches!(i, SseItem::Event(_)))
        .count()
}

fn run(variant: &Variant, bodies: &[Body], mode: Mode) -> Observed {
    let limits = variant.limits();
    let mut parser = SseParser::with_limits(limits);
    parser.set_last_event_id(&variant.initial_last_event_id);
    let mut seen = Observed::default();
    for (r, body) in bodies.iter().enumerate() {
        if r > 0 {
            parser.new_stream();
        }
        seen.cursors_before.push(parser.last_event_id().to_owned());
        let events_at_start = event_count(&seen.items);
        let mut after_write = Vec::new();
        let whole: Vec<Range<usize>> = std::iter::once(0..body.bytes.len()).collect();
        let writes: &[Range<usize>] = match mode {
            Mode::PerWrite => &body.writes,
            Mode::Concatenated => &whole,
        };
        for (w, range) in writes.iter().enumerate() {
            let chunk = &body.bytes[range.clone()];
            parser.feed(chunk, &mut seen.items);
            after_write.push(event_count(&seen.items) - events_at_start);
            // Memory stays within the limits whatever happens.
            assert!(
                parser.buffered_bytes() <= 2 * limits.max_line_bytes + limits.max_event_data_bytes,
                "{} {mode:?}: buffered {} bytes",
                variant.name(),
                parser.buffered_bytes()
            );
            if let Some(limit) = parser.skipping() {
                if limit == SseLimit::Line {
                    assert_eq!(
                        parser.buffered_bytes(),
                        0,
                        "{}: a dropped line is not buffered",
                        variant.name()
                    );
                }
                seen.skipping.get_or_insert((limit, w));
            }
        }
        seen.events_after_write.push(after_write);
        if body.end == End::Fin || r + 1 == bodies.len() {
            parser.finish();
        }
    }
    seen.final_last_event_id = parser.last_event_id().to_owned();
    seen
}

fn short(s: &str) -> String {
    if s.len() <= 80 {
        format!("{s:?}")
    } else {
        format!("<{} bytes starting {:?}>", s.len(), &s[..40])
    }
}

fn check_events(name: &str, actual: &[SseEvent], expected: &[SseEvent]) {
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert_eq!(a.event, e.event, "{name}: event {i} type");
        assert!(
            a.data == e.data,
            "{name}: event {i} data {} != expected {}",
            short(&a.data),
            short(&e.data)
        );
        assert_eq!(a.id, e.id, "{name}: event {i} own id");
        assert_eq!(
            a.last_event_id, e.last_event_id,
            "{name}: event {i} lastEventId"
        );
    }
    assert_eq!(
        actual.len(),
        expected.len(),
        "{name}: number of events (got {:?})",
        actual.iter().map(|e| short(&e.data)).collect::<Vec<_>>()
    );
}

fn check_variant(variant: &Variant) {
    let bodies = variant.bodies();
    for mode in [Mode::PerWrite, Mode::Concatenated] {
        let name = format!("{} ({mode:?})", variant.name());
        let seen = run(variant, &bodies, mode);

        let events: Vec<SseEvent> = seen
            .items
            .iter()
            .filter_map(|i| match i {
                SseItem::Event(e) => Some(e.clone()),
                _ => None,
            })
            .collect();
        check_events(&name, &events, &variant.expected_events());

        let retries: Vec<u64> = seen
            .items
            .iter()
            .filter_map(|i| match i {
                SseItem::RetryMs(ms) => Some(*ms),
                _ => None,
            })
            .collect();
        assert_eq!(
            retries,
            variant.expected_retry_ms.clone().unwrap_or_default(),
            "{name}: retry values"
        );
        let comments = seen
            .items
            .iter()
            .filter(|i| matches!(i, SseItem::Comment))
            .count();
        assert_eq!(
            comments,
            variant.expected_comments.unwrap_or(0),
            "{name}: comments"
        );

        let skipped: Vec<SseItem> = seen
            .items
            .iter()
            .filter(|i| matches!(i, SseItem::Skipped(_)))
            .cloned()
            .collect();
        assert_eq!(
            skipped,
            variant.expected_skipped(),
            "{name}: skipped events"
        );
        // Observable between writes only (one feed of a whole body may
        // finish the skipped event).
        match (&variant.expected_skipping, seen.skipping) {
            _ if mode == Mode::Concatenated => {}
            (None, None) => {}
            (Some(e), Some((limit, from_write))) => {
                assert_eq!(limit, limit_named(&e.limit), "{name}: limit passed");
                assert_eq!(from_write, e.from_write, "{name}: write passing the limit");
            }
            (expected, got) => panic!("{name}: skipping {got:?}, expected {expected:?}"),
        }

        if let Some(cursors) = &variant.cursor_before_each_response {
            assert_eq!(
                &seen.cursors_before, cursors,
                "{name}: cursor before each response"
            );
        }
        if mode == Mode::PerWrite {
            for (r, body) in bodies.iter().enumerate() {
                if let Some(expected) = &body.events_after_write {
                    assert_eq!(
                        seen.events_after_write.get(r),
                        Some(expected),
                        "{name}: events after each write of response {r}"
                    );
                }
            }
        }
        assert_eq!(
            seen.final_last_event_id, variant.final_last_event_id,
            "{name}: final last event id"
        );
    }
}

fn variants(file: &str) -> Vec<Variant> {
    let text = FIXTURES
        .iter()
        .find(|(name, _)| *name == file)
        .map(|(_, text)| *text)
        .unwrap_or_else(|| panic!("no fixture {file}"));
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn check_file(file: &str, expected_variants: &[&str]) {
    let variants = variants(file);
    let names: Vec<&str> = variants.iter().map(|v| v.variant.as_str()).collect();
    assert_eq!(names, expected_variants, "{file}: variants");
    for variant in &variants {
        check_variant(variant);
    }
}

#[test]
fn bc02_line_endings() {
    check_file("bc02-line-endings.json", &["A", "B", "C", "D", "E"]);
}

#[test]
fn bc03_field_parsing() {
    check_file("bc03-field-parsing.json", &["A"]);
}

#[test]
fn bc05_partial_event_at_fin() {
    check_file("bc05-partial-event-at-fin.json", &["A", "B"]);
}

#[test]
fn bc07_id_rules() {
    check_file("bc07-id-rules.json", &["A", "B"]);
}

#[test]
fn bc08_cursor_across_reconnects() {
    check_file("bc08-cursor-across-reconnects.json", &["A"]);
}

#[test]
fn bc16_size_limits() {
    check_file("bc16-size-limits.json", &["V1", "V2", "V3", "V4"]);
}

/// The generated BC-16 bodies have the advertised sizes (so the limits are
/// really crossed, not just configured).
#[test]
fn bc16_generated_bodies_have_the_stated_sizes() {
    let variants = variants("bc16-size-limits.json");
    let sizes: Vec<(usize, usize)> = variants
        .iter()
        .map(|v| {
            let bodies = v.bodies();
            let body = &bodies[0];
            (body.bytes.len(), body.writes.len())
        })
        .collect();
    assert_eq!(
        sizes,
        [
            (6 + 64 * 1024 * 1024, 1 + 1024),
            (6 * 2_000_000, 12_000_000usize.div_ceil(65_536)),
            (6 + 2_097_152 + 2, 1 + 32 + 1),
            (27 + 1_572_864 + 17, 1 + 24 + 1),
        ]
    );
}

/// Every JSON file in the fixture directory is in [`FIXTURES`].
#[test]
fn every_fixture_file_is_tested() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/sse");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .collect();
    on_disk.sort();
    let mut listed: Vec<&str> = FIXTURES.iter().map(|(name, _)| *name).collect();
    listed.sort_unstable();
    assert_eq!(on_disk, listed);
}
