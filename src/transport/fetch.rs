//! A `fetch` owned by a guard: aborted (via `AbortController`) on drop. Shared
//! by `fetch-sse`, `long-poll` and `poll`, which differ only in how they read
//! the body. Everything it learns is reported as a [`Fact`]; it decides nothing
//! (how to read the body is the answer to its head).

use std::rc::Rc;

use tidings_core::engine::BodyRead;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{AbortController, Headers, Response};

use tidings_core::policy::headers::HeaderLookup;
use tidings_core::wire::split_once_byte;

/// What a fetch reported.
pub enum Fact {
    /// The response head: status, content type, the header fields.
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
    /// Request headers; values are UTF-8 (`latin1` in `boundary.js` gives
    /// `Headers` their bytes).
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
    /// missing, a header of the engine's that `Headers` refuses.
    pub fn start(req: Request<'_>, on_fact: OnFact) -> Result<Fetch, JsValue> {
        let headers = js_sys::Array::new();
        for (name, value) in req.headers {
            headers.push(&JsValue::from_str(name));
            headers.push(&JsValue::from_str(value));
        }
        #[cfg(not(feature = "post-streams"))]
        let (method, body) = (JsValue::UNDEFINED, JsValue::UNDEFINED);
        #[cfg(feature = "post-streams")]
        let (method, body) = (req.method, req.body);
        let report = Closure::wrap(reporter(on_fact));
        let app = req.app_headers.map_or(JsValue::UNDEFINED, JsValue::from);
        let (url, credentials) = (req.url, req.with_credentials);
        let controller = fetch_body(
            url,
            &method,
            &body,
            credentials,
            &headers,
            &app,
            report.as_ref(),
        )?;
        Ok(Fetch {
            controller,
            _report: report,
        })
    }
}

/// `fetchBody`'s reports as [`Fact`]s to `on_fact` (the head's answer, how
/// to read the body, written back into its report). The app's headers'
/// failure is the app's, not the network's: reported as such.
fn reporter(on_fact: OnFact) -> Box<dyn FnMut(web_sys::Event)> {
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
            // A `Uint8Array` already (`fetchBody`'s chunks): `new
            // Uint8Array(chunk)` would copy it once more before `to_vec`.
            1 => Fact::Chunk(value.unchecked_into::<js_sys::Uint8Array>().to_vec()),
            2 => Fact::Text(value.as_string().unwrap_or_default(), read),
            3 => Fact::End,
            6 => Fact::HeadersFailed(value),
            _ => Fact::Failed { aborted: false },
        };
        on_fact(fact_of);
    })
}

/// The head of `response`: its status, content type and header fields.
fn head(response: &Response) -> Fact {
    let headers = fields(&response.headers());
    Fact::Head {
        status: response.status(),
        content_type: headers.header("content-type").map(String::from),
        headers,
    }
}

/// Every header field of `h` as `(name, value)` pairs, read in JS in one
/// crossing and copied as one string (instead of a `get` and a copy per
/// name the core reads: it looks its own up by name and ignores the rest).
/// Names come lower-case; a value holds no line break (see `headerLines`).
pub(crate) fn fields(h: &Headers) -> Vec<(String, String)> {
    let text = header_lines(h);
    let (mut rest, mut pairs) = (text.as_str(), Vec::new());
    while let Some((name, after)) = split_once_byte(rest, b'\n') {
        let (value, next) = split_once_byte(after, b'\n').unwrap_or((after, ""));
        pairs.push((name.to_string(), value.to_string()));
        rest = next;
    }
    pairs
}

#[wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// A microtask later: await `app` (the app's headers, `undefined` for
    /// none), fetch `url` with `init` and read the response, reporting each
    /// fact to `report` (see `boundary.js`); nothing once `init`'s signal
    /// aborts.
    #[wasm_bindgen(js_name = fetchBody, catch)]
    fn fetch_body(
        url: &str,
        method: &JsValue,
        body: &JsValue,
        credentials: bool,
        headers: &js_sys::Array,
        app: &JsValue,
        report: &JsValue,
    ) -> Result<AbortController, JsValue>;
}

#[wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// `boundary.js`: the `[name, value]` pairs of the app's headers (an
    /// object or a `Headers`; an array is a `TypeError`), its exceptions
    /// caught: a getter of the app's object may throw (an uncaught one would
    /// unwind through the wasm frames of the task queue).
    #[wasm_bindgen(js_name = headerEntries, catch)]
    pub(crate) fn header_entries(o: &JsValue) -> Result<js_sys::Array, JsValue>;

    /// `boundary.js`: the app's headers `o` added to `headers` as
    /// [`add_object`] says (not `strict`: a value that is not an object
    /// adds nothing).
    #[wasm_bindgen(js_name = addHeaders, catch)]
    fn add_headers(headers: &Headers, o: &JsValue, strict: bool) -> Result<JsValue, JsValue>;

    /// `boundary.js`: the header fields of `h` as name and value lines.
    #[wasm_bindgen(js_name = headerLines)]
    fn header_lines(h: &Headers) -> String;
}

/// Set every own enumerable `name: value` of `o` (or every pair of a
/// `Headers`) on `headers`, as `fetch`'s own `Headers` would take them: values converted with JS `String(value)`
/// (a number, boolean or object is fine), a Symbol value, a getter or a
/// `toString` that throws is an error, and so is an invalid name or value
/// (`Headers.set` throws a `TypeError`). `undefined`/`null` add nothing.
/// Never panics: the values come straight from the app.
pub(crate) fn add_object(headers: &Headers, o: &JsValue) -> Result<(), JsValue> {
    add_headers(headers, o, false).map(drop)
}
