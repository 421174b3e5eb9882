//! `tidings::appender(url, AppenderOptions)`: the JS API's `appender()` for
//! Rust (behind the `append` feature, as in JS): Durable Streams idempotent
//! appends over the same checks and drive loop (`src/upstream/appender.rs`,
//! the core's `Appender`).

use std::future::Future;
use std::rc::Rc;

use tidings_core::engine::ErrorCode;
use tidings_core::upstream::AppendError;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::headers::JsHeadersFn;
use super::{Error, SendOptions};

/// `appender` options: the send's ([`AppenderOptions::send`]; `max_attempts`
/// defaults to no limit here, `deadline_ms` is per batch) and the
/// appender's own. Unset ones keep the JS defaults (docs/upstream.md);
/// checked when [`appender`] is called.
#[derive(Clone, Default)]
pub struct AppenderOptions {
    send: SendOptions,
    entries: Vec<(&'static str, JsValue)>,
}

impl AppenderOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    fn set(mut self, key: &'static str, value: JsValue) -> Self {
        self.entries.retain(|(k, _)| *k != key);
        self.entries.push((key, value));
        self
    }

    /// The send options every request goes out with (`headers`,
    /// `credentials`, `signal`, `max_attempts`, `timeout_ms`, …).
    #[must_use]
    pub fn send(mut self, send: SendOptions) -> Self {
        self.send = send;
        self
    }

    /// `contentType`: the stream's (default `application/json`).
    #[must_use]
    pub fn content_type(self, ct: &str) -> Self {
        self.set("contentType", ct.into())
    }

    /// `producerId`: 1 to 256 bytes (default a fresh UUID per appender).
    #[must_use]
    pub fn producer_id(self, id: &str) -> Self {
        self.set("producerId", id.into())
    }

    /// `epoch` (default 0).
    #[must_use]
    pub fn epoch(self, epoch: u64) -> Self {
        self.set("epoch", (epoch as f64).into())
    }

    /// `autoClaim`: on a stale epoch, claim the next one and go on
    /// (default `false`).
    #[must_use]
    pub fn auto_claim(self, on: bool) -> Self {
        self.set("autoClaim", on.into())
    }

    /// `maxBatch`: values per request (default 1000).
    #[must_use]
    pub fn max_batch(self, n: u32) -> Self {
        self.set("maxBatch", f64::from(n).into())
    }

    /// `maxBatchBytes`: bytes per request (default 1 MiB).
    #[must_use]
    pub fn max_batch_bytes(self, n: u64) -> Self {
        self.set("maxBatchBytes", (n as f64).into())
    }
}

/// Why an append (or the close) did not succeed. [`AppendFailure::code`] is
/// the JS `error.code`.
#[derive(Clone, Debug)]
pub enum AppendFailure {
    /// `invalid-option` `value`: the JSON text did not parse (nothing sent).
    Invalid(Error),
    /// The appender stopped: the core's reason (`stale-epoch`,
    /// `sequence-gap`, `stream-closed`, `conflict`, `headers`, or the
    /// batch's send code with its status). Every later append fails with
    /// it too.
    Failed(AppendError),
    /// The `signal` was aborted: its `reason`.
    Aborted(JsValue),
}

impl AppendFailure {
    /// The JS `error.code` (`abort` for [`AppendFailure::Aborted`]).
    pub fn code(&self) -> &'static str {
        match self {
            AppendFailure::Invalid(e) => e.code(),
            AppendFailure::Failed(e) => e.code(),
            AppendFailure::Aborted(_) => "abort",
        }
    }

    fn from_js(e: &JsValue) -> AppendFailure {
        let get = |k| crate::options::get(e, k);
        let num = |k| get(k).as_f64().map(|n| n as u64);
        let code = get("code").as_string().unwrap_or_default();
        let failed = match code.as_str() {
            "invalid-option" => return AppendFailure::Invalid(Error::from_js(e)),
            "stale-epoch" => AppendError::StaleEpoch {
                current: num("epoch"),
            },
            "sequence-gap" => AppendError::SequenceGap {
                expected: num("expectedSeq"),
                sent: num("seq").unwrap_or(0),
            },
            "stream-closed" => AppendError::StreamClosed,
            "conflict" => AppendError::Conflict,
            "headers" => AppendError::Headers,
            c => match ErrorCode::from_name(c) {
                Some(code) => AppendError::Send {
                    code,
                    status: num("status").map(|s| s as u16),
                },
                None => return AppendFailure::Aborted(e.clone()),
            },
        };
        AppendFailure::Failed(failed)
    }
}

impl std::fmt::Display for AppendFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AppendFailure::Invalid(e) => e.fmt(f),
            AppendFailure::Failed(AppendError::Send {
                status: Some(s), ..
            }) => write!(f, "{} {s}", self.code()),
            _ => f.write_str(self.code()),
        }
    }
}

impl std::error::Error for AppendFailure {}

/// An appender to one Durable Streams stream ([`appender`]). Values are
/// batched and sent in call order; each future resolves once the server
/// holds its value. It lives while the handle or a future of it does:
/// dropping both ends it (the request in flight aborted, nothing retried).
pub struct Appender {
    inner: Rc<Inner>,
}

struct Inner {
    js: crate::upstream::AppenderJs,
    _headers: Option<JsHeadersFn>,
}

impl Appender {
    /// Append one JSON value given as JSON text (a JSON stream: stored as
    /// ONE message, an array too). Queued now, in call order; the future
    /// says when the server holds it.
    pub fn append_json(&self, json: &str) -> impl Future<Output = Result<(), AppendFailure>> {
        let value = js_sys::JSON::parse(json).map_err(|_| {
            let got = JsValue::from_str(json);
            AppendFailure::Invalid(Error::from_js(&crate::options::invalid(
                "value",
                "JSON text",
                &got,
            )))
        });
        self.queue(value)
    }

    /// Append bytes (a stream that is not JSON, its `content_type` set;
    /// text as its UTF-8). On a JSON stream use [`append_json`](Self::append_json).
    pub fn append_bytes(&self, bytes: &[u8]) -> impl Future<Output = Result<(), AppendFailure>> {
        self.queue(Ok(js_sys::Uint8Array::from(bytes).into()))
    }

    fn queue(
        &self,
        value: Result<JsValue, AppendFailure>,
    ) -> impl Future<Output = Result<(), AppendFailure>> {
        let js = &self.inner.js;
        let promise = value.and_then(|v| js.append(v).map_err(|e| AppendFailure::from_js(&e)));
        settled(Rc::clone(&self.inner), promise)
    }

    /// Close the stream (`Stream-Closed: true`) once every pending value is
    /// in it; resolves when the server confirmed.
    pub fn close(&self) -> impl Future<Output = Result<(), AppendFailure>> {
        let promise = self.inner.js.close(JsValue::UNDEFINED);
        settled(
            Rc::clone(&self.inner),
            promise.map_err(|e| AppendFailure::from_js(&e)),
        )
    }

    /// The `Producer-Id` sent.
    pub fn producer_id(&self) -> String {
        self.inner.js.producer_id()
    }

    /// The current `Producer-Epoch` (it moves on an auto-claim).
    pub fn epoch(&self) -> u64 {
        self.inner.js.epoch() as u64
    }
}

/// Await `p`, keeping the appender alive until it settles.
async fn settled(
    inner: Rc<Inner>,
    p: Result<js_sys::Promise, AppendFailure>,
) -> Result<(), AppendFailure> {
    let r = JsFuture::from(p?).await;
    drop(inner);
    r.map(drop).map_err(|e| AppendFailure::from_js(&e))
}

/// Open an appender to the Durable Streams stream at `url` (it must exist).
/// Refused before anything is sent with [`Error::InvalidUrl`] or
/// [`Error::InvalidOption`].
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// let a = tidings::appender("/v1/stream/chat", tidings::AppenderOptions::new())?;
/// a.append_json(r#"{"text":"hi"}"#).await?;
/// # Ok(()) }
/// ```
pub fn appender(url: &str, options: AppenderOptions) -> Result<Appender, Error> {
    let (o, headers) = options.send.to_js();
    for (k, v) in &options.entries {
        crate::js::set_dyn(o.unchecked_ref(), k, v);
    }
    let js = crate::upstream::appender_js(url.into(), o).map_err(|e| Error::from_js(&e))?;
    Ok(Appender {
        inner: Rc::new(Inner {
            js,
            _headers: headers,
        }),
    })
}
