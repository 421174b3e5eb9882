//! [`StreamOp`]: the Durable Streams stream handles (PROTOCOL.md §5.1,
//! §5.3–§5.5): create, `HEAD`, delete and close. No machine of its own: an
//! operation is one send of a [`Sender`] whose attempts carry the request
//! [`StreamOp::sender`] builds, and whose outcome [`StreamOp::code`] names.
//!
//! - Create: `PUT` with `Content-Type` (default `application/json`, the
//!   appender's), `Stream-TTL` or `Stream-Expires-At` (never both: the
//!   app's error before anything is sent), `Stream-Closed: true` when
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

use super::config::SendConfig;
use super::sender::{is_replayed, Sender};
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
    /// `Err(name)` of the option to refuse: `contentType` not printable
    /// ASCII (`fetch` would drop the header or throw), `expiresAt` given with
    /// `ttlSeconds` (§5.1 asks servers to refuse both) or not of the RFC 3339
    /// `date-time` shape (its ranges are the server's 400).
    pub fn check(&self) -> Result<(), &'static str> {
        let ct = self.content_type.as_deref().unwrap_or("-");
        if ct.is_empty() || !ct.bytes().all(|b| (b' '..=b'~').contains(&b)) {
            return Err("contentType");
        }
        match &self.expires_at {
            Some(at) if self.ttl_seconds.is_some() || !is_rfc3339(at) => Err("expiresAt"),
            _ => Ok(()),
        }
    }
}

impl StreamOp {
    /// The operation numbered `n` (`as u8`), else `None`.
    pub fn from_number(n: u32) -> Option<StreamOp> {
        [Self::Create, Self::Head, Self::Delete, Self::Close]
            .get(n as usize)
            .copied()
    }

    /// Its name in an error's message (`head failed: not-found 404 (<url>)`).
    pub fn name(self) -> &'static str {
        ["create", "head", "delete", "close"][self as usize]
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

    /// The send of this operation: `config`'s attempts, timeouts and backoff,
    /// [`StreamOp::request`]'s method and headers, jitter seeded with `seed`.
    pub fn sender(self, mut config: SendConfig, create: &CreateOptions, seed: u64) -> Sender {
        let (method, headers) = self.request(create);
        config.method = method.into();
        Sender::with_headers(config, headers, seed)
    }

    /// The error code of a send of this operation that settled `Err` with
    /// `code` and `status`; `stream_closed` is the last answer's
    /// `Stream-Closed` value: `not-found` (404), `gone` (410),
    /// `stream-closed` (409 with `Stream-Closed: true`), else `code`'s
    /// (`conflict` for another 409).
    pub fn code(code: ErrorCode, status: Option<u16>, stream_closed: Option<&str>) -> &'static str {
        match (code, status) {
            (ErrorCode::HttpStatus, Some(404)) => "not-found",
            (ErrorCode::HttpStatus, Some(410)) => "gone",
            (ErrorCode::Conflict, _) if is_replayed(stream_closed) => "stream-closed",
            _ => code.as_str(),
        }
    }
}

/// Whether `s` has the shape of an RFC 3339 `date-time`
/// (`2026-12-07T18:00:00Z`, `…:00.5+01:00`; `t`, `z` as well): digits where
/// the grammar has them, no ranges checked.
pub fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let shape = b"dddd-dd-ddTdd:dd:dd";
    let (Some(head), Some(mut rest)) = (b.get(..19), b.get(19..)) else {
        return false;
    };
    let fits = |c: u8, p: u8| match p {
        b'd' => c.is_ascii_digit(),
        b'T' => c.eq_ignore_ascii_case(&b'T'),
        _ => c == p,
    };
    if !head.iter().zip(shape).all(|(c, p)| fits(*c, *p)) {
        return false;
    }
    if let [b'.', frac @ ..] = rest {
        let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    match rest {
        [z] => z.eq_ignore_ascii_case(&b'Z'),
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()),
        _ => false,
    }
}
