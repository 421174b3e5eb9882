//! A `headers` function in Rust: a closure whose future gives the headers
//! of one attempt, passed to the JS API's code as the JS function it
//! expects (`(ctx) => Promise<object>`), so the same code calls it for both
//! APIs. Used by [`Options::headers_fn`](super::Options::headers_fn) and the
//! upstream calls' `SendOptions::headers_fn`.

use std::future::Future;
use std::rc::Rc;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsValue;

/// What a `headers` function is told before each attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeadersContext {
    /// The absolute URL the attempt goes to.
    pub url: String,
    /// The attempt number: from 1 for `send`, `report` and `appender`; for a
    /// subscription, as the JS API numbers its connection attempts (from 0).
    pub attempt: u32,
}

/// A `headers` function's answer: `(name, value)` pairs, or why it could not
/// give them (the attempt then fails with code `headers`).
pub type HeadersResult = Result<Vec<(String, String)>, String>;

/// The JS function a [`HeadersFn`] is passed as; kept by whoever passed it
/// for as long as it may be called.
pub(crate) type JsHeadersFn = Closure<dyn Fn(JsValue) -> JsValue>;

/// A Rust `headers` function, shareable between option clones.
#[derive(Clone)]
pub(crate) struct HeadersFn(Rc<dyn Fn(HeadersContext) -> js_sys::Promise>);

impl HeadersFn {
    pub(crate) fn new<F, Fut>(f: F) -> Self
    where
        F: Fn(HeadersContext) -> Fut + 'static,
        Fut: Future<Output = HeadersResult> + 'static,
    {
        HeadersFn(Rc::new(move |ctx| {
            let fut = f(ctx);
            wasm_bindgen_futures::future_to_promise(async move {
                let pairs = fut
                    .await
                    .map_err(|e| JsValue::from(js_sys::Error::new(&e)))?;
                let o = js_sys::Object::new();
                for (name, value) in &pairs {
                    crate::js::set_dyn(&o, name, &JsValue::from_str(value));
                }
                Ok(o.into())
            })
        }))
    }

    /// The JS function to pass as the `headers` option.
    pub(crate) fn to_js(&self) -> JsHeadersFn {
        let f = Rc::clone(&self.0);
        JsHeadersFn::new(move |ctx: JsValue| {
            let get = |k| crate::options::get(&ctx, k);
            let url = get("url").as_string().unwrap_or_default();
            let attempt = get("attempt").as_f64().unwrap_or(0.0) as u32;
            f(HeadersContext { url, attempt }).into()
        })
    }
}

impl std::fmt::Debug for HeadersFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HeadersFn")
    }
}

/// The same function (a clone of the options), not an equal one.
impl PartialEq for HeadersFn {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}
