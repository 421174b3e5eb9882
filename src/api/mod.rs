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
pub(crate) mod options;
// Shared with the Rust API (`persist` there too).
pub(crate) mod persist;
#[cfg(feature = "js")]
mod subscription;
pub(crate) mod target;

#[cfg(feature = "js")]
pub use subscription::Subscription;

use wasm_bindgen::prelude::*;

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
        true => crate::js::to_string(&url).map_err(|_| invalid_url())?,
        false => return Err(invalid_url()),
    };
    subscribe(&url, options)
}

/// [`subscribe_js`] for Rust callers.
#[cfg(feature = "js")]
pub fn subscribe(url: &str, options: JsValue) -> Result<Subscription, JsValue> {
    // Not through `prepare`: returning the pair cost the package about 45
    // bytes of wasm (make size, issue 21).
    let url = resolve_url(url)?;
    let parsed = options::Options::from_js(&url, &options)?;
    #[cfg(feature = "send")]
    let ack = options::checked(|| {
        let headers = parsed.headers.clone();
        crate::upstream::ack::from_options(&options, headers, parsed.with_credentials)
    })?;
    // Durable Streams messages carry no id (exactly once comes from the
    // offset): `ack` could never acknowledge one, so it is refused rather
    // than silently doing nothing.
    #[cfg(feature = "send")]
    if ack.is_some() && parsed.config.protocol == tidings_core::engine::Protocol::DurableStreams {
        let got = options::get(&options, "ack");
        return Err(options::invalid(
            "ack",
            "none with protocol \"durable-streams\"",
            &got,
        ));
    }
    #[cfg(not(feature = "send"))]
    let ack = ();
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

/// `url` resolved against the page (`location.href`; in a worker its
/// `location`) by the browser's `URL` parser, as `fetch` and `EventSource`
/// would: the absolute `href` (spaces percent-encoded, whitespace around it
/// removed). Errors (`invalid-url`): it is empty (which would resolve to the
/// page itself), does not parse, its scheme is not `http:`/`https:`, or it
/// has no host.
pub(crate) fn resolve_url(url: &str) -> Result<String, JsValue> {
    if url.trim().is_empty() {
        return Err(invalid_url());
    }
    // No `location` (not a page or a worker): `about:blank` resolves
    // absolute URLs only.
    let base = options::get(&js_sys::global().into(), "location");
    let base = options::get(&base, "href")
        .as_string()
        .unwrap_or_else(|| String::from("about:blank"));
    match web_sys::Url::new_with_base(url, &base) {
        Ok(u) if is_http(&u.protocol()) && !u.host().is_empty() => Ok(u.href()),
        _ => Err(invalid_url()),
    }
}

fn invalid_url() -> JsValue {
    error(
        "invalid-url",
        "url must be relative, or http: or https: with a host",
    )
}

fn is_http(protocol: &str) -> bool {
    protocol == "http:" || protocol == "https:"
}

/// A JS `Error` with a stable `code` property (the contract's error codes).
pub(crate) fn error(code: &str, message: &str) -> JsValue {
    let e = js_sys::Error::new(message);
    crate::js::set(&e, "code", &JsValue::from_str(code));
    e.into()
}
