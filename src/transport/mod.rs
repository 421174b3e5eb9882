//! The transports. Each reports facts; none decides anything (the engine does).

pub mod durable;
pub mod eventsource;
pub mod fetch;
