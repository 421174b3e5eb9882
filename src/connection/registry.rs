//! Connections shared within a tab: two subscriptions to the same URL with the
//! same options read one connection (ARCHITECTURE.md: Connection / Subscription
//! split). The key is the core's (`tidings_core::keys::share_key`, in
//! [`Options::share_key`]): a hash of the parsed options, the same whatever
//! order the app wrote them in, and never a URL or a header value, since with
//! `crossTab` it also names the Web Lock and the `BroadcastChannel`, which
//! every script of the origin can see. Options with `headers` or a `url`
//! function are shared only with `crossTab`, by the hash of what they
//! resolved to at subscribe (`PageOptions::credentials`).

use std::cell::RefCell;
use std::rc::Rc;

use super::{AdapterOptions, Connection};
use crate::capabilities;
use crate::options::Options;

thread_local! {
    static OPEN: RefCell<Vec<(String, Rc<Connection>)>> = const { RefCell::new(Vec::new()) };
}

/// The connection for `options`: an open one with the same key, or a new
/// one. Returns the key under which it is registered (`""`: not shared).
pub fn connect(options: Options) -> (String, Rc<Connection>) {
    let key = options.share_key.clone().unwrap_or_default();
    if !key.is_empty() {
        // A connection that stopped (fatal error, gave up) is skipped, not
        // forgotten: a new subscription gets a fresh one instead of a dead
        // one, and one that `reconnect()` revives is shared again. Each
        // leaves the list with its last subscription (`leave`).
        let found = OPEN.with(|o| {
            o.borrow()
                .iter()
                .find(|(k, c)| *k == key && !c.is_stopped())
                .map(|(_, c)| c.clone())
        });
        if let Some(conn) = found {
            return (key, conn);
        }
    }
    let seed = options.seed.unwrap_or_else(crate::clock::random_seed);
    let mut config = options.config;
    // Per endpoint: `urls` may put one transport on another origin.
    for t in tidings_core::engine::TransportKind::ALL {
        let cross = capabilities::is_cross_origin(config.url_for(t));
        config.cross_origin = config.cross_origin.with(t, cross);
    }
    // A downgrade remembered in this tab (sessionStorage) survives a reload:
    // the engine skips what already failed until its time has passed.
    config.downgrade = super::live::stored_downgrade(&config);
    let mut native_events = config.events.clone();
    native_events.push(config.heartbeat_event.clone());
    // `reset` (a protocol event) and the other subscription event names: the
    // engine must see them to act on `reset` and to drop the rest with a
    // debug note. `open` and `error` have listeners of their own.
    for name in &tidings_core::engine::RESERVED_EVENTS[2..] {
        native_events.push(String::from(*name));
    }
    let adapter = AdapterOptions {
        with_credentials: options.with_credentials,
        native_events,
        headers: options.headers,
        url: options.url,
        debug: options.debug,
        lost_after_ms: options.lost_after_ms,
        #[cfg(feature = "post-streams")]
        request: options.request,
    };
    // `crossTab: true` (default `false`): one connection across the tabs of
    // the profile (`src/tabs/`), for options that can be shared at all; the
    // key names its lock and channel.
    let share = (options.cross_tab && !key.is_empty()).then(|| key.clone());
    let conn = Connection::start(config, seed, adapter, capabilities::detect(), share);
    if !key.is_empty() {
        OPEN.with(|o| o.borrow_mut().push((key.clone(), conn.clone())));
    }
    (key, conn)
}

/// A subscription leaves `conn` (its `listen` handle): the connection is
/// closed and forgotten when it was the last one (JS and Rust API alike).
/// Inlined: an out-of-line copy for both APIs costs the JS package bytes.
#[inline(always)]
pub fn leave(key: &str, conn: &Rc<Connection>, handle: u32) {
    if conn.unlisten(handle) == 0 {
        forget(key, conn);
        super::close(conn);
    }
}

/// Unregister `conn` (its last subscription closed).
pub fn forget(key: &str, conn: &Rc<Connection>) {
    if key.is_empty() {
        return;
    }
    OPEN.with(|o| {
        o.borrow_mut()
            .retain(|(k, c)| !(k == key && Rc::ptr_eq(c, conn)))
    });
}
