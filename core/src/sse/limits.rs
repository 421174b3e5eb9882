//! Size limits of the event-stream parser.
//!
//! The WHATWG algorithm (HTML §9.2.6) buffers a line until its terminator and an
//! event until its blank line, without bound. A server that never sends a line
//! ending, or sends endless `data:` lines, would make the client buffer without
//! limit (case BC-16). With these limits an event that passes one is dropped
//! as its bytes arrive instead (memory stays bounded) and reported as
//! [`SseItem::Skipped`](super::SseItem::Skipped) at its blank line; the stream
//! goes on with the next event.

/// The size limits of one [`SseParser`](super::SseParser). All values are bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SseLimits {
    /// The longest line accepted, in bytes of the raw stream, the field name and
    /// colon included, the line terminator (CR, LF or CRLF) and a stripped BOM
    /// excluded. A line of exactly this length is accepted; a longer one is
    /// dropped up to its terminator: a `data`, `event` or `id` line makes its
    /// event [`SseItem::Skipped`](super::SseItem::Skipped) with
    /// [`SseLimit::Line`]; a comment still counts as one; any other field is
    /// ignored (a `retry` value that long overflows anyway). This also bounds
    /// the event type and last-event-id buffers, which hold the value of one
    /// line.
    /// Default: [`SseLimits::DEFAULT_BYTES`] (1 MiB).
    pub max_line_bytes: usize,
    /// The largest data buffer of one event, in bytes of UTF-8 after decoding
    /// (an invalid byte decodes to U+FFFD, three bytes), counting the LF that
    /// each `data` line appends, before dispatch removes the last one. So
    /// 100 000 empty `data:` lines count 100 000 bytes. A buffer of exactly this
    /// size is accepted; one byte more drops the event's data and makes it
    /// [`SseItem::Skipped`](super::SseItem::Skipped) with
    /// [`SseLimit::EventData`]. Default: [`SseLimits::DEFAULT_BYTES`] (1 MiB).
    pub max_event_data_bytes: usize,
}

impl SseLimits {
    /// The default of each limit: 1 MiB (1 048 576 bytes).
    pub const DEFAULT_BYTES: usize = 1_048_576;

    /// Both limits at [`SseLimits::DEFAULT_BYTES`].
    pub const DEFAULT: SseLimits = SseLimits {
        max_line_bytes: Self::DEFAULT_BYTES,
        max_event_data_bytes: Self::DEFAULT_BYTES,
    };
}

impl Default for SseLimits {
    /// [`SseLimits::DEFAULT`]: 1 MiB per line and per event's data.
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Which of the [`SseLimits`] a stream passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SseLimit {
    /// [`SseLimits::max_line_bytes`]: a line (finished or still pending) grew
    /// past the limit.
    Line,
    /// [`SseLimits::max_event_data_bytes`]: the data buffer of the event being
    /// assembled grew past the limit.
    EventData,
}

/// How many bytes to `reserve_exact` so a buffer of `len` bytes and `capacity`
/// can take `additional` more without its capacity passing `limit_bytes`
/// (unless the new length itself does). Growth still doubles, so appends stay
/// amortized O(1), but the last step is capped at the limit instead of going to
/// twice the length: a buffer never holds more than about `limit_bytes` of
/// memory. 0 when no growth is needed.
pub(crate) fn reserve_within(
    len: usize,
    capacity: usize,
    additional: usize,
    limit_bytes: usize,
) -> usize {
    let needed = len.saturating_add(additional);
    if needed <= capacity {
        return 0;
    }
    let target = capacity
        .saturating_mul(2)
        .max(64)
        .min(limit_bytes)
        .max(needed);
    target - len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_one_mebibyte_each() {
        assert_eq!(
            SseLimits::default(),
            SseLimits {
                max_line_bytes: 1_048_576,
                max_event_data_bytes: 1_048_576
            }
        );
    }

    #[test]
    fn reserve_doubles_but_stops_at_the_limit() {
        assert_eq!(reserve_within(0, 0, 5, 1000), 64);
        assert_eq!(reserve_within(10, 64, 5, 1000), 0);
        assert_eq!(reserve_within(64, 64, 1, 1000), 64);
        assert_eq!(reserve_within(600, 600, 1, 1000), 400);
        assert_eq!(reserve_within(0, 0, 5, 3), 5);
        assert_eq!(reserve_within(990, 990, 10, 1000), 10);
    }
}
