//! Helpers shared by the wasm-bindgen browser tests (`tests/browser_*.rs`):
//! the reference server's URL, plain HTTP calls to it, polling waits and
//! reading fields of the plain JS objects tidings hands out.
#![allow(dead_code)] // each test binary uses a different subset

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

/// The reference server `make test` started (its URL is passed at compile time).
pub fn server() -> &'static str {
    option_env!("TIDINGS_TEST_SERVER").unwrap_or("http://127.0.0.1:8787")
}

/// `fetch(server + path, { method, body }).then(r => r.text())` through JS, so
/// the tests need no extra web-sys features.
pub async fn http(method: &str, path: &str, body: &str) -> String {
    let f = js_sys::Function::new_with_args(
        "m,u,b",
        "return fetch(u,{method:m,body:m==='GET'?undefined:b}).then(r=>r.text())",
    );
    let url = format!("{}{path}", server());
    let p = f
        .call3(&JsValue::NULL, &method.into(), &url.into(), &body.into())
        .unwrap();
    JsFuture::from(js_sys::Promise::from(p))
        .await
        .unwrap()
        .as_string()
        .unwrap()
}

/// Publish `data`; returns the event id the server gave it.
pub async fn publish(data: &str) -> String {
    let reply = http("POST", "/publish", data).await;
    let v = js_sys::JSON::parse(&reply).unwrap();
    field(&v, "id")
}

/// Poll `done` every 20 ms for up to `timeout_ms`; whether it came true.
pub async fn wait_until(timeout_ms: u32, mut done: impl FnMut() -> bool) -> bool {
    let mut waited = 0;
    while !done() {
        if waited >= timeout_ms {
            return false;
        }
        gloo_timers::future::TimeoutFuture::new(20).await;
        waited += 20;
    }
    true
}

/// `o[k]` as a string (numbers and booleans rendered), `""` when missing.
pub fn field(o: &JsValue, k: &str) -> String {
    let v = js_sys::Reflect::get(o, &k.into()).unwrap_or(JsValue::UNDEFINED);
    v.as_string()
        .or_else(|| v.as_f64().map(|n| n.to_string()))
        .or_else(|| v.as_bool().map(|b| b.to_string()))
        .unwrap_or_default()
}

/// The server's log entries of GET `path` whose query contains `tag`.
pub async fn requests(path: &str, tag: &str) -> Vec<JsValue> {
    let log = http("GET", "/_log", "").await;
    let entries =
        js_sys::Reflect::get(&js_sys::JSON::parse(&log).unwrap(), &"entries".into()).unwrap();
    js_sys::Array::from(&entries)
        .iter()
        .filter(|e| {
            field(e, "method") == "GET"
                && field(e, "path") == path
                && field(e, "query").contains(tag)
        })
        .collect()
}
