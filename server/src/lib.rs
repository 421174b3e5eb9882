//! tidings-server: the reference server for tidings (demo and tests).
//!
//! Endpoints: `GET /sse`, `POST /publish`, `GET /_log`, `POST /_log/clear`,
//! static `www/` at `/` and the npm package at `/pkg/`. See the README of
//! this crate for the request and response shapes.

pub mod app;
pub mod body;
pub mod clock;
pub mod config;
pub mod cors;
pub mod cursor;
pub mod faults;
pub mod hub;
pub mod log;
pub mod publish;
pub mod serve;
pub mod sse;

pub use config::Config;
pub use serve::Server;
