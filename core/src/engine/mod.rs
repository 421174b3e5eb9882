//! The engine: one state machine per connection, fed facts (`handle_*`) and
//! drained for actions (`poll`).
