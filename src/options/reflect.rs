//! Reading an app's options object with `Reflect.get` ([`get`]) and the
//! refusals of a reading ([`fail`], [`checked`]): one `invalid-option` (or
//! `invalid-url`) error, the first one, and no getter of the app run after
//! it. Shared by `subscribe()` and the upstream calls.

use std::cell::Cell;

use wasm_bindgen::{JsCast, JsValue};

thread_local! {
    /// What the first getter that threw while reading options threw. One
    /// check after reading instead of an error branch per option keeps the
    /// reader small (it is inlined into `subscribe`; see docs/size.md).
    static THREW: Cell<Option<JsValue>> = const { Cell::new(None) };
    /// The reading's first refusal ([`fail`]).
    static FAILED: Cell<Option<JsValue>> = const { Cell::new(None) };
}

/// Run `read` (reads of app options with [`get`] and the checks of this
/// module, which [`fail`] rather than return an error: no error branch at
/// each option, see docs/size.md). A getter that threw during it comes
/// first as `invalid-option` `(a getter threw)` with the `cause`, then the
/// first refusal; else what `read` made.
pub(crate) fn checked<T>(read: impl FnOnce() -> T) -> Result<T, JsValue> {
    // Emptied first; with one caller (no upstream calls) as two takes, with
    // several as one more call of the out-of-line `refused` (smaller each).
    #[cfg(feature = "send")]
    refused();
    #[cfg(not(feature = "send"))]
    {
        THREW.with(Cell::take);
        FAILED.with(Cell::take);
    }
    let result = read();
    refused().map_or(Ok(result), Err)
}

/// What the reading refused (see [`checked`]), both records emptied. Out of
/// line with the upstream calls: once for their readers and `subscribe()`'s.
#[cfg_attr(feature = "send", inline(never))]
fn refused() -> Option<JsValue> {
    let failed = FAILED.with(Cell::take);
    match THREW.with(Cell::take) {
        Some(cause) => Some(threw(&cause)),
        None => failed,
    }
}

/// Refuse the options being read with `e` (an `invalid-option` or
/// `invalid-url` error) unless a refusal came first: the reading goes on
/// with the defaults, but [`get`] reads nothing more (no getter of the app
/// runs after the first refusal, as if the reading had stopped there).
/// Only inside [`checked`].
#[inline(never)]
pub(crate) fn fail(e: JsValue) {
    FAILED.with(|f| {
        let first = f.take().unwrap_or(e);
        f.set(Some(first));
    });
}

/// `o[key]`; `undefined` when `o` is not an object, the getter throws
/// (what it threw is kept in [`THREW`] for [`checked`] to report), or a
/// reading was refused ([`fail`]).
pub(crate) fn get(o: &JsValue, key: &str) -> JsValue {
    if !o.is_object() || failed() {
        return JsValue::UNDEFINED;
    }
    js_sys::Reflect::get(o, &JsValue::from_str(key)).unwrap_or_else(|cause| {
        THREW.with(|t| {
            let first = t.take().unwrap_or(cause);
            t.set(Some(first));
        });
        JsValue::UNDEFINED
    })
}

/// Whether the reading was refused ([`fail`]).
pub(crate) fn failed() -> bool {
    FAILED.with(|f| {
        let e = f.take();
        let failed = e.is_some();
        f.set(e);
        failed
    })
}

/// `e` with its `cause` set.
pub(crate) fn with_cause(e: JsValue, cause: &JsValue) -> JsValue {
    crate::js::set(e.unchecked_ref(), "cause", cause);
    e
}

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// An `Error` with `code: "invalid-option"` and the message `invalid
    /// option: <name>: expected <expected>, got <got>` (the README's options
    /// table says why). `got` is shown with its `typeof`: a string or an
    /// array as JSON (`"500" (string)`), a function by its type only,
    /// anything else as `String(got)` (`-1 (number)`, `[object Object]
    /// (object)`; an empty one by its type only); cut after 60 characters.
    /// Built in `boundary.js`: smaller there than in wasm.
    #[wasm_bindgen(js_name = invalidOption)]
    pub(crate) fn invalid(name: &str, expected: &str, got: &JsValue) -> JsValue;
}

/// `invalid-option` for an option this build was compiled without (the
/// "tidings/receive" entry, or a Rust app without the cargo `feature`),
/// naming the entry and the feature that have it: `invalid option: <key>:
/// expected none in this build; the "tidings" entry has it (feature

/// `invalid-option` `(a getter threw)`, with what it threw as `got` and
/// `cause`.
fn threw(cause: &JsValue) -> JsValue {
    let e = invalid("(a getter threw)", "getters that return", cause);
    with_cause(e, cause)
}

/// `expected` of a duration (`…Ms`).
/// `expected` of a count that must not be 0.
#[cfg_attr(not(feature = "send"), allow(dead_code))]
pub(crate) const AT_LEAST_ONE: &str = "a number ≥ 1 or Infinity";

pub(crate) fn absent(v: &JsValue) -> bool {
    v.is_undefined() || v.is_null()
}

/// `signal`: absent, or an `AbortSignal`. Checked by shape (`aborted` and
/// `addEventListener`) rather than `instanceof`, so a signal from another
/// realm (an iframe) works as it does with `fetch`.
pub(crate) fn signal(s: &JsValue) -> Option<web_sys::AbortSignal> {
    if absent(s) {
        return None;
    }
    let shaped = s.is_object()
        && get(s, "aborted").as_bool().is_some()
        && get(s, "addEventListener").is_function();
    if !shaped {
        fail(invalid("signal", "an AbortSignal", s));
        return None;
    }
    Some(s.clone().unchecked_into())
}

/// `headers`: absent, a function (called before each request), a `Headers`,
/// or an object whose every entry is a valid header (checked now, with the
/// browser's own `Headers`, so a bad static value throws here instead of
/// failing every request; an array is refused).
pub(crate) fn checked_headers(h: JsValue) -> Option<JsValue> {
    if absent(&h) {
        return None;
    }
    if h.is_function() {
        return Some(h);
    }
    let expected = "valid headers (an object) or a function";
    if !h.is_object() {
        fail(invalid("headers", expected, &h));
        return None;
    }
    let check = web_sys::Headers::new()
        .and_then(|headers| crate::transport::fetch::add_object(&headers, &h));
    if let Err(cause) = check {
        // What the browser's `Headers` said names the bad entry.
        fail(with_cause(invalid("headers", expected, &cause), &cause));
        return None;
    }
    Some(h)
}

/// `v` (the value of `name`) is absent (the defaults) or an object;
/// anything else (a number, a string, `true`) is `invalid-option`, never
/// quietly "no options".
pub(crate) fn object(name: &str, v: &JsValue) {
    if !(absent(v) || v.is_object()) {
        fail(invalid(name, "an object", v));
    }
}

/// `url` resolved against the page (`location.href`; in a worker its
/// `location`) by the browser's `URL` parser, as `fetch` and `EventSource`
/// would: the absolute `href` (spaces percent-encoded, whitespace around it
/// removed). Errors (`invalid-url`): it is empty (which would resolve to the
/// page itself), does not parse, its scheme is not `http:`/`https:`, or it
/// has no host.
pub(crate) fn resolve_url(url: &str) -> Result<String, JsValue> {
    match url.trim().is_empty() {
        true => None,
        false => resolve_url_js(url),
    }
    .ok_or_else(invalid_url)
}

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// `url` resolved against the page by the browser's `URL` parser: its
    /// `href`, or `None` when it does not parse, is not http(s) or has no
    /// host (`boundary.js`).
    #[wasm_bindgen(js_name = resolveUrl)]
    fn resolve_url_js(url: &str) -> Option<String>;
}

pub(crate) fn invalid_url() -> JsValue {
    crate::js::error(
        "invalid-url",
        "url must be relative, or http: or https: with a host",
    )
}
