//! Delivery ACK batching (docs/upstream.md) on virtual time: when a batch goes out
//! (batchMs after its first id, at maxBatch ids, on close), once per id,
//! only in the leading tab, and the JSON body.

use tidings_core::time::{MonoMs, Now};
use tidings_core::upstream::{ack_body, AckAction, AckBatcher, AckInput};

fn at(ms: u64) -> Now {
    Now::at(ms, 0)
}

/// `id` received at `t` ms.
fn rx(b: &mut AckBatcher, t: u64, id: &str, leader: bool) {
    let id = id.to_string();
    b.handle(at(t), AckInput::Received { id, leader });
}

fn drain(b: &mut AckBatcher) -> (Vec<Vec<String>>, Option<MonoMs>) {
    let mut out = Vec::new();
    loop {
        match b.poll() {
            AckAction::Send(ids) => out.push(ids),
            AckAction::SendKeepalive(ids) => panic!("keepalive batch {ids:?} outside pagehide"),
            AckAction::Wait { until } => return (out, until),
        }
    }
}

/// The batches posted with `keepalive: true` (and the ordinary ones).
fn drain_keepalive(b: &mut AckBatcher) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let (mut send, mut keep) = (Vec::new(), Vec::new());
    loop {
        match b.poll() {
            AckAction::Send(ids) => send.push(ids),
            AckAction::SendKeepalive(ids) => keep.push(ids),
            AckAction::Wait { .. } => return (send, keep),
        }
    }
}

/// `pagehide`: the ids waiting for their batch go out at once, as one
/// `keepalive` batch (a send could not finish once the page is gone, and an
/// id never acknowledged is re-sent by the server to the next page, which
/// has forgotten it and shows it again). The batcher stays open: a page back
/// from the back-forward cache goes on batching. Nothing pending: nothing.
#[test]
fn pagehide_sends_what_is_pending_with_keepalive() {
    let mut b = AckBatcher::new(60_000, 100);
    b.handle(at(0), AckInput::PageHide);
    assert_eq!(drain_keepalive(&mut b), (vec![], vec![]));
    rx(&mut b, 10, "1", true);
    rx(&mut b, 20, "2", true);
    b.handle(at(0), AckInput::PageHide);
    assert_eq!(drain_keepalive(&mut b), (vec![], vec![ids(&["1", "2"])]));
    assert_eq!(drain(&mut b), (vec![], None), "the batch timer is gone");
    rx(&mut b, 30, "3", true);
    assert_eq!(drain(&mut b), (vec![], Some(MonoMs(60_030))));
    b.handle(at(60_030), AckInput::Timer);
    assert_eq!(drain(&mut b), (vec![ids(&["3"])], None));
    b.handle(at(0), AckInput::Close);
    b.handle(at(0), AckInput::PageHide);
    assert_eq!(drain_keepalive(&mut b), (vec![], vec![]));
}

fn ids(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_batch_goes_out_batch_ms_after_its_first_id() {
    let mut b = AckBatcher::new(250, 100);
    rx(&mut b, 1000, "1", true);
    assert_eq!(drain(&mut b), (vec![], Some(MonoMs(1250))));
    rx(&mut b, 1200, "2", true);
    assert_eq!(drain(&mut b), (vec![], Some(MonoMs(1250))));
    b.handle(at(1249), AckInput::Timer);
    assert_eq!(drain(&mut b), (vec![], Some(MonoMs(1250))));
    b.handle(at(1250), AckInput::Timer);
    assert_eq!(drain(&mut b), (vec![ids(&["1", "2"])], None));
    rx(&mut b, 2000, "3", true);
    assert_eq!(drain(&mut b), (vec![], Some(MonoMs(2250))));
}

#[test]
fn max_batch_ids_go_out_at_once() {
    let mut b = AckBatcher::new(1000, 3);
    for (t, id) in ["a", "b", "c", "d"].iter().enumerate() {
        rx(&mut b, t as u64, id, true);
    }
    assert_eq!(
        drain(&mut b),
        (vec![ids(&["a", "b", "c"])], Some(MonoMs(1003)))
    );
}

#[test]
fn close_sends_what_is_pending_and_nothing_after() {
    let mut b = AckBatcher::new(1000, 100);
    rx(&mut b, 0, "1", true);
    b.handle(at(0), AckInput::Close);
    assert_eq!(drain(&mut b), (vec![ids(&["1"])], None));
    rx(&mut b, 5, "2", true);
    b.handle(at(5000), AckInput::Timer);
    assert_eq!(drain(&mut b), (vec![], None));
}

#[test]
fn a_following_tab_and_empty_or_repeated_ids_are_not_acknowledged() {
    let mut b = AckBatcher::new(100, 100);
    rx(&mut b, 0, "1", false);
    rx(&mut b, 0, "", true);
    assert_eq!(drain(&mut b), (vec![], None));
    rx(&mut b, 0, "2", true);
    rx(&mut b, 10, "2", true);
    b.handle(at(100), AckInput::Timer);
    assert_eq!(drain(&mut b), (vec![ids(&["2"])], None));
}

#[test]
fn the_body_is_a_json_object_with_escaped_ids() {
    assert_eq!(ack_body(&ids(&["1", "2"])), r#"{"ids":["1","2"]}"#);
    assert_eq!(
        ack_body(&ids(&["a\"b\\c\u{1}é"])),
        r#"{"ids":["a\"b\\c\u0001é"]}"#
    );
    assert_eq!(ack_body(&[]), r#"{"ids":[]}"#);
}

/// The clock guard: an input whose monotonic time is before an earlier
/// input's is taken at the latest time seen, so a batch's wait runs from
/// there (never a deadline in the past) and a late timer cannot fire it
/// early.
#[test]
fn a_time_going_backwards_is_taken_as_the_latest_seen() {
    let mut b = AckBatcher::new(250, 100);
    b.handle(at(5000), AckInput::Timer);
    rx(&mut b, 1000, "1", true);
    assert_eq!(drain(&mut b), (vec![], Some(MonoMs(5250))));
    b.handle(at(1250), AckInput::Timer);
    assert_eq!(drain(&mut b), (vec![], Some(MonoMs(5250))));
    b.handle(at(5250), AckInput::Timer);
    assert_eq!(drain(&mut b), (vec![ids(&["1"])], None));
}

/// The lifecycle: after close no fact does anything (a pagehide included),
/// and a second close sends nothing twice.
#[test]
fn every_fact_after_close_is_ignored() {
    let mut b = AckBatcher::new(100, 2);
    rx(&mut b, 0, "1", true);
    b.handle(at(10), AckInput::Close);
    assert_eq!(drain(&mut b), (vec![ids(&["1"])], None));
    rx(&mut b, 20, "2", true);
    rx(&mut b, 20, "3", true);
    b.handle(at(30), AckInput::PageHide);
    b.handle(at(40), AckInput::Close);
    b.handle(at(500), AckInput::Timer);
    assert_eq!(drain_keepalive(&mut b), (vec![], vec![]));
}
