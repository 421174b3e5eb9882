// The package entry (pkg/index.js, the hand-written wrapper over the
// wasm-bindgen glue) loaded with no bundler, as `<script type=module>` would:
// the async iterator, close/dispose/signal, fatal errors, init() inputs, the
// error codes, and a subscription nobody holds staying alive.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";

let server, browser;
before(async () => {
  server = await startServer(["--quiet"]);
  browser = await launchBrowser({ args: [...launchArgs(), "--js-flags=--expose-gc"] });
});
after(async () => { await browser?.close(); await server?.stop(); });

function launchArgs() {
  return ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-quic"];
}

/** A blank page on the server's origin; `window.t` is the package entry, initialised unless `init: false`. */
async function page({ init = true } = {}) {
  const p = await browser.newPage();
  p.errors = [];
  p.warnings = [];
  p.on("pageerror", (e) => p.errors.push(e.message));
  p.on("console", (m) => { if (m.type() === "warning" || m.type() === "error") p.warnings.push(m.text()); });
  // A document of the server's origin (its `GET /_faults` JSON, as
  // tidings-page.mjs's blankPage): no request interception, which WebKitGTK's
  // driver does not have.
  await p.goto(`${server.url}/_faults`);
  await p.evaluate(async (init) => {
    window.t = await import("/pkg/index.js");
    if (init) await window.t.default();
  }, init);
  return p;
}

async function faults(rules) {
  const r = await fetch(`${server.url}/_faults`, { method: "POST", body: JSON.stringify(rules), headers: { "content-type": "application/json" } });
  assert.equal(r.status, 200, await r.text());
}

const waitOpen = (p, name = "sub") =>
  p.waitForFunction((name) => window[name].state === "open", name, { timeout: 5000 });

test("for await yields `message` and the named events in order, buffered, and `break` closes", async () => {
  const p = await page();
  await p.evaluate(() => {
    window.sub = window.t.subscribe("/sse", { events: ["price"], parse: "json" });
    window.it = window.sub[Symbol.asyncIterator]();
  });
  await waitOpen(p);
  // Published before anyone reads: buffered by the iterator.
  const ids = [];
  for (const [data, event] of [["1", undefined], ["2", "price"], ["3", "news"], ["4", undefined]]) {
    ids.push((await server.publish(data, event)).id);
  }
  const got = await p.evaluate(async () => {
    const out = [];
    for await (const m of { [Symbol.asyncIterator]: () => window.it }) {
      out.push([m.type, m.event, m.id, m.data, typeof m.lastEventId, m.transport]);
      if (out.length === 3) break;
    }
    return { out, state: window.sub.state, after: await window.it.next() };
  });
  assert.deepEqual(got.out, [
    ["message", "message", ids[0], 1, "string", "eventsource"],
    ["price", "price", ids[1], 2, "string", "eventsource"],
    // "news" is not in `events`: not delivered
    ["message", "message", ids[3], 4, "string", "eventsource"],
  ]);
  assert.equal(got.state, "closed");
  assert.deepEqual(got.after, { value: undefined, done: true });
  assert.deepEqual(p.errors, []);
  await p.close();
});

test("two iterators each see every message; return() of one closes the subscription and ends both", async () => {
  const p = await page();
  await p.evaluate(() => {
    window.sub = window.t.subscribe("/sse");
    window.a = window.sub[Symbol.asyncIterator]();
    window.b = window.sub[Symbol.asyncIterator]();
    window.pendingB = window.b.next().then((r) => [r, window.b.next()]);
  });
  await waitOpen(p);
  const { id } = await server.publish("x");
  const got = await p.evaluate(async () => {
    const a1 = await window.a.next();
    const [b1, b2p] = await window.pendingB;
    const ret = await window.a.return("bye");
    return { a1: [a1.done, a1.value.id], b1: [b1.done, b1.value.id], ret, b2: await b2p, state: window.sub.state };
  });
  assert.deepEqual(got, { a1: [false, id], b1: [false, id], ret: { value: "bye", done: true }, b2: { value: undefined, done: true }, state: "closed" });
  await p.close();
});

test("close(), [Symbol.dispose] and an aborted signal end a pending next() with done", async () => {
  const p = await page();
  const got = await p.evaluate(async () => {
    const { subscribe } = window.t;
    const results = {};
    const s1 = subscribe("/sse", { seed: 1 });
    const n1 = s1[Symbol.asyncIterator]().next();
    s1.close();
    results.close = [await n1, s1.state];

    const s2 = subscribe("/sse", { seed: 2 });
    const n2 = s2[Symbol.asyncIterator]().next();
    s2[Symbol.dispose]();
    results.dispose = [await n2, s2.state, Symbol.dispose !== undefined];

    const ac = new AbortController();
    const s3 = subscribe("/sse", { seed: 3, signal: ac.signal });
    const n3 = s3[Symbol.asyncIterator]().next();
    ac.abort();
    results.abort = [await n3, s3.state];

    const s4 = subscribe("/sse", { seed: 4, signal: AbortSignal.abort() });
    results.preAborted = [await s4[Symbol.asyncIterator]().next(), s4.state];
    s4.close(); // idempotent
    return results;
  });
  assert.deepEqual(got, {
    close: [{ value: undefined, done: true }, "closed"],
    dispose: [{ value: undefined, done: true }, "closed", true],
    abort: [{ value: undefined, done: true }, "closed"],
    preAborted: [{ value: undefined, done: true }, "closed"],
  });
  assert.deepEqual(p.errors, []);
  await p.close();
});

test("a fatal error rejects the pending next() with the error; the connection is released", async () => {
  const p = await page();
  await faults({ path: "/sse", fault: { kind: "status", status: 404 } });
  const got = await p.evaluate(async () => {
    const opts = { transports: ["fetch-sse"], seed: 9 };
    const sub = window.t.subscribe("/sse", opts);
    const errors = [];
    sub.addEventListener("error", (e) => errors.push(e.code));
    const it = sub[Symbol.asyncIterator]();
    const first = await it.next().then(() => "resolved", (e) => ({ name: e.name, code: e.code, status: e.status, fatal: e.fatal, type: e.type }));
    await new Promise((r) => setTimeout(r, 0)); // the wrapper closes on the next microtask
    const state = sub.state;
    const after = await it.next();
    // Same URL and options again: a fresh connection, not the dead shared one.
    const again = window.t.subscribe("/sse", opts);
    await new Promise((resolve) => { again.addEventListener("open", resolve); setTimeout(resolve, 3000); });
    const againState = again.state;
    again.close();
    return { first, errors, state, after, againState };
  });
  assert.deepEqual(got, {
    first: { name: "Error", code: "http-status", status: 404, fatal: true, type: "error" },
    errors: ["http-status"], // the app's own listener saw it too
    state: "closed",
    after: { value: undefined, done: true },
    againState: "open",
  });
  await p.close();
});

test("messages buffered before a fatal error are read first, then the read rejects once", async () => {
  const p = await page();
  const sse = 'id: 1\ndata: "a"\n\nid: 2\ndata: "b"\n\n';
  await faults([
    { path: "/sse", fault: { kind: "script", writes: [{ data: sse }], then: "fin" } },
    { path: "/sse", fault: { kind: "status", status: 410 } },
  ]);
  const got = await p.evaluate(async () => {
    const sub = window.t.subscribe("/sse", { transports: ["fetch-sse"], parse: "json", backoff: { floorMs: 10, baseMs: 10 }, seed: 5 });
    const it = sub[Symbol.asyncIterator]();
    await new Promise((resolve) => {
      sub.addEventListener("statechange", (e) => e.state === "closed" && setTimeout(resolve, 0));
    });
    const read = async () => it.next().then((r) => r.done ? "done" : r.value.data, (e) => `rejected ${e.code} ${e.status}`);
    return [await read(), await read(), await read(), await read()];
  });
  assert.deepEqual(got, ["a", "b", "rejected http-status 410", "done"]);
  await p.close();
});

test("a subscription the app does not hold keeps delivering after garbage collection", async () => {
  const p = await page();
  await p.evaluate(() => {
    window.got = [];
    window.opened = false;
    (() => {
      const sub = window.t.subscribe("/sse", { seed: 77 });
      sub.addEventListener("open", () => { window.opened = true; });
      sub.addEventListener("message", (e) => window.got.push(e.data));
    })();
  });
  await p.waitForFunction(() => window.opened);
  await p.evaluate(async () => {
    for (let i = 0; i < 5; i++) {
      window.gc();
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  await server.publish("still here");
  await p.waitForFunction(() => window.got.includes("still here"), null, { timeout: 3000 });
  await p.close();
});

test("init() takes a URL string, a Response promise, bytes or { module_or_path }, without deprecation warnings", async () => {
  const inputs = {
    string: () => "/pkg/tidings_bg.wasm",
    url: () => new URL("/pkg/tidings_bg.wasm", location.href),
    response: () => fetch("/pkg/tidings_bg.wasm"),
    bytes: async () => (await fetch("/pkg/tidings_bg.wasm")).arrayBuffer(),
    object: () => ({ module_or_path: "/pkg/tidings_bg.wasm" }),
  };
  for (const [name, make] of Object.entries(inputs)) {
    const p = await page({ init: false });
    const state = await p.evaluate(async (src) => {
      const make = (0, eval)(src);
      await window.t.default(await make());
      await window.t.default(); // idempotent
      const sub = window.t.subscribe("/sse");
      await new Promise((resolve) => sub.addEventListener("open", resolve));
      const s = sub.state;
      sub.close();
      return s;
    }, make.toString());
    assert.equal(state, "open", name);
    assert.deepEqual(p.warnings.filter((w) => /deprecated/.test(w)), [], name);
    assert.deepEqual(p.errors, [], name);
    await p.close();
  }
});

test("ErrorCode is frozen and complete; a non-http(s) URL throws invalid-url", async () => {
  const p = await page();
  const got = await p.evaluate(() => {
    const { ErrorCode, subscribe } = window.t;
    let thrown;
    try { subscribe("ftp://example.com/x"); } catch (e) { thrown = [e instanceof Error, e.code, e.code === ErrorCode.InvalidUrl]; }
    return { frozen: Object.isFrozen(ErrorCode), codes: Object.values(ErrorCode), thrown };
  });
  assert.equal(got.frozen, true);
  assert.deepEqual(got.codes, ["invalid-url", "invalid-option", "http-status", "no-content", "bad-content-type",
    "network-or-cors", "timeout", "too-large", "parse", "auth", "gave-up", "resume-ignored", "headers", "not-initialized",
    // The appender's four (docs/upstream.md).
    "stale-epoch", "sequence-gap", "stream-closed", "conflict"]);
  assert.deepEqual(got.thrown, [true, "invalid-url", true]);
  await p.close();
});

test("subscribe() before init() has resolved throws `not-initialized` (not a TypeError from the glue); after, it works", async () => {
  const p = await page({ init: false });
  const got = await p.evaluate(async () => {
    const { default: init, subscribe, ErrorCode } = window.t;
    const attempt = () => {
      try { subscribe("/sse").close(); return "ok"; } catch (e) {
        return [e.constructor.name, e.code, e.code === ErrorCode.NotInitialized, e.message];
      }
    };
    const before = attempt();
    const loading = init();
    const during = attempt();
    await loading;
    return { before, during, after: attempt() };
  });
  const thrown = ["Error", "not-initialized", true, "call init() before subscribe()"];
  assert.deepEqual(got, { before: thrown, during: thrown, after: "ok" });
  assert.deepEqual(p.errors, []);
  await p.close();
});

test("send() before init() has resolved rejects `not-initialized` (never throws); after, it works", async () => {
  const p = await page({ init: false });
  const got = await p.evaluate(async () => {
    const { default: init, send } = window.t;
    const attempt = async () => {
      let promise;
      try { promise = send("/send?close=1", "x"); } catch (e) { return ["threw", e.code]; }
      try { const r = await promise; return r.status; } catch (e) { return [e.constructor.name, e.code, e.message]; }
    };
    const before = await attempt();
    await init();
    return { before, after: await attempt() };
  });
  assert.deepEqual(got, { before: ["Error", "not-initialized", "call init() before send()"], after: 201 });
  assert.deepEqual(p.errors, []);
  await p.close();
});
