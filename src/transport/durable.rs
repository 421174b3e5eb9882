//! Durable Streams body decoding the engine cannot do itself (it has no JSON
//! parser): a JSON-mode chunk (PROTOCOL.md §9.1) is an array whose elements
//! are the messages. Which bodies are JSON is the engine's decision
//! (`tidings_core::engine::durable_body_kind`).

/// The elements of a JSON array body, each as its JSON text (`JSON.parse`
/// then `JSON.stringify` per element, so `parse: "json"` gets the value
/// back); `None` when the body is not JSON or not an array.
pub fn json_elements(text: &str) -> Option<Vec<String>> {
    let v = js_sys::JSON::parse(text).ok()?;
    if !js_sys::Array::is_array(&v) {
        return None;
    }
    // A loop, not a collected `Option<Vec>`: no iterator adapters in the wasm.
    let mut out = Vec::new();
    for e in js_sys::Array::from(&v).iter() {
        out.push(js_sys::JSON::stringify(&e).ok()?.as_string()?);
    }
    Some(out)
}
