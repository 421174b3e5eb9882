//! Property tests of the engine: random sequences of inputs (facts for live,
//! stale and unknown attempts, random statuses, headers and bodies, time
//! moving in steps and jumps, lifecycle flips) under random configurations
//! keep every invariant of `tidings_core::testing::engine_model` (never two
//! live attempts, no `Wait` before the last input's time, no `Open` while
//! hidden, offline or frozen, reconnect waits within their bounds, no cursor
//! moved by an event without an id, nothing after `closed`). The same model
//! is the fuzz target `engine`; proptest explores it with the
//! weights below, the fuzzer by coverage.

use proptest::prelude::*;
use tidings_core::testing::engine_model::{
    check, EngineCase, FuzzConfig, HeaderValue, Op, Part, Which,
};

fn which() -> impl Strategy<Value = Which> {
    (0u8..4).prop_map(Which)
}

fn parts() -> impl Strategy<Value = Vec<Part>> {
    prop::collection::vec(
        prop_oneof![
            10 => (0u8..11).prop_map(Part::Known),
            1 => prop::collection::vec(any::<u8>(), 0..16).prop_map(Part::Raw),
        ],
        0..6,
    )
}

fn header_value() -> impl Strategy<Value = HeaderValue> {
    prop_oneof![
        3 => any::<u8>().prop_map(HeaderValue::Known),
        1 => "[ -~]{0,12}".prop_map(HeaderValue::Raw),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => prop_oneof![0u16..3, 0u16..540, any::<u16>()].prop_map(Op::Advance),
        1 => (any::<u16>(), any::<i16>()).prop_map(|(m, w)| Op::Jump(m, w)),
        2 => Just(Op::Timer),
        1 => (0u8..8).prop_map(Op::Start),
        4 => (which(), prop_oneof![9 => 0u8..17, 1 => 0u8..24], prop_oneof![3 => Just(0u8), 1 => 0u8..5],
              prop::collection::vec((0u8..8, header_value()), 0..3))
            .prop_map(|(w, s, t, h)| Op::Head(w, s, t, h)),
        1 => (which(), proptest::option::of((0u8..24, 0u8..5))).prop_map(|(w, p)| Op::NativeProbe(w, p)),
        1 => which().prop_map(Op::Opened),
        4 => (which(), parts()).prop_map(|(w, p)| Op::Bytes(w, p)),
        2 => (which(), 0u8..6, "[a-z]{0,3}", 0u8..4).prop_map(|(w, e, d, l)| Op::Native(w, e, d, l)),
        2 => (which(), prop::collection::vec((proptest::option::of(0u8..4), 0u8..6), 0..4),
              proptest::option::of(0u32..1_000_000))
            .prop_map(|(w, m, h)| Op::Messages(w, m, h)),
        1 => (which(), "[a-z]{0,5}").prop_map(|(w, b)| Op::Resource(w, b)),
        1 => (which(), proptest::option::of(prop::collection::vec("[a-z0-9\"{}]{0,4}", 0..3)))
            .prop_map(|(w, e)| Op::JsonChunk(w, e)),
        3 => (which(), 0u8..6).prop_map(|(w, e)| Op::Error(w, e)),
        3 => which().prop_map(Op::End),
        1 => which().prop_map(Op::HeadersFailed),
        2 => any::<bool>().prop_map(Op::Visibility),
        1 => any::<bool>().prop_map(Op::Online),
        1 => any::<bool>().prop_map(Op::Frozen),
        1 => (proptest::option::of(0u16..3000), any::<bool>()).prop_map(|(r, s)| Op::Hint(r, s)),
        1 => prop_oneof![Just(Op::Close), Just(Op::Timer), Just(Op::Timer)],
    ]
}

fn config() -> impl Strategy<Value = FuzzConfig> {
    (
        prop::collection::vec(any::<u8>(), 0..5),
        any::<bool>(),
        any::<bool>(),
        any::<[u8; 6]>(),
        proptest::option::of(0u8..12),
        prop::bool::weighted(0.1),
        proptest::option::of(0u8..3),
    )
        .prop_map(
            |(transports, headers, cross_origin, knobs, max_attempts, durable, last_event_id)| {
                FuzzConfig {
                    transports,
                    headers,
                    cross_origin,
                    knobs,
                    max_attempts,
                    durable,
                    last_event_id,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_inputs_keep_the_invariants(
        config in config(),
        seed in any::<u64>(),
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let case = EngineCase { config, seed, ops };
        if let Err(e) = check(&case) {
            prop_assert!(false, "{}", e);
        }
    }
}
