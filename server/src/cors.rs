//! CORS for cross-origin tests: the request's Origin is echoed (with
//! credentials allowed), preflights are answered, and every header the client
//! needs to read is exposed.

use std::time::Duration;

use axum::http::{HeaderName, Method};
use tower_http::cors::{AllowOrigin, CorsLayer};

/// Request headers a cross-origin client may send.
pub const ALLOW_HEADERS: &[&str] = &[
    "last-event-id",
    "if-none-match",
    "if-modified-since",
    "authorization",
    "content-type",
    "cache-control",
    "x-requested-with",
    // `POST /send`'s key headers (draft-ietf-httpapi-idempotency-key-header;
    // not CORS-safelisted, so a cross-origin send is preflighted).
    "idempotency-key",
    "x-idempotency-key",
];

/// Response headers a cross-origin client may read.
pub const EXPOSE_HEADERS: &[&str] = &[
    "etag",
    "last-modified",
    "retry-after",
    "date",
    "x-poll-interval",
    "ratelimit-reset",
    "x-ratelimit-reset",
    "x-request-id",
    "idempotent-replayed",
];

pub const MAX_AGE_S: u64 = 600;

pub fn layer() -> CorsLayer {
    CorsLayer::new()
        .allow_origin(AllowOrigin::mirror_request())
        .allow_credentials(true)
        .allow_methods([
            Method::GET,
            Method::HEAD,
            Method::POST,
            Method::PUT,
            Method::DELETE,
            Method::OPTIONS,
        ])
        .allow_headers(
            ALLOW_HEADERS
                .iter()
                .map(|h| HeaderName::from_static(h))
                .collect::<Vec<_>>(),
        )
        .expose_headers(
            EXPOSE_HEADERS
                .iter()
                .map(|h| HeaderName::from_static(h))
                .collect::<Vec<_>>(),
        )
        .max_age(Duration::from_secs(MAX_AGE_S))
}
