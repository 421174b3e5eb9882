//! [`StreamOp`]: the Durable Streams stream handles (PROTOCOL.md §5.1,
//! §5.3–§5.5): create, `HEAD`, delete and close. No machine of its own: an
//! operation is one send of a [`Sender`](super::Sender) (its retries,
//! timeouts, deadline) with [`StreamOp::request`]'s method, whose attempts
//! carry the operation's headers IN PLACE OF the send's idempotency header
//! (each operation is idempotent by itself), and whose refusal
//! [`StreamOp::code`] names.
//!
//! - Create: `PUT` with `Content-Type` (default `application/json`, the
//!   appender's), `Stream-TTL` or `Stream-Expires-At` (never both: the
//!   app's error before anything is sent; an expiry's RFC 3339 syntax is
//!   the server's to check), `Stream-Closed: true` when
//!   `closed`; the body, if any, is the stream's first content.
//! - Head: `HEAD`. Delete: `DELETE`. Close: `POST` with
//!   `Stream-Closed: true` and no body.
//! - No idempotency key: each operation is idempotent by itself (a repeated
//!   create with the same configuration answers 200, a repeated close 204),
//!   and the header would cost a CORS preflight a server may refuse.
//! - Retries are a send's (network errors, timeouts, 5xx, 408, 425, 429, a
//!   409 with `Retry-After`). Refusals: 404 `not-found`, 410 `gone`, 409
//!   with `Stream-Closed: true` `stream-closed`, another 409 `conflict`,
//!   else the send's code.

use alloc::string::String;
use alloc::vec::Vec;

use crate::engine::ErrorCode;

/// The default content type of a created stream (the appender's).
pub const DEFAULT_STREAM_CONTENT_TYPE: &str = "application/json";

/// One operation on a stream. `as u8` is its number at the JS boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StreamOp {
    /// `PUT` (§5.1).
    Create = 0,
    /// `HEAD` (§5.5).
    Head = 1,
    /// `DELETE` (§5.4).
    Delete = 2,
    /// `POST` with `Stream-Closed: true` (§5.3).
    Close = 3,
}

/// What a create asks for besides the body.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CreateOptions {
    /// `Content-Type`; `None`: [`DEFAULT_STREAM_CONTENT_TYPE`].
    pub content_type: Option<String>,
    /// `Stream-TTL`, seconds (JS `ttlSeconds`, an integer ≤ 2^53 − 1).
    pub ttl_seconds: Option<u64>,
    /// `Stream-Expires-At`, an RFC 3339 timestamp (JS `expiresAt`).
    pub expires_at: Option<String>,
    /// `Stream-Closed: true`: created closed, the body its whole content.
    pub closed: bool,
}

impl CreateOptions {
    /// `Err(name)` of the option to refuse: `contentType` or `expiresAt`
    /// empty or not printable ASCII (`fetch` would drop the header or throw),
    /// or `expiresAt` given with `ttlSeconds` (§5.1 asks servers to refuse
    /// both). An `expiresAt` that is no RFC 3339 date-time is the server's
    /// 400 (`http-status`).
    pub fn check(&self) -> Result<(), &'static str> {
        let printable = |s: &Option<String>| {
            let Some(s) = s else { return true };
            for &b in s.as_bytes() {
                if !(b' '..=b'~').contains(&b) {
                    return false;
                }
            }
            !s.is_empty()
        };
        if !printable(&self.content_type) {
            return Err("contentType");
        }
        if !printable(&self.expires_at) || self.expires_at.is_some() && self.ttl_seconds.is_some() {
            return Err("expiresAt");
        }
        Ok(())
    }
}

impl StreamOp {
    /// The operation numbered `n` (`as u8`), else `None`.
    pub fn from_number(n: u32) -> Option<StreamOp> {
        [Self::Create, Self::Head, Self::Delete, Self::Close]
            .get(n as usize)
            .copied()
    }

    /// What its error's message starts with (`head failed: ` in
    /// `head failed: not-found 404 (<url>)`).
    pub fn failed(self) -> &'static str {
        [
            "create failed: ",
            "head failed: ",
            "delete failed: ",
            "close failed: ",
        ][self as usize]
    }

    /// The request's method and the header fields it adds (`create`: the
    /// create's; ignored by every other operation).
    pub fn request(self, create: &CreateOptions) -> (&'static str, Vec<(String, String)>) {
        let mut headers = Vec::new();
        let mut add = |name: &str, value: &str| headers.push((name.into(), value.into()));
        let method = match self {
            StreamOp::Create => {
                let ct = create.content_type.as_deref();
                add("Content-Type", ct.unwrap_or(DEFAULT_STREAM_CONTENT_TYPE));
                if let Some(ttl) = create.ttl_seconds {
                    let mut s = String::new();
                    crate::wire::push_decimal(&mut s, ttl);
                    add("Stream-TTL", &s);
                }
                if let Some(at) = &create.expires_at {
                    add("Stream-Expires-At", at);
                }
                if create.closed {
                    add("Stream-Closed", "true");
                }
                "PUT"
            }
            StreamOp::Head => "HEAD",
            StreamOp::Delete => "DELETE",
            StreamOp::Close => {
                add("Stream-Closed", "true");
                "POST"
            }
        };
        (method, headers)
    }

    /// The error code of a send of this operation that settled `Err` with
    /// `code` and `status`: `not-found` (404), `gone` (410), else `code`'s
    /// (the send's `stream-closed` for a 409 with `Stream-Closed: true`,
    /// `conflict` for another 409).
    pub fn code(code: ErrorCode, status: Option<u16>) -> &'static str {
        match (code, status) {
            (ErrorCode::HttpStatus, Some(404)) => "not-found",
            (ErrorCode::HttpStatus, Some(410)) => "gone",
            _ => code.as_str(),
        }
    }
}
