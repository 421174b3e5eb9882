//! `crossTab: true`: the browser side of cross-tab coordination (real-world
//! case BC-20: the six-connections-per-host limit of HTTP/1.1, exhausted by
//! many tabs each holding their own stream). Every decision (election,
//! relay, steal, hand-over, the back-forward cache) is made by
//! `tidings_core::crosstab::CrossTab`; this module holds only what touches
//! the browser, as guards that undo themselves on drop:
//!
//! - `leader.rs`: the Web Lock `"tidings:" + key` ([`leader::Lock`]): queued,
//!   stolen, released or withdrawn;
//! - `channel.rs`: `BroadcastChannel("tidings:" + key)` ([`channel::Channel`])
//!   and the wire format: [`channel::encode`] / [`channel::decode`] of the
//!   machine's `Wire` (decode validates every field: any same-origin script
//!   can post on the channel).
//!
//! The connection (`src/connection/crosstab.rs`) drives the machine and
//! renders its actions with these guards.

pub mod channel;
pub mod leader;

/// Whether this browser has Web Locks and `BroadcastChannel`.
pub fn supported() -> (bool, bool) {
    let has_bc =
        js_sys::Reflect::has(&js_sys::global(), &"BroadcastChannel".into()).unwrap_or(false);
    (leader::manager().is_some(), has_bc)
}

/// The channel's and the lock's name for `url` shared under `key` (the
/// registry's share key, which starts with `url`). Relative URLs resolve
/// differently on different pages: the name uses the absolute one.
pub fn name(url: &str, key: &str) -> String {
    let mut name = String::from("tidings:");
    name.push_str(&absolute(url));
    name.push_str(key.get(url.len()..).unwrap_or(key));
    name
}

/// `url` resolved against the page (as given when that fails).
fn absolute(url: &str) -> String {
    let base = js_sys::Reflect::get(&js_sys::global(), &"location".into())
        .ok()
        .and_then(|l| js_sys::Reflect::get(&l, &"href".into()).ok())
        .and_then(|h| h.as_string());
    base.and_then(|b| web_sys::Url::new_with_base(url, &b).ok())
        .map(|u| u.href())
        .unwrap_or_else(|| url.into())
}
