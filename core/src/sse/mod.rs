//! The WHATWG event-stream parser (HTML §9.2.6 "Interpreting an event stream").
//! Bytes in, items out, incremental.
//!
//! [`SseParser`] takes the response body in whatever chunks the network hands
//! over and yields [`SseItem`]s: dispatched [`SseEvent`]s, `retry:` values,
//! comment lines (heartbeats) and events skipped for passing a size limit.
//! Feeding a body in any split yields exactly the same items as feeding it
//! whole.
//!
//! The files each hold one idea:
//! - `scan`: finding the next CR or LF, eight bytes at a time;
//! - `line`: BOM stripping, the three line endings and the partial line;
//! - `field`: splitting a line into a comment, a blank line or `field: value`;
//! - `block`: the field rules (`event`, `data`, `id`, `retry`) and dispatch;
//! - `event`: the public item types;
//! - `limits`: the size limits;
//! - `parser`: [`SseParser`], which ties them together.
//!
//! ```
//! use tidings_core::sse::{SseItem, SseParser};
//!
//! let mut parser = SseParser::new();
//! let mut items = Vec::new();
//! parser.feed(b"id: 7\ndata: hel", &mut items);
//! parser.feed(b"lo\r\n\r\n", &mut items);
//! match items.as_slice() {
//!     [SseItem::Event(event)] => {
//!         assert_eq!(event.event, "message");
//!         assert_eq!(event.data, "hello");
//!         assert_eq!(event.id.as_deref(), Some("7"));
//!     }
//!     other => panic!("unexpected items: {other:?}"),
//! }
//! assert_eq!(parser.last_event_id(), "7");
//! ```

mod block;
mod event;
mod field;
mod limits;
mod line;
mod parser;
mod scan;
mod utf8;

pub use event::{SseEvent, SseItem, SseSkipped};
pub use limits::{SseLimit, SseLimits};
pub use parser::SseParser;
