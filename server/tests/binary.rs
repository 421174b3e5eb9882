#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]
//! The binary as test scripts use it: `--port 0`, parse the printed line,
//! SIGTERM / SIGINT end it promptly even with a stream open.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::open_sse;

fn spawn() -> (Child, String, BufReader<std::process::ChildStdout>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tidings-server"))
        .args(["--port", "0", "--heartbeat-ms", "100000"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let url = line
        .trim()
        .strip_prefix("tidings-server listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert!(!url.ends_with(":0"), "the real port is printed: {url}");
    (child, url, out)
}

async fn stops_on(signal: &str) {
    let (mut child, url, mut out) = spawn();
    let mut r = open_sse(&url, "/sse", &[]).await;
    assert_eq!(r.next_block().await.unwrap().get("retry"), Some("1000"));
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(line.contains("GET /sse 200"), "{line:?}");
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut waited = Duration::ZERO;
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            assert!(st.success(), "{st:?}");
            break;
        }
        assert!(
            waited < Duration::from_secs(5),
            "still running after {signal}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += Duration::from_millis(50);
    }
    r.read_to_end(Duration::from_secs(2)).await;
    assert!(r.ended);
}

#[tokio::test]
async fn sigterm_shuts_down_with_a_stream_open() {
    stops_on("-TERM").await;
}

#[tokio::test]
async fn sigint_shuts_down_with_a_stream_open() {
    stops_on("-INT").await;
}
