//! A Rust web app on the tidings Rust API: subscribes to `/sse` on the page's
//! origin (the reference server serves this page), decodes each message as
//! JSON when it is `{"name", "value"}` and shows it in `#messages`, newest
//! first; `#state` and `#transport` follow the subscription's events. The
//! `#send` button sends `{"text": <#text>}` to `/send` (or the button's
//! `data-url`) with `tidings::send` (its idempotency key `rust-<#text>`) and
//! shows the answer in `#sent`.
//!
//! Built by `scripts/build-example.sh` (stable, release profile,
//! wasm-bindgen `--target web`); opened by tests/e2e/rust-example.test.mjs.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::prelude::*;

#[wasm_bindgen(start)]
pub fn start() {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    show(&doc, "app", "rust");
    live::start(doc);
}

/// `#id`'s text := `text`.
fn show(doc: &web_sys::Document, id: &str, text: &str) {
    if let Some(el) = doc.get_element_by_id(id) {
        el.set_text_content(Some(text));
    }
}

#[cfg(feature = "live")]
mod live {
    use tidings::{Event, Options, SendOptions};
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;

    use super::show;

    /// What the demo publishes as JSON.
    #[derive(serde::Deserialize)]
    struct Update {
        name: String,
        value: f64,
    }

    pub fn start(doc: web_sys::Document) {
        on_send(&doc);
        let mut sub = match tidings::subscribe("/sse", Options::new().events(["price"])) {
            Ok(sub) => sub,
            Err(e) => return show(&doc, "state", &e.to_string()),
        };
        let mut events = sub.events();
        let d = doc.clone();
        wasm_bindgen_futures::spawn_local(async move {
            while let Some(e) = events.next().await {
                match e {
                    Event::State { state, .. } => show(&d, "state", state.as_str()),
                    Event::Transport { transport, .. } => show(&d, "transport", transport.as_str()),
                    Event::Error(e) => show(&d, "error", &e.to_string()),
                    _ => {}
                }
            }
        });
        wasm_bindgen_futures::spawn_local(async move {
            while let Some(msg) = sub.next().await {
                let text = match decode(&msg) {
                    Ok(u) => format!("{} = {}", u.name, u.value),
                    Err(_) => msg.data.clone(),
                };
                prepend(&doc, &format!("#{} {}", msg.id, msg.event), &text);
            }
            show(&doc, "state", "closed");
        });
    }

    /// `#send` click: send `#text` as JSON, show `<status> attempts=<n>
    /// replayed=<bool>` (or the error) in `#sent`.
    fn on_send(doc: &web_sys::Document) {
        let Some(button) = doc.get_element_by_id("send") else {
            return;
        };
        let d = doc.clone();
        let b = button.clone();
        let click = Closure::<dyn Fn()>::new(move || {
            let url = b
                .get_attribute("data-url")
                .unwrap_or_else(|| "/send".into());
            let text = d
                .get_element_by_id("text")
                .and_then(|e| e.dyn_into::<web_sys::HtmlInputElement>().ok())
                .map(|i| i.value())
                .unwrap_or_default();
            let d = d.clone();
            wasm_bindgen_futures::spawn_local(async move {
                // JSON: `#text` escaped for a JSON string (quote and
                // backslash; an input's value has no line breaks).
                let escaped = text.replace('\\', "\\\\").replace('"', "\\\"");
                let body = format!(r#"{{"text":"{escaped}"}}"#);
                let options = SendOptions::new()
                    .header("Content-Type", "application/json")
                    .idempotency_key(&format!("rust-{text}"));
                let shown = match tidings::send(&url, Some(&body), options).await {
                    Ok(r) => format!(
                        "{} attempts={} replayed={}",
                        r.status, r.attempts, r.replayed
                    ),
                    Err(e) => e.to_string(),
                };
                show(&d, "sent", &shown);
            });
        });
        let _ = button.add_event_listener_with_callback("click", click.as_ref().unchecked_ref());
        // The button lives as long as the page.
        click.forget();
    }

    #[cfg(not(feature = "decode-serde-json"))]
    fn decode(msg: &tidings::Message) -> Result<Update, tidings::Error> {
        msg.json()
    }

    /// serde_json in wasm, for the measurement only.
    #[cfg(feature = "decode-serde-json")]
    fn decode(msg: &tidings::Message) -> Result<Update, serde_json::Error> {
        serde_json::from_str(&msg.data)
    }

    /// A new `<li><span class=id>head</span>text</li>` first in `#messages`.
    fn prepend(doc: &web_sys::Document, head: &str, text: &str) {
        let (Some(list), Ok(li), Ok(id)) = (
            doc.get_element_by_id("messages"),
            doc.create_element("li"),
            doc.create_element("span"),
        ) else {
            return;
        };
        id.set_class_name("id");
        id.set_text_content(Some(head));
        let _ = li.append_child(&id);
        let _ = li.append_with_str_1(&format!(" {text}"));
        let _ = list.prepend_with_node_1(&li);
    }
}

#[cfg(not(feature = "live"))]
mod live {
    /// Without tidings: the page as it is, nothing live.
    pub fn start(doc: web_sys::Document) {
        super::show(&doc, "state", "not live (built without tidings)");
    }
}
