//! tidings-server: the reference server for tidings (demo and tests).
//!
//! Endpoints: `GET /sse`, `GET /long-poll`, `GET /poll`, `GET /resource`,
//! `POST /publish`, `POST /answer` (an LLM-like stream, `GET` to resume), `POST /send` (idempotency store), `GET /_send`, `GET /_log`, `POST /_log/clear`, `/_faults`,
//! `POST /_restart`, static `www/` at `/` and the npm package at `/pkg/`. See the README of
//! this crate for the request and response shapes.

pub mod ack;
pub mod answer;
pub mod app;
pub mod body;
pub mod clock;
pub mod config;
pub mod cors;
pub mod cursor;
pub mod faults;
pub mod hub;
pub mod log;
pub mod long_poll;
pub mod poll;
pub mod publish;
pub mod send;
pub mod serve;
pub mod sse;
pub mod validators;

pub use config::Config;
pub use serve::Server;
