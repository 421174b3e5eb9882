//! The WHATWG event-stream parser (HTML §9.2.6). Bytes in, events out, incremental.
