//! What the parser yields: dispatched events, events skipped for their size,
//! `retry` values and comments.

use alloc::string::String;

use super::limits::SseLimit;

/// One dispatched event (WHATWG HTML §9.2.6, "dispatch the event").
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SseEvent {
    /// The event type: the value of the block's last `event` line, or
    /// `"message"` when there was none or it was empty.
    pub event: String,
    /// The data: the values of the block's `data` lines joined with LF (one
    /// trailing LF removed). May be empty (a bare `data` line) but a block
    /// without any `data` line dispatches no event.
    pub data: String,
    /// The id set by this block itself: `Some` when the block had a valid `id`
    /// line (the last one wins), `Some("")` for a bare `id` or `id:` line, which
    /// clears the cursor; `None` when the block had no `id` line, or only ones
    /// containing U+0000 (ignored by the spec). An event with `None` is still a
    /// new event: by the spec it merely repeats the previous cursor in
    /// [`SseEvent::last_event_id`], so deduplicate only on `Some` ids.
    pub id: Option<String>,
    /// The stream's last event ID after this event (the `lastEventId` of the
    /// browser's `MessageEvent`): [`SseEvent::id`] when `Some`, else the cursor
    /// left by earlier blocks, earlier connections, or
    /// [`SseParser::set_last_event_id`](super::SseParser::set_last_event_id).
    pub last_event_id: String,
}

/// One item of the parsed stream, in stream order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SseItem {
    /// A dispatched event (a block ended by a blank line, with `data`).
    Event(SseEvent),
    /// A valid `retry` line: the new reconnection time, in milliseconds. Only a
    /// non-empty value of ASCII digits counts; a value above `u64::MAX` ms
    /// overflows and is ignored like any other invalid value (as Chromium
    /// does), not saturated. Reported when the line is parsed, not at dispatch.
    RetryMs(u64),
    /// A comment line (starting with `:`), e.g. a heartbeat. Its text is not
    /// kept: it only shows that the connection is alive.
    Comment,
    /// An event that passed one of the [`SseLimits`](super::SseLimits),
    /// reported where it would have been dispatched (its blank line) instead
    /// of the event. Its data was dropped as it arrived, but its `id` line
    /// still moved the cursor, as dispatch does for any block (WHATWG HTML
    /// §9.2.6: the last event ID buffer is committed whether or not an event
    /// fires), so a reconnect resumes after it instead of replaying it.
    Skipped(SseSkipped),
}

/// An event dropped for its size ([`SseItem::Skipped`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SseSkipped {
    /// The limit it passed first.
    pub limit: SseLimit,
    /// That limit's value in bytes.
    pub limit_bytes: usize,
    /// Its event type as [`SseEvent::event`] would have had it, or `None` when
    /// its `event` line was itself past the line limit (type unknown).
    pub event: Option<String>,
    /// Its own id, as [`SseEvent::id`]; also `None` when its last `id` line
    /// was past the line limit (then the cursor did not move: the id is not
    /// known).
    pub id: Option<String>,
    /// The stream's last event ID after it, as [`SseEvent::last_event_id`].
    pub last_event_id: String,
}
