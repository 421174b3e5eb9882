//! A `fetch` owned by a guard: aborted (via `AbortController`) on drop. Shared
//! by `fetch-sse`, `long-poll` and `poll`, which differ only in how they read
//! the body. Everything it learns is reported as a [`Fact`]; it decides nothing
//! (how to read the body is the answer to its head).

use std::rc::Rc;

use tidings_core::engine::BodyRead;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{AbortController, Headers, RequestInit, Response};

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
    /// Where `fetchBody` reports; dropped after the abort, which stops it.
    _report: Closure<dyn FnMut(web_sys::Event)>,
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
        // The app's headers (an object, or what its function resolved to)
        // are added last (`fetchBody`), so they may override ours.
        init.set_headers(&headers);
        let report = Closure::wrap(reporter(on_fact, headers));
        let app = req.app_headers.map_or(JsValue::UNDEFINED, JsValue::from);
        fetch_body(req.url, &init, &app, report.as_ref());
        Ok(Fetch {
            controller,
            _report: report,
        })
    }
}

/// `fetchBody`'s reports as [`Fact`]s to `on_fact` (the head's answer, how
/// to read the body, written back into its report). The app's headers are
/// added to `headers`; their failure is the app's, not the network's:
/// reported as such.
fn reporter(on_fact: OnFact, headers: Headers) -> Box<dyn FnMut(web_sys::Event)> {
    // The listener closure's type (`guard::Listener`'s): one copy of its glue.
    let mut read = BodyRead::Chunks;
    Box::new(move |fact| {
        let fact: js_sys::Array = fact.unchecked_into();
        let value = fact.get(1);
        let fact_of = match fact.get(0).as_f64().unwrap_or(4.0) as u8 {
            0 => {
                read = on_fact(head(value.unchecked_ref()));
                fact.set(0, JsValue::from_bool(read == BodyRead::Chunks));
                return;
            }
            1 => Fact::Chunk(js_sys::Uint8Array::new(&value).to_vec()),
            2 => Fact::Text(value.as_string().unwrap_or_default(), read),
            3 => Fact::End,
            5 => match add_object(&headers, &value) {
                Ok(()) => return fact.set(0, JsValue::TRUE),
                Err(e) => Fact::HeadersFailed(e),
            },
            6 => Fact::HeadersFailed(value),
            _ => Fact::Failed { aborted: false },
        };
        on_fact(fact_of);
    })
}

/// The head of `response`: its status, content type and the headers of
/// [`WANTED`].
fn head(response: &Response) -> Fact {
    let h = response.headers();
    let mut headers = Vec::new();
    // SSE mode's data encoding too, in builds with the Durable Streams profile.
    #[cfg(feature = "durable-streams")]
    let wanted = WANTED
        .iter()
        .chain(&[tidings_core::engine::SSE_DATA_ENCODING_HEADER]);
    #[cfg(not(feature = "durable-streams"))]
    let wanted = WANTED;
    for name in wanted {
        if let Ok(Some(v)) = h.get(name) {
            headers.push((name.to_string(), v));
        }
    }
    Fact::Head {
        status: response.status(),
        content_type: h.get("content-type").ok().flatten(),
        headers,
    }
}

#[wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// A microtask later: await `app` (the app's headers, `undefined` for
    /// none), fetch `url` with `init` and read the response, reporting each
    /// fact to `report` (see `boundary.js`); nothing once `init`'s signal
    /// aborts.
    #[wasm_bindgen(js_name = fetchBody)]
    fn fetch_body(url: &str, init: &RequestInit, app: &JsValue, report: &JsValue);
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

/// `fetch(url, init)` on the global scope (window or worker), for the
/// upstream calls (the receive path's is `fetchBody`).
#[cfg(feature = "send")]
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
