// What every entry adds over its wasm-bindgen glue (index.js: everything;
// receive.js: subscribe only): init() taking a URL/Response/bytes directly,
// [Symbol.asyncIterator], [Symbol.dispose], keeping a live subscription
// reachable. Shared so both entries behave alike; it counts in each entry's
// size row: keep it tiny.

/** The contract's error codes (`error.code`). */
export const ErrorCode = /* @__PURE__ */ Object.freeze({
  InvalidUrl: "invalid-url",
  InvalidOption: "invalid-option",
  HttpStatus: "http-status",
  NoContent: "no-content",
  BadContentType: "bad-content-type",
  NetworkOrCors: "network-or-cors",
  Timeout: "timeout",
  TooLarge: "too-large",
  Parse: "parse",
  Auth: "auth",
  GaveUp: "gave-up",
  ResumeIgnored: "resume-ignored",
  Headers: "headers",
  NotInitialized: "not-initialized",
  StaleEpoch: "stale-epoch",
  SequenceGap: "sequence-gap",
  StreamClosed: "stream-closed",
  Conflict: "conflict",
});

/** The `not-initialized` error of a call made before init(). */
export const early = (call) => Object.assign(Error(`call init() before ${call}()`), { code: "not-initialized" });

/**
 * The entry's `init` and `subscribe` over one glue: `load` (its default
 * export), `open` (its subscribe) and its `Subscription` class, whose
 * prototype gets close/dispose/asyncIterator. The third element tells
 * whether init() has resolved.
 */
export function entry(load, open, Subscription) {
  let ready;
  // Load the wasm: from next to the glue when `input` is absent, else from
  // a URL, string, Request, Response, bytes, Module (or a promise of one),
  // or wasm-bindgen's own `{ module_or_path }`. Idempotent.
  const init = (input) =>
    load(input == null || "module_or_path" in Object(input) ? input : { module_or_path: input })
      .then((x) => ((ready = 1), x));

  // Live subscription → { t: the message types it delivers, e: callbacks run
  // once when it stops (its iterators) }. Deleted when it stops; kept when it
  // gave up (reconnect() revives it; its iterators end all the same).
  const live = new WeakMap();
  const stop = (sub, keep) => {
    const r = live.get(sub);
    keep || live.delete(sub);
    r?.e.forEach((f) => (f(), r.e.delete(f)));
  };

  const subscribe = (url, options) => {
    // Before init() the glue would throw a TypeError reading a wasm export.
    if (!ready) throw early("subscribe");
    // Reads and checks every option first: a throw leaves nothing running.
    const sub = open(url, options);
    try {
      live.set(sub, { t: ["message"].concat(options?.events || []), e: new Set() });
      // This listener (held by the wasm side until close) also keeps `sub`
      // reachable: the glue frees, and so closes, a subscription nobody holds.
      // A stop (fatal error) closes it next tick, after every listener has
      // seen the event, which releases the connection; one that gave up stays
      // for reconnect() until close().
      sub.addEventListener("statechange", (e) => {
        if (e.state == "closed") e.reason == "gave-up" ? stop(sub, 1) : (stop(sub), queueMicrotask(() => sub.close()));
      });
      const signal = options?.signal;
      if (signal) signal.addEventListener("abort", () => sub.close(), { once: true });
      if (signal?.aborted || sub.state == "closed") sub.close();
    } catch (e) {
      // Options that changed under us between the two reads: never leave a
      // running subscription nobody can close.
      sub.close();
      throw e;
    }
    return sub;
  };

  const P = Subscription.prototype;
  const close = P.close;
  P.close = P[Symbol.dispose || Symbol.for("Symbol.dispose")] = function () {
    close.call(this);
    stop(this);
  };

  // Messages (`message` and each name in `events`) buffered from the call on;
  // ends when the subscription closes; a fatal error rejects the next read
  // after the buffered messages; return() (a `break` out of for-await) closes.
  // With `persist`, a pull says the previous message was handled (_handled),
  // once: the core counts pulls against the messages queued (a `reset` makes
  // those queued before it stale).
  P[Symbol.asyncIterator] = function () {
    const sub = this, r = live.get(sub), queue = [], waiting = [];
    let done = !r, failure, last;
    const flush = () => {
      while (waiting.length && (queue.length || done)) {
        const [resolve, reject] = waiting.shift();
        if (queue.length) resolve({ value: (last = queue.shift()), done: false });
        else if (failure) reject(failure), (failure = null);
        else resolve({ value: undefined, done: true });
      }
    };
    if (r) {
      const push = (m) => { queue.push(m); flush(); };
      r.t.forEach((t) => sub.addEventListener(t, push));
      sub.addEventListener("error", (e) => { if (e.fatal) failure = e; });
      r.e.add(() => { done = true; r.t.forEach((t) => sub.removeEventListener(t, push)); flush(); });
      sub._handled();
    }
    return {
      next: () => (last && sub._handled(last.lastEventId), (last = null), new Promise((resolve, reject) => { waiting.push([resolve, reject]); flush(); })),
      return: (value) => (sub.close(), Promise.resolve({ value, done: true })),
      [Symbol.asyncIterator]() { return this; },
    };
  };
  return [init, subscribe, () => ready];
}
