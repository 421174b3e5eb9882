//! `crossTab: true`: the browser side of cross-tab coordination (real-world
//! case BC-20: the six-connections-per-host limit of HTTP/1.1, exhausted by
//! many tabs each holding their own stream). Every decision (election,
//! relay, steal, hand-over, the back-forward cache) is made by
//! `tidings_core::crosstab::CrossTab`; this module holds only what touches
//! the browser, as guards that undo themselves on drop:
//!
//! - `leader.rs`: the Web Lock named by the connection's share key
//!   ([`leader::Lock`]): queued, stolen, released or withdrawn;
//! - `channel.rs`: the `BroadcastChannel` of that name ([`channel::Channel`])
//!   and the wire format: [`channel::encode`] / [`channel::decode`] of the
//!   machine's `Wire` (decode validates every field: any same-origin script
//!   can post on the channel).
//!
//! The connection (`src/connection/crosstab.rs`) drives the machine and
//! renders its actions with these guards. The share key
//! (`tidings_core::keys::share_key`, `"tidings:"` and a hash of the parsed
//! options) is the name: every script of the origin sees lock and channel
//! names, so they hold no URL or header value, and neither does anything
//! posted (messages, states, cursors: `channel.rs`).

pub mod channel;
pub mod leader;

/// Whether this browser has Web Locks and `BroadcastChannel`.
pub fn supported() -> (bool, bool) {
    let found = tabs_support().as_f64().unwrap_or(0.0) as u32;
    (found & 1 != 0, found & 2 != 0)
}

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// What `crossTab` can use here: 1 Web Locks (`navigator.locks`, an
    /// object), 2 `BroadcastChannel` (`boundary.js`; a number as a
    /// `JsValue`: an import with nothing to convert would take the whole
    /// snippet module into the bundle).
    #[wasm_bindgen(js_name = tabsSupport)]
    fn tabs_support() -> wasm_bindgen::JsValue;
}
