//! The transports. Each reports facts; none decides anything (the engine does).

pub mod eventsource;

/// Append `name=value` (percent-encoded) to `url`'s query, before any fragment.
/// The cursor travels in the query where a header is impossible (native
/// EventSource) or would force a CORS preflight.
pub fn with_query(url: &str, name: &str, value: &str) -> String {
    let (base, fragment) = match url.find('#') {
        Some(i) => (&url[..i], &url[i..]),
        None => (url, ""),
    };
    let sep = if base.contains('?') { '&' } else { '?' };
    let mut out = String::with_capacity(base.len() + name.len() + value.len() + 2 + fragment.len());
    out.push_str(base);
    out.push(sep);
    out.push_str(&String::from(js_sys::encode_uri_component(name)));
    out.push('=');
    out.push_str(&String::from(js_sys::encode_uri_component(value)));
    out.push_str(fragment);
    out
}
