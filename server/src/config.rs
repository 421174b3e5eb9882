//! Command-line options (also the configuration the tests build).

use std::path::PathBuf;

use clap::Parser;

/// tidings reference server: SSE, long-poll and poll endpoints, publish,
/// replay by cursor, and scriptable fault injection for tests.
#[derive(Debug, Clone, Parser)]
#[command(name = "tidings-server", version, about)]
pub struct Config {
    /// Address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to bind; 0 picks a free port (the real one is printed).
    #[arg(long, default_value_t = 8787)]
    pub port: u16,
    /// Directory served at `/` (index.html).
    #[arg(long, default_value = "./www")]
    pub www: PathBuf,
    /// Directory of the built npm package, served at `/pkg/`.
    #[arg(long, default_value = "./pkg")]
    pub pkg: PathBuf,
    /// Capacity of the replay ring buffer (events).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub buffer: u64,
    /// Interval of SSE heartbeats in ms (0 = none besides the one at open).
    #[arg(long, default_value_t = 15_000)]
    pub heartbeat_ms: u64,
    /// Value of the `retry:` line sent at the start of every SSE stream.
    #[arg(long, default_value_t = 1000)]
    pub retry_ms: u64,
    /// Default hold of `GET /long-poll` in ms.
    #[arg(long, default_value_t = 30_000)]
    pub hold_ms: u64,
    /// Per-stream live queue; a stream that falls this far behind is closed
    /// (the client resumes by cursor) instead of silently losing events.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..))]
    pub stream_queue: u64,
    /// Entries kept by the JSON request log (`GET /_log`).
    #[arg(long, default_value_t = 10_000)]
    pub log_capacity: usize,
    /// Do not print one line per request on stdout.
    #[arg(long)]
    pub quiet: bool,
}

impl Config {
    /// Defaults with `--port 0` and `--quiet`: what integration tests want.
    pub fn for_tests() -> Self {
        Config::parse_from(["tidings-server", "--port", "0", "--quiet"])
    }
}
