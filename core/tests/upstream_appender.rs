//! The Durable Streams appender (docs/upstream.md) on virtual time with a seeded
//! RNG: producer headers, batching while a request is in flight, JSON array
//! wrapping, 204 as a duplicate success, retries that repeat the same
//! `(id, epoch, seq)` with the send's exact delays, each 403/409 as its
//! typed error, auto-claim, close, and no panic on random input.

use proptest::prelude::*;
use tidings_core::engine::{ErrorCode, ResponseHead, TransportError};
use tidings_core::rng::Rng;
use tidings_core::time::{MonoMs, Now};
use tidings_core::upstream::{
    AppendAction, AppendError, AppendInput, AppendRequest, Appender, AppenderConfig,
    IdempotencyKey, SendAction, Sender, DEFAULT_MAX_ATTEMPTS, DEFAULT_SEND_TIMEOUT_MS,
    MAX_AUTO_CLAIMS,
};

const WALL0: i64 = 1_700_000_000_000;
const SEED: u64 = 7;

struct Sim {
    a: Appender,
    now: u64,
    wait: Option<MonoMs>,
}

impl Sim {
    fn new(config: AppenderConfig) -> Sim {
        Sim {
            a: Appender::new(config, SEED),
            now: 0,
            wait: None,
        }
    }

    fn json() -> Sim {
        Sim::new(AppenderConfig::new("p1"))
    }

    fn t(&self) -> Now {
        Now::at(self.now, WALL0 + self.now as i64)
    }

    fn drain(&mut self) -> Vec<AppendAction> {
        let mut out = Vec::new();
        for _ in 0..100 {
            match self.a.poll() {
                AppendAction::Wait { until } => {
                    self.wait = until;
                    return out;
                }
                a => out.push(a),
            }
        }
        panic!("no Wait after 100 actions: {out:?}");
    }

    fn append(&mut self, v: &str) -> Vec<AppendAction> {
        let t = self.t();
        assert!(self.a.handle_append(t, v.as_bytes().to_vec()).is_some());
        self.drain()
    }

    fn answer(&mut self, request: u64, head: ResponseHead) -> Vec<AppendAction> {
        let t = self.t();
        self.a.handle_response(t, request, &head);
        self.drain()
    }

    /// Advance to the armed timer and fire it.
    fn fire(&mut self) -> Vec<AppendAction> {
        let until = self.wait.unwrap_or_else(|| panic!("no timer armed"));
        self.now = until.0;
        let t = self.t();
        self.a.handle_timer(t);
        self.drain()
    }
}

fn issue(a: &[AppendAction]) -> AppendRequest {
    match a {
        [.., AppendAction::Issue(r)] => r.clone(),
        other => panic!("expected an Issue last: {other:?}"),
    }
}

fn body(r: &AppendRequest) -> String {
    String::from_utf8(r.body.clone()).unwrap_or_default()
}

fn hdrs(id: &str, epoch: u64, seq: u64) -> Vec<(String, String)> {
    vec![
        ("Producer-Id".into(), id.into()),
        ("Producer-Epoch".into(), epoch.to_string()),
        ("Producer-Seq".into(), seq.to_string()),
    ]
}

#[test]
fn first_append_goes_at_once_and_later_ones_batch_while_in_flight() {
    let mut s = Sim::json();
    let r1 = issue(&s.append(r#"{"n":1}"#));
    assert_eq!(r1.request, 1);
    assert_eq!(r1.headers, hdrs("p1", 0, 0));
    assert_eq!(body(&r1), r#"[{"n":1}]"#);
    assert_eq!(s.append(r#"{"n":2}"#), vec![]);
    assert_eq!(s.append(r#"{"n":3}"#), vec![]);
    let a = s.answer(1, ResponseHead::new(200));
    assert_eq!(a[0], AppendAction::Durable { through: 1 });
    let r2 = issue(&a);
    assert_eq!(r2.headers, hdrs("p1", 0, 1));
    assert_eq!(body(&r2), r#"[{"n":2},{"n":3}]"#);
    assert_eq!(
        s.answer(r2.request, ResponseHead::new(200)),
        vec![AppendAction::Durable { through: 3 }]
    );
    assert_eq!(s.a.producer(), (0, 2));
}

#[test]
fn an_array_value_is_wrapped_so_the_server_flattens_only_our_batch() {
    let mut s = Sim::json();
    assert_eq!(body(&issue(&s.append("[1,2]"))), "[[1,2]]");
}

#[test]
fn non_json_streams_post_the_bytes_concatenated() {
    let mut c = AppenderConfig::new("p1");
    c.json = false;
    let mut s = Sim::new(c);
    let r1 = issue(&s.append("a\n"));
    assert_eq!(body(&r1), "a\n");
    s.append("b\n");
    s.append("c\n");
    assert_eq!(body(&issue(&s.answer(1, ResponseHead::new(204)))), "b\nc\n");
}

#[test]
fn batches_respect_max_items_and_max_bytes() {
    let mut c = AppenderConfig::new("p1");
    c.max_batch_items = 2;
    c.max_batch_bytes = 12;
    let mut s = Sim::new(c);
    s.append("1");
    for v in ["22", "33", "44", "5555555555555555"] {
        s.append(v);
    }
    let r2 = issue(&s.answer(1, ResponseHead::new(200)));
    assert_eq!(body(&r2), "[22,33]");
    let r3 = issue(&s.answer(r2.request, ResponseHead::new(200)));
    assert_eq!(body(&r3), "[44]");
    // One value above max_batch_bytes goes alone rather than never.
    let r4 = issue(&s.answer(r3.request, ResponseHead::new(200)));
    assert_eq!(body(&r4), "[5555555555555555]");
    assert_eq!(r4.headers, hdrs("p1", 0, 3));
}

#[test]
fn a_204_duplicate_is_success() {
    let mut s = Sim::json();
    s.append("1");
    assert_eq!(
        s.answer(1, ResponseHead::new(204)),
        vec![AppendAction::Durable { through: 1 }]
    );
}

/// The retry delays are the send's: a reference `Sender` with the seed the
/// appender gives its first batch produces the same delays.
#[test]
fn retries_repeat_the_same_producer_tuple_after_the_sends_delays() {
    let mut s = Sim::json();
    s.append("1");
    s.append("2");
    let r2 = issue(&s.answer(1, ResponseHead::new(200)));
    let mut reference = reference_sender(2);
    let mut expected = Vec::new();
    let mut request = r2.request;
    let mut at = 0;
    for _ in 0..3 {
        assert_eq!(s.answer(request, ResponseHead::new(503)), vec![]);
        let delay = reference_retry(&mut reference, &mut at);
        expected.push(delay);
        assert_eq!(s.wait, Some(MonoMs(at)));
        let r = issue(&s.fire());
        assert_eq!(r.headers, hdrs("p1", 0, 1));
        assert_eq!(body(&r), "[2]");
        request = r.request;
    }
    assert_eq!(expected, vec![1255, 1752, 2806]);
    let t = s.t();
    s.a.handle_error(t, request, TransportError::Network);
    assert_eq!(s.drain(), vec![]);
    let r = issue(&s.fire());
    assert_eq!(r.headers, hdrs("p1", 0, 1));
    assert_eq!(
        s.answer(r.request, ResponseHead::new(204)),
        vec![AppendAction::Durable { through: 2 }]
    );
}

/// The sender the appender builds for its `nth` batch (1-based).
fn reference_sender(nth: usize) -> Sender {
    let mut rng = Rng::new(SEED);
    let mut seed = 0;
    for _ in 0..nth {
        seed = rng.next_u64();
    }
    let key = IdempotencyKey::new("batch").unwrap_or_else(|e| panic!("{e:?}"));
    let mut s = Sender::new(AppenderConfig::new("p1").send, &key, seed);
    s.handle_start(Now::at(0, WALL0));
    let _ = s.poll();
    s
}

/// Fail the reference's live attempt with a 503 at `at`; return the delay
/// and move `at` to the retry.
fn reference_retry(s: &mut Sender, at: &mut u64) -> u64 {
    let n = s.attempts();
    s.handle_response(Now::at(*at, WALL0 + *at as i64), n, &ResponseHead::new(503));
    let SendAction::Wait { until: Some(t) } = s.poll() else {
        panic!("no retry")
    };
    let delay = t.0 - *at;
    *at = t.0;
    s.handle_timer(Now::at(*at, WALL0 + *at as i64));
    let _ = s.poll();
    delay
}

#[test]
fn a_403_is_stale_epoch_with_the_servers_epoch() {
    let mut s = Sim::json();
    s.append("1");
    s.append("2");
    let head = ResponseHead::new(403).with_header("Producer-Epoch", "5");
    assert_eq!(
        s.answer(1, head),
        vec![AppendAction::Failed {
            error: AppendError::StaleEpoch { current: Some(5) },
            from: 0
        }]
    );
    let t = s.t();
    assert_eq!(s.a.handle_append(t, b"3".to_vec()), None);
    assert!(s.a.is_done());
}

#[test]
fn auto_claim_retries_the_batch_at_the_servers_epoch_plus_one_a_bounded_number_of_times() {
    let mut c = AppenderConfig::new("p1");
    c.auto_claim = true;
    let mut s = Sim::new(c);
    let mut r = issue(&s.append("1"));
    for claim in 0..MAX_AUTO_CLAIMS as u64 {
        let head = ResponseHead::new(403).with_header("Producer-Epoch", &(5 + claim).to_string());
        r = issue(&s.answer(r.request, head));
        assert_eq!(r.headers, hdrs("p1", 6 + claim, 0));
        assert_eq!(body(&r), "[1]");
    }
    let head = ResponseHead::new(403).with_header("Producer-Epoch", "9");
    assert_eq!(
        s.answer(r.request, head),
        vec![AppendAction::Failed {
            error: AppendError::StaleEpoch { current: Some(9) },
            from: 0
        }]
    );
}

#[test]
fn auto_claim_then_success_continues_at_seq_1_of_the_claimed_epoch() {
    let mut c = AppenderConfig::new("p1");
    c.auto_claim = true;
    let mut s = Sim::new(c);
    s.append("1");
    let r = issue(&s.answer(1, ResponseHead::new(403).with_header("Producer-Epoch", "2")));
    s.append("2");
    let r2 = issue(&s.answer(r.request, ResponseHead::new(200)));
    assert_eq!(r2.headers, hdrs("p1", 3, 1));
}

#[test]
fn each_409_is_its_own_typed_error_and_never_retried() {
    let cases = [
        (
            ResponseHead::new(409).with_header("Stream-Closed", "true"),
            AppendError::StreamClosed,
        ),
        (
            ResponseHead::new(409)
                .with_header("Producer-Expected-Seq", "0")
                .with_header("Producer-Received-Seq", "1"),
            AppendError::SequenceGap {
                expected: Some(0),
                sent: 1,
            },
        ),
        (ResponseHead::new(409), AppendError::Conflict),
    ];
    for (head, error) in cases {
        let mut s = Sim::json();
        s.append("1");
        s.append("2");
        let r2 = issue(&s.answer(1, ResponseHead::new(200)));
        s.append("3");
        assert_eq!(
            s.answer(r2.request, head),
            vec![AppendAction::Failed { error, from: 1 }]
        );
        assert_eq!(s.wait, None);
    }
}

#[test]
fn a_permanent_status_fails_with_the_sends_code() {
    let mut s = Sim::json();
    s.append("1");
    assert_eq!(
        s.answer(1, ResponseHead::new(404)),
        vec![AppendAction::Failed {
            error: AppendError::Send {
                code: ErrorCode::HttpStatus,
                status: Some(404)
            },
            from: 0
        }]
    );
}

/// The close waits for the batch in flight; the batch of the values still
/// queued carries `Stream-Closed: true` (values and close one atomic append);
/// with nothing queued it is a request of its own with an empty body. Either
/// goes with the producer headers at the next seq, so a retry of it is the
/// server's duplicate and a close by another producer of a stream already
/// closed is the server's 409 (`stream-closed`).
#[test]
fn close_waits_for_pending_batches_then_posts_stream_closed_with_the_producer_headers() {
    let mut s = Sim::json();
    s.append("1");
    s.append("2");
    let t = s.t();
    s.a.handle_close(t);
    assert_eq!(s.drain(), vec![]);
    assert_eq!(s.a.handle_append(t, b"3".to_vec()), None);
    let r2 = issue(&s.answer(1, ResponseHead::new(200)));
    assert_eq!(body(&r2), "[2]");
    let mut want = hdrs("p1", 0, 1);
    want.push(("Stream-Closed".into(), "true".into()));
    assert_eq!(r2.headers, want);
    let a = s.answer(r2.request, ResponseHead::new(200));
    assert_eq!(
        a,
        vec![AppendAction::Durable { through: 2 }, AppendAction::Closed]
    );

    let mut s = Sim::json();
    s.append("1");
    let a = s.answer(1, ResponseHead::new(200));
    assert_eq!(a, vec![AppendAction::Durable { through: 1 }]);
    let t = s.t();
    s.a.handle_close(t);
    let close = issue(&s.drain());
    assert_eq!(close.body, Vec::<u8>::new());
    let h = |n: &str, v: &str| (n.to_string(), v.to_string());
    assert_eq!(
        close.headers,
        vec![
            h("Producer-Id", "p1"),
            h("Producer-Epoch", "0"),
            h("Producer-Seq", "1"),
            h("Stream-Closed", "true"),
        ]
    );
    let done = s.answer(
        close.request,
        ResponseHead::new(204).with_header("Stream-Closed", "true"),
    );
    assert_eq!(done, vec![AppendAction::Closed]);
    assert!(s.a.is_done());

    let mut s = Sim::new(AppenderConfig::new("p2"));
    let t = s.t();
    s.a.handle_close(t);
    let close = issue(&s.drain());
    assert_eq!(close.headers[2], h("Producer-Seq", "0"));
    let out = s.answer(
        close.request,
        ResponseHead::new(409).with_header("Stream-Closed", "true"),
    );
    assert_eq!(
        out,
        vec![AppendAction::Failed {
            error: AppendError::StreamClosed,
            from: 0
        }]
    );
}

/// A close with a final message (PROTOCOL.md §5.2.1 "Close with final
/// append"): after the batch in flight, one request carries the message
/// (in a JSON stream's array, as any batch), the producer headers at the next
/// seq and `Stream-Closed: true`, so the message and the close are one
/// atomic, deduplicated append. A text stream posts the bytes as they are.
#[test]
fn close_with_a_final_message_posts_it_with_stream_closed_after_pending_batches() {
    let mut s = Sim::json();
    s.append("1");
    let t = s.t();
    s.a.handle_close_with(t, Some(br#"{"end":true}"#.to_vec()));
    assert_eq!(s.drain(), vec![]);
    let a = s.answer(1, ResponseHead::new(200));
    assert_eq!(a[0], AppendAction::Durable { through: 1 });
    let close = issue(&a);
    assert_eq!(body(&close), r#"[{"end":true}]"#);
    let mut want = hdrs("p1", 0, 1);
    want.push(("Stream-Closed".into(), "true".into()));
    assert_eq!(close.headers, want);
    // A retry repeats the same tuple and body: the server's duplicate.
    assert_eq!(s.answer(close.request, ResponseHead::new(503)), vec![]);
    let again = issue(&s.fire());
    assert_eq!((body(&again), again.headers.clone()), (body(&close), want));
    let done = s.answer(
        again.request,
        ResponseHead::new(204).with_header("Stream-Closed", "true"),
    );
    assert_eq!(
        done,
        vec![AppendAction::Durable { through: 2 }, AppendAction::Closed]
    );

    let mut c = AppenderConfig::new("p2");
    c.json = false;
    let mut s = Sim::new(c);
    let t = s.t();
    s.a.handle_close_with(t, Some(b"final".to_vec()));
    let close = issue(&s.drain());
    assert_eq!(body(&close), "final");
    assert_eq!(close.headers[2], ("Producer-Seq".into(), "0".into()));
    assert_eq!(close.headers[3], ("Stream-Closed".into(), "true".into()));
}

/// The close's retries are bounded by `close_max_attempts` (default
/// [`DEFAULT_MAX_ATTEMPTS`], 5) even when the appends' are not: a close that
/// keeps failing settles `gave-up` with the last status after exactly five
/// requests. `u32::MAX` retries it as long as it fails (30 requests here,
/// still no settle).
#[test]
fn the_close_gives_up_after_its_bounded_attempts_unless_told_to_retry_forever() {
    let forever = |close_attempts: Option<u32>| {
        let mut c = AppenderConfig::new("p1");
        c.send.max_attempts = u32::MAX;
        if let Some(n) = close_attempts {
            c.close_max_attempts = n;
        }
        c
    };
    let mut s = Sim::new(forever(None));
    assert_eq!(
        AppenderConfig::new("x").close_max_attempts,
        DEFAULT_MAX_ATTEMPTS
    );
    let t = s.t();
    s.a.handle_close(t);
    let mut r = issue(&s.drain());
    let mut requests = 1;
    let end = loop {
        let out = s.answer(r.request, ResponseHead::new(500));
        if let [AppendAction::Failed { error, .. }] = out.as_slice() {
            break *error;
        }
        assert!(out.is_empty(), "{out:?}");
        r = issue(&s.fire());
        requests += 1;
        assert!(requests <= 10, "not bounded");
    };
    assert_eq!(requests, DEFAULT_MAX_ATTEMPTS);
    assert_eq!(
        end,
        AppendError::Send {
            code: ErrorCode::GaveUp,
            status: Some(500)
        }
    );

    let mut s = Sim::new(forever(Some(u32::MAX)));
    let t = s.t();
    s.a.handle_close(t);
    let mut r = issue(&s.drain());
    for _ in 0..30 {
        assert_eq!(s.answer(r.request, ResponseHead::new(500)), vec![]);
        r = issue(&s.fire());
    }
    assert!(!s.a.is_done());
}

#[test]
fn abort_aborts_the_live_request_and_fails_every_pending_value() {
    let mut s = Sim::json();
    s.append("1");
    s.append("2");
    let t = s.t();
    s.a.handle_abort(t);
    assert_eq!(
        s.drain(),
        vec![
            AppendAction::Abort { request: 1 },
            AppendAction::Failed {
                error: AppendError::Aborted,
                from: 0
            }
        ]
    );
    // The aborted request's late answer is ignored.
    assert_eq!(s.answer(1, ResponseHead::new(200)), vec![]);
}

#[test]
fn failing_app_headers_stop_the_appender_without_a_retry() {
    let mut s = Sim::json();
    s.append("1");
    let t = s.t();
    s.a.handle_headers_failed(t, 1);
    assert_eq!(
        s.drain(),
        vec![AppendAction::Failed {
            error: AppendError::Headers,
            from: 0
        }]
    );
    assert_eq!(s.wait, None);
}

#[test]
fn offline_holds_the_batch_until_online() {
    let mut s = Sim::json();
    let t = s.t();
    s.a.handle_online(t, false);
    assert_eq!(s.drain(), vec![]);
    assert_eq!(s.append("1"), vec![]);
    s.now = 10_000;
    let t = s.t();
    s.a.handle_online(t, true);
    assert_eq!(s.drain(), vec![]);
    let r = issue(&s.fire());
    assert_eq!(r.headers, hdrs("p1", 0, 0));
    assert!(s.now < 10_250, "prompt retry within 250 ms: {}", s.now);
}

#[derive(Clone, Debug)]
enum In {
    Append(u8),
    Close,
    Answer(u16, bool),
    Error,
    Timer,
    Online(bool),
    Abort,
}

fn input() -> impl Strategy<Value = In> {
    prop_oneof![
        4 => any::<u8>().prop_map(In::Append),
        1 => Just(In::Close),
        4 => (
            prop::sample::select(vec![200u16, 204, 400, 403, 404, 409, 429, 500, 503]),
            any::<bool>()
        )
            .prop_map(|(s, h)| In::Answer(s, h)),
        2 => Just(In::Error),
        3 => Just(In::Timer),
        1 => any::<bool>().prop_map(In::Online),
        1 => Just(In::Abort),
    ]
}

proptest! {
    /// No panic; at most one request live; `Durable` only grows; at most one
    /// `Failed`/`Closed`, and nothing is issued after it.
    #[test]
    fn random_inputs_keep_the_invariants(ins in prop::collection::vec(input(), 1..80)) {
        let mut c = AppenderConfig::new("p");
        c.auto_claim = true;
        c.max_batch_items = 3;
        let mut s = Sim::new(c);
        let mut live: Option<u64> = None;
        let (mut durable, mut ended) = (0u64, false);
        for i in ins {
            s.now += 700;
            let t = s.t();
            match i {
                In::Append(b) => { let _ = s.a.handle_append(t, vec![b'0' + b % 10]); }
                In::Close => s.a.handle_close(t),
                In::Answer(st, h) => {
                    let mut head = ResponseHead::new(st);
                    if h { head = head.with_header("Producer-Epoch", "4").with_header("Stream-Closed", "true"); }
                    s.a.handle_response(t, live.unwrap_or(0), &head);
                }
                In::Error => s.a.handle_error(t, live.unwrap_or(0), TransportError::Network),
                In::Timer => s.a.handle_timer(t),
                In::Online(on) => s.a.handle_online(t, on),
                In::Abort => s.a.handle_abort(t),
            }
            for a in s.drain() {
                match a {
                    AppendAction::Issue(r) => { prop_assert!(!ended); live = Some(r.request); }
                    AppendAction::Abort { .. } => live = None,
                    AppendAction::Durable { through } => { prop_assert!(through > durable); durable = through; }
                    AppendAction::Closed | AppendAction::Failed { .. } => { prop_assert!(!ended); ended = true; }
                    AppendAction::Wait { .. } => {}
                }
            }
        }
    }
}

/// The clock guard, through `handle`: each batch is a fresh send, and a
/// batch started by a fact whose monotonic time is before an earlier fact's
/// starts at the latest time seen: its per-attempt timeout runs from there,
/// never from a time already past.
#[test]
fn a_time_going_backwards_is_taken_as_the_latest_seen() {
    let mut s = Sim::json();
    s.a.handle(Now::at(10_000, WALL0), AppendInput::Append(b"1".to_vec()));
    assert_eq!(issue(&s.drain()).request, 1);
    let timeout = Some(MonoMs(10_000 + DEFAULT_SEND_TIMEOUT_MS));
    assert_eq!(s.wait, timeout);
    let ok = ResponseHead::new(200);
    s.a.handle(Now::at(10_000, WALL0), AppendInput::Response(1, ok));
    assert_eq!(s.drain(), [AppendAction::Durable { through: 1 }]);
    s.a.handle(Now::at(4_000, WALL0), AppendInput::Append(b"2".to_vec()));
    assert_eq!(issue(&s.drain()).request, 2);
    assert_eq!(s.wait, timeout);
}

/// The lifecycle, through `handle`: once closed, an append is refused
/// (`next_index` is `None`) and no fact does anything.
#[test]
fn every_fact_after_close_is_ignored() {
    let mut s = Sim::json();
    s.a.handle(s.t(), AppendInput::Close(None));
    let close = issue(&s.drain());
    assert_eq!(s.a.next_index(), None, "closing: appends are refused");
    s.a.handle(
        s.t(),
        AppendInput::Response(close.request, ResponseHead::new(204)),
    );
    assert_eq!(s.drain(), [AppendAction::Closed]);
    for input in [
        AppendInput::Append(b"1".to_vec()),
        AppendInput::Close(None),
        AppendInput::Response(close.request, ResponseHead::new(500)),
        AppendInput::Timer,
        AppendInput::Abort,
    ] {
        s.now += 1000;
        s.a.handle(s.t(), input);
        assert_eq!((s.drain(), s.wait), (vec![], None));
    }
    assert!(s.a.is_done());
}

/// The app's appender options, judged by the core: a JSON stream is the
/// media type `application/json` exactly (any case, with parameters: the
/// reader's rule, so a `+json` or `application/jsonx` stream posts bytes); a
/// `Producer-Id` has 1 to 256 bytes; a starting epoch is an integer from 0
/// to 2^53 − 1.
#[test]
fn app_options_are_judged_by_the_core() {
    use tidings_core::upstream::{
        is_json_stream, is_valid_producer_id, producer_epoch, MAX_PRODUCER_NUMBER,
    };
    for ct in ["application/json", " Application/JSON ; charset=utf-8"] {
        assert!(is_json_stream(ct), "{ct}");
    }
    for ct in ["application/jsonx", "application/ld+json", "text/plain", ""] {
        assert!(!is_json_stream(ct), "{ct}");
    }
    assert!(is_valid_producer_id("p") && is_valid_producer_id(&"é".repeat(128)));
    assert!(!is_valid_producer_id("") && !is_valid_producer_id(&"x".repeat(257)));
    let max = MAX_PRODUCER_NUMBER as f64;
    assert_eq!(producer_epoch(0.0), Some(0));
    assert_eq!(producer_epoch(max), Some(MAX_PRODUCER_NUMBER));
    for bad in [-1.0, 0.5, max + 2.0, f64::NAN, f64::INFINITY] {
        assert_eq!(producer_epoch(bad), None, "{bad}");
    }
}
