//! The Durable Streams stream handles (`StreamOp`, docs/durable-streams.md
//! "Stream handles") on virtual time with a seeded RNG: the request each
//! operation builds, the classification of answers (404, 410, 409 with and
//! without `Stream-Closed`, retries as a send's with exact delays), the
//! create options' checks, and random input that never panics.

use proptest::prelude::*;
use tidings_core::engine::{ErrorCode, ResponseHead, TransportError};
use tidings_core::time::{MonoMs, Now};
use tidings_core::upstream::{
    CreateOptions, IdempotencyKey, Issue, Outcome, SendAction, SendConfig, SendInput, Sender,
    StreamOp,
};

const WALL0: i64 = 1_700_000_000_000;
const SEED: u64 = 42;

fn t(ms: u64) -> Now {
    Now::at(ms, WALL0 + ms as i64)
}

fn h(name: &str, value: &str) -> (String, String) {
    (name.into(), value.into())
}

/// Every action up to the `Wait`, and the `Wait`'s time.
fn drain(s: &mut Sender) -> (Vec<SendAction>, Option<MonoMs>) {
    let mut out = Vec::new();
    for _ in 0..100 {
        match s.poll() {
            SendAction::Wait { until } => return (out, until),
            a => out.push(a),
        }
    }
    panic!("no Wait after 100 actions: {out:?}");
}

/// The send of `op` as the adapter builds it: a `Sender` with the
/// operation's method (a key it never sends), and the operation's headers.
fn sender(op: StreamOp, create: &CreateOptions, seed: u64) -> (Sender, Vec<(String, String)>) {
    let (method, headers) = op.request(create);
    let config = SendConfig {
        method: method.into(),
        ..SendConfig::default()
    };
    let key = IdempotencyKey::new("k").unwrap_or_else(|e| panic!("{e:?}"));
    (Sender::new(config, &key, seed), headers)
}

/// The first attempt of `op` with `create` as it goes out: the sender's
/// `Issue` with the operation's headers in place of its own.
fn first_issue(op: StreamOp, create: &CreateOptions) -> Issue {
    let (mut s, headers) = sender(op, create, SEED);
    s.handle_start(t(0));
    match drain(&mut s).0.as_slice() {
        [SendAction::Issue(i)] => Issue {
            headers,
            ..i.clone()
        },
        other => panic!("{other:?}"),
    }
}

/// How `op` settles when every attempt is answered with `head`.
fn settles_on(op: StreamOp, head: ResponseHead) -> Outcome {
    let (mut s, _) = sender(op, &CreateOptions::default(), SEED);
    s.handle_start(t(0));
    let _ = drain(&mut s);
    s.handle_response(t(5), 1, &head);
    match drain(&mut s).0.as_slice() {
        [SendAction::Settle(o)] => *o,
        other => panic!("{other:?}"),
    }
}

/// The stream's error code for `op` answered `head`, as the adapter names it.
fn code_of(op: StreamOp, head: ResponseHead) -> (&'static str, Option<u16>) {
    match settles_on(op, head) {
        Outcome::Err { code, status, .. } => (StreamOp::code(code, status), status),
        o => panic!("{o:?}"),
    }
}

#[test]
fn each_operation_builds_its_request_without_an_idempotency_key() {
    let none = CreateOptions::default();
    let create = first_issue(StreamOp::Create, &none);
    assert_eq!(create.method, "PUT");
    assert_eq!(create.headers, [h("Content-Type", "application/json")]);
    let head = first_issue(StreamOp::Head, &none);
    assert_eq!((head.method.as_str(), head.headers.len()), ("HEAD", 0));
    let delete = first_issue(StreamOp::Delete, &none);
    assert_eq!(
        (delete.method.as_str(), delete.headers.len()),
        ("DELETE", 0)
    );
    let close = first_issue(StreamOp::Close, &none);
    assert_eq!(close.method, "POST");
    assert_eq!(close.headers, [h("Stream-Closed", "true")]);
    assert_eq!(close.max_answer_bytes, 1 << 20);
}

#[test]
fn create_sends_content_type_ttl_or_expiry_and_closed() {
    let ttl = CreateOptions {
        content_type: Some("text/plain".into()),
        ttl_seconds: Some(9_007_199_254_740_991),
        closed: true,
        ..CreateOptions::default()
    };
    assert_eq!(
        first_issue(StreamOp::Create, &ttl).headers,
        [
            h("Content-Type", "text/plain"),
            h("Stream-TTL", "9007199254740991"),
            h("Stream-Closed", "true"),
        ]
    );
    let at = CreateOptions {
        expires_at: Some("2030-01-02T03:04:05.678+01:00".into()),
        ..CreateOptions::default()
    };
    assert_eq!(
        first_issue(StreamOp::Create, &at).headers,
        [
            h("Content-Type", "application/json"),
            h("Stream-Expires-At", "2030-01-02T03:04:05.678+01:00"),
        ]
    );
    let zero = CreateOptions {
        ttl_seconds: Some(0),
        ..CreateOptions::default()
    };
    assert_eq!(
        first_issue(StreamOp::Create, &zero).headers[1],
        h("Stream-TTL", "0")
    );
    // An operation other than create ignores the create's options.
    assert_eq!(first_issue(StreamOp::Head, &ttl).headers.len(), 0);
}

#[test]
fn create_refuses_ttl_with_expiry_and_headers_fetch_would_drop() {
    let both = CreateOptions {
        ttl_seconds: Some(60),
        expires_at: Some("2030-01-02T03:04:05Z".into()),
        ..CreateOptions::default()
    };
    assert_eq!(both.check(), Err("expiresAt"));
    let at = |s: &str| CreateOptions {
        expires_at: Some(s.into()),
        ..CreateOptions::default()
    };
    let ct = |s: &str| CreateOptions {
        content_type: Some(s.into()),
        ..CreateOptions::default()
    };
    for bad in ["", "2030-01-02T03:04:05Z\n", "a\tb", "é", "\u{7f}"] {
        assert_eq!(at(bad).check(), Err("expiresAt"), "{bad:?}");
        assert_eq!(ct(bad).check(), Err("contentType"), "{bad:?}");
    }
    // The RFC 3339 syntax is the server's to check (its 400).
    for good in ["2030-01-02T03:04:05.678+01:00", "tomorrow", " ~"] {
        assert_eq!(at(good).check(), Ok(()), "{good}");
        assert_eq!(ct(good).check(), Ok(()), "{good}");
    }
    assert_eq!(CreateOptions::default().check(), Ok(()));
    // Content type checked first.
    let both_bad = CreateOptions {
        content_type: Some("\n".into()),
        ..both
    };
    assert_eq!(both_bad.check(), Err("contentType"));
}

#[test]
fn answers_are_classified_per_operation() {
    for op in [
        StreamOp::Create,
        StreamOp::Head,
        StreamOp::Delete,
        StreamOp::Close,
    ] {
        assert_eq!(
            code_of(op, ResponseHead::new(404)),
            ("not-found", Some(404)),
            "{op:?}"
        );
        assert_eq!(
            code_of(op, ResponseHead::new(410)),
            ("gone", Some(410)),
            "{op:?}"
        );
        assert_eq!(
            code_of(op, ResponseHead::new(409)),
            ("conflict", Some(409)),
            "{op:?}"
        );
        let closed = ResponseHead::new(409).with_header("Stream-Closed", "true");
        assert_eq!(code_of(op, closed), ("stream-closed", Some(409)), "{op:?}");
        let not_closed = ResponseHead::new(409).with_header("Stream-Closed", "false");
        assert_eq!(code_of(op, not_closed), ("conflict", Some(409)), "{op:?}");
        assert_eq!(
            code_of(op, ResponseHead::new(400)),
            ("http-status", Some(400)),
            "{op:?}"
        );
        assert_eq!(
            code_of(op, ResponseHead::new(403)),
            ("auth", Some(403)),
            "{op:?}"
        );
    }
    for status in [200, 201, 204] {
        assert_eq!(
            settles_on(StreamOp::Create, ResponseHead::new(status)),
            Outcome::Ok {
                status,
                attempts: 1
            }
        );
    }
    // Codes that are not a refusal by status stay the send's.
    assert_eq!(StreamOp::code(ErrorCode::GaveUp, Some(404)), "gave-up");
    assert_eq!(StreamOp::code(ErrorCode::Timeout, None), "timeout");
}

/// Retries are a send's: 503, a network error and a 409 with `Retry-After`
/// come back after the engine's full-jitter backoff (floor 1000 +
/// U[0, 500 · 2^k], seed 42) or the server's wait; the fifth failure gives up.
#[test]
fn transient_answers_are_retried_as_a_sends() {
    let (mut s, _) = sender(StreamOp::Head, &CreateOptions::default(), SEED);
    s.handle_start(t(0));
    let _ = drain(&mut s);
    let mut now = 0;
    let mut issued_at = Vec::new();
    for attempt in 1..=5u32 {
        now += 20;
        match attempt {
            1 => s.handle_response(t(now), attempt, &ResponseHead::new(503)),
            2 => s.handle_error(t(now), attempt, TransportError::NetworkOrCors),
            3 => {
                let busy = ResponseHead::new(409).with_header("Retry-After", "2");
                s.handle_response(t(now), attempt, &busy)
            }
            _ => s.handle_response(t(now), attempt, &ResponseHead::new(500)),
        }
        let (out, until) = drain(&mut s);
        if attempt == 5 {
            let gave_up = Outcome::Err {
                code: ErrorCode::GaveUp,
                status: Some(500),
                attempts: 5,
            };
            assert_eq!(out, [SendAction::Settle(gave_up)]);
            break;
        }
        let Some(MonoMs(at)) = until else {
            panic!("no retry after {attempt}")
        };
        issued_at.push(at - now);
        now = at;
        s.handle_timer(t(now));
        let (out, _) = drain(&mut s);
        assert!(matches!(out.as_slice(), [SendAction::Issue(i)] if i.method == "HEAD"));
    }
    assert_eq!(issued_at, [1371, 1160, 2000 + 55, 2377]);
}

fn input() -> impl Strategy<Value = SendInput> {
    let status = prop_oneof![Just(404u16), Just(409), Just(410), Just(503), 100u16..600];
    let head = (status, any::<bool>(), any::<bool>()).prop_map(|(s, closed, wait)| {
        let mut h = ResponseHead::new(s);
        if closed {
            h = h.with_header("Stream-Closed", "true");
        }
        if wait {
            h = h.with_header("Retry-After", "1");
        }
        h
    });
    prop_oneof![
        Just(SendInput::Start),
        (1u32..4, head.clone()).prop_map(|(n, h)| SendInput::Response(n, h)),
        (1u32..4, head).prop_map(|(n, h)| SendInput::TooLarge(n, h)),
        (1u32..4).prop_map(|n| SendInput::Error(n, TransportError::Network)),
        Just(SendInput::Timer),
        any::<bool>().prop_map(SendInput::Online),
        Just(SendInput::Abort),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Any operation, any create options, any input sequence: no panic,
    /// exactly the operation's method on every attempt, at most one settle,
    /// and a code from the documented list.
    #[test]
    fn random_input_never_panics(
        op in 0u32..6,
        ttl in proptest::option::of(any::<u64>()),
        at in proptest::option::of(".{0,40}"),
        ct in proptest::option::of(".{0,20}"),
        closed in any::<bool>(),
        inputs in proptest::collection::vec((0u64..5_000, input()), 0..40),
        seed in any::<u64>(),
    ) {
        let create = CreateOptions { content_type: ct, ttl_seconds: ttl, expires_at: at, closed };
        let _ = create.check();
        let Some(op) = StreamOp::from_number(op) else {
            prop_assert!(op >= 4);
            return Ok(());
        };
        let (method, _) = op.request(&create);
        let (mut s, _) = sender(op, &create, seed);
        let (mut now, mut settles) = (0, 0);
        for (dt, input) in inputs {
            now += dt;
            s.handle(t(now), input);
            for a in drain(&mut s).0 {
                match a {
                    SendAction::Issue(i) => prop_assert_eq!(i.method.as_str(), method),
                    SendAction::Settle(Outcome::Err { code, status, .. }) => {
                        settles += 1;
                        let c = StreamOp::code(code, status);
                        let known = ["not-found", "gone", "stream-closed", "conflict", "http-status",
                            "auth", "gave-up", "timeout", "too-large"];
                        prop_assert!(known.contains(&c), "{}", c);
                    }
                    SendAction::Settle(_) => settles += 1,
                    SendAction::Abort { .. } | SendAction::Wait { .. } => {}
                }
            }
        }
        prop_assert!(settles <= 1);
    }
}
