//! `tidings::send(url, body, SendOptions)`: the JS API's `send()` for Rust
//! (behind the `send` feature, as in JS). The options render to the JS
//! options object and go through `send()`'s own checks and drive loop
//! (`src/upstream/`), so both APIs accept, retry and refuse alike; only the
//! shapes are Rust's: a builder in, a [`Response`] or a [`SendError`] out.

use std::future::Future;

use tidings_core::engine::ErrorCode;
use wasm_bindgen::{JsCast, JsValue};

use super::headers::{HeadersFn, JsHeadersFn};
use super::{Error, HeadersContext, HeadersResult};

/// `send` options: every setter is the JS option of the same name
/// (docs/upstream.md), unset ones keep the JS default. Checked when
/// [`send`] is called: a value the JS API refuses is
/// [`Error::InvalidOption`] there, and nothing is sent.
///
/// Cancellation is a `web_sys::AbortSignal` ([`SendOptions::signal`]), as
/// `fetch` takes it, and as Leptos's and Yew's own request helpers do: abort
/// its `AbortController` (from an `on_cleanup`, a component's drop) and the
/// send ends with [`SendError::Aborted`], the attempt in flight aborted, no
/// retry after it. Dropping the future alone does not stop the send (it
/// goes on in the page, as a JS `send()` whose promise nobody awaits).
#[derive(Clone, Default)]
pub struct SendOptions {
    entries: Vec<(&'static str, JsValue)>,
    headers: Vec<(String, String)>,
    headers_fn: Option<HeadersFn>,
}

impl SendOptions {
    /// The defaults: `POST`, key header `Idempotency-Key` with a fresh key,
    /// 5 attempts, 30000 ms per attempt, no deadline.
    pub fn new() -> Self {
        Self::default()
    }

    fn set(mut self, key: &'static str, value: JsValue) -> Self {
        self.entries.retain(|(k, _)| *k != key);
        self.entries.push((key, value));
        self
    }

    /// `method` (default `POST`): a method `fetch` sends; not `GET`/`HEAD`
    /// with a body.
    #[must_use]
    pub fn method(self, method: &str) -> Self {
        self.set("method", method.into())
    }

    /// One entry of `headers`, sent with every attempt.
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// `headers` as a function: called before every attempt with its
    /// [`HeadersContext`], its future's pairs are that attempt's headers
    /// (a fresh token per attempt). Replaces any [`header`](Self::header)
    /// entries. An `Err` fails the send with [`SendError::Headers`] (not
    /// retried: the app's own failure).
    #[must_use]
    pub fn headers_fn<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(HeadersContext) -> Fut + 'static,
        Fut: Future<Output = HeadersResult> + 'static,
    {
        self.headers_fn = Some(HeadersFn::new(f));
        self
    }

    /// `idempotencyKey`: non-empty printable ASCII (default: a fresh UUID).
    #[must_use]
    pub fn idempotency_key(self, key: &str) -> Self {
        self.set("idempotencyKey", key.into())
    }

    /// `idempotencyHeader` (default `Idempotency-Key`).
    #[must_use]
    pub fn idempotency_header(self, name: &str) -> Self {
        self.set("idempotencyHeader", name.into())
    }

    /// `maxAttempts` (default 5, at least 1).
    #[must_use]
    pub fn max_attempts(self, n: u32) -> Self {
        self.set("maxAttempts", f64::from(n).into())
    }

    /// `timeoutMs`: per attempt (default 30000).
    #[must_use]
    pub fn timeout_ms(self, ms: u64) -> Self {
        self.set("timeoutMs", (ms as f64).into())
    }

    /// `deadlineMs`: for the whole send, from the call (default none); past
    /// it, [`SendError::Failed`] with `timeout`.
    #[must_use]
    pub fn deadline_ms(self, ms: u64) -> Self {
        self.set("deadlineMs", (ms as f64).into())
    }

    /// `maxRetryAfterMs`: the longest `Retry-After` obeyed (default 300000).
    #[must_use]
    pub fn max_retry_after_ms(self, ms: u64) -> Self {
        self.set("maxRetryAfterMs", (ms as f64).into())
    }

    /// `credentials: true`: cookies cross-origin (default `false`).
    #[must_use]
    pub fn credentials(self, on: bool) -> Self {
        self.set("credentials", on.into())
    }

    /// `ordered`: one send at a time per URL, in call order (default
    /// `false`).
    #[must_use]
    pub fn ordered(self, on: bool) -> Self {
        self.set("ordered", on.into())
    }

    /// `signal`: aborting it ends the send with [`SendError::Aborted`].
    #[must_use]
    pub fn signal(self, signal: &web_sys::AbortSignal) -> Self {
        self.set("signal", signal.into())
    }

    /// The JS options object, and the `headers` function's closure, which
    /// must outlive every call of it (the caller keeps it until the send
    /// settled).
    pub(crate) fn to_js(&self) -> (JsValue, Option<JsHeadersFn>) {
        let o = js_sys::Object::new();
        for (k, v) in &self.entries {
            crate::js::set_dyn(&o, k, v);
        }
        let mut keep = None;
        if let Some(f) = &self.headers_fn {
            let c = f.to_js();
            crate::js::set_dyn(&o, "headers", c.as_ref());
            keep = Some(c);
        } else if !self.headers.is_empty() {
            let h = js_sys::Object::new();
            for (name, value) in &self.headers {
                crate::js::set_dyn(&h, name, &JsValue::from_str(value));
            }
            crate::js::set_dyn(&o, "headers", &h);
        }
        (o.into(), keep)
    }
}

/// A send's answer: the first 2xx or 3xx (or the server's replay of it).
#[derive(Clone, Debug)]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// The answer's headers.
    pub headers: web_sys::Headers,
    /// The answer's body as text (at most the core's 1 MiB cap: a longer
    /// one is [`SendError::Failed`] with `too-large`).
    pub body: String,
    /// Attempts issued, the answered one included.
    pub attempts: u32,
    /// The server said it replayed a stored answer (`Idempotent-Replayed`).
    pub replayed: bool,
}

/// Why a [`send`] did not succeed. [`SendError::code`] is the JS
/// `error.code`.
#[derive(Clone, Debug)]
pub enum SendError {
    /// `invalid-url` / `invalid-option`: refused before anything was sent.
    Invalid(Error),
    /// `http-status`, `auth` (a permanent answer), `gave-up` (after
    /// `max_attempts`), `timeout` (past `deadline_ms`), `too-large` (a
    /// success over the 1 MiB cap).
    Failed {
        /// The code.
        code: ErrorCode,
        /// The status of the answer that caused it, if one did.
        status: Option<u16>,
        /// Attempts issued.
        attempts: u32,
    },
    /// `headers`: the `headers` function failed before attempt `attempts`
    /// went out.
    Headers {
        /// Attempts issued, the one never sent included.
        attempts: u32,
        /// What the function said.
        cause: String,
    },
    /// The `signal` was aborted: its `reason` (an `AbortError`
    /// `DOMException` unless the app gave its own).
    Aborted(JsValue),
}

impl SendError {
    /// The JS `error.code` (`abort` for [`SendError::Aborted`], whose JS
    /// rejection is the signal's reason, without a code).
    pub fn code(&self) -> &'static str {
        match self {
            SendError::Invalid(e) => e.code(),
            SendError::Failed { code, .. } => code.as_str(),
            SendError::Headers { .. } => "headers",
            SendError::Aborted(_) => "abort",
        }
    }

    fn from_js(e: &JsValue) -> SendError {
        let get = |k| crate::options::get(e, k);
        let code = get("code").as_string().unwrap_or_default();
        let attempts = get("attempts").as_f64().unwrap_or(0.0) as u32;
        match code.as_str() {
            "invalid-url" | "invalid-option" => SendError::Invalid(Error::from_js(e)),
            "headers" => SendError::Headers {
                attempts,
                cause: crate::js::to_string(&get("cause")).unwrap_or_default(),
            },
            c => match ErrorCode::from_name(c) {
                Some(code) => SendError::Failed {
                    code,
                    status: get("status").as_f64().map(|s| s as u16),
                    attempts,
                },
                None => SendError::Aborted(e.clone()),
            },
        }
    }
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::Invalid(e) => e.fmt(f),
            SendError::Failed { status, .. } => {
                f.write_str(self.code())?;
                status.map_or(Ok(()), |s| write!(f, " {s}"))
            }
            SendError::Headers { cause, .. } => write!(f, "headers: {cause}"),
            SendError::Aborted(_) => f.write_str("abort"),
        }
    }
}

impl std::error::Error for SendError {}

/// Send `body` (text, sent as is; `None`: no body) to `url` once, as the JS
/// `send()`: every attempt carries the same idempotency key, transient
/// failures are retried after the core's backoff (honouring
/// `Retry-After`), permanent ones fail at once. `url` is relative (to the
/// page) or absolute `http:`/`https:`.
///
/// ```no_run
/// # async fn f() -> Result<(), tidings::SendError> {
/// use tidings::SendOptions;
/// let r = tidings::send("/send", Some(r#"{"text":"hi"}"#), SendOptions::new()
///     .header("Content-Type", "application/json")
///     .headers_fn(|ctx| async move {
///         Ok(vec![("Authorization".into(), format!("Bearer t{}", ctx.attempt))])
///     })).await?;
/// assert!(r.status < 300);
/// # Ok(()) }
/// ```
pub async fn send(
    url: &str,
    body: Option<&str>,
    options: SendOptions,
) -> Result<Response, SendError> {
    let (js_options, _keep) = options.to_js();
    let body = body.map_or(JsValue::UNDEFINED, JsValue::from_str);
    let promise =
        crate::upstream::send(url, body, js_options).map_err(|e| SendError::from_js(&e))?;
    let r = wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .map_err(|e| SendError::from_js(&e))?;
    let get = |k| crate::options::get(&r, k);
    Ok(Response {
        status: get("status").as_f64().unwrap_or(0.0) as u16,
        headers: get("headers").unchecked_into(),
        body: get("body").as_string().unwrap_or_default(),
        attempts: get("attempts").as_f64().unwrap_or(0.0) as u32,
        replayed: get("replayed").as_bool().unwrap_or(false),
    })
}
