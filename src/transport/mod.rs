//! The transports. Each reports facts; none decides anything (the engine does).

#[cfg(feature = "durable-streams")]
pub mod durable;
pub mod eventsource;
pub mod fetch;
