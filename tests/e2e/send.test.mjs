// send() (docs/upstream.md) in headless Chromium against the reference server's
// POST /send (an idempotency store: key → first answer, replayed; 409 in
// flight; 422 for another body) and its faults. The package entry
// (/pkg/index.js) is loaded, as an app would.
//
// Every send goes to `/send?close=1`: Chromium re-sends a POST by itself when
// a reused keep-alive connection closes before any byte of the answer
// (server/README.md, drop-response), which would hide a dropped response from
// the client; a fresh connection per request makes each drop a network error.
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import { entryPage, faults, clearFaults, clearLog, restart, requests, waitRequests, sleep } from "./tidings-page.mjs";
import { assertOneKey, settled, trackSends } from "./send.mjs";

const PAGES = new URL("./pages/", import.meta.url).pathname;
let server, browser;
before(async () => {
  server = await startServer(["--www", PAGES]);
  browser = await launchBrowser();
});
after(async () => { await browser?.close(); await server?.stop(); });
// A failed test must not leave its sends running into the next one.
const contexts = [];
afterEach(async () => { await Promise.all(contexts.splice(0).map((c) => c.close().catch(() => {}))); });

/**
 * `f()` again after a network error: `/_restart` cuts every connection but
 * the caller's, this process's idle keep-alive ones included, and a request
 * sent on one before the close is noticed fails without reaching the server.
 */
async function retrying(f) {
  for (let i = 0; ; i++) {
    try { return await f(); } catch (e) {
      if (i >= 3 || !(e instanceof TypeError)) throw e;
      await sleep(50);
    }
  }
}

/** A fresh context and page on the server's origin with `window.t` = the package. */
async function page() {
  const context = await browser.newContext();
  contexts.push(context);
  const p = await entryPage(browser, server.url, { context, setup: trackSends });
  p.context_ = context;
  return p;
}

async function applied() {
  return retrying(async () => (await (await fetch(`${server.url}/_send`)).json()).applied);
}
async function clearSends() {
  await retrying(() => fetch(`${server.url}/_send/clear`, { method: "POST" }));
  await retrying(() => clearFaults(server));
  await retrying(() => clearLog(server));
}
const tag = () => `t${Date.now()}${Math.floor(Math.random() * 1e6)}`;
const FAST = { backoff: { floorMs: 50, baseMs: 100, maxMs: 1000 } };

test("chaos: 1,000 sends while 20 % of answers are dropped after the apply and the server restarts twice → each applied exactly once, every promise settled once with the server's answer, ordered sends in call order", async () => {
  await clearSends();
  const p = await page();
  await faults(server, { path: "/send", times: null, fault: { kind: "drop-response", probability: 0.2, seed: 7 } });
  const N = 1000, ORDERED = 50;
  const started = Date.now();
  await p.evaluate(({ N, ORDERED, FAST }) => {
    const options = { ...FAST, maxAttempts: Infinity, timeoutMs: 20_000 };
    for (let i = 0; i < N; i++) window.track(`c${i}`, window.t.send("/send?close=1", `c-${i}`, options));
    // Its own URL string, so its own queue.
    for (let i = 0; i < ORDERED; i++) window.track(`o${i}`, window.t.send("/send?close=1&q=o", `o-${i}`, { ...options, ordered: true }));
  }, { N, ORDERED, FAST });
  // Two restarts (connections cut, 300 ms of refused requests) while sends run.
  for (const at of [N * 0.3, N * 0.7]) {
    for (let i = 0; (await applied()).length < at; i++) {
      assert.ok(i < 2000, "the sends stalled before the restart");
      await sleep(20);
    }
    await retrying(() => restart(server, { ms: 300 }));
  }
  await p.waitForFunction((n) => Object.values(window.sends).filter((s) => s.settled).length === n, N + ORDERED, { timeout: 90_000, polling: 200 });
  const took = Date.now() - started;
  const sends = await p.evaluate(() => window.sends);
  const list = await applied();
  const { rules } = await retrying(async () => (await fetch(`${server.url}/_faults`)).json());
  await retrying(() => clearFaults(server));

  // Every promise settled exactly once, fulfilled with a 201.
  const rejected = Object.entries(sends).filter(([, s]) => s.error);
  assert.deepEqual(rejected.slice(0, 3), [], "no send rejected");
  for (const [name, s] of Object.entries(sends)) assert.equal(s.settled, 1, name);
  // Each key applied exactly once, each body once.
  assert.equal(list.length, N + ORDERED, "applied count");
  assert.equal(new Set(list.map((a) => a.key)).size, N + ORDERED, "distinct keys");
  assert.equal(new Set(list.map((a) => a.body)).size, N + ORDERED, "distinct bodies");
  // The answer of each promise is the server's answer for its own body.
  const byKey = new Map(list.map((a) => [a.key, a]));
  let replayed = 0, attempts = 0;
  for (const [name, s] of Object.entries(sends)) {
    const answer = JSON.parse(s.value.body);
    const a = byKey.get(answer.key);
    assert.ok(a, `${name}: its key was applied`);
    assert.equal(a.body, `${name[0]}-${name.slice(1)}`, `${name}: its own body`);
    assert.equal(a.seq, answer.seq, `${name}: the stored answer`);
    assert.equal(s.value.status, 201);
    assert.equal(s.value.replayed, s.value.replayedHeader === "true");
    replayed += s.value.replayed;
    attempts += s.value.attempts;
  }
  // Ordered sends applied in call order.
  const ordered = list.filter((a) => a.body.startsWith("o-")).map((a) => a.body);
  assert.deepEqual(ordered, Array.from({ length: ORDERED }, (_, i) => `o-${i}`));
  const drop = rules.find((r) => r.fault.kind === "drop-response");
  // Each drop is answered by a replay on the retry (about 20 % of the sends;
  // a margin): a client that did not retry with the same key would show none.
  assert.ok(replayed >= 50, `replayed answers: ${replayed}`);
  assert.equal(p.errors.length, 0, p.errors.join("\n"));
  console.log(`chaos: ${N + ORDERED} sends in ${took} ms, ${attempts} attempts, ${replayed} answers replayed, drop rule taken ${JSON.stringify(drop ?? rules)}`);
  await p.context_.close();
});

test("a permanent 422 (the key reused with another body) rejects at once with code, status (in the message too) and attempts", async () => {
  await clearSends();
  const p = await page();
  const key = tag();
  await p.evaluate((key) => window.track("a", window.t.send("/send?close=1", "first", { idempotencyKey: key })), key);
  assert.equal((await settled(p, "a")).value.status, 201);
  await p.evaluate((key) => window.track("b", window.t.send("/send?close=1", "other", { idempotencyKey: key, ...{ backoff: { floorMs: 50 } } })), key);
  const b = await settled(p, "b");
  assert.deepEqual(
    { code: b.error.code, status: b.error.status, attempts: b.error.attempts, message: b.error.message },
    { code: "http-status", status: 422, attempts: 1, message: `send failed: http-status 422 (${server.url}/send?close=1)` },
  );
  const reqs = await requests(server, "/send");
  assert.equal(reqs.length, 2, "no retry of a 422");
  assert.deepEqual(reqs.map((r) => r.headers["idempotency-key"]), [`"${key}"`, `"${key}"`]);
  await p.context_.close();
});

test("the generated key: a UUID as an sf-string, the same on every attempt; a dropped answer is replayed", async () => {
  await clearSends();
  const p = await page();
  await faults(server, { path: "/send", times: 1, fault: { kind: "drop-response" } });
  await faults(server, { path: "/send", times: 1, fault: { kind: "status", status: 503, retry_after: 1 } });
  // Cut the page's idle keep-alive connections (from loading it), so the
  // first attempt goes on a fresh one and its drop reaches the client
  // instead of being re-sent by Chromium itself (server/README.md).
  await restart(server, { ms: 0 });
  await p.evaluate((FAST) => window.track("k", window.t.send("/send?close=1", "x", FAST)), FAST);
  const k = await settled(p, "k");
  const reqs = await retrying(() => requests(server, "/send"));
  assert.equal(k.value.status, 201);
  assert.equal(k.value.attempts, 3);
  assert.equal(k.value.replayed, true);
  assert.equal(reqs.length, 3);
  assertOneKey(reqs);
  // Retry-After: 1 was obeyed (as asked, plus at most 100 ms of spread).
  assert.ok(reqs[2].t_ms - reqs[1].t_ms >= 950, `waited ${reqs[2].t_ms - reqs[1].t_ms} ms`);
  assert.equal((await applied()).length, 1);
  await p.context_.close();
});

test("abort: rejects with the AbortError, nothing more is sent; an aborted signal sends nothing", async () => {
  await clearSends();
  const p = await page();
  await faults(server, { path: "/send", times: null, fault: { kind: "status", status: 503 } });
  await p.evaluate((FAST) => {
    window.ac = new AbortController();
    window.track("a", window.t.send("/send?close=1", "x", { ...FAST, backoff: { floorMs: 100, baseMs: 10 }, maxAttempts: Infinity, signal: window.ac.signal }));
  }, FAST);
  await waitRequests(server, "/send", (e) => e.length >= 2, 5000, "two attempts");
  await p.evaluate(() => window.ac.abort());
  const a = await settled(p, "a");
  assert.equal(a.error.name, "AbortError");
  const n = (await requests(server, "/send")).length;
  // At most one retry every ~110 ms while it ran: 1 s would show ~9 more.
  await sleep(1000);
  assert.equal((await requests(server, "/send")).length, n, "no request after the abort");

  await p.evaluate(() => {
    const ac = new AbortController();
    ac.abort();
    window.track("b", window.t.send("/send?close=1&q=b", "y", { signal: ac.signal }));
  });
  const b = await settled(p, "b");
  assert.equal(b.error.name, "AbortError");
  assert.equal((await requests(server, "/send")).filter((r) => (r.query ?? "").includes("q=b")).length, 0);
  await clearFaults(server);
  await p.context_.close();
});

test("offline: no attempt until online, then one", async () => {
  await clearSends();
  const p = await page();
  await p.context_.setOffline(true);
  await p.evaluate(() => window.track("o", window.t.send("/send?close=1", "offline", { backoff: { floorMs: 50 } })));
  await sleep(800);
  assert.equal((await requests(server, "/send")).length, 0, "nothing sent while offline");
  assert.equal(await p.evaluate(() => window.sends.o.settled), 0);
  await p.context_.setOffline(false);
  const o = await settled(p, "o");
  assert.equal(o.value.status, 201);
  assert.equal(o.value.attempts, 1);
  assert.equal((await applied()).length, 1);
  await p.context_.close();
});

test("idempotencyHeader: X-Idempotency-Key carries the given key; without it that server answers 400 (permanent)", async () => {
  await clearSends();
  const p = await page();
  const path = "/send?close=1&key_header=X-Idempotency-Key";
  await p.evaluate((path) => {
    window.track("x", window.t.send(path, "x", { idempotencyHeader: "X-Idempotency-Key", idempotencyKey: "order-1 \"a\\b\"" }));
    window.track("d", window.t.send(path, "d"));
  }, path);
  const x = await settled(p, "x");
  assert.equal(x.value.status, 201);
  assert.equal(JSON.parse(x.value.body).key, "order-1 \"a\\b\"");
  const d = await settled(p, "d");
  assert.deepEqual([d.error.code, d.error.status, d.error.attempts, d.error.message], ["http-status", 400, 1, `send failed: http-status 400 (${server.url}${path})`]);
  const reqs = await requests(server, "/send");
  const sent = reqs.map((r) => r.headers["x-idempotency-key"]).filter(Boolean);
  assert.deepEqual(sent, ['"order-1 \\"a\\\\b\\""']);
  await p.context_.close();
});

test("options are checked before anything is sent: invalid-option / invalid-url rejections", async () => {
  await clearSends();
  const p = await page();
  const got = await p.evaluate(async () => {
    const bad = [
      ["/send", "x", { method: "GET" }],
      ["/send", "x", { method: "TRACE" }],
      ["/send", "x", { maxAttempts: 0 }],
      ["/send", "x", { timeoutMs: -1 }],
      ["/send", "x", { idempotencyKey: "é" }],
      ["/send", "x", { idempotencyKey: "" }],
      ["/send", "x", { idempotencyKey: "k".repeat(256) }],
      ["/send", "x", { idempotencyHeader: "Bad Header" }],
      ["/send", "x", { headers: 5 }],
      ["/send", "x", { signal: {} }],
      ["/send", "x", { ordered: "yes" }],
      ["/send", new ReadableStream(), {}],
      ["ftp://x/", "x", {}],
    ];
    // A transferred (detached) buffer, and a view of one: no bytes to send.
    const detached = new ArrayBuffer(8);
    const view = new Uint8Array(detached, 2, 4);
    structuredClone(detached, { transfer: [detached] });
    bad.push(["/send", detached, {}], ["/send", view, {}], ["/send", { text: "an object, not JSON" }, {}]);
    // Forbidden request-header names (Fetch): the browser would drop the key without a word.
    for (const name of ["Cookie", "sec-idempotency-key", "Proxy-Key", "Content-Length"]) bad.push([`/send?key_header=${name}`, "x", { idempotencyHeader: name }]);
    const out = [];
    for (const [url, body, o] of bad) {
      try { await window.t.send(url, body, o); out.push("resolved"); } catch (e) { out.push(`${e.code}: ${e.message}`); }
    }
    return out;
  });
  const bad = (name, expected, given) => `invalid-option: invalid option: ${name}: expected ${expected}, got ${given}`;
  const method = "a method fetch sends (no GET/HEAD with a body)";
  const key = "non-empty printable ASCII, at most 255 characters";
  const body = "a string, ArrayBuffer, view, Blob, URLSearchParams or FormData";
  const header = (name) => bad("idempotencyHeader", "a header name fetch sends", `"${name}" (string)`);
  assert.deepEqual(got, [
    bad("method", method, '"GET" (string)'),
    bad("method", method, '"TRACE" (string)'),
    bad("maxAttempts", "a number ≥ 1 or Infinity", "0 (number)"),
    bad("timeoutMs", "a non-negative number of milliseconds", "-1 (number)"),
    bad("idempotencyKey", key, '"é" (string)'),
    bad("idempotencyKey", key, '"" (string)'),
    bad("idempotencyKey", key, `"${"k".repeat(59)}… (string)`),
    header("Bad Header"),
    bad("headers", "valid headers (an object) or a function", "5 (number)"),
    bad("signal", "an AbortSignal", "[object Object] (object)"),
    bad("ordered", "a boolean", '"yes" (string)'),
    bad("body", body, "[object ReadableStream] (object)"),
    "invalid-url: url must be relative, or http: or https: with a host",
    bad("body", "a buffer not detached", "[object ArrayBuffer] (object)"),
    bad("body", "a buffer not detached", "object"),
    bad("body", body, "[object Object] (object)"),
    ...["Cookie", "sec-idempotency-key", "Proxy-Key", "Content-Length"].map(header),
  ]);
  assert.equal((await requests(server, "/send")).length, 0);
  await p.context_.close();
});

test("headers: a function gets { url, attempt } before each attempt; one that throws rejects with code headers and its cause, nothing sent", async () => {
  await clearSends();
  const p = await page();
  await faults(server, { path: "/send", times: 1, fault: { kind: "status", status: 500 } });
  await p.evaluate((FAST) => {
    window.ctxs = [];
    window.track("h", window.t.send("/send?close=1", "h", { ...FAST, headers: async (ctx) => { window.ctxs.push(ctx.attempt); return { Authorization: `Bearer t${ctx.attempt}` }; } }));
    window.track("e", window.t.send("/send?close=1&q=e", "e", { headers: () => { throw new Error("no token"); } }));
  }, FAST);
  const h = await settled(p, "h");
  assert.equal(h.value.attempts, 2);
  assert.deepEqual(await p.evaluate(() => window.ctxs), [1, 2]);
  const e = await settled(p, "e");
  assert.deepEqual([e.error.code, e.error.attempts, e.error.cause], ["headers", 1, "Error: no token"]);
  const reqs = await requests(server, "/send");
  assert.deepEqual(reqs.map((r) => r.headers.authorization), ["Bearer t1", "Bearer t2"]);
  await p.context_.close();
});

test("pagehide: a pending send that fits the 64 KiB keepalive budget is re-sent with keepalive and applied once; one that does not fit is abandoned", async () => {
  await clearSends();
  const p = await page();
  // Both sends' first attempts get 503 + Retry-After: 60: pending, waiting.
  await faults(server, { path: "/send", times: 2, fault: { kind: "status", status: 503, retry_after: 60 } });
  await p.evaluate(() => {
    window.track("small", window.t.send("/send?close=1&q=small", "small body"));
    window.track("big", window.t.send("/send?close=1&q=big", "b".repeat(70 * 1024)));
  });
  await waitRequests(server, "/send", (e) => e.filter((r) => r.status === 503).length === 2, 5000, "two 503s");
  await p.goto(`${server.url}/_faults?left=1`);
  const reqs = await waitRequests(server, "/send", (e) => e.length >= 3, 5000, "the keepalive copy");
  await sleep(500); // room for a wrong copy of the big one to arrive
  const after = await requests(server, "/send");
  assert.equal(after.length, 3, JSON.stringify(after.map((r) => r.query)));
  assert.ok(reqs[2].query.includes("q=small"));
  assert.equal(reqs[2].headers["idempotency-key"], reqs.find((r) => r.query.includes("q=small")).headers["idempotency-key"]);
  const list = await applied();
  assert.deepEqual(list.map((a) => a.body), ["small body"]);
  await p.context_.close();
});

test("pagehide: a pending report and a pending append go with keepalive too (one 64 KiB budget for every kind); a report over the budget is counted in the debug line", async () => {
  await clearSends();
  const p = await page();
  // Every first attempt gets 503 + Retry-After: 60: each waits for its retry.
  await faults(server, { path: "/send", times: 3, fault: { kind: "status", status: 503, retry_after: 60 } });
  await p.evaluate(() => {
    // The debug line, kept where the next page of this origin reads it.
    const debug = console.debug;
    console.debug = (...a) => {
      if (a[1] === "pagehide") localStorage.setItem("pagehide", JSON.stringify(a.slice(1)));
      debug.apply(console, a);
    };
    window.t.report("/send?close=1&q=report", () => "report body", { startupJitterMs: 0 });
    window.t.report("/send?close=1&q=big", () => "b".repeat(70 * 1024), { startupJitterMs: 0 });
    window.out = window.t.appender("/send?close=1&q=append", { headers: { "Idempotency-Key": '"append-key"' } });
    window.out.append("appended").catch(() => {});
  });
  await waitRequests(server, "/send", (e) => e.filter((r) => r.status === 503).length === 3, 5000, "three 503s");
  await p.goto(`${server.url}/_faults?left=1`);
  const reqs = await waitRequests(server, "/send", (e) => e.length >= 5, 5000, "the keepalive copies");
  await sleep(500); // room for a wrong copy of the big report to arrive
  const after = await requests(server, "/send");
  const q = (r) => new URLSearchParams(r.query).get("q");
  assert.deepEqual(after.slice(3).map(q).sort(), ["append", "report"], JSON.stringify(after.map((r) => [r.query, r.status])));
  const first = (name) => reqs.find((r) => q(r) === name);
  assert.equal(after.find((r, i) => i >= 3 && q(r) === "report").headers["idempotency-key"], first("report").headers["idempotency-key"]);
  assert.deepEqual((await applied()).map((a) => a.body).sort(), ['["appended"]', "report body"]);
  assert.deepEqual(JSON.parse(await p.evaluate(() => localStorage.getItem("pagehide"))), ["pagehide", 1]);
  await p.context_.close();
});

test("pagehide with persisted (back-forward cache): the keepalive copy is applied; back on the page the send goes on and settles with the server's replay", async () => {
  const b = await launchBrowser({ ignoreDefaultArgs: ["--disable-back-forward-cache"] });
  try {
    await clearSends();
    const p = await b.newPage();
    await p.goto(`${server.url}/blank.html`);
    await p.evaluate(async () => {
      window.t = await import("/pkg/index.js");
      await window.t.default();
      window.addEventListener("pagehide", (e) => { window.hidden = e.persisted; });
      window.addEventListener("pageshow", (e) => { window.shown = e.persisted; });
    });
    await faults(server, { path: "/send", times: 1, fault: { kind: "status", status: 503, retry_after: 2 } });
    await p.evaluate(() => {
      window.r = window.t.send("/send?close=1", "bf").then(
        (r) => ({ status: r.status, attempts: r.attempts, replayed: r.replayed }),
        (e) => ({ error: e.code }));
    });
    await waitRequests(server, "/send", (e) => e.length === 1 && e[0].status === 503, 5000, "the 503");
    await p.goto(`${server.url}/other.html`);
    const copy = await waitRequests(server, "/send", (e) => e.length === 2 && e[1].status === 201, 5000, "the keepalive copy");
    assert.equal(copy[1].headers["idempotency-key"], copy[0].headers["idempotency-key"]);
    assert.deepEqual((await applied()).map((a) => a.body), ["bf"]);
    await p.goBack({ waitUntil: "commit" });
    await p.waitForFunction(() => window.shown !== undefined, null, { timeout: 5000 });
    assert.deepEqual(await p.evaluate(() => [window.hidden, window.shown]), [true, true], "left for and restored from the back-forward cache");
    assert.deepEqual(await p.evaluate(() => window.r), { status: 201, attempts: 2, replayed: true });
    assert.deepEqual((await applied()).map((a) => a.body), ["bf"], "applied once");
  } finally {
    await b.close();
  }
});

test("without crypto.randomUUID (not a secure context) the key is a v4 UUID from crypto.getRandomValues, one per send", async () => {
  await clearSends();
  const p = await page();
  await p.evaluate(() => {
    delete Crypto.prototype.randomUUID;
    window.track("a", window.t.send("/send?close=1", "a"));
    window.track("b", window.t.send("/send?close=1", "b"));
  });
  assert.equal((await settled(p, "a")).value.status, 201);
  assert.equal((await settled(p, "b")).value.status, 201);
  const keys = (await requests(server, "/send")).map((r) => r.headers["idempotency-key"]);
  assert.equal(keys.length, 2);
  assert.notEqual(keys[0], keys[1]);
  for (const k of keys) assert.match(k, /^"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"$/);
  assert.equal(await p.evaluate(() => typeof crypto.randomUUID), "undefined");
  await p.context_.close();
});

test("ordered: a send queued behind a head that retries for ever still rejects timeout at its deadlineMs, counted from the call, nothing sent; the queue goes on", async () => {
  await clearSends();
  const p = await page();
  await faults(server, { path: "/send", times: null, fault: { kind: "status", status: 503 } });
  await p.evaluate((FAST) => {
    window.ac = new AbortController();
    const o = { ...FAST, ordered: true };
    window.track("head", window.t.send("/send?close=1&q=dq", "head", { ...o, maxAttempts: Infinity, signal: window.ac.signal }));
    window.track("queued", window.t.send("/send?close=1&q=dq", "queued", { ...o, deadlineMs: 300 }));
    window.track("last", window.t.send("/send?close=1&q=dq", "last", o));
  }, FAST);
  const q = await settled(p, "queued", 5000);
  assert.deepEqual([q.error?.code, q.error?.attempts], ["timeout", 0]);
  assert.equal(await p.evaluate(() => window.sends.head.settled), 0, "the head still retrying");
  // Abort the head before the faults go: the other way round, a retry of
  // the head could land between the two steps on a loaded machine.
  await p.evaluate(() => window.ac.abort());
  await clearFaults(server);
  assert.equal((await settled(p, "last")).value.status, 201, "the next one after the head");
  const bodies = (await applied()).map((a) => a.body);
  assert.deepEqual(bodies, ["last"]);
  assert.equal(p.errors.length, 0, p.errors.join("\n"));
});

test("bodies of each kind arrive byte for byte: string, Blob, ArrayBuffer, a typed-array window, a DataView, URLSearchParams; the caller's later changes are not sent", async () => {
  await clearSends();
  const p = await page();
  await p.evaluate(() => {
    const enc = (s) => new TextEncoder().encode(s);
    const buf = enc("buffer").buffer;
    const usp = new URLSearchParams("a=1&b=é");
    const view = enc("XXwindowYY").subarray(2, 8);
    const bodies = {
      string: "héllo", blob: new Blob(["blob"]), buffer: buf, view,
      dataview: new DataView(enc("..dv..").buffer, 2, 2), usp,
    };
    for (const [name, body] of Object.entries(bodies)) window.track(name, window.t.send(`/send?close=1&q=${name}`, body));
    new Uint8Array(buf)[0] = 66; view[0] = 87; usp.set("a", "2");
  });
  for (const name of ["string", "blob", "buffer", "view", "dataview", "usp"]) assert.equal((await settled(p, name)).value?.status, 201, name);
  const bodies = (await applied()).map((a) => a.body).sort();
  assert.deepEqual(bodies, ["a=1&b=%C3%A9", "blob", "buffer", "dv", "héllo", "window"].sort());
});

test("headers function whose promise never settles: each attempt that timed out is abandoned, so the send rejects gave-up after maxAttempts and then holds nothing of the app's (the function is collected), nothing sent", async () => {
  await clearSends();
  const p = await page();
  const cdp = await p.context_.newCDPSession(p);
  await p.evaluate((FAST) => {
    window.calls = 0;
    window.freed = [];
    window.registry = new FinalizationRegistry((name) => window.freed.push(name));
    // Only the send holds the function: once its attempts are abandoned
    // and it settled, nothing does.
    (() => {
      const headers = () => { window.calls++; return new Promise(() => {}); };
      window.registry.register(headers, "headers");
      window.track("never", window.t.send("/send?close=1&q=never", "n", {
        ...FAST, headers, timeoutMs: 100, maxAttempts: 3,
      }));
    })();
  }, FAST);
  const n = await settled(p, "never");
  assert.deepEqual([n.error.code, n.error.attempts], ["gave-up", 3]);
  // One call per attempt: an attempt still waiting would not count more,
  // but a leaked one keeps the function alive below.
  assert.equal(await p.evaluate(() => window.calls), 3);
  let freed = [];
  for (let i = 0; i < 40 && freed.length === 0; i++) {
    await cdp.send("HeapProfiler.collectGarbage");
    await sleep(50);
    freed = await p.evaluate(() => window.freed);
  }
  assert.deepEqual(freed, ["headers"], "the send's attempts still hold the headers function: leaked");
  assert.equal(await p.evaluate(() => window.sends.never.settled), 1);
  assert.deepEqual(await requests(server, "/send"), []);
  await p.context_.close();
});

test("headers: a function that returns a Headers is used as fetch would; one that returns junk (an array, a number, a string) rejects with code headers, nothing sent", async () => {
  await clearSends();
  const p = await page();
  await p.evaluate(() => {
    window.track("h", window.t.send("/send?close=1&q=h", "h", { headers: () => new Headers({ Authorization: "Bearer h" }) }));
    window.track("none", window.t.send("/send?close=1&q=none", "none", { headers: () => undefined }));
    window.track("array", window.t.send("/send?close=1&q=array", "a", { headers: () => [["Authorization", "Bearer a"]] }));
    window.track("number", window.t.send("/send?close=1&q=number", "n", { headers: async () => 5 }));
    window.track("string", window.t.send("/send?close=1&q=string", "s", { headers: () => "Authorization: Bearer s" }));
  });
  assert.equal((await settled(p, "h")).value?.status, 201);
  assert.equal((await settled(p, "none")).value?.status, 201);
  for (const name of ["array", "number", "string"]) {
    const e = (await settled(p, name)).error;
    assert.deepEqual([e?.code, e?.attempts, e?.cause?.startsWith("TypeError")], ["headers", 1, true], name);
  }
  const reqs = await requests(server, "/send");
  assert.deepEqual(reqs.map((r) => [r.query, r.headers.authorization ?? null]).sort(), [["close=1&q=h", "Bearer h"], ["close=1&q=none", null]]);
});

test("no page state borrowed while app code runs: a send() from a patched addEventListener (the first send's page listeners) works, both applied", async () => {
  await clearSends();
  const p = await page();
  await p.evaluate(() => {
    const add = window.addEventListener;
    window.addEventListener = function (type, f, o) {
      window.addEventListener = add;
      if (type === "online") window.track("inner", window.t.send("/send?close=1&q=inner", "inner"));
      return add.call(this, type, f, o);
    };
    window.track("outer", window.t.send("/send?close=1&q=outer", "outer"));
  });
  assert.equal((await settled(p, "outer")).value?.status, 201);
  assert.equal((await settled(p, "inner")).value?.status, 201);
  assert.deepEqual((await applied()).map((a) => a.body).sort(), ["inner", "outer"]);
  assert.equal(p.errors.length, 0, p.errors.join("\n"));
});

test("ordered: 5,000 queued sends whose deadlines passed while the page was busy settle timeout one by one when the head settles (no recursion: it overflowed the wasm stack); the head resolves, later sends work", async () => {
  await clearSends();
  const p = await page();
  const r = await p.evaluate(async () => {
    const N = 5000, url = "/send?close=1&delay_ms=200&q=deep";
    const out = { head: null, timeout: 0, other: [] };
    const all = [window.t.send(url, "head", { ordered: true }).then((v) => { out.head = v.status; }, (e) => { out.head = String(e); })];
    for (let i = 0; i < N; i++) {
      all.push(window.t.send(url, `q${i}`, { ordered: true, deadlineMs: 100 })
        .then(() => out.other.push("resolved"), (e) => (e.code === "timeout" ? out.timeout++ : out.other.push(String(e)))));
    }
    // Busy past every deadline: their timers wait behind this task, so
    // when the head's answer comes most of the queue is already due.
    const t0 = performance.now();
    while (performance.now() - t0 < 600);
    await Promise.race([Promise.all(all), new Promise((r) => setTimeout(r, 20_000))]);
    try { out.after = (await window.t.send("/send?close=1&q=after", "after")).status; } catch (e) { out.after = String(e); }
    out.other = out.other.slice(0, 3);
    return out;
  });
  assert.deepEqual(r, { head: 201, timeout: 5000, other: [], after: 201 });
  assert.equal(p.errors.length, 0, p.errors.slice(0, 3).join("\n"));
});

test("offline for longer than deadlineMs: rejects timeout with attempts 0 at the deadline, nothing sent", async () => {
  await clearSends();
  const p = await page();
  await p.context_.setOffline(true);
  await p.evaluate(() => window.track("o", window.t.send("/send?close=1&q=off", "off", { deadlineMs: 400 })));
  const o = await settled(p, "o", 5000);
  assert.deepEqual([o.error?.code, o.error?.attempts, o.settled], ["timeout", 0, 1]);
  await p.context_.setOffline(false);
  await sleep(300);
  assert.equal((await requests(server, "/send")).length, 0, "nothing sent, not even once online");
});

test("an answer body over the 1 MiB cap rejects too-large with its status and is read no further (one that never ends included), not retried; exactly 1 MiB resolves", async () => {
  await clearSends();
  const p = await page();
  const MiB = 1_048_576;
  const script = (n, then) => ({ kind: "script", status: 200, content_type: "text/plain", writes: [{ data: "x", repeat: n }], then });
  await faults(server, [
    { path: "/big", fault: script(MiB, "fin") },
    { path: "/big", fault: script(MiB + 1, "hang") },
  ]);
  await p.evaluate(() => window.track("fits", window.t.send("/big", "a", { timeoutMs: 5000 })));
  const fits = await settled(p, "fits");
  assert.deepEqual([fits.value?.status, fits.value?.body.length], [200, MiB], JSON.stringify(fits.error));
  // The body never ends: reading it whole would wait for the attempt's
  // timeout (5 s) and retry; the cap ends it after 1 MiB + 1 byte.
  await p.evaluate(() => window.track("over", window.t.send("/big", "b", { timeoutMs: 5000 })));
  const over = await settled(p, "over");
  assert.deepEqual(
    { code: over.error?.code, status: over.error?.status, attempts: over.error?.attempts, message: over.error?.message },
    { code: "too-large", status: 200, attempts: 1, message: `send failed: too-large (${server.url}/big)` },
    JSON.stringify(over),
  );
  assert.equal((await requests(server, "/big")).length, 2, "no retry");
  assert.deepEqual(p.errors, []);
  await p.context_.close();
});

test("an answer body read under the cap decodes as fetch's text() does: a leading UTF-8 BOM is dropped (JSON.parse of the body works), a BOM further in stays", async () => {
  await clearSends();
  const p = await page();
  await faults(server, [
    { path: "/bom", fault: { kind: "status", status: 200, content_type: "application/json", body: "\ufeff{\"ok\":1}" } },
    { path: "/bom", fault: { kind: "status", status: 200, content_type: "text/plain", body: "a\ufeffb" } },
  ]);
  await p.evaluate(() => window.track("bom", window.t.send("/bom", "a")));
  const bom = await settled(p, "bom");
  assert.equal(bom.value?.body, "{\"ok\":1}", JSON.stringify(bom));
  assert.deepEqual(JSON.parse(bom.value.body), { ok: 1 });
  await p.evaluate(() => window.track("inner", window.t.send("/bom", "b")));
  const inner = await settled(p, "inner");
  assert.equal(inner.value?.body, "a\ufeffb", JSON.stringify(inner));
  assert.deepEqual(p.errors, []);
  await p.context_.close();
});
