// tidings — the package entry with every call: subscribe (js/subscription.js)
// and the upstream calls over the full glue (./tidings.js). Only what
// wasm-bindgen cannot express: send() rejecting instead of throwing, and a
// `not-initialized` error before init(). An app that only subscribes imports
// "tidings/receive" (receive.js) instead and downloads a smaller wasm.
import load, { subscribe as open, send as post, appender as append, report as every, Subscription } from "./tidings.js";
import { entry, early } from "./subscription.js";

export { ErrorCode } from "./subscription.js";
const [init, subscribe, ready] = entry(load, open, Subscription);
export { init as default, subscribe };

// A promise, never a throw: a bad URL, body or option (checked before
// anything is sent) rejects as every other failure does.
export function send(url, body, options) {
  try {
    if (!ready()) throw early("send");
    return post(url, body, options);
  } catch (e) {
    return Promise.reject(e);
  }
}

// stream-handles: begin (scripts/build-pkg.sh drops this block from a
// package built without them, STREAM_HANDLES=0).
// The stream handles: each method one operation of the wasm's `stream`
// (0 create, 1 head, 2 delete, 3 close), a promise as send()'s, its result
// shaped here: the wasm puts the answer's `Stream-Closed: true` in a send
// result's `replayed`.
import { stream as handle } from "./tidings.js";
export function stream(url, options) {
  const op = (n) => async (create) => {
    if (!ready()) throw early("stream");
    const { status, replayed: closed, headers: h } = await handle(url, n, options, create);
    if (n != 2) return { status, offset: h.get("stream-next-offset"), closed, contentType: h.get("content-type") };
  };
  return { create: op(0), head: op(1), delete: op(2), close: op(3) };
}
// stream-handles: end

export function appender(url, options) {
  if (!ready()) throw early("appender");
  return append(url, options);
}

// Throws (a bad URL, task or option: nothing started), as subscribe() does.
export function report(url, task, options) {
  if (!ready()) throw early("report");
  return every(url, task, options);
}
