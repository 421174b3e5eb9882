//! Delivery ACK batching (docs/upstream.md) on virtual time: when a batch goes out
//! (batchMs after its first id, at maxBatch ids, on close), once per id,
//! only in the leading tab, and the JSON body.

use tidings_core::time::MonoMs;
use tidings_core::upstream::{ack_body, AckAction, AckBatcher};

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
    b.handle_page_hide();
    assert_eq!(drain_keepalive(&mut b), (vec![], vec![]));
    b.handle_received(MonoMs(10), "1", true);
    b.handle_received(MonoMs(20), "2", true);
    b.handle_page_hide();
    assert_eq!(drain_keepalive(&mut b), (vec![], vec![ids(&["1", "2"])]));
    assert_eq!(drain(&mut b), (vec![], None), "the batch timer is gone");
    b.handle_received(MonoMs(30), "3", true);
    assert_eq!(drain(&mut b), (vec![], Some(MonoMs(60_030))));
    b.handle_timer(MonoMs(60_030));
    assert_eq!(drain(&mut b), (vec![ids(&["3"])], None));
    b.handle_close();
    b.handle_page_hide();
    assert_eq!(drain_keepalive(&mut b), (vec![], vec![]));
}

fn ids(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_batch_goes_out_batch_ms_after_its_first_id() {
    let mut b = AckBatcher::new(250, 100);
    b.handle_received(MonoMs(1000), "1", true);
    assert_eq!(drain(&mut b), (vec![], Some(MonoMs(1250))));
    b.handle_received(MonoMs(1200), "2", true);
    assert_eq!(drain(&mut b), (vec![], Some(MonoMs(1250))));
    b.handle_timer(MonoMs(1249));
    assert_eq!(drain(&mut b), (vec![], Some(MonoMs(1250))));
    b.handle_timer(MonoMs(1250));
    assert_eq!(drain(&mut b), (vec![ids(&["1", "2"])], None));
    b.handle_received(MonoMs(2000), "3", true);
    assert_eq!(drain(&mut b), (vec![], Some(MonoMs(2250))));
}

#[test]
fn max_batch_ids_go_out_at_once() {
    let mut b = AckBatcher::new(1000, 3);
    for (t, id) in ["a", "b", "c", "d"].iter().enumerate() {
        b.handle_received(MonoMs(t as u64), id, true);
    }
    assert_eq!(
        drain(&mut b),
        (vec![ids(&["a", "b", "c"])], Some(MonoMs(1003)))
    );
}

#[test]
fn close_sends_what_is_pending_and_nothing_after() {
    let mut b = AckBatcher::new(1000, 100);
    b.handle_received(MonoMs(0), "1", true);
    b.handle_close();
    assert_eq!(drain(&mut b), (vec![ids(&["1"])], None));
    b.handle_received(MonoMs(5), "2", true);
    b.handle_timer(MonoMs(5000));
    assert_eq!(drain(&mut b), (vec![], None));
}

#[test]
fn a_following_tab_and_empty_or_repeated_ids_are_not_acknowledged() {
    let mut b = AckBatcher::new(100, 100);
    b.handle_received(MonoMs(0), "1", false);
    b.handle_received(MonoMs(0), "", true);
    assert_eq!(drain(&mut b), (vec![], None));
    b.handle_received(MonoMs(0), "2", true);
    b.handle_received(MonoMs(10), "2", true);
    b.handle_timer(MonoMs(100));
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
