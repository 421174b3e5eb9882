//! Where a resume carries the cursor.
//!
//! Textbook SSE servers (the WHATWG model, and the usual Python and Node
//! examples: `request.headers.get("last-event-id")`) read the cursor from the
//! `Last-Event-ID` request header and, without one, go on from "now". A
//! native `EventSource` sends that header only on its own reconnects; the one
//! the engine re-creates for every attempt can carry the cursor only in the
//! `lastEventIdParam` query parameter, and such a server would silently skip
//! every event published while the client reconnected. So before every
//! attempt that resumes (a non-empty cursor that may travel as a header,
//! visible ASCII ([`by_header`]), outside the Durable Streams profile, whose
//! offset always travels in the query):
//! - the current transport sends the header (a same-origin fetch transport):
//!   it stays, and the transports that cannot are dropped from the allowed
//!   list, so a failback probe after a remembered downgrade goes where the
//!   resume can go (`fetch-sse`, not `eventsource` and back);
//! - it cannot (`eventsource`; a cross-origin fetch transport, where the
//!   header would force a CORS preflight) and an allowed transport can: the
//!   connection moves there for good, reason `resume-by-header`
//!   (`fetch-sse` same-origin on the default list: no preflight, and the
//!   faster transport besides). From then on requests carry the cursor in
//!   BOTH the header and the query, so a server that reads only the query
//!   (where the app's first choice sent it) resumes exactly as before;
//! - no allowed transport can: the cursor stays in the query. That is
//!   known at start and said once in the debug log
//!   ([`Note::CursorInQueryOnly`]); what the engine can see of an ignored
//!   resume is reported (`engine::replay`, `engine::gap`).

use super::action::{Note, Reason};
use super::request::{by_header, cursor_in_query};
use super::Engine;

impl Engine {
    /// Whether `transport` carries the cursor in the query only.
    fn query_only(&self, transport: super::config::TransportKind) -> bool {
        cursor_in_query(transport, self.config.cross_origin.contains(transport))
    }

    /// Before an attempt starts: move a resume to a transport that sends
    /// `Last-Event-ID` where one is allowed (see the module rules).
    pub(crate) fn carry_cursor_by_header(&mut self) {
        let cursor = self.cursor();
        if cursor.is_empty() || !by_header(cursor) || !self.profile().cursor_by_header() {
            return;
        }
        let cross = self.config.cross_origin;
        let change = self
            .selector
            .resume_by_header(cross, Reason::ResumeByHeader);
        if let Some(change) = change {
            self.query_too = true;
            self.push_transport_change(change);
        }
    }

    /// At start: note when no allowed transport can send `Last-Event-ID`.
    pub(crate) fn note_query_only_cursor(&mut self) {
        if !self.profile().cursor_by_header() {
            return;
        }
        if self.selector.all_allowed(|t| self.query_only(t)) {
            self.note(Note::CursorInQueryOnly);
        }
    }
}
