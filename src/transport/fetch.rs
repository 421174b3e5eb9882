//! A `fetch` owned by a guard: aborted (via `AbortController`) on drop. Shared
//! by `fetch-sse`, `long-poll` and `poll`, which differ only in how they read
//! the body. Everything it learns is reported as a [`Fact`]; it decides nothing
//! (how to read the body is the answer to its head).

use std::rc::Rc;

use tidings_core::engine::BodyRead;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, Headers, ReadableStreamDefaultReader, RequestInit, Response};

/// The response headers the engine reads (the core's list).
use tidings_core::policy::headers::ENGINE_RESPONSE_HEADERS as WANTED;

/// What a fetch reported.
pub enum Fact {
    /// The response head: status, content type, the headers of [`WANTED`].
    Head {
        /// HTTP status.
        status: u16,
        /// `Content-Type`, if any.
        content_type: Option<String>,
        /// (lower-case name, value) pairs.
        headers: Vec<(String, String)>,
    },
    /// A chunk of the body, as it arrived (streaming reads).
    Chunk(Vec<u8>),
    /// The whole body as text, read as the answer to the head said
    /// (never [`BodyRead::Chunks`]).
    Text(String, BodyRead),
    /// The body ended cleanly.
    End,
    /// The app's `headers` failed before anything was sent: its function
    /// threw or its promise rejected (what it threw), or a name or value is
    /// not a valid header (the `TypeError` of `Headers.set`).
    HeadersFailed(JsValue),
    /// The request failed: `aborted` when we aborted it; otherwise a
    /// `TypeError` (network failure, or CORS: the browser does not say which).
    Failed {
        /// We aborted it (close, timeout, a newer attempt).
        aborted: bool,
    },
}

/// Where a fetch reports its facts; its answer to [`Fact::Head`] says how to
/// read the body.
pub type OnFact = Rc<dyn Fn(Fact) -> BodyRead>;

/// An in-flight request; aborting on drop cancels the body read as well.
#[must_use = "a guard: dropping it undoes what it holds at once"]
pub struct Fetch {
    controller: AbortController,
}

impl Drop for Fetch {
    fn drop(&mut self) {
        self.controller.abort();
    }
}

/// What to send.
pub struct Request<'a> {
    /// Absolute or relative URL, query already rendered.
    pub url: &'a str,
    /// Request headers; values are UTF-8 (see [`latin1_bytes`]).
    pub headers: &'a [(String, String)],
    /// `credentials: "include"` instead of `"same-origin"`.
    pub with_credentials: bool,
    /// The app's own headers, resolved before the request goes out (the
    /// `headers` option: an object, or its function's result).
    pub app_headers: Option<js_sys::Promise>,
    /// The method (`tidings_core::engine::start`); `undefined`: `GET`.
    #[cfg(feature = "post-streams")]
    pub method: JsValue,
    /// The body, as `fetch` takes it; `undefined`: none.
    #[cfg(feature = "post-streams")]
    pub body: JsValue,
}

impl Fetch {
    /// Start `req`; facts go to `on_fact` from the browser's task queue (never
    /// synchronously from here). Its answer to [`Fact::Head`] says how to read
    /// the body (its other answers are not used). Errors: `AbortController`
    /// missing.
    pub fn start(req: Request<'_>, on_fact: OnFact) -> Result<Fetch, JsValue> {
        let controller = AbortController::new()?;
        let init = RequestInit::new();
        #[cfg(not(feature = "post-streams"))]
        init.set_method("GET");
        #[cfg(feature = "post-streams")]
        {
            crate::js::set(&init, "method", &req.method);
            init.set_body(&req.body);
        }
        // Polls must see their own 304s: the HTTP cache must never answer for
        // the server or turn a 304 into a 200 (WHATWG Fetch "no-store"). The
        // `Cache-Control` that comes with it is the engine's
        // (`tidings_core::engine::REVALIDATE`).
        init.set_cache(web_sys::RequestCache::NoStore);
        init.set_credentials(if req.with_credentials {
            web_sys::RequestCredentials::Include
        } else {
            web_sys::RequestCredentials::SameOrigin
        });
        let signal = controller.signal();
        init.set_signal(Some(&signal));
        let headers = Headers::new()?;
        for (name, value) in req.headers {
            headers.set(name, &latin1_bytes(value))?;
        }
        let url = req.url.to_string();
        let app_headers = req.app_headers;
        crate::js::spawn(Box::pin(async move {
            // The app's headers (an object, or what its function resolved
            // to) are added last, so they may override ours. Their failure
            // is the app's, not the network's: reported as such.
            if let Some(p) = app_headers {
                let added = match JsFuture::from(p).await {
                    Ok(extra) => add_object(&headers, &extra),
                    Err(e) => Err(e),
                };
                if let Err(e) = added {
                    if !signal.aborted() {
                        on_fact(Fact::HeadersFailed(e));
                    }
                    return;
                }
            }
            let outcome = async {
                if signal.aborted() {
                    return Err(JsValue::UNDEFINED);
                }
                init.set_headers(&headers);
                run(fetch(&url, &init), &on_fact).await
            };
            if outcome.await.is_err() {
                on_fact(Fact::Failed {
                    aborted: signal.aborted(),
                });
            }
        }));
        Ok(Fetch { controller })
    }
}

#[wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// `boundary.js`: the `[name, value]` pairs of the app's headers (an
    /// object or a `Headers`; an array is a `TypeError`), its exceptions
    /// caught: a getter of the app's object may throw (an uncaught one would
    /// unwind through the wasm frames of the task queue).
    #[wasm_bindgen(js_name = headerEntries, catch)]
    pub(crate) fn header_entries(o: &JsValue) -> Result<js_sys::Array, JsValue>;
}

/// Set every own enumerable `name: value` of `o` (or every pair of a
/// `Headers`) on `headers`, as `fetch`'s own `Headers` would take them: values converted with JS `String(value)`
/// (a number, boolean or object is fine), a Symbol value, a getter or a
/// `toString` that throws is an error, and so is an invalid name or value
/// (`Headers.set` throws a `TypeError`). `undefined`/`null` add nothing.
/// Never panics: the values come straight from the app.
pub(crate) fn add_object(headers: &Headers, o: &JsValue) -> Result<(), JsValue> {
    if !o.is_object() {
        return Ok(());
    }
    for pair in header_entries(o)?.iter() {
        let pair: js_sys::Array = pair.unchecked_into();
        let name = pair.get(0).as_string().unwrap_or_default();
        let value = crate::js::to_string(&pair.get(1))?;
        headers.set(&name, &latin1_bytes(&value))?;
    }
    Ok(())
}

/// `fetch(url, init)` on the global scope (window or worker).
pub(crate) fn fetch(url: &str, init: &RequestInit) -> js_sys::Promise {
    // `fetch` on the global scope, so it also works in workers.
    let global = js_sys::global();
    match global.dyn_ref::<web_sys::Window>() {
        Some(w) => w.fetch_with_str_and_init(url, init),
        None => global
            .unchecked_ref::<web_sys::WorkerGlobalScope>()
            .fetch_with_str_and_init(url, init),
    }
}

async fn run(promise: js_sys::Promise, on_fact: &OnFact) -> Result<(), JsValue> {
    let response: Response = JsFuture::from(promise).await?.dyn_into()?;
    let h = response.headers();
    let mut headers = Vec::new();
    for name in WANTED {
        if let Ok(Some(v)) = h.get(name) {
            headers.push((name.to_string(), v));
        }
    }
    let read = on_fact(Fact::Head {
        status: response.status(),
        content_type: h.get("content-type").ok().flatten(),
        headers,
    });
    match read {
        BodyRead::Chunks => read_chunks(&response, on_fact).await?,
        read => read_text(&response, read, on_fact).await?,
    }
    on_fact(Fact::End);
    Ok(())
}

/// The whole body as text.
async fn read_text(response: &Response, read: BodyRead, on_fact: &OnFact) -> Result<(), JsValue> {
    let text = JsFuture::from(response.text()?).await?;
    on_fact(Fact::Text(text.as_string().unwrap_or_default(), read));
    Ok(())
}

/// The body chunk by chunk as it arrives.
async fn read_chunks(response: &Response, on_fact: &OnFact) -> Result<(), JsValue> {
    let Some(body) = response.body() else {
        // No body (204, 304), or no streaming body in this browser
        // (`Response.prototype.body` missing): the whole body at once as
        // one chunk, so a long-poll's events are not lost.
        let buf = JsFuture::from(response.array_buffer()?).await?;
        let bytes = js_sys::Uint8Array::new(&buf).to_vec();
        if !bytes.is_empty() {
            on_fact(Fact::Chunk(bytes));
        }
        return Ok(());
    };
    let reader: ReadableStreamDefaultReader = body.get_reader().dyn_into()?;
    loop {
        let chunk = JsFuture::from(reader.read()).await?;
        if js_sys::Reflect::get(&chunk, &"done".into())?.is_truthy() {
            return Ok(());
        }
        let value = js_sys::Reflect::get(&chunk, &"value".into())?;
        let bytes = js_sys::Uint8Array::new(&value).to_vec();
        on_fact(Fact::Chunk(bytes));
    }
}

/// A header value for the JS `Headers` API, which takes a ByteString (code
/// points ≤ U+00FF) and throws on anything above: each UTF-8 byte of `value`
/// becomes one code point, so the bytes on the wire are the UTF-8 of `value`
/// (an app header of U+2026 goes out as E2 80 A6 from Chromium and Firefox;
/// WebKitGTK encodes the string as UTF-8 again, which is why the core never
/// puts a cursor that is not visible ASCII in a header). No ASCII fast path:
/// the values are a few short strings per request, and `str::is_ascii`
/// would cost bytes in the wasm.
pub fn latin1_bytes(value: &str) -> String {
    value.bytes().map(char::from).collect()
}
