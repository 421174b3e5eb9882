// The JS half of the wasm↔JS boundary on the hot path: what is
// cheaper built or taken apart on the JS side than one crossing at a time;
// and two messages for the app that are smaller written in JS than in wasm.
// No decision is made here; the engine makes them all.

// The message objects of a batch of deliveries, built from one wasm→JS
// crossing: `text` holds every message's id, lastEventId, event and data
// back to back, `lens` their lengths in UTF-16 code units, four per message
// and a 0xFFFFFFFE mark after data that is bytes (one char per byte: handed
// out as a Uint8Array). A data length of 0xFFFFFFFF means "the data is
// datas[i]" (the browser's own EventSource string, in `openSource`'s report
// array): it never crossed into wasm and back. With `json`, string data is JSON.parse'd; a message whose
// data is not JSON is `undefined` in the result (wasm turns it into a
// `parse` error). The object's shape is the API contract's (README).
export function messages(text, lens, datas, json, transport) {
  const out = [];
  for (let i = 0, at = 0, k = 0; k < lens.length; i++) {
    const id = text.slice(at, (at += lens[k++]));
    const lastEventId = text.slice(at, (at += lens[k++]));
    const event = text.slice(at, (at += lens[k++]));
    const len = lens[k++];
    let data = len == 0xffffffff ? datas[i] : text.slice(at, (at += len));
    if (lens[k] == 0xfffffffe) k++, (data = Uint8Array.from(data, (c) => c.charCodeAt(0)));
    else if (json) {
      try {
        data = JSON.parse(data);
      } catch {
        continue; // out[i] stays undefined
      }
    }
    out[i] = { type: event, id, lastEventId, event, data, transport };
  }
  return out;
}

// The `invalid-option` Error: `invalid option: <name>: expected <expected>,
// got <value> (<type>)`; the value a string or an array as JSON, a function
// by its type only, anything else as String(value) (an empty or throwing one
// by its type only), cut after 60 characters.
export function invalidOption(name, expected, got) {
  const t = typeof got;
  let s = "";
  try {
    s = t == "string" || Array.isArray(got) ? JSON.stringify(got) : t == "function" ? "" : String(got);
  } catch {}
  if (s.length > 60) s = s.slice(0, 60) + "…";
  return Object.assign(Error(`invalid option: ${name}: expected ${expected}, got ${s ? `${s} (${t})` : t}`), { code: "invalid-option" });
}

// `url` resolved against the page (`location.href`; in a worker its
// `location`; else `about:blank`, which resolves absolute URLs only) by the
// browser's URL parser, as fetch and EventSource would (src/options.rs
// `resolve_url`): the absolute href (spaces percent-encoded, whitespace
// around it removed), or undefined when it does not parse, its scheme is
// not http: or https:, or it has no host.
export function resolveUrl(url) {
  let base;
  try {
    base = globalThis.location.href;
  } catch {}
  try {
    const u = new URL(url, typeof base == "string" ? base : "about:blank");
    if (/^https?:$/.test(u.protocol) && u.host) return u.href;
  } catch {}
}

// What this browser can do (src/capabilities.rs), as bits: 1 EventSource,
// 2 streaming fetch bodies (fetch, ReadableStream, and a Response.prototype
// with body), 4 AbortController; each global a function, one that cannot be
// read counting as missing.
export function capabilities() {
  const g = globalThis, has = (n) => { try { return typeof g[n] == "function"; } catch {} };
  let body;
  try { body = has("Response") && "body" in g.Response.prototype; } catch {}
  return has("EventSource") | ((has("fetch") && has("ReadableStream") && body) << 1) | (has("AbortController") << 2);
}

// `globalThis[name][method](key)`, or `(key, value)` with a value
// (src/connection/live.rs: `sessionStorage` or `localStorage`, `getItem`,
// `setItem` or `removeItem`): what it returned, or false when the storage is
// missing or anything throws (disabled, sandboxed, quota exceeded). None of
// the three returns a boolean.
export function storage(name, method, key, value) {
  try {
    const s = globalThis[name];
    if (typeof s == "object" && s) return value === undefined ? s[method](key) : s[method](key, value);
  } catch {}
  return false;
}

// Whether `url` resolves against the page (`location.href`) to another
// origin than the page's (src/capabilities.rs): true outside a window (a
// worker), for a URL that does not parse, and when the location cannot be
// read.
export function crossOrigin(url) {
  try {
    const g = globalThis, l = g.location;
    return !(g instanceof Window) || new URL(url, l.href).origin != l.origin;
  } catch {
    return true;
  }
}

// A listener for `type`, which the subscription never dispatches: the
// console.warn saying how to fix it, and the debug line's details.
export function neverDispatched(type) {
  const message = `"${type}" is not in the events option: its listeners will never run (events: ["${type}"])`;
  console.warn("[tidings]", message);
  return { event: type, message };
}

// The [name, value] pairs of the app's headers as `fetch` takes them: a
// Headers' own (it has no own properties, so it would send nothing and hash
// as "{}"), an object's entries; an array is refused (read as an object it
// would send `0: name,value`).
export function headerEntries(h) {
  if (Array.isArray(h)) throw TypeError("headers must give an object of header values");
  return h instanceof Headers ? [...h] : Object.entries(h);
}

// The header fields of `h` as one text of name and value lines: one
// crossing and one string for wasm instead of a get and a copy per name. A
// value holds no line break (fetch takes no response whose header value has
// one).
export function headerLines(h) {
  return [...h].flat().join("\n");
}

// What the app's `headers` and `url` (undefined: not set) give now, as one
// text (the JSON of each, a line each; a Headers as its pairs): the
// credentials' part of a crossTab share key. A function is asked once with
// { attempt: 0, url }. undefined when neither is set, or one throws or gives
// a promise (such a connection is not shared).
export function credentialsText(headers, urlFn, url) {
  const ctx = { attempt: 0, url };
  let text = "";
  try {
    for (const [given, isHeaders] of [[headers, 1], [urlFn]]) {
      if (given === undefined) continue;
      let v = typeof given == "function" ? given.call(null, ctx) : given;
      if (typeof v == "object" && v) {
        let then;
        try { then = v.then; } catch {}
        if (typeof then == "function") return;
        if (isHeaders) v = headerEntries(v);
      }
      const s = JSON.stringify(v);
      if (typeof s != "string") return;
      text += s + "\n";
    }
  } catch { return; }
  return text || undefined;
}

// A header value as `fetch` gets it from wasm: the UTF-8 bytes of the
// string (a lone surrogate as U+FFFD), one char per byte. `Headers` takes a
// ByteString (code points ≤ U+00FF) and throws on anything above, so the
// bytes on the wire are the string's UTF-8 (an app header of U+2026 goes out
// as E2 80 A6 from Chromium and Firefox; WebKitGTK encodes the string as
// UTF-8 again, which is why the core never puts a cursor that is not
// visible ASCII in a header).
export const latin1 = (s) => Array.from(new TextEncoder().encode(s), (b) => String.fromCharCode(b)).join("");

// The app's headers `v` added to the Headers `h` (returned) as `fetch`
// takes them: `undefined`/`null` add nothing; a `Headers`' pairs or an
// object's entries, each value converted with `String()` (a Symbol is a
// TypeError); an invalid name or value throws as `Headers.set` does. Any
// other value adds nothing, or with `strict` (what an upstream `headers`
// function gave) is a TypeError, as an array always is.
export function addHeaders(h, v, strict) {
  if (v == null || !(strict || typeof v == "object")) return h;
  if (typeof v != "object") throw TypeError("headers must give an object of header values");
  for (const [name, value] of headerEntries(v)) {
    if (typeof value == "symbol") throw TypeError("cannot convert a Symbol to a string");
    h.set(name, latin1(String(value)));
  }
  return h;
}

// One entry of the `debug` log: to the app's function (what it throws is
// reported with `reportError` where the browser has it; the connection goes
// on), else to the console. Smaller here than in wasm.
export function debugLog(to, what, details) {
  if (typeof to != "function") return console.debug("[tidings]", what, details);
  try { to(what, details); } catch (e) { globalThis.reportError?.(e); }
}

// The URL of one attempt, told to wasm's `report` a microtask later at the
// earliest: [url] what the app's `url` function returns or resolves to (a
// URL object as its href; any other value as given, so wasm refuses a
// non-string), else `url` as given; [, error] what it throws or rejects
// with. Wasm checks it as the subscribe URL. Returns the guard's handle:
// nothing is reported after its abort().
export function attemptUrl(f, attempt, status, cursor, transport, url, report) {
  let alive = true;
  Promise.resolve()
    .then(() => (f ? f({ attempt, status: status ?? null, cursor: cursor || null, transport, url }) : url))
    .then((u) => (u instanceof URL ? u.href : u))
    .then((u) => alive && report([u]), (e) => alive && report([, e]));
  return { abort: () => (alive = false) };
}

// The global scope (src/js.rs), and whether it is a window.
export const globalScope = () => globalThis;
export function inWindow() {
  try {
    return globalThis instanceof Window;
  } catch {
    return false;
  }
}

// The page lifecycle facts of one watcher (src/lifecycle.rs), as codes:
// 0/1 visible/hidden, 2/3 resumed/frozen, 4/5 offline/online, 6/7 pageshow
// (persisted false/true), 8 pagehide, and navigator.connection itself for
// its network hint. The listeners first (document visibilitychange, freeze,
// resume; the global offline, online; in a window pagehide, pageshow;
// navigator.connection change), then the page as it is now: 1 when hidden,
// 4 when offline, navigator.connection when there is one. Returns the guard's handle: its abort()
// removes every listener. One crossing and one wasm closure instead of one
// per event type; a target that refuses a listener is skipped, as the wasm
// did.
export function watchPage(report) {
  const g = globalThis, nav = g.navigator, conn = nav?.connection, off = [];
  let win = false;
  try { win = g instanceof Window; } catch {}
  const doc = win && g.document, hint = conn && typeof conn == "object";
  const on = (t, type, code) => {
    const f = (e) => report(code < 0 ? 6 + (e.persisted === true) : code || +doc.hidden);
    try { t.addEventListener(type, f), off.push(() => t.removeEventListener(type, f)); } catch {}
  };
  if (doc) on(doc, "visibilitychange", 0), on(doc, "freeze", 3), on(doc, "resume", 2);
  on(g, "offline", 4), on(g, "online", 5);
  if (win) on(g, "pagehide", 8), on(g, "pageshow", -1);
  if (hint) on(conn, "change", conn);
  if (doc?.hidden) report(1);
  if (nav?.onLine === false) report(4);
  if (hint) report(conn);
  return { abort: () => off.map((f) => f()) };
}

// `navigator.onLine` (src/lifecycle.rs), undefined when it cannot be read.
export function onLine() {
  try {
    return globalThis.navigator.onLine;
  } catch {}
}

// One fetch of the receive path (src/transport/fetch.rs): `method` and
// `body` as given (undefined: GET, none), the engine's `headers` as name,
// value, … (each value through `latin1`), cookies with `credentials`. Polls
// must see their own 304s: the HTTP cache must never answer for the server
// or turn a 304 into a 200 (WHATWG Fetch "no-store"; the `Cache-Control`
// that comes with it is the engine's). A microtask later: the app's headers
// awaited (`app`: a promise, or undefined for none) and added last, so they
// may override the engine's (`addHeaders`), then the request, its head, its
// body, each reported to wasm as an array: [6, error] the app's headers
// failed (their promise rejected, or they are not valid), [0, response] the
// head (wasm reads what it wants and sets [0] to whether the body is read
// chunk by chunk, else it is read whole as text), [1, chunk] a Uint8Array
// of the body, [2, text] the whole body, [3] the end, [4] a failure
// (network, CORS, a body that broke off). Returns the request's
// AbortController (throws where there is none, or for a header `Headers`
// refuses): nothing is reported once it is aborted, and the guard that
// aborts it drops `report` with it (its attempt is over for the engine).
export function fetchBody(url, method, body, credentials, headers, app, report) {
  const c = new AbortController(), h = new Headers();
  for (let i = 0; i < headers.length; i += 2) h.set(headers[i], latin1(headers[i + 1]));
  const cache = "no-store", signal = c.signal;
  read(url, { method, body, cache, credentials: credentials ? "include" : "same-origin", headers: h, signal }, app, report);
  return c;
}

async function read(url, init, app, report) {
  const live = () => !init.signal.aborted;
  let failed;
  try {
    addHeaders(init.headers, await app);
  } catch (e) {
    failed = [6, e];
  }
  if (!live()) return;
  if (failed) return report(failed);
  try {
    const r = await fetch(url, init), head = [0, r];
    if (!live()) return;
    report(head);
    if (!head[0]) {
      const text = await r.text();
      live() && report([2, text]);
    } else if (!r.body) {
      // No body (204, 304), or no streaming body in this browser: the whole
      // body at once as one chunk, so a long-poll's events are not lost.
      const bytes = new Uint8Array(await r.arrayBuffer());
      live() && bytes.length && report([1, bytes]);
    } else {
      for (const reader = r.body.getReader(); ; ) {
        const { done, value } = await reader.read();
        if (done || !live()) break;
        report([1, value]);
      }
    }
    live() && report([3]);
  } catch {
    live() && report([4]);
  }
}

// A native EventSource of `url` (src/transport/eventsource.rs) with its
// listeners, reporting to wasm as an array: [0] opened, [1, failed] an error
// (the source closed first, so the browser never reconnects on its own
// clock; failed: readyState was CLOSED, the browser failed it, else it was
// about to reconnect), [data, type, lastEventId] an event of `message`, of
// each of `types`, or the server's own `open`/`error` (a MessageEvent; the
// browser's own are a plain Event). The data comes first: the array is
// handed back as `messages`' `datas`, its [0] the message's data. The type
// is the listener's own (no `type` getter per event). Returns the guard's
// handle: its close() closes the source and removes the listeners. Throws
// as the constructor does.
export function openSource(url, withCredentials, types, report) {
  const es = new EventSource(url, { withCredentials }), off = [];
  // `plain`: what a plain Event of this type means (only `open`, `error`).
  const on = (type, plain) => {
    const f = (e) => (plain && !(e instanceof MessageEvent) ? plain() : report([e.data, type, e.lastEventId]));
    es.addEventListener(type, f), off.push(() => es.removeEventListener(type, f));
  };
  on("open", () => report([0]));
  on("error", () => {
    const failed = es.readyState == EventSource.CLOSED;
    es.close();
    report([1, failed]);
  });
  for (const type of ["message", ...types]) on(type);
  return { close: () => (es.close(), off.map((f) => f())) };
}

// `navigator.locks` where this browser has Web Locks (an object), else
// undefined.
const webLocks = () => {
  try {
    const l = globalThis.navigator.locks;
    return typeof l == "object" && l ? l : undefined;
  } catch {}
};

// What crossTab can use here (src/tabs/mod.rs), as bits: 1 Web Locks, 2
// BroadcastChannel.
export const tabsSupport = () => !!webLocks() | (("BroadcastChannel" in globalThis) << 1);

// One Web Locks request (src/tabs/leader.rs) of `navigator.locks` for
// `name` (`steal`: taken from its holder at once; else queued, and withdrawn
// by the abort), reporting to wasm on a later microtask, never inside the
// browser's callback: 0 granted (held until the abort), 1 stolen by another
// tab, 2 failed before it was ever granted. Returns the guard's handle: its
// abort() releases or withdraws the lock, and nothing is reported after it.
// Throws as request() does, and where there are no Web Locks.
export function requestLock(name, steal, report) {
  const locks = webLocks();
  let alive = true, holding = false, release;
  const c = steal ? null : new AbortController(), held = new Promise((r) => (release = r));
  const tell = (what) => alive && report(what);
  // A stealing request is granted at once, and the spec forbids a signal
  // with steal; a queued one can be withdrawn. Rejected: withdrawn (our own
  // abort: not alive by then), stolen, or failed.
  locks.request(name, steal ? { steal } : { signal: c.signal }, () => {
    if (alive) (holding = true), queueMicrotask(() => tell(0));
    return held;
  }).catch(() => tell(holding ? 1 : 2));
  return { abort: () => ((alive = false), release(), c?.abort()) };
}

// `v` as a WebIDL `DOMString` argument takes it (src/js.rs): `String(v)`,
// except that a Symbol is a TypeError.
export function domString(v) {
  if (typeof v == "symbol") throw TypeError("cannot convert a Symbol to a string");
  return String(v);
}

// A listener and the options of `addEventListener` as `EventTarget` takes
// them (src/target.rs): undefined for a null or undefined listener (ignored),
// a TypeError for one that is neither a function nor an object, else whether
// it is `once` (`options` an object with a truthy `once`).
export function listenerOnce(f, options) {
  if (f === undefined || f === null) return;
  if (typeof f != "function" && typeof f != "object") throw TypeError("listener must be a function or an object");
  return typeof options == "object" && options != null && !!options.once;
}

// One listener of the app called as `EventTarget` calls it (src/target.rs):
// `f(event)`, or `f.handleEvent(event)` with `this` the object (a TypeError
// when that is not a function); what it throws is reported by `reportThrown`.
export function callListener(f, event) {
  try {
    if (f instanceof Function) return void f.call(null, event);
    const h = f.handleEvent;
    if (!(h instanceof Function)) throw TypeError("listener.handleEvent is not a function");
    h.call(f, event);
  } catch (e) {
    reportThrown(e);
  }
}

// What `EventTarget` does with a listener's exception: `reportError` (the
// page's error event, and the console), else `console.error`.
export function reportThrown(e) {
  try {
    return void globalThis.reportError(e);
  } catch {}
  console.error(e);
}

// `f` added as a listener of `target` for `type` (src/guard.rs); the
// handle's abort() removes it. A target that refuses it (not an
// EventTarget) is skipped: the listener then never runs, which the engine's
// watchdog notices.
export function listen(target, type, f) {
  try { target.addEventListener(type, f); } catch {}
  return { abort: () => { try { target.removeEventListener(type, f); } catch {} } };
}

// setTimeout(f, ms), or queueMicrotask(f) when ms is negative (src/guard.rs);
// the handle's abort() clears it.
export function after(ms, f) {
  let live = 1, id = ms < 0 ? queueMicrotask(() => live && f()) : setTimeout(f, ms);
  return { abort: () => (clearTimeout(id), (live = 0)) };
}
