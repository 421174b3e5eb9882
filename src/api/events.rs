//! The JS event objects listeners receive (plain, structured-cloneable
//! objects with a `type`). Shapes are those of the API contract in README.

use tidings_core::engine::{Action, ErrorCode, Message, State, Stats};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsValue;

use crate::connection::{Connection, Delivery, Notice};
use crate::event::js::{error, num};
use crate::event::{from_action, Error, Event};
use crate::js::{name, set};
use crate::options::Parse;

#[wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// `boundary.js`: the message objects of a batch, built on the JS side.
    #[wasm_bindgen(js_name = messages)]
    fn build(
        text: &str,
        lens: &[u32],
        datas: &JsValue,
        json: bool,
        transport: &JsValue,
    ) -> js_sys::Array;
}

/// The length of `s` in UTF-16 code units (JS string length).
fn utf16_len(s: &str) -> u32 {
    // From the UTF-8 bytes: one unit per char (every byte but a
    // continuation byte), two for a char of four bytes (a surrogate pair).
    // No `Chars` iterator and fold in the wasm.
    let mut n = 0;
    for b in s.bytes() {
        n += u32::from(b & 0xC0 != 0x80) + u32::from(b >= 0xF0);
    }
    n
}

/// Marks a message whose data is a JS value of its own, `datas[i]`
/// (`boundary.js`).
const OWN_DATA: u32 = u32::MAX;
/// Follows the data length of a message whose data is bytes, one char per
/// byte (`boundary.js` makes it a `Uint8Array`).
const BYTES: u32 = u32::MAX - 1;

/// The `{ type, id, lastEventId, event, data, transport }` objects of a run
/// of deliveries of one transport, in order, built in one crossing: the
/// strings go to JS as one text with their lengths (one `TextDecoder` call
/// for the whole run instead of four per message), and `boundary.js`
/// slices them and, with `parse: "json"`, `JSON.parse`s each data there
/// (lengths: four per message, and a [`BYTES`] mark after binary data). A
/// message whose data is not JSON is `undefined` in the array (the caller
/// reports a `parse` error, see [`parse_error`]). Data the browser gave as a
/// JS value (a native `EventSource` event's, the first of its run) is handed
/// back as is; bytes stay
/// bytes whatever `parse` says (one char per byte).
pub fn messages(run: &[Delivery], parse: Parse) -> js_sys::Array {
    let mut text = String::new();
    let mut lens = Vec::with_capacity(run.len() * 4);
    let mut datas = &JsValue::UNDEFINED;
    for (i, d) in run.iter().enumerate() {
        let m = &d.msg;
        for s in [&m.id, &m.last_event_id, &m.event] {
            text.push_str(s);
            lens.push(utf16_len(s));
        }
        match &d.data {
            // The run's first: its report array is `datas` as it is (no
            // array built, nothing cloned). A native message is fed alone,
            // so it is always the first; a later one's copy would do.
            Some(v) if i == 0 => {
                datas = v;
                lens.push(OWN_DATA);
            }
            _ => {
                text.push_str(&m.data);
                lens.push(utf16_len(&m.data));
                if m.binary {
                    lens.push(BYTES);
                }
            }
        }
    }
    let transport = run.first().map_or("", |d| d.transport);
    build(&text, &lens, datas, parse == Parse::Json, &name(transport))
}

/// The `error` event (code `parse`) of a message whose data is not JSON: it
/// says which message was dropped (not its data, which may be large or
/// private).
pub fn parse_error(m: &Message) -> JsValue {
    let e = error("parse", "message data is not JSON", None, None, false);
    let o: &js_sys::Object = wasm_bindgen::JsCast::unchecked_ref(&e);
    set(o, "id", &JsValue::from_str(&m.id));
    set(o, "event", &JsValue::from_str(&m.event));
    set(o, "lastEventId", &JsValue::from_str(&m.last_event_id));
    e
}

/// `stats()`.
pub fn stats(s: &Stats) -> JsValue {
    let o = js_sys::Object::new();
    set(&o, "requests", &num(s.requests));
    set(&o, "bytes", &num(s.bytes));
    set(&o, "reconnects", &num(s.reconnects));
    set(&o, "notModified", &num(s.not_modified));
    set(&o, "duplicatesDropped", &num(s.duplicates_dropped));
    set(&o, "currentDelayMs", &num(s.current_delay_ms));
    set(&o, "currentIntervalMs", &num(s.current_interval_ms));
    o.into()
}

/// The events `notice` means for a subscriber of `conn`, in order, each
/// handed to `f` (an `open` comes before the `statechange` to `open`).
/// `Messages` and `BatchEnd` give none: the APIs deliver messages
/// themselves. `f` may run app code: nothing is borrowed while it runs.
pub(crate) fn render(conn: &Connection, notice: &Notice, f: &mut dyn FnMut(Event)) {
    match notice {
        Notice::Messages(_) | Notice::BatchEnd => {}
        Notice::HeadersFailed { retry_in_ms, .. } => f(Event::Error(Error::Connection {
            code: ErrorCode::Headers,
            status: None,
            retry_in_ms: *retry_in_ms,
            fatal: false,
            id: None,
        })),
        Notice::Status((status, reason)) => f(Event::Status {
            status: *status,
            reason: *reason,
        }),
        Notice::Action(a) => {
            if let Action::State {
                state: State::Open, ..
            } = a
            {
                let transport = conn.transport_name();
                f(Event::Open { transport });
            }
            if let Some(e) = from_action(a) {
                f(e);
            }
        }
    }
}
