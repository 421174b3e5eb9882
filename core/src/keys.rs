//! The names under which the browser keeps or finds a connection's state:
//! the share key (one connection per key within a tab; with `crossTab`, the
//! Web Lock and `BroadcastChannel` name across tabs) and the remembered
//! downgrade's `sessionStorage` key and record. The persisted cursor's key
//! is the `persist` module's `storage_key`, on the same hash (persist sits
//! above this module).
//!
//! URLs carry secrets (a token in the query) and so do header values, while
//! Web Storage, lock names and channel names are readable by every script of
//! the origin, long after the page. So every name here is a prefix and the
//! 16 hex digits of a 64-bit FNV-1a hash ([`Fnv`]) of the parsed options:
//! never a URL or a header value. A hash is enough: a key only has to tell
//! connections apart, and two different option sets collide with
//! probability about 2^-64, which would only share a connection or a
//! remembered downgrade wrongly. FNV is not a cryptographic hash: a script
//! that guesses the whole URL can check its guess against a key, but no key
//! gives a URL or a token back.

use alloc::string::String;
use core::hash::{Hash, Hasher};

use crate::engine::{Config, TransportKind};
use crate::time::WallMs;

/// The share key's prefix (also the lock's and the channel's name).
pub const SHARE_PREFIX: &str = "tidings:";

/// The remembered downgrade's `sessionStorage` key starts with this.
pub const DOWNGRADE_PREFIX: &str = "tidings:downgrade:";

/// FNV-1a, 64 bits: a `Hasher` whose output is the same on every target
/// (every integer up to 64 bits, signed or not, `usize` and `isize`,
/// lengths and enum discriminants included, is fed as 8 little-endian
/// bytes), so a key computed in one tab is the key of the same options in
/// another. A name, not a secret: no collision resistance against an
/// adversary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fnv(u64);

impl Fnv {
    /// The FNV-1a 64 offset basis.
    pub const fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    /// `prefix` and the hash as 16 lower-case hex digits.
    pub fn key(&self, prefix: &str) -> String {
        let mut key = String::from(prefix);
        for shift in (0..16).rev() {
            key.push(char::from(
                b"0123456789abcdef"[(self.0 >> (shift * 4)) as usize & 0xf],
            ));
        }
        key
    }

    // One copy for every integer width: the derived `Hash` of the options
    // calls it once per field.
    #[inline(never)]
    fn word(&mut self, n: u64) {
        self.write(&n.to_le_bytes());
    }
}

impl Default for Fnv {
    fn default() -> Self {
        Fnv::new()
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline(never)]
    fn write(&mut self, bytes: &[u8]) {
        self.0 = bytes.iter().fold(self.0, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        });
    }

    fn write_u8(&mut self, n: u8) {
        self.word(u64::from(n));
    }

    fn write_u16(&mut self, n: u16) {
        self.word(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.word(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.word(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.word(n as u64);
    }

    fn write_isize(&mut self, n: isize) {
        self.word(n as i64 as u64);
    }
}

/// What besides the engine's [`Config`] makes a connection: the options the
/// browser side reads (JS names).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageOptions {
    /// `withCredentials`.
    pub with_credentials: bool,
    /// `debug`.
    pub debug: bool,
    /// `lostAfterMs`, ms.
    pub lost_after_ms: u64,
    /// `seed`, when the app gave one.
    pub seed: Option<u64>,
    /// `crossTab`.
    pub cross_tab: bool,
    /// `persist` and `persistKey`: where the cursor is kept, as
    /// [`persist_tag`] gives it; `0`: not persisted. A subscription that
    /// restores a stored cursor reads from there, so it must not join a
    /// connection that started from another place (and the reverse).
    pub persist: u64,
    /// What the app's `headers` and `url` resolved to at subscribe, as
    /// [`credentials_tag`] gives it; `0`: nothing resolved. With `headers`
    /// or a `url` function a connection is shared only when this is set:
    /// tabs and subscriptions share when their credentials are the same.
    pub credentials: u64,
}

/// Every field in order, as the derived hash would, but `credentials` only
/// when set: the keys of options without credentials stay what they were.
impl Hash for PageOptions {
    fn hash<H: Hasher>(&self, h: &mut H) {
        (
            self.with_credentials,
            self.debug,
            self.lost_after_ms,
            self.seed,
        )
            .hash(h);
        (self.cross_tab, self.persist).hash(h);
        if self.credentials != 0 {
            self.credentials.hash(h);
        }
    }
}

/// The [`PageOptions::credentials`] of what the app's `headers` and `url`
/// resolved to (`resolved`: their values as one text): a hash, never `0`.
/// Only the hash is kept (in the share key): never the values.
pub fn credentials_tag(resolved: &str) -> u64 {
    let mut h = Fnv::new();
    resolved.hash(&mut h);
    h.finish().max(1)
}

/// The [`PageOptions::persist`] of a subscription that keeps its cursor in
/// `localStorage` (`local`) or `sessionStorage`, under `persist_key` (the
/// app's `persistKey`) or the default key: a hash, never `0`.
pub fn persist_tag(local: bool, persist_key: Option<&str>) -> u64 {
    let mut h = Fnv::new();
    (local, persist_key).hash(&mut h);
    h.finish().max(1)
}

/// The share key of a connection: [`SHARE_PREFIX`] and the hash of every
/// field of `config` the app chose (the URLs, transports, events, cursor,
/// every policy value; after [`Config::sanitized`], so a default given and
/// one left out are the same) and of `page`. Not hashed: what the browser
/// side derives from these (`cross_origin`, `downgrade`), and what each
/// subscription keeps for itself (`parse`, `persist`, `signal`, `ack`): two
/// subscriptions that differ only there read one connection. The options'
/// key order cannot matter: the parsed fields are hashed, not their text.
/// With `headers` (an object or a function) or a `url` function: `None`
/// unless `page` has the hash of the credentials they resolved to
/// ([`PageOptions::credentials`], hashed with the rest of `page`), so only
/// the same credentials share; the same with
/// `method`, `body` or `resume` (`engine::start`). The `end` rule is hashed.
pub fn share_key(config: &Config, page: &PageOptions) -> Option<String> {
    let credentials = config.has_custom_headers || config.url_function;
    if (credentials && page.credentials == 0) || has_request(config) {
        return None;
    }
    // Destructured in full: a new field of `Config` fails to compile here
    // until it is hashed or named as left out.
    let Config {
        url,
        urls,
        transports,
        events,
        last_event_id,
        last_event_id_param,
        has_custom_headers: _,
        url_function: _,
        cross_origin: _,
        backoff,
        max_retry_after_ms,
        breaker,
        interval,
        heartbeat_event,
        watchdog,
        long_poll,
        fallback,
        pause_when_hidden,
        sse_limits,
        dedupe_capacity,
        protocol,
        #[cfg(feature = "durable-streams")]
            live: _,
        downgrade: _,
        #[cfg(feature = "post-streams")]
            start: _,
    } = config;
    let mut h = Fnv::new();
    (
        url,
        urls,
        transports,
        events,
        last_event_id,
        last_event_id_param,
    )
        .hash(&mut h);
    (
        backoff,
        max_retry_after_ms,
        breaker,
        interval,
        heartbeat_event,
    )
        .hash(&mut h);
    (watchdog, long_poll, fallback, pause_when_hidden, sse_limits).hash(&mut h);
    (dedupe_capacity, protocol, page).hash(&mut h);
    hash_when_set(config, &mut h);
    Some(h.key(SHARE_PREFIX))
}

/// The share key's fields hashed only when set, so that every other key
/// stays what it was: SSE mode (`live: "sse"`) and the app's own request.
fn hash_when_set(config: &Config, h: &mut Fnv) {
    // `live`: `"sse"` as 1, a read that ends once caught up (`false`) as 2:
    // each shares only with its like.
    #[cfg(feature = "durable-streams")]
    {
        let live = config.live as u8;
        if live != 0 {
            live.hash(h);
        }
    }
    #[cfg(feature = "post-streams")]
    if config.start.is_some() {
        config.start.hash(h);
    }
    let _ = (config, h);
}

/// The stream starts with the app's own request (`engine::start`): its body
/// is the app's value, so it is never shared.
#[cfg(feature = "post-streams")]
fn has_request(config: &Config) -> bool {
    crate::engine::start::request(config).is_some()
}

#[cfg(not(feature = "post-streams"))]
fn has_request(_: &Config) -> bool {
    false
}

/// The remembered downgrade's `sessionStorage` key: [`DOWNGRADE_PREFIX`] and
/// the hash of the endpoints (`url` and each `urls` entry): what failed is
/// the way to those endpoints, whatever else the options say.
pub fn downgrade_key(config: &Config) -> String {
    let mut h = Fnv::new();
    (&config.url, &config.urls).hash(&mut h);
    h.key(DOWNGRADE_PREFIX)
}

/// The stored record of a remembered downgrade: the transport's name, a
/// space, the wall time (ms since the epoch) until which it holds (a time
/// before the epoch is written as 0: it has passed anyway).
pub fn downgrade_record(transport: TransportKind, until: WallMs) -> String {
    let mut v = String::from(transport.as_str());
    v.push(' ');
    crate::wire::push_decimal(&mut v, until.0.max(0) as u64);
    v
}

/// A record [`downgrade_record`] wrote, else `None` (anything else in
/// storage, e.g. written by another script or another version, is ignored):
/// a transport one can be downgraded to, one space, decimal digits that fit
/// an `i64`.
pub fn parse_downgrade(record: &str) -> Option<(TransportKind, WallMs)> {
    let (name, until) = crate::wire::split_once_byte(record, b' ')?;
    let transport = TransportKind::from_name(name).filter(|t| *t != TransportKind::EventSource)?;
    let until = i64::try_from(crate::wire::parse_decimal(until.as_bytes())?).ok()?;
    Some((transport, WallMs(until)))
}
