// The JS half of one upstream attempt (`request.rs`): the app's `headers`
// into a fresh `Headers`, and the answer's body read up to a cap. Both are
// a chain of promises and browser calls with no decision in them, smaller
// here than as wasm futures awaiting one JS promise at a time.

import { addHeaders, invalidOption, latin1 } from "../boundary.js";

// What the app's `headers` gave, added to `h` (`addHeaders`, strict:
// anything but `undefined`/`null`, a `Headers` or an object, such as an
// array, a number or a string, is a TypeError: read as an object it would
// send junk or nothing).
const added = (h, v) => addHeaders(h, v, 1);

// The app's headers value for attempt `attempt`: the object, or what its
// function returns when called with `{ url, attempt }` (perhaps a promise).
const given = (headers, url, attempt) =>
  typeof headers == "function" ? headers.call(null, { url, attempt }) : headers;

// A fresh `Headers` with the app's headers for attempt `attempt`; the wait
// for a function's promise ends when `signal` aborts (the attempt timed out
// or was dropped: a promise that never settles must not keep it alive).
// Rejects with what the function threw or rejected with, or the TypeError
// of an invalid header.
async function appHeaders(headers, url, attempt, signal) {
  const h = new Headers();
  const v = given(headers, url, attempt);
  return added(h, await new Promise((ok, no) => {
    signal.addEventListener("abort", no);
    Promise.resolve(v).then(ok, no);
  }));
}

// As `appHeaders` for attempt 1, for a request that must go now
// (`pagehide`): a function's promise cannot be waited for, so it is left
// out. Throws what `appHeaders` rejects with.
export function appHeadersNow(headers, url) {
  const h = new Headers();
  const v = given(headers, url, 1);
  return v instanceof Promise ? h : added(h, v);
}

// The response `fetch` resolves to and its body as text (UTF-8, invalid
// bytes as U+FFFD, a leading BOM dropped, as `text()` decodes; decoded as it
// arrives, so the answer is there with its last chunk, not a task later), or
// `null` once the body passes `cap` bytes (the read is cancelled there). A
// response without a readable body is read with `text()`.
async function answer(fetched, cap) {
  const r = await fetched, reader = r.body?.getReader(), utf8 = new TextDecoder();
  if (!reader) return [r, await r.text()];
  for (let n = 0, text = ""; ; ) {
    const { done, value } = await reader.read();
    if (done) return [r, text + utf8.decode()];
    if ((n += value.length) > cap) return reader.cancel(), [r, null];
    text += utf8.decode(value, { stream: true });
  }
}

// One attempt of `url` with `init` (request.rs), a microtask later at the
// earliest: the app's headers for attempt `n`, then `extra` (the core's
// headers as name, value, …, each value as `latin1` gives it: set last, so
// the app's cannot replace them),
// the fetch and its answer (`answer`), reported to wasm as an array: [0,
// headers] the request goes out with these headers, then one of [1,
// response, text] the answer, [2] a failure (network, CORS, a body that
// broke off), [3, error] the app's headers failed (nothing was sent).
// Returns its AbortController (throws where there is none): nothing is
// reported after its abort(), which also ends the wait for the headers.
export function attempt(headers, url, n, init, extra, cap, report) {
  const c = new AbortController(), signal = (init.signal = c.signal);
  run(headers, url, n, init, extra, cap, (r) => signal.aborted || report(r));
  return c;
}

async function run(headers, url, n, init, extra, cap, tell) {
  let h, r = [2];
  try {
    h = await appHeaders(headers, url, n, init.signal);
  } catch (e) {
    return tell([3, e]);
  }
  if (init.signal.aborted) return;
  for (let i = 0; i < extra.length; i += 2) try { h.set(extra[i], latin1(extra[i + 1])); } catch {}
  init.headers = h;
  try {
    const fetched = fetch(url, init);
    tell([0, h]);
    r = [1, ...(await answer(fetched, cap))];
  } catch {}
  tell(r);
}

// The request init of an upstream request: `body` undefined for none, no
// HTTP cache (the answer must be the server's), cookies with
// `credentials`; `headers` undefined until the attempt adds them.
export const init = (method, body, credentials, headers, keepalive) =>
  ({ method, body, cache: "no-store", credentials: credentials ? "include" : "same-origin", headers, keepalive });

// `fetch(url, init)` whose outcome nobody reads (a keepalive request's, at
// `pagehide`: over the budget or offline it rejects, and nothing is to be
// done), its rejection handled.
export function keepalive(url, init) {
  fetch(url, init).catch(() => {});
}

// `_polling.next_interval_ms` of a JSON object answer body (the `poll`
// transport's envelope), a finite number ≥ 0; else `undefined`.
export function pollingHint(body) {
  let ms;
  try {
    const p = /^\s*\{/.test(body) ? JSON.parse(body)._polling : null;
    if (p && typeof p == "object") ms = p.next_interval_ms;
  } catch {}
  if (typeof ms == "number" && ms >= 0 && ms < Infinity) return ms;
}

// A send's body (src/upstream/options.rs `body`) as [value, bytes]: what
// `fetch` gets and its size on the wire (UTF-8 for a string). None for
// undefined/null; a string, a Blob (immutable) or FormData (its size
// undefined: its multipart encoding is the browser's, so it never goes out
// at `pagehide`) as given; an ArrayBuffer, a view of one or URLSearchParams
// copied now, so a later change of the caller's cannot make a retry differ
// from the first attempt (the server would answer 422). Anything else (a
// ReadableStream cannot be sent twice), or a detached buffer, throws the
// `invalid-option` `body` error.
export function bodyOf(v) {
  const size = (s) => new TextEncoder().encode(s).length;
  if (v == null) return [, 0];
  if (typeof v == "string") return [v, size(v)];
  if (v instanceof ArrayBuffer || ArrayBuffer.isView(v)) {
    try {
      const b = ArrayBuffer.isView(v) ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : new Uint8Array(v);
      return [b.slice(), b.length];
    } catch {
      throw invalidOption("body", "a buffer not detached", v);
    }
  }
  if (v instanceof Blob) return [v, v.size];
  if (v instanceof URLSearchParams) return (v = String(v)), [new URLSearchParams(v), size(v)];
  if (v instanceof FormData) return [v];
  throw invalidOption("body", "a string, ArrayBuffer, view, Blob, URLSearchParams or FormData", v);
}

// A pending promise with its `resolve` and `reject`: `[promise, resolve,
// reject]` (no wasm closure for the executor).
export function pending() {
  const o = [];
  o[0] = new Promise((res, rej) => {
    o[1] = res;
    o[2] = rej;
  });
  return o;
}

// `p` with its rejection handled (an ACK batch's failure is not the app's).
export function quiet(p) {
  p.catch(() => {});
}

// `send()`'s result (index.d.ts `SendResult`).
export const sendResult = (status, attempts, replayed, headers, body) => ({ status, attempts, replayed, headers, body });

// A fresh idempotency key: `crypto.randomUUID()` where the page is a secure
// context (the only place it exists), else a version 4 UUID from
// `crypto.getRandomValues` (RFC 9562 §5.4).
export function uuid() {
  const c = globalThis.crypto;
  const f = c?.randomUUID;
  const u = typeof f == "function" ? f.call(c) : 0;
  if (typeof u == "string") return u;
  // One random byte per hex digit of the version 4 layout: "4" is the
  // version, the "8" digit takes the variant bits (8 to b).
  const b = new Uint8Array(31);
  try {
    c.getRandomValues(b);
  } catch {
    throw "no crypto.getRandomValues";
  }
  let i = 0;
  return "10000000-1000-4000-8000-100000000000".replace(/[018]/g, (d) => (d ^ (b[i++] & (15 >> (d / 4)))).toString(16));
}
