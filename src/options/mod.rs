//! `subscribe()` options as the app passes them (JS names, camelCase), turned
//! into the engine's [`Config`] and the adapter's own options. Every duration
//! is a number of milliseconds and says so in its name (`…Ms`). The table with
//! defaults is in docs/options.md and in `tidings_core::engine::Config`.
//!
//! The core decides (`tidings_core::options::Reader`): it names each option
//! in the order it reads them, checks what this module hands it ([`get`]:
//! `Reflect.get`, rather than serde-wasm-bindgen, whose error path links
//! `core::fmt`: docs/size.md) and builds the `Config`, or refuses it. This
//! module checks only what the browser must (an `AbortSignal`, a `headers`
//! object, a URL resolved against the page), keeps the values the browser
//! needs (functions, the signal, a request body) and turns a refusal into
//! the `invalid-option` error (message `invalid option: <name>: expected
//! <what>, got <value> (<type>)`, see [`invalid`]) before anything starts.
//! Unknown keys are ignored, so an app written against a newer version keeps
//! working; a known key with a value that is not `undefined`/`null` (the
//! default) must be right, since a typo in a value would quietly change
//! behaviour. A `urls` entry that is not an http(s) URL throws `invalid-url`.

#[cfg(feature = "send")]
mod fields;
mod reflect;

#[cfg(feature = "send")]
pub(crate) use fields::*;
pub(crate) use reflect::*;

use tidings_core::engine::Config;
use tidings_core::keys::{self, PageOptions};
use tidings_core::options::{Built, Given, Reader, Slot};
use tidings_core::persist::Scope;
use wasm_bindgen::JsValue;

/// How message data reaches the app.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
pub enum Parse {
    /// The data string as sent (default).
    #[default]
    Text,
    /// `JSON.parse(data)`; a failure is an `error` event with code `parse`.
    Json,
}

/// What the adapter keeps besides the engine's [`Config`].
pub struct Options {
    /// The engine's configuration.
    pub config: Config,
    /// `parse`: `"text"` (default) or `"json"`.
    pub parse: Parse,
    /// `withCredentials`: send cookies cross-origin. Default `false`.
    pub with_credentials: bool,
    /// `seed`: seeds the jitter PRNG. Default: random (`crypto.getRandomValues`).
    pub seed: Option<u64>,
    /// `signal`: an `AbortSignal` that closes the subscription.
    pub signal: Option<web_sys::AbortSignal>,
    /// `headers`: an object, or a function returning one (or a Promise of one).
    pub headers: Option<JsValue>,
    /// `url`: a function asked for the URL of every attempt (or a Promise
    /// of one); `None`: the subscribe URL (and `urls`).
    pub url: Option<JsValue>,
    /// `debug`: log every decision of the engine with its reason: `true`
    /// on the console (`console.debug`), or to the app's function
    /// `(what, details) => void`. Default off (`None`).
    pub debug: Option<JsValue>,
    /// `persist` (`"session"` / `"local"`) and `persistKey`: keep the cursor
    /// in Web Storage across reloads (`tidings_core::persist`). Default off.
    pub persist: Option<(Scope, Option<String>)>,
    /// `lostAfterMs`: down this long before `status` says so
    /// (`tidings_core::calm`). Default 5000.
    pub lost_after_ms: u64,
    /// `crossTab`: one connection across the tabs of the profile. Default
    /// `false`.
    pub cross_tab: bool,
    /// The connection these options make (`tidings_core::keys::share_key`,
    /// taken before a persisted cursor is restored into `config`, so that
    /// it names what the app asked for); `None`: never shared (credentials
    /// without `crossTab`, or unresolved; a `debug` function; the app's request).
    pub share_key: Option<String>,
    /// `body` and `resume` (a function), kept as given
    /// (`tidings_core::engine::start`).
    #[cfg(feature = "post-streams")]
    pub request: RequestValues,
}

/// The app's values of a stream it starts with its own request: what the
/// engine's `RequestStart` only names.
#[cfg(feature = "post-streams")]
#[derive(Clone, Default)]
pub struct RequestValues {
    /// `method`; `undefined`: `fetch`'s default, `GET`.
    pub method: JsValue,
    /// `body`, as `fetch` takes it; `undefined` or `null`: none.
    pub body: JsValue,
    /// `resume`: a function `(lastEventId) => ({ url, method?, body? })`,
    /// else `"replay"` or absent (never called then).
    pub resume: JsValue,
}

impl Options {
    /// Read and check `v` for `url` (already resolved by [`resolve_url`]);
    /// `undefined`/`null` give the defaults. Runs no side effect, so a throw
    /// leaves nothing behind; once every option is checked, with `crossTab`
    /// it asks a `headers` or `url` function once (`{ attempt: 0, url }`):
    /// the hash of their values is the credentials' part of the share key.
    pub fn from_js(url: &str, v: &JsValue) -> Result<Self, JsValue> {
        let mut o = Kept::default();
        let parsed = checked(|| {
            object("options", v);
            let mut reader = Reader::new(url, BUILT);
            read(&mut reader, &mut o, v);
            reader.finish()
        })?;
        let mut o = Options {
            config: parsed.config,
            parse: [Parse::Text, Parse::Json][usize::from(parsed.json)],
            with_credentials: parsed.with_credentials,
            seed: parsed.seed,
            signal: o.signal,
            headers: o.headers,
            url: o.url,
            debug: o.debug.filter(|_| parsed.debug),
            persist: parsed.persist,
            lost_after_ms: parsed.lost_after_ms,
            cross_tab: parsed.cross_tab,
            share_key: None,
            #[cfg(feature = "post-streams")]
            request: o.request,
        };
        // What neither `fetch` nor the transports can send (the core's rule).
        #[cfg(feature = "post-streams")]
        tidings_core::engine::start::check(&o.config)
            .map_err(|(key, expected)| invalid(key, expected, &get(v, key)))?;
        #[allow(unused_mut)]
        let mut page = PageOptions {
            with_credentials: o.with_credentials,
            debug: o.debug.is_some(),
            lost_after_ms: o.lost_after_ms,
            seed: o.seed,
            cross_tab: o.cross_tab,
            persist: o.persist.as_ref().map_or(0, |(scope, key)| {
                keys::persist_tag(*scope == Scope::Local, key.as_deref())
            }),
            credentials: 0,
        };
        // Credentials share a connection only with the same credentials:
        // the hash of what they resolve to now goes into the share key.
        #[cfg(feature = "cross-tab")]
        if o.cross_tab {
            let none = &JsValue::UNDEFINED;
            let (headers, url_fn) = (o.headers.as_ref(), o.url.as_ref());
            page.credentials =
                credentials_text(headers.unwrap_or(none), url_fn.unwrap_or(none), url)
                    .map_or(0, |t| keys::credentials_tag(&t));
        }
        // A `debug` function is the app's own: its connection is never
        // shared.
        if !(cfg!(feature = "debug") && o.debug.as_ref().is_some_and(JsValue::is_function)) {
            o.share_key = keys::share_key(&o.config, &page);
        }
        Ok(o)
    }
}
#[cfg(feature = "cross-tab")]
#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/boundary.js")]
extern "C" {
    /// What `headers` and `url` (`undefined`: not set) resolve to now, as
    /// one text (JSON of each value; a function asked once with `{ attempt:
    /// 0, url }`); `None` when neither is set, or one throws or gives a
    /// promise: such a connection is not shared (`boundary.js`).
    #[wasm_bindgen(js_name = credentialsText)]
    fn credentials_text(headers: &JsValue, url_fn: &JsValue, url: &str) -> Option<String>;
}

/// The subscription's own event types: a message event (`events`) or the
/// The parts this build has (its cargo features): the core refuses an
/// option whose part is missing.
const BUILT: Built = Built {
    cross_tab: cfg!(feature = "cross-tab"),
    durable_streams: cfg!(feature = "durable-streams"),
    persist: cfg!(feature = "persist"),
    post_streams: cfg!(feature = "post-streams"),
    debug: cfg!(feature = "debug"),
};

/// The app's values the browser needs as given, kept while the core reads.
#[derive(Default)]
struct Kept {
    signal: Option<web_sys::AbortSignal>,
    headers: Option<JsValue>,
    url: Option<JsValue>,
    debug: Option<JsValue>,
    #[cfg(feature = "post-streams")]
    request: RequestValues,
}

/// Every option of `v` as `reader` asks for it, one at a time, until it
/// refuses one (then [`fail`]: nothing more is read) or has them all; what
/// the browser needs is kept in `o`.
fn read(reader: &mut Reader, o: &mut Kept, v: &JsValue) {
    let mut group = JsValue::UNDEFINED;
    while let Some(slot) = reader.ask() {
        let value = get(if slot.in_group() { &group } else { v }, slot.key());
        let given = browser_checked(slot, &value, o);
        if failed() {
            return;
        }
        if let Err(r) = reader.feed(&given) {
            let got = r.got.map_or(value, |t| JsValue::from_str(&t));
            return fail(invalid(r.name, &r.expected.text(), &got));
        }
        match slot {
            Slot::Url => o.url = value.is_function().then_some(value),
            Slot::Debug => o.debug = Some(value),
            #[cfg(feature = "post-streams")]
            Slot::Method => o.request.method = value,
            #[cfg(feature = "post-streams")]
            Slot::Body => o.request.body = value,
            #[cfg(feature = "post-streams")]
            Slot::Resume => o.request.resume = value,
            _ if !slot.in_group() => group = value,
            _ => {}
        }
    }
}

/// What the core is given for `slot`'s `value`, after what only the browser
/// can check: the signal's shape, the headers (the browser's `Headers`), a
/// `urls` entry resolved against the page. A refusal of those is recorded
/// ([`fail`]).
fn browser_checked(slot: Slot, value: &JsValue, o: &mut Kept) -> Given {
    match slot {
        Slot::Signal => o.signal = signal(value),
        Slot::Headers => o.headers = checked_headers(value.clone()),
        Slot::UrlEventSource | Slot::UrlFetchSse | Slot::UrlLongPoll | Slot::UrlPoll => {
            if let Some(u) = value.as_string() {
                return resolve_url(&u)
                    .map_err(fail)
                    .map_or(Given::Absent, Given::Text);
            }
        }
        _ => {}
    }
    given(slot, value)
}

/// `v` as the core takes it.
fn given(slot: Slot, v: &JsValue) -> Given {
    if absent(v) {
        return Given::Absent;
    }
    if let Some(b) = v.as_bool() {
        return Given::Bool(b);
    }
    if let Some(n) = v.as_f64() {
        return Given::Number(n);
    }
    if let Some(s) = v.as_string() {
        return Given::Text(s);
    }
    if v.is_function() {
        return Given::Function;
    }
    if slot.wants_list() && js_sys::Array::is_array(v) {
        // A loop, not a collect: no iterator adapters in the wasm.
        let mut names = Vec::new();
        for x in js_sys::Array::from(v).iter() {
            names.push(x.as_string());
        }
        return Given::List(names);
    }
    match v.is_object() {
        true => Given::Object,
        false => Given::Other,
    }
}
