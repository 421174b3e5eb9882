// Edges of the JS API a new user finds first, through the package entry
// (pkg/index.js) in headless Chromium against the reference server: header
// values of any type, subscribe() that throws leaving nothing running, URL
// checks, option values that would break the engine, EventTarget semantics
// of the listeners, and a failing `headers` function.
//
// TIDINGS_PKG=<dir> runs this against another build of the package (the
// server's --pkg), e.g. the build before a fix, to see these tests fail.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import * as h from "./tidings-page.mjs";

/** Per test, ms: a hang (an instance killed by a panic never opens) fails instead of stalling. */
const T = 20_000;

let server, browser;
before(async () => {
  const pkg = process.env.TIDINGS_PKG ? ["--pkg", process.env.TIDINGS_PKG] : [];
  server = await startServer(["--quiet", ...pkg]);
  browser = await launchBrowser();
});
after(async () => { await browser?.close(); await server?.stop(); });

/**
 * A page on the server's origin with the package entry as `window.t`
 * (initialised); `p.errors` collects uncaught page errors, `window.reported`
 * the errors the page's `error` event saw (what `reportError` fires).
 */
function page() {
  return h.entryPage(browser, server.url, {
    setup: () => {
      window.reported = [];
      window.addEventListener("error", (e) => window.reported.push(e.error?.message ?? e.message));
    },
  });
}

/** A unique query tag, so this test's requests can be told apart in the log. */
const tag = (name) => `${name}-${Math.random().toString(36).slice(2, 8)}`;

/** The logged requests whose query carries `t`. */
async function tagged(t) {
  return (await h.requests(server)).filter((e) => e.query?.includes(t));
}

/** `subscribe(url, options)` in the page: `{ code, name, message, cause }` of what it threw, or null. */
function thrown(p, url, options) {
  return p.evaluate(({ url, options }) => {
    try {
      window.last = window.t.subscribe(url, options);
      return null;
    } catch (e) {
      return { isError: e instanceof Error, code: e.code, cause: e.cause?.message };
    }
  }, { url, options });
}

// ----- 1. header values of any type -----------------------------------------

test("header values that are not strings are sent as String(value); a Symbol value is an `error`, not a crash", { timeout: T }, async () => {
  const p = await page();
  const t1 = tag("hdr-obj"), t2 = tag("hdr-fn"), t3 = tag("hdr-sym");
  const got = await p.evaluate(async ({ t1, t2, t3 }) => {
    const opened = (sub) => new Promise((r) => sub.addEventListener("open", r));
    // Object values: a number, a boolean, an object with toString.
    const a = window.t.subscribe(`/sse?t=${t1}`, {
      transports: ["fetch-sse"], headers: { Authorization: 1, "X-B": true, "X-O": { toString: () => "o" } },
    });
    // A function's result: a number.
    const b = window.t.subscribe(`/sse?t=${t2}`, { transports: ["fetch-sse"], headers: () => ({ Authorization: 2 }) });
    await Promise.all([opened(a), opened(b)]);
    // A Symbol from the function: an `error` event with code `headers`, and
    // the instance is still alive (another subscription opens).
    const c = window.t.subscribe(`/sse?t=${t3}`, {
      transports: ["fetch-sse"], headers: () => ({ Authorization: Symbol("s") }), backoff: { floorMs: 5000 },
    });
    const err = await new Promise((r) => c.addEventListener("error", r));
    // A getter that throws in the function's result: the same, with what it threw.
    const e = window.t.subscribe("/sse", {
      transports: ["fetch-sse"], headers: () => ({ get Authorization() { throw new Error("no token"); } }),
      backoff: { floorMs: 5000 },
    });
    const getterErr = await new Promise((r) => e.addEventListener("error", r));
    const d = window.t.subscribe("/sse", { transports: ["fetch-sse"], headers: { Authorization: "d" } });
    await opened(d);
    const out = {
      code: err.code, fatal: err.fatal, cause: err.cause instanceof TypeError, state: c.state, d: d.state,
      getter: [getterErr.code, getterErr.cause?.message],
    };
    for (const s of [a, b, c, d, e]) s.close();
    return out;
  }, { t1, t2, t3 });
  assert.deepEqual(got, {
    code: "headers", fatal: false, cause: true, state: "waiting", d: "open", getter: ["headers", "no token"],
  });
  assert.equal((await tagged(t1))[0].headers.authorization, "1");
  assert.equal((await tagged(t2))[0].headers.authorization, "2");
  assert.deepEqual(await tagged(t3), [], "nothing was sent with a Symbol header");
  // A static object with a bad value or name cannot work: it throws at subscribe.
  assert.deepEqual(await p.evaluate(() => {
    const codes = [];
    const throwing = { get Authorization() { throw new Error("no token"); } };
    for (const headers of [{ Authorization: Symbol("s") }, { "bad name": "x" }, { Authorization: "a\nb" }, throwing]) {
      try { window.t.subscribe("/sse", { headers }); codes.push("accepted"); } catch (e) { codes.push(e.code); }
    }
    return codes;
  }), ["invalid-option", "invalid-option", "invalid-option", "invalid-option"]);
  assert.deepEqual(p.errors, []);
  await p.close();
});

// ----- 2. subscribe() that throws leaves nothing running ---------------------

test("subscribe() that throws has started nothing: options are all read and checked first", { timeout: T }, async () => {
  const p = await page();
  const cases = {
    signal: { signal: {} },
    throwingSignalGetter: "signal",
    throwingSeedGetter: "seed",
    badEvents: { events: "price" },
    badHeaders: { headers: "Bearer x" },
  };
  const got = {};
  const tags = {};
  for (const [name, options] of Object.entries(cases)) {
    tags[name] = tag(name);
    got[name] = await p.evaluate(({ url, options }) => {
      if (typeof options === "string") {
        const key = options;
        options = { get [key]() { throw new Error(`no ${key}`); } };
      }
      try {
        window.t.subscribe(url, options);
        return "accepted";
      } catch (e) {
        return [e instanceof Error, e.code, e.cause?.message ?? null];
      }
    }, { url: `/sse?t=${tags[name]}`, options });
  }
  assert.deepEqual(got, {
    signal: [true, "invalid-option", null],
    throwingSignalGetter: [true, "invalid-option", "no signal"],
    throwingSeedGetter: [true, "invalid-option", "no seed"],
    badEvents: [true, "invalid-option", null],
    badHeaders: [true, "invalid-option", null],
  });
  await h.sleep(500);
  for (const [name, t] of Object.entries(tags)) assert.deepEqual(await tagged(t), [], `${name}: no request`);
  // A real AbortSignal, also one from another realm (an iframe), is fine.
  const states = await p.evaluate(async () => {
    const f = document.body.appendChild(document.createElement("iframe"));
    const foreign = new f.contentWindow.AbortController();
    const sub = window.t.subscribe("/sse", { signal: foreign.signal });
    await new Promise((r) => sub.addEventListener("open", r));
    const before = sub.state;
    foreign.abort();
    return [before, sub.state];
  });
  assert.deepEqual(states, ["open", "closed"]);
  assert.deepEqual(p.errors, []);
  await p.close();
});

test("options: the first refusal is the one reported and no getter after it runs; a getter that threw before it comes first", { timeout: T }, async () => {
  const p = await page();
  const got = await p.evaluate(() => {
    const run = (f) => {
      try {
        f();
        return "accepted";
      } catch (e) {
        return [e.code, e.message.split(": ")[1], e.cause?.message ?? null];
      }
    };
    const read = [];
    const spy = (o) => new Proxy(o, { get: (t, k) => (read.push(String(k)), t[k]) });
    return {
      refused: run(() => window.t.subscribe("/sse?t=first", spy({ parse: "xml", seed: "x", backoff: { baseMs: -1 } }))),
      read,
      threwFirst: run(() => window.t.subscribe("/sse?t=first", { get withCredentials() { throw new Error("no"); }, crossTab: "yes" })),
      appenderGetter: run(() => window.t.appender("/stream/first", { get producerId() { throw new Error("no id"); } })),
    };
  });
  assert.deepEqual(got, {
    refused: ["invalid-option", "parse", null],
    read: ["parse"],
    threwFirst: ["invalid-option", "(a getter threw)", "no"],
    appenderGetter: ["invalid-option", "(a getter threw)", "no id"],
  });
  assert.deepEqual(p.errors, []);
  await p.close();
});

// ----- 3. URLs ------------------------------------------------------------------

test("URLs are resolved with the browser's URL parser at subscribe(); `urls` entries too; transport is honest", { timeout: T }, async () => {
  const p = await page();
  const bad = ["http://", "https://", "", "   ", "ftp://x/y", "javascript:void 0", "http://:80/", "http://[::1"];
  const codes = [];
  for (const url of bad) codes.push((await thrown(p, url, undefined))?.code ?? "accepted");
  assert.deepEqual(codes, bad.map(() => "invalid-url"));
  const urlsCodes = [];
  for (const urls of [{ poll: "http://" }, { "fetch-sse": "mailto:a@b" }, { eventsource: "ftp://x/" }, { poll: 5 }]) {
    urlsCodes.push((await thrown(p, "/sse", { urls }))?.code ?? "accepted");
  }
  assert.deepEqual(urlsCodes, ["invalid-url", "invalid-url", "invalid-url", "invalid-option"]);

  // A space is what fetch and EventSource accept too: percent-encoded.
  const t = tag("space");
  const got = await p.evaluate(async (t) => {
    const sub = window.t.subscribe(` /sse?t=${t}&x=a b `, { transports: ["fetch-sse"], urls: { poll: "/poll?x= y" } });
    const sync = sub.transport;
    await new Promise((r) => sub.addEventListener("open", r));
    const out = [sync, sub.state, sub.transport];
    sub.close();
    return out;
  }, t);
  assert.deepEqual(got, ["", "open", "fetch-sse"]);
  assert.equal((await tagged(t))[0].query, `t=${t}&x=a%20b`);

  // Stopped before choosing a transport (headers rule out the only one): "".
  const stopped = await p.evaluate(async () => {
    const sub = window.t.subscribe("/sse", { transports: ["eventsource"], headers: { "X-A": "1" } });
    const e = await new Promise((r) => sub.addEventListener("error", r));
    await new Promise((r) => setTimeout(r));
    return [e.code, e.fatal, sub.state, sub.transport];
  });
  assert.deepEqual(stopped, ["gave-up", true, "closed", ""]);
  assert.deepEqual(p.errors, []);
  await p.close();
});

test("a url or event type that is not a string is converted (a URL object) or refused, never a trap", { timeout: T }, async () => {
  const p = await page();
  const got = await p.evaluate(async () => {
    const out = {};
    for (const [name, url] of Object.entries({ undef: undefined, nul: null, num: 5, bool: true })) {
      try { window.t.subscribe(url); out[name] = "accepted"; } catch (e) { out[name] = [e.name, e.code]; }
    }
    // A URL object is taken as its href, as fetch does.
    const sub = window.t.subscribe(new URL("/sse", location.href), { transports: ["fetch-sse"] });
    // Event types are converted with String(type), as on EventTarget.
    const seen = [];
    sub.addEventListener({ toString: () => "open" }, (e) => seen.push(e.type));
    sub.addEventListener(5, () => seen.push("five"));
    sub.removeEventListener(5, () => {});
    try { sub.addEventListener(Symbol("x"), () => {}); } catch (e) { out.symbolType = e.name; }
    await new Promise((r) => sub.addEventListener("open", r));
    out.seen = seen;
    out.state = sub.state;
    sub.close();
    return out;
  });
  assert.deepEqual(got, {
    undef: ["Error", "invalid-url"], nul: ["Error", "invalid-url"], num: ["Error", "invalid-url"],
    bool: ["Error", "invalid-url"], symbolType: "TypeError", seen: ["open"], state: "open",
  });
  assert.deepEqual(p.errors, []);
  await p.close();
});

// ----- 4. option values that would break the engine --------------------------

test("interval.minMs: 0 is floored at 10 ms (no busy poll loop)", { timeout: T }, async () => {
  const p = await page();
  const t = tag("hot");
  await p.evaluate((t) => {
    window.sub = window.t.subscribe(`/poll?t=${t}`, {
      transports: ["poll"], interval: { mode: "fixed", initialMs: 0, minMs: 0, maxMs: 0 },
      backoff: { floorMs: 0, baseMs: 0, strategy: "none" },
    });
  }, t);
  await h.sleep(1000);
  const { interval, requests } = await p.evaluate(() => {
    const s = window.sub.stats();
    window.sub.close();
    return { interval: s.currentIntervalMs, requests: s.requests };
  });
  assert.equal(interval, 10);
  // 1 s at ≥ 10 ms apart (plus the round trip): at most ~100; a 1 ms loop makes several hundred.
  assert.ok(requests >= 5 && requests <= 110, `${requests} requests in 1 s`);
  await p.close();
});

test("event names that collide are refused at subscribe(); `message` in events delivers each message once", { timeout: T }, async () => {
  const p = await page();
  const cases = [
    { events: ["error"] }, { events: ["open"] }, { events: ["statechange"] }, { events: ["transportchange"] },
    { events: ["reset"] }, { events: [""] }, { events: [1] },
    { heartbeatEvent: "message" }, { heartbeatEvent: "error" }, { heartbeatEvent: "price", events: ["price"] },
    { heartbeatEvent: 5 },
  ];
  const codes = [];
  for (const options of cases) codes.push((await thrown(p, "/sse", options))?.code ?? "accepted");
  assert.deepEqual(codes, cases.map(() => "invalid-option"));

  // `message` listed in events: still one delivery per message (native EventSource).
  await p.evaluate(async () => {
    window.got = [];
    window.sub = window.t.subscribe("/sse", { events: ["message", "price"], heartbeatEvent: "" });
    window.sub.addEventListener("message", (e) => window.got.push(e.data));
    await new Promise((r) => window.sub.addEventListener("open", r));
  });
  await server.publish("one");
  await server.publish("two");
  await p.waitForFunction(() => window.got.length >= 2, null, { timeout: 5000 });
  await h.sleep(200);
  const got = await p.evaluate(() => {
    const out = { got: window.got, dropped: window.sub.stats().duplicatesDropped, transport: window.sub.transport };
    window.sub.close();
    return out;
  });
  assert.deepEqual(got, { got: ["one", "two"], dropped: 0, transport: "eventsource" });
  await p.close();
});

// ----- 5. EventTarget semantics --------------------------------------------------

test("listeners behave as on EventTarget: handleEvent, removal during dispatch, null, duplicates, once", { timeout: T }, async () => {
  const p = await page();
  const got = await p.evaluate(async () => {
    const sub = window.t.subscribe("/sse", { transports: ["fetch-sse"] });
    const calls = [];
    const obj = { handleEvent(e) { calls.push(["obj", e.type, this === obj]); } };
    const b = () => calls.push(["b"]);
    const a = () => { calls.push(["a"]); sub.removeEventListener("open", b); };
    const dup = () => calls.push(["dup"]);
    const once = (e) => calls.push(["once", e.state]);
    sub.addEventListener("open", a);
    sub.addEventListener("open", b);
    sub.addEventListener("open", obj);
    sub.addEventListener("open", dup);
    sub.addEventListener("open", dup);
    sub.addEventListener("open", dup, { once: true });
    sub.addEventListener("statechange", once, { once: true });
    const ignored = [];
    for (const l of [null, undefined]) {
      try { sub.addEventListener("open", l); sub.removeEventListener("open", l); ignored.push("ok"); } catch (e) { ignored.push(e.name); }
    }
    let primitive;
    try { sub.addEventListener("open", 5); } catch (e) { primitive = e instanceof TypeError; }
    await new Promise((r) => sub.addEventListener("open", r));
    await new Promise((r) => setTimeout(r, 50));
    sub.close();
    return { calls, ignored, primitive };
  });
  assert.deepEqual(got.calls, [["once", "connecting"], ["a"], ["obj", "open", true], ["dup"]]);
  assert.deepEqual(got.ignored, ["ok", "ok"]);
  assert.equal(got.primitive, true);
  assert.deepEqual(p.errors, []);
  await p.close();
});

test("a listener that throws is reported (reportError) and the others still run; close() and stats() inside a listener work", { timeout: T }, async () => {
  const p = await page();
  const got = await p.evaluate(async () => {
    const sub = window.t.subscribe("/sse", { transports: ["fetch-sse"] });
    const calls = [];
    sub.addEventListener("open", () => { calls.push("first"); throw new Error("listener boom"); });
    sub.addEventListener("open", { handleEvent() { calls.push("second"); throw new Error("handleEvent boom"); } });
    sub.addEventListener("open", () => {
      calls.push(["third", typeof sub.stats().requests, sub.state]);
      sub.close();
      calls.push(["closed", sub.state, sub.stats().requests >= 1]);
    });
    sub.addEventListener("open", () => calls.push("after close"));
    // Until the third listener closed it (however slow the machine), then a
    // little longer for anything that should not happen.
    await new Promise((r) => { const poll = () => (sub.state === "closed" ? r() : setTimeout(poll, 20)); poll(); });
    await new Promise((r) => setTimeout(r, 100));
    return { calls, reported: window.reported, state: sub.state };
  });
  assert.deepEqual(got.calls, ["first", "second", ["third", "number", "open"], ["closed", "closed", true]]);
  assert.deepEqual(got.reported, ["listener boom", "handleEvent boom"]);
  assert.equal(got.state, "closed");
  assert.deepEqual(p.errors, ["listener boom", "handleEvent boom"]);
  await p.close();
});

// ----- 6. a failing headers function ------------------------------------------------

test("a headers function that rejects or throws is an `error` with code `headers`, retried with backoff, no fallback", { timeout: T }, async () => {
  const p = await page();
  const t = tag("auth");
  const got = await p.evaluate(async (t) => {
    let calls = 0;
    const sub = window.t.subscribe(`/sse?t=${t}`, {
      transports: ["fetch-sse", "long-poll", "poll"],
      backoff: { floorMs: 50, baseMs: 50, strategy: "none" },
      fallback: { afterFailures: 1 },
      breaker: { failureThreshold: 1 },
      // Token refresh fails twice (a rejection, then a throw), then works.
      headers: () => {
        calls++;
        if (calls === 1) return Promise.reject(new Error("refresh failed"));
        if (calls === 2) throw new Error("no token");
        return { Authorization: "Bearer ok" };
      },
    });
    const log = [];
    for (const type of ["error", "transportchange", "open", "statechange"]) {
      sub.addEventListener(type, (e) => log.push([type, e.code ?? e.transport ?? e.state, e.cause?.message ?? e.reason,
        e.fatal, e.retryInMs ?? e.delayMs]));
    }
    await new Promise((r) => sub.addEventListener("open", r));
    const out = { log, calls, transport: sub.transport };
    sub.close();
    return out;
  }, t);
  const errors = got.log.filter(([type]) => type === "error");
  assert.deepEqual(errors.map(([, code, cause, fatal]) => [code, cause, fatal]),
    [["headers", "refresh failed", false], ["headers", "no token", false]]);
  // Each is followed by the wait it announced (at least the 50 ms floor),
  // with the reason of its own: `headers-failed`.
  for (const e of errors) {
    const next = got.log[got.log.indexOf(e) + 1];
    assert.deepEqual(next.slice(0, 3), ["statechange", "waiting", "headers-failed"]);
    assert.equal(next[4], e[4], "retryInMs = the waiting state's delayMs");
    assert.ok(e[4] >= 50, `retryInMs ${e[4]}`);
  }
  // No switch away from fetch-sse (the only transportchange is the start).
  assert.deepEqual(got.log.filter(([type]) => type === "transportchange").map(([, tr, reason]) => [tr, reason]),
    [["fetch-sse", "start"]]);
  assert.equal(got.transport, "fetch-sse");
  assert.equal(got.calls, 3);
  const sent = await tagged(t);
  assert.equal(sent.length, 1, "only the request with working headers was sent");
  assert.equal(sent[0].headers.authorization, "Bearer ok");
  assert.deepEqual(p.errors, []);
  await p.close();
});

test("a headers promise that never settles: close() leaves nothing of it behind (the promise is collected), nothing sent", { timeout: T }, async () => {
  const p = await page();
  const cdp = await p.context().newCDPSession(p);
  const t = tag("never");
  await p.evaluate((t) => {
    window.freed = [];
    window.registry = new FinalizationRegistry((name) => window.freed.push(name));
    (() => {
      const sub = window.t.subscribe(`/sse?t=${t}`, {
        transports: ["fetch-sse"],
        headers: () => {
          const pending = new Promise(() => {});
          window.registry.register(pending, "promise");
          return pending;
        },
      });
      // The attempt waits on the app's promise; closing must abandon it.
      setTimeout(() => sub.close(), 50);
    })();
  }, t);
  let freed = [];
  for (let i = 0; i < 40 && freed.length === 0; i++) {
    await cdp.send("HeapProfiler.collectGarbage");
    await h.sleep(50);
    freed = await p.evaluate(() => window.freed);
  }
  assert.deepEqual(freed, ["promise"], "the closed subscription's attempt still waits on the app's promise: leaked");
  assert.deepEqual(await tagged(t), []);
  await p.close();
});

test("close() while a reconnect is scheduled: no request after it, even with every reconnect timer overdue (main thread blocked 300 ms, 100 subscriptions)", { timeout: T }, async () => {
  await h.faults(server, { path: "/sse", times: null, fault: { kind: "status", status: 500 } });
  const p = await page();
  const t = tag("closewait");
  const n = 100;
  try {
    // What the page asked for, counted at the `fetch()` call: a request the
    // page sent before close() may reach the server after it (the browser
    // holds at most 6 connections per host, and an abort takes a hop to its
    // network process), so the server's log alone cannot tell "sent after
    // close" from "sent before, arrived late".
    await p.evaluate((t) => {
      const fetch = window.fetch;
      window.fetched = 0;
      window.fetch = (url, init) => {
        if (String(url).includes(`t=${t}`)) window.fetched++;
        return fetch(url, init);
      };
    }, t);
    const fetchedAtClose = await p.evaluate(async ({ t, n }) => {
      const subs = [], waiting = [];
      for (let i = 0; i < n; i++) {
        const s = window.t.subscribe(`/sse?t=${t}&i=${i}`, {
          transports: ["fetch-sse"],
          backoff: { floorMs: 100, baseMs: 0, strategy: "none" },
        });
        waiting.push(new Promise((r) => s.addEventListener("statechange", (e) => e.state === "waiting" && r())));
        subs.push(s);
      }
      await Promise.all(waiting);
      // Every reconnect is due within 100 ms: block the thread past that, so
      // each timer has fired and waits in the task queue, then close all in
      // this same task.
      const end = performance.now() + 300;
      while (performance.now() < end) {}
      for (const s of subs) s.close();
      return window.fetched;
    }, { t, n });
    // Each sent at least one request before close (answered 500; the first
    // ones may have retried while the last ones started), none after it:
    // no `fetch()` call, and nothing reached the server that the page had not
    // asked for by then.
    assert.ok(fetchedAtClose >= n, `${fetchedAtClose} requests before close`);
    await h.sleep(1500);
    assert.equal(await p.evaluate(() => window.fetched), fetchedAtClose, "a closed subscription called fetch()");
    const logged = (await tagged(t)).length;
    assert.ok(logged >= n && logged <= fetchedAtClose, `${logged} requests logged, ${fetchedAtClose} sent before close`);
  } finally {
    await h.clearFaults(server);
    await p.close();
  }
});

// ----- 7. option values that would silently change behaviour -----------------

test("a wrong type, an unknown mode or transport, a negative or NaN duration throws invalid-option naming the option, what it expected and what it got", { timeout: T }, async () => {
  const p = await page();
  const t = tag("typo");
  const got = await p.evaluate((t) => {
    const cases = [
      ["transports", { transports: [] }], ["transports", { transports: ["websocket"] }],
      ["transports", { transports: ["long_poll"] }], ["transports", { transports: "poll" }],
      ["transports", { transports: ["poll", 5] }],
      ["parse", { parse: "xml" }], ["parse", { parse: "JSON" }], ["events", { events: "price" }],
      ["pauseWhenHidden", { pauseWhenHidden: "no" }], ["pauseWhenHidden.afterMs", { pauseWhenHidden: { afterMs: -1 } }],
      ["backoff.baseMs", { backoff: { baseMs: -5 } }], ["backoff.baseMs", { backoff: { baseMs: NaN } }],
      ["backoff.baseMs", { backoff: { baseMs: "500" } }], ["backoff.floorMs", { backoff: { floorMs: Infinity } }],
      ["backoff.strategy", { backoff: { strategy: "linear" } }], ["backoff", { backoff: 5 }],
      ["backoff.maxAttempts", { backoff: { maxAttempts: -1 } }], ["backoff.maxAttempts", { backoff: { maxAttempts: "2" } }],
      ["interval.mode", { interval: { mode: "bogus" } }], ["interval.minMs", { interval: { minMs: -10 } }],
      ["breaker.failureThreshold", { breaker: { failureThreshold: NaN } }],
      ["watchdog.idleTimeoutMs", { watchdog: { idleTimeoutMs: -1 } }], ["longPoll.timeoutMs", { longPoll: { timeoutMs: "1" } }],
      ["fallback.afterFailures", { fallback: { afterFailures: -2 } }], ["maxRetryAfterMs", { maxRetryAfterMs: -1 }],
      ["maxMessageBytes", { maxMessageBytes: -1 }], ["maxMessageBytes", { maxMessageBytes: "1MB" }],
      ["withCredentials", { withCredentials: "yes" }], ["debug", { debug: 1 }], ["crossTab", { crossTab: "true" }],
      ["seed", { seed: "abc" }], ["lastEventId", { lastEventId: 42 }], ["lastEventIdParam", { lastEventIdParam: 1 }],
      ["urls", { urls: "x" }], ["lostAfterMs", { lostAfterMs: "500" }], ["signal", { signal: {} }],
      ["heartbeatEvent", { heartbeatEvent: "open" }], ["persist", { persist: true }],
      ["offset", { offset: "5" }], ["headers", { headers: 5 }],
      // An initial cursor that could not be a stream's id (WHATWG HTML §9.2.6)
      // and would make every Last-Event-ID header invalid.
      ["lastEventId", { lastEventId: "a\nb" }], ["lastEventId", { lastEventId: "a\rb" }],
      ["lastEventId", { lastEventId: "a\0b" }],
    ];
    const out = [];
    for (const [name, options] of cases) {
      try {
        window.t.subscribe(`/sse?t=${t}`, options).close();
        out.push([name, "accepted"]);
      } catch (e) {
        out.push([name, e.code, e.message]);
      }
    }
    return out;
  }, t);
  const ms = "a non-negative number of milliseconds", count = "a non-negative number or Infinity";
  const transports = 'a non-empty array of "eventsource", "fetch-sse", "long-poll", "poll"';
  const own = '"open", "error", "statechange", "transportchange", "reset", "uptodate", "statuschange"';
  const lf = "a string without U+0000, CR or LF";
  const want = [
    [transports, "[] (object)"], [transports, '["websocket"] (object)'],
    [transports, '["long_poll"] (object)'], [transports, '"poll" (string)'],
    [transports, '["poll",5] (object)'],
    ['one of "text", "json"', '"xml" (string)'], ['one of "text", "json"', '"JSON" (string)'],
    [`an array of non-empty names other than ${own}`, '"price" (string)'],
    ["a boolean or an object", '"no" (string)'], [ms, "-1 (number)"],
    [ms, "-5 (number)"], [ms, "NaN (number)"],
    [ms, '"500" (string)'], [ms, "Infinity (number)"],
    ['one of "full-jitter", "equal-jitter", "decorrelated", "none"', '"linear" (string)'], ["an object", "5 (number)"],
    [count, "-1 (number)"], [count, '"2" (string)'],
    ['one of "exponential", "aimd", "rate-window", "fixed"', '"bogus" (string)'], [ms, "-10 (number)"],
    [count, "NaN (number)"],
    [ms, "-1 (number)"], [ms, '"1" (string)'],
    [count, "-2 (number)"], [ms, "-1 (number)"],
    ["a non-negative number of bytes", "-1 (number)"], ["a non-negative number of bytes", '"1MB" (string)'],
    ["a boolean", '"yes" (string)'], ["a boolean", "1 (number)"], ["a boolean", '"true" (string)'],
    ["a finite number", '"abc" (string)'], ["a string", "42 (number)"], ["a string", "1 (number)"],
    ["an object", '"x" (string)'], [ms, '"500" (string)'], ["an AbortSignal", "[object Object] (object)"],
    [`a name not in events, other than "message", ${own}`, '"open" (string)'], ['one of "session", "local"', "true (boolean)"],
    ['none without protocol "durable-streams"', '"5" (string)'],
    ["valid headers (an object) or a function", "5 (number)"],
    [lf, '"a\\nb" (string)'], [lf, '"a\\rb" (string)'],
    [lf, '"a\\u0000b" (string)'],
  ];
  assert.equal(got.length, want.length);
  got.forEach(([name, code, message], i) => {
    const [expected, given] = want[i];
    assert.deepEqual([name, code, message], [name, "invalid-option", `invalid option: ${name}: expected ${expected}, got ${given}`]);
  });
  await h.sleep(300);
  assert.deepEqual(await tagged(t), [], "nothing started");
  assert.deepEqual(p.errors, []);
  await p.close();
});

test("an options argument that is not an object, and lastEventIdParam \"\", throw invalid-option; send, report and appender options too", { timeout: T }, async () => {
  const p = await page();
  const t = tag("not-obj");
  const got = await p.evaluate(async (t) => {
    const code = async (call) => {
      try { const r = call(); await r; r?.close?.(); r?.stop?.(); return "accepted"; } catch (e) { return [e.code, e.message]; }
    };
    const out = [];
    for (const o of [5, "x", true]) {
      out.push(await code(() => window.t.subscribe(`/sse?t=${t}`, o)));
      out.push(await code(() => window.t.send(`/send?t=${t}`, "b", o)));
      out.push(await code(() => window.t.report(`/send?t=${t}`, () => "s", o)));
      out.push(await code(() => window.t.appender(`/send?t=${t}`, o)));
    }
    out.push(await code(() => window.t.subscribe(`/sse?t=${t}`, { lastEventIdParam: "" })));
    return out;
  }, t);
  const not = (v) => ["invalid-option", `invalid option: options: expected an object, got ${v}`];
  assert.deepEqual(got, [
    ...Array(4).fill(not("5 (number)")), ...Array(4).fill(not('"x" (string)')), ...Array(4).fill(not("true (boolean)")),
    ["invalid-option", 'invalid option: lastEventIdParam: expected a non-empty string, got "" (string)'],
  ]);
  await h.sleep(300);
  assert.deepEqual(await tagged(t), [], "nothing started");
  assert.deepEqual(p.errors, []);
  await p.close();
});

test("undefined and null mean the default, valid values and unknown keys are accepted; error messages say what happened", { timeout: T }, async () => {
  const p = await page();
  await h.faults(server, { path: "/poll", times: 3, fault: { kind: "status", status: 503 } });
  const got = await p.evaluate(async () => {
    const ok = [
      {}, null, undefined,
      { transports: undefined, parse: null, backoff: { baseMs: undefined, strategy: null, maxAttempts: Infinity } },
      { transports: ["poll", "poll"], parse: "json", backoff: { strategy: "none", maxAttempts: 0, baseMs: 0 } },
      { interval: { mode: "fixed", minMs: 1.5 }, pauseWhenHidden: { afterMs: 100 }, pauseWhenHidden2: "x" },
      { trasnports: ["poll"], lastEventId: "ключ😀", maxMessageBytes: 4194304, seed: -1, crossTab: false },
    ];
    const out = [];
    for (const o of ok) {
      try { window.t.subscribe("/sse", o).close(); out.push("ok"); } catch (e) { out.push(e.message); }
    }
    // A message for every code the engine reports (here: 503 as http-status, then gave-up).
    const sub = window.t.subscribe("/poll", {
      transports: ["poll"], backoff: { maxAttempts: 2, floorMs: 10, baseMs: 10 },
    });
    const messages = await new Promise((resolve) => {
      const m = [];
      sub.addEventListener("error", (e) => { m.push([e.code, e.message]); if (e.fatal) resolve(m); });
    });
    return { out, messages, url: new URL("/poll", location.href).href };
  });
  await h.clearFaults(server);
  assert.deepEqual(got.out, got.out.map(() => "ok"));
  assert.deepEqual(got.messages.map(([code]) => code), ["http-status", "gave-up"]);
  // Each names the URL it concerns, after the human line.
  const suffix = ` (${got.url})`;
  assert.deepEqual(got.messages.map(([, m]) => m), [`unusable HTTP status 503${suffix}`, `gave up: maxAttempts, or no usable transport${suffix}`]);
  for (const [code, m] of got.messages) {
    const message = m.slice(0, -suffix.length);
    assert.notEqual(message, code, `${code} has a human message`);
    assert.ok(message.length > 8 && message.length < 60, message);
  }
  await p.close();
});
