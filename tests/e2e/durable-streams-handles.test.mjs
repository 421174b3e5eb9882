// stream(url, options) (docs/durable-streams.md "Stream handles") in headless
// Chromium through the package entry, cross-origin against the Durable
// Streams reference server from npm (in memory, started by
// durable-streams.mjs): create (201, then 200 with the same configuration,
// conflict with another), HEAD, close, delete, each refusal typed
// (not-found, gone, conflict), options refused before any request, and
// retries of 5xx as a send's (a 409 with Retry-After is retried too, in the
// native tests: cross-origin the npm server does not expose Retry-After).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import { entryPage } from "./tidings-page.mjs";
import { startDurableStreams } from "./durable-streams.mjs";

let web;
let browser;
let ds;
let page;
let n = 0;

before(async () => {
  web = await startServer();
  browser = await launchBrowser();
  ds = await startDurableStreams();
  page = await entryPage(browser, web.url, {
    setup: () => {
      // Each operation's outcome: its result, or `{ code, status, message }`.
      window.settle = (p) => p.then((r) => r ?? "done", (e) => ({ code: e.code, status: e.status, message: e.message }));
      window.FAST = { backoff: { floorMs: 50, baseMs: 100, maxMs: 400 }, timeoutMs: 5000 };
    },
  });
});
after(async () => {
  await page?.close();
  await browser?.close();
  await web?.stop();
  await ds?.stop();
});

/** The requests of `path` but the CORS preflights (`OPTIONS`). */
const sent = (path) => ds.requestsOf(path).filter((e) => e.method !== "OPTIONS");
const streamPath = () => `/v1/stream/h${Date.now()}-${++n}`;

/** `ops(h)` run in the page on `stream(url, FAST)` as `h`, with `window.settle` at hand. */
const inPage = (url, ops) => page.evaluate(`(async () => { const h = window.t.stream(${JSON.stringify(url)}, window.FAST); const settle = window.settle; return (${ops})(h); })()`);

test("create, create again, HEAD, close, HEAD: status, tail offset, closed and content type as the server says", async () => {
  const path = streamPath();
  const url = ds.url + path;
  const out = await inPage(url, `async (h) => [
    await settle(h.create({ contentType: "text/plain", body: "hello" })),
    await settle(h.create({ contentType: "text/plain" })),
    await settle(h.head()),
    await settle(h.close()),
    await settle(h.close()),
    await settle(h.head()),
  ]`);
  const [created, again, head, closed, closedAgain, headClosed] = out;
  assert.equal(created.status, 201);
  assert.equal(created.closed, false);
  assert.equal(created.contentType, "text/plain");
  assert.match(created.offset, /^[0-9_]+$/);
  assert.deepEqual(again, { ...created, status: 200 });
  assert.deepEqual(head, { status: 200, offset: created.offset, closed: false, contentType: "text/plain" });
  assert.equal(closed.status, 204);
  assert.equal(closed.closed, true);
  assert.equal(closed.offset, created.offset);
  assert.deepEqual(closedAgain, closed);
  assert.deepEqual(headClosed, { ...head, closed: true });
  const r = await fetch(`${url}?offset=-1`);
  assert.equal(await r.text(), "hello");
  const methods = sent(path).map((e) => e.method).filter((m) => m !== "GET");
  assert.deepEqual(methods, ["PUT", "PUT", "HEAD", "POST", "POST", "HEAD"]);
  const put = sent(path)[0].headers;
  assert.equal(put["content-type"], "text/plain");
  assert.equal(put["idempotency-key"], undefined, "no idempotency key: no preflight for it");
  assert.equal(sent(path)[3].headers["stream-closed"], "true");
  assert.deepEqual(page.errors, []);
});

test("create's options: the JSON default, Stream-TTL, Stream-Expires-At, created closed with its body; another configuration is a conflict", async () => {
  const [a, b, c] = [streamPath(), streamPath(), streamPath()];
  const out = await inPage(ds.url, `async () => {
    const s = (p) => window.t.stream(${JSON.stringify(ds.url)} + p, window.FAST);
    return [
      await settle(s(${JSON.stringify(a)}).create({ ttlSeconds: 3600 })),
      await settle(s(${JSON.stringify(b)}).create({ expiresAt: "2099-01-02T03:04:05Z", contentType: "application/octet-stream" })),
      await settle(s(${JSON.stringify(c)}).create({ closed: true, body: "[1,2]" })),
      await settle(s(${JSON.stringify(a)}).create({ ttlSeconds: 60 })),
      await settle(s(${JSON.stringify(a)}).create({ contentType: "text/plain", ttlSeconds: 3600 })),
      await settle(s(${JSON.stringify(c)}).create({ body: "[1,2]" })),
      await settle(s(${JSON.stringify(c)} + "x").create({ expiresAt: "tomorrow" })),
    ];
  }`);
  const [ttl, expires, closed, otherTtl, otherType, notClosed, badDate] = out;
  // The RFC 3339 syntax is the server's to check: its 400.
  assert.deepEqual([badDate.code, badDate.status], ["http-status", 400]);
  assert.deepEqual([ttl.status, ttl.contentType, ttl.closed], [201, "application/json", false]);
  assert.deepEqual([expires.status, expires.contentType], [201, "application/octet-stream"]);
  assert.deepEqual([closed.status, closed.closed], [201, true]);
  const [ra, rb] = [sent(a)[0].headers, sent(b)[0].headers];
  assert.deepEqual([ra["stream-ttl"], ra["stream-expires-at"]], ["3600", undefined]);
  assert.deepEqual([rb["stream-ttl"], rb["stream-expires-at"]], [undefined, "2099-01-02T03:04:05Z"]);
  const meta = await fetch(ds.url + a, { method: "HEAD" });
  assert.equal(meta.headers.get("stream-ttl"), "3600");
  const r = await fetch(`${ds.url}${c}?offset=-1`);
  assert.deepEqual([await r.json(), r.headers.get("stream-closed")], [[1, 2], "true"]);
  for (const refused of [otherTtl, otherType]) {
    assert.equal(refused.code, "conflict");
    assert.equal(refused.status, 409);
    assert.match(refused.message, /^create failed: conflict 409 \(http:\/\/127\.0\.0\.1:\d+\/v1\/stream\/h/);
  }
  // A create without `closed` of a closed stream: the closed states differ (§5.1).
  assert.equal(notClosed.status, 409);
  assert.ok(["conflict", "stream-closed"].includes(notClosed.code), notClosed.code);
});

test("delete, then every operation of the missing stream rejects not-found with its name, status and URL", async () => {
  const path = streamPath();
  const url = ds.url + path;
  await ds.create(path, "application/json");
  const out = await inPage(url, `async (h) => [
    await settle(h.delete()), await settle(h.head()), await settle(h.close()), await settle(h.delete()),
  ]`);
  assert.equal(out[0], "done");
  for (const [i, name] of [[1, "head"], [2, "close"], [3, "delete"]]) {
    assert.deepEqual(out[i], { code: "not-found", status: 404, message: `${name} failed: not-found 404 (${url})` });
  }
  assert.equal((await fetch(url, { method: "HEAD" })).status, 404);
  assert.deepEqual(sent(path).map((e) => e.method), ["PUT", "DELETE", "HEAD", "POST", "DELETE", "HEAD"]);
});

test("a soft-deleted stream (a fork still reads it): HEAD, close and delete reject gone", async () => {
  const source = streamPath();
  const fork = streamPath();
  await ds.create(source, "application/json", "[1]");
  const f = await fetch(ds.url + fork, { method: "PUT", headers: { "content-type": "application/json", "stream-forked-from": source } });
  assert.equal(f.status, 201);
  assert.equal((await fetch(ds.url + source, { method: "DELETE" })).status, 204);
  const out = await inPage(ds.url + source, `async (h) => [await settle(h.head()), await settle(h.close()), await settle(h.delete())]`);
  for (const [i, name] of [[0, "head"], [1, "close"], [2, "delete"]]) {
    assert.deepEqual([out[i].code, out[i].status], ["gone", 410], name);
    assert.ok(out[i].message.startsWith(`${name} failed: gone 410 (`), out[i].message);
  }
});

test("bad options reject invalid-option and a bad URL invalid-url before any request", async () => {
  const path = streamPath();
  const url = ds.url + path;
  const out = await inPage(url, `async (h) => [
    await settle(h.create({ ttlSeconds: 60, expiresAt: "2099-01-02T03:04:05Z" })),
    await settle(h.create({ expiresAt: "2099-01-02T03:04:05Z\\n" })),
    await settle(h.create({ ttlSeconds: 1.5 })),
    await settle(h.create({ ttlSeconds: -1 })),
    await settle(h.create({ contentType: "text/plain\\n" })),
    await settle(h.create({ closed: "yes" })),
    await settle(h.create("text/plain")),
    await settle(window.t.stream(${JSON.stringify(url)}, { maxAttempts: 0 }).head()),
    await settle(window.t.stream(${JSON.stringify(url)}, { headers: 5 }).delete()),
    await settle(window.t.stream("ftp://x/y").head()),
  ]`);
  const codes = out.map((e) => e.code);
  assert.deepEqual(codes, [...Array(9).fill("invalid-option"), "invalid-url"]);
  const names = out.slice(0, 9).map((e) => e.message.split(":")[1].trim());
  assert.deepEqual(names, ["expiresAt", "expiresAt", "ttlSeconds", "ttlSeconds", "contentType", "closed", "create", "maxAttempts", "headers"]);
  assert.deepEqual(ds.requestsOf(path), [], "nothing was sent, not even a preflight");
});

test("a 503 and a 500 are retried as a send's; maxAttempts 2 gives up on two 503s", async () => {
  const path = streamPath();
  const url = ds.url + path;
  await ds.create(path, "application/json");
  const inject = (method, status, count) => fetch(`${ds.url}/_test/inject-error`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ path, method, status, count }),
  });
  // The server keeps one fault per path: one at a time.
  await inject("HEAD", 503, 2);
  const head = await inPage(url, `async (h) => {
    const t0 = performance.now();
    return { r: await settle(h.head()), ms: performance.now() - t0 };
  }`);
  await inject("POST", 500, 1);
  const close = await inPage(url, `async (h) => settle(h.close())`);
  assert.equal(head.r.status, 200);
  assert.equal(close.closed, true);
  const methods = sent(path).map((e) => e.method);
  assert.deepEqual(methods, ["PUT", "HEAD", "HEAD", "HEAD", "POST", "POST"]);
  // Two backoff waits: floor 50 ms + U[0, 100 · 2^k] ms each.
  assert.ok(head.ms >= 100 && head.ms < 5000, `${head.ms} ms`);
  await inject("HEAD", 503, 2);
  const gaveUp = await page.evaluate(async (url) => window.settle(window.t.stream(url, { ...window.FAST, maxAttempts: 2 }).head()), url);
  assert.deepEqual([gaveUp.code, gaveUp.status], ["gave-up", 503]);
  assert.ok(gaveUp.message.startsWith("head failed: gave-up 503 ("), gaveUp.message);
});
