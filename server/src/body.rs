//! Body helpers: counting SSE events in outgoing bytes, and the tracking
//! wrapper that records when a response body ends (for the request log).

use std::pin::Pin;
use std::task::{ready, Context, Poll};

use axum::body::Body;
use bytes::Bytes;
use http_body::{Frame, SizeHint};

use crate::app::AppState;

/// Counts completed SSE blocks that carried an `id` field and data (events a
/// client dispatches with an id), in a byte stream split anywhere (LF, CRLF
/// and CR line ends).
#[derive(Debug, Default, Clone)]
pub struct SseCounter {
    head: [u8; 5],
    line_len: usize,
    block_has_id: bool,
    block_has_data: bool,
    prev_cr: bool,
    /// Events (blocks with an id) completed so far.
    pub events: u64,
}

impl SseCounter {
    /// Feeds `chunk`. Returns the offset just past the byte that completed
    /// the `limit`-th event, if that happens inside this chunk (and stops
    /// there); otherwise consumes the whole chunk and returns `None`.
    pub fn feed(&mut self, chunk: &[u8], limit: u64) -> Option<usize> {
        for (i, &b) in chunk.iter().enumerate() {
            if self.prev_cr && b == b'\n' {
                self.prev_cr = false;
                continue;
            }
            self.prev_cr = false;
            if b == b'\n' || b == b'\r' {
                self.prev_cr = b == b'\r';
                if self.line_len == 0 {
                    let event = self.block_has_id && self.block_has_data;
                    self.block_has_id = false;
                    self.block_has_data = false;
                    if event {
                        self.events += 1;
                        if self.events >= limit {
                            return Some(i + 1);
                        }
                    }
                } else if (self.line_len == 2 && &self.head[..2] == b"id")
                    || (self.line_len >= 3 && &self.head[..3] == b"id:")
                {
                    self.block_has_id = true;
                } else if (self.line_len == 4 && &self.head[..4] == b"data")
                    || (self.line_len >= 5 && &self.head == b"data:")
                {
                    self.block_has_data = true;
                }
                self.line_len = 0;
            } else {
                if self.line_len < self.head.len() {
                    self.head[self.line_len] = b;
                }
                self.line_len += 1;
            }
        }
        None
    }

    /// Feeds `chunk` with no limit.
    pub fn count(&mut self, chunk: &[u8]) {
        let _ = self.feed(chunk, u64::MAX);
    }
}

/// How a response body ended, as recorded in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The body ended normally.
    Complete,
    /// The body was dropped before its end: the client went away, or the
    /// connection was dropped (`/_restart`).
    Dropped,
    /// The body ended with an error: the connection was aborted mid-body.
    Error,
}

impl End {
    pub fn as_str(self) -> &'static str {
        match self {
            End::Complete => "complete",
            End::Dropped => "dropped",
            End::Error => "error",
        }
    }
}

struct Track {
    state: AppState,
    req: u64,
    conn: u64,
    path: String,
    stream: bool,
    counter: SseCounter,
    bytes: u64,
}

impl Track {
    fn finish(self, end: End) {
        let now = self.state.clock.ms();
        let events = self.counter.events;
        let bytes = self.bytes;
        let head_ms = self.state.log.update(self.req, |e| {
            e.end_ms = Some(now);
            e.end = Some(end.as_str());
            e.events = events;
            e.bytes = bytes;
            e.head_ms
        });
        if self.stream {
            let after = head_ms
                .flatten()
                .map(|h| now.saturating_sub(h))
                .unwrap_or(0);
            self.state.log.print(&format!(
                "conn={} req={} closed {} events={} bytes={} after={}ms end={}",
                self.conn,
                self.req,
                self.path,
                events,
                bytes,
                after,
                end.as_str()
            ));
        }
    }
}

/// A response body that records its end (time, bytes, SSE events) in the
/// request log, whether it completes, errors or is dropped.
pub struct Tracked {
    inner: Body,
    track: Option<Track>,
    /// The body's exact length when known (hyper stops polling after it).
    exact: Option<u64>,
}

impl Tracked {
    pub fn new(
        inner: Body,
        state: AppState,
        req: u64,
        conn: u64,
        path: String,
        stream: bool,
    ) -> Self {
        let exact = http_body::Body::size_hint(&inner).exact();
        Tracked {
            inner,
            exact,
            track: Some(Track {
                state,
                req,
                conn,
                path,
                stream,
                counter: SseCounter::default(),
                bytes: 0,
            }),
        }
    }
}

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        let r = ready!(Pin::new(&mut this.inner).poll_frame(cx));
        match &r {
            Some(Ok(frame)) => {
                if let (Some(data), Some(t)) = (frame.data_ref(), this.track.as_mut()) {
                    t.bytes += data.len() as u64;
                    if t.stream {
                        t.counter.count(data);
                    }
                }
            }
            Some(Err(_)) => {
                if let Some(t) = this.track.take() {
                    t.finish(End::Error);
                }
            }
            None => {
                if let Some(t) = this.track.take() {
                    t.finish(End::Complete);
                }
            }
        }
        Poll::Ready(r)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        if let Some(t) = self.track.take() {
            let all_sent = self.exact.is_some_and(|n| t.bytes >= n);
            let end = if all_sent || http_body::Body::is_end_stream(&self.inner) {
                End::Complete
            } else {
                End::Dropped
            };
            t.finish(end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_blocks_with_ids_split_anywhere() {
        let text = b"retry: 1000\n\n: hb\nevent: heartbeat\ndata:\n\nid: 1\ndata: a\n\nid: 2\r\ndata: b\r\n\r\nevent: reset\ndata: {}\n\nid: 9\n\nid\ndata\r\rid: 4\ndata: d\n\n";
        for split in 0..text.len() {
            let mut c = SseCounter::default();
            c.count(&text[..split]);
            c.count(&text[split..]);
            assert_eq!(c.events, 4, "split at {split}");
        }
    }

    #[test]
    fn feed_stops_at_the_limit() {
        let text = b"id: 1\ndata: a\n\nid: 2\ndata: b\n\nid: 3\ndata: c\n\n";
        let mut c = SseCounter::default();
        let cut = c.feed(text, 2);
        assert_eq!(cut, Some(30));
        assert_eq!(&text[..30], b"id: 1\ndata: a\n\nid: 2\ndata: b\n\n");
    }
}
