//! `Message::json` (the browser's `JSON.parse` + serde-wasm-bindgen) against
//! serde_json compiled to wasm, on the same messages: both must decode the
//! same values (asserted); the time each takes is printed, not asserted (a
//! figure for docs/rust.md, run with `--release` for it:
//! `wasm-pack test --release --headless --chrome --features rust --test
//! browser_json_decode -- --nocapture`).
#![cfg(all(target_arch = "wasm32", feature = "rust"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tidings::Message;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[derive(serde::Deserialize, Debug, PartialEq)]
struct Quote {
    symbol: String,
    cents: u64,
    change: f64,
    tags: Vec<String>,
    halted: bool,
    note: Option<String>,
}

fn messages(n: usize) -> Vec<Message> {
    (0..n)
        .map(|i| Message {
            id: i.to_string(),
            data: format!(
                r#"{{"symbol":"SYM{i}","cents":{},"change":{}.25,"tags":["nyse","tech"],"halted":false,"note":"quote number {i} of the day"}}"#,
                10_000 + i,
                i % 7
            ),
            ..Message::default()
        })
        .collect()
}

/// Best of `rounds` runs of `f` over `msgs`, in ms per 1000 messages.
fn best_ms_per_1000(msgs: &[Message], rounds: u32, f: impl Fn(&Message) -> Quote) -> f64 {
    let perf = web_sys::window().unwrap().performance().unwrap();
    let mut best = f64::MAX;
    for _ in 0..rounds {
        let t0 = perf.now();
        for m in msgs {
            std::hint::black_box(f(m));
        }
        best = best.min(perf.now() - t0);
    }
    best * 1000.0 / msgs.len() as f64
}

#[wasm_bindgen_test]
fn json_parse_with_serde_wasm_bindgen_and_serde_json_decode_the_same() {
    let msgs = messages(2000);
    for m in &msgs {
        let a: Quote = m.json().unwrap();
        let b: Quote = serde_json::from_str(&m.data).unwrap();
        assert_eq!(a, b);
    }
    let swb = best_ms_per_1000(&msgs, 5, |m| m.json().unwrap());
    let sj = best_ms_per_1000(&msgs, 5, |m| serde_json::from_str(&m.data).unwrap());
    let line = format!(
        "json decode, ms per 1000 messages of {} bytes: JSON.parse+serde-wasm-bindgen {swb:.2}, serde_json {sj:.2}",
        msgs[0].data.len()
    );
    wasm_bindgen_test::console_log!("{line}");
}
