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

export function appender(url, options) {
  if (!ready()) throw early("appender");
  return append(url, options);
}

// Throws (a bad URL, task or option: nothing started), as subscribe() does.
export function report(url, task, options) {
  if (!ready()) throw early("report");
  return every(url, task, options);
}
