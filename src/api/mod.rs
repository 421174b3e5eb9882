//! The JS API: `subscribe(url, options)` → [`Subscription`].
//!
//! ```js
//! import init, { subscribe } from "tidings";
//! await init();
//! const sub = subscribe("/sse", { parse: "json" });
//! sub.addEventListener("message", (e) => console.log(e.id, e.event, e.data));
//! sub.close();
//! ```

//! Without the `js` feature (a Rust app with the `rust` feature) the module
//! is compiled for its option checks and helpers only: the Rust API
//! (`src/rust_api/`) reads its options through [`prepare`], so both APIs
//! share one copy of every check.
#![cfg_attr(not(feature = "js"), allow(dead_code))]

pub(crate) mod events;
// Shared with the Rust API (`persist` there too).
#[cfg(feature = "persist")]
pub(crate) mod persist;
// Without the `persist` feature: the same calls on a type with no value.
#[cfg(not(feature = "persist"))]
#[path = "persist_off.rs"]
pub(crate) mod persist;
#[cfg(feature = "js")]
mod subscription;

#[cfg(feature = "js")]
pub use subscription::Subscription;

use wasm_bindgen::prelude::*;

use crate::options::{self, resolve_url};

/// Subscribe to `url`: relative (resolved against the page) or absolute
/// `http:`/`https:` with a host.
///
/// Every option is read and checked before anything starts, so a throw
/// leaves nothing running. Throws an `Error` with `code: "invalid-url"` for a
/// URL (or a `urls` entry) the browser's `URL` parser rejects, that is not
/// http(s) or has no host, and `code: "invalid-option"` for an option that
/// cannot be honoured (see `options`): a wrong type, an unknown mode, a
/// negative duration. `undefined`/`null` give the default; unknown keys are
/// ignored.
///
/// From JS, `url` is a string or an object such as a `URL` (taken as
/// `String(url)`); anything else, `undefined` included, is `invalid-url`.
#[cfg(feature = "js")]
#[wasm_bindgen(js_name = subscribe)]
pub fn subscribe_js(url: JsValue, options: JsValue) -> Result<Subscription, JsValue> {
    let url = match url.is_string() || url.is_object() {
        true => crate::js::to_string(&url).map_err(|_| options::invalid_url())?,
        false => return Err(options::invalid_url()),
    };
    subscribe(&url, options)
}

/// [`subscribe_js`] for Rust callers.
#[cfg(feature = "js")]
pub fn subscribe(url: &str, options: JsValue) -> Result<Subscription, JsValue> {
    // Not through `prepare`: returning the pair cost the package about 45
    // bytes of wasm (make size).
    let url = resolve_url(url)?;
    let parsed = options::Options::from_js(&url, &options)?;
    #[cfg(feature = "send")]
    let ack = options::checked(|| crate::upstream::ack::read(&options))?.map(|a| {
        let headers = parsed.headers.clone();
        crate::upstream::ack::start(a, headers, parsed.with_credentials)
    });
    // Durable Streams messages carry no id (exactly once comes from the
    // offset): `ack` could never acknowledge one, so it is refused rather
    // than silently doing nothing.
    #[cfg(all(feature = "send", feature = "durable-streams"))]
    if ack.is_some() && parsed.config.protocol == tidings_core::engine::Protocol::DurableStreams {
        let got = options::get(&options, "ack");
        return Err(options::invalid(
            "ack",
            "none with protocol \"durable-streams\"",
            &got,
        ));
    }
    // A build without the upstream calls (the "tidings/receive" entry)
    // cannot post ACKs: refused rather than silently never acknowledging.
    #[cfg(not(feature = "send"))]
    {
        let got = options::get(&options, "ack");
        if !got.is_falsy() {
            let expected = "none in this build: ACKs need the \"tidings\" entry";
            return Err(options::invalid("ack", expected, &got));
        }
    }
    #[cfg(not(feature = "send"))]
    return Ok(Subscription::start(&url, parsed, ()));
    #[cfg(feature = "send")]
    Ok(Subscription::start(&url, parsed, ack))
}

/// `url` resolved (see [`resolve_url`]) and `options` read and checked
/// (see [`options`]) for the Rust API: the same two steps as `subscribe`,
/// so both APIs check what the app asked for in one place. No side effect.
#[cfg(feature = "rust")]
pub(crate) fn prepare(url: &str, options: &JsValue) -> Result<(String, options::Options), JsValue> {
    let url = resolve_url(url)?;
    let parsed = options::Options::from_js(&url, options)?;
    Ok((url, parsed))
}
