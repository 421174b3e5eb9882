// `protocol: "durable-streams"` with `live: "sse"` (PROTOCOL.md §5.8) in
// headless Chromium against the npm reference server
// (`@durable-streams/server`, in memory, started in this process by
// durable-streams.mjs), cross-origin from a page of tidings-server: catch-up
// then `live=sse` on `fetch-sse`; the server's periodic close (every 2.5 s
// here, its keep-alive control event every 1 s) taken as normal; a binary
// stream's base64; a closed stream; `offset: "now"`.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import { blankPage, sleep } from "./tidings-page.mjs";
import { startDurableStreams } from "./durable-streams.mjs";
import { json, msgs, subscribe, waitLog, waitRequests as sharedWaitRequests } from "./durable-streams-page.mjs";

const CLOSE_MS = 2500;

let web;
let browser;
let ds;
let n = 0;

before(async () => {
  web = await startServer();
  browser = await launchBrowser();
  ds = await startDurableStreams({ longPollTimeoutMs: 1000, sseCloseAfterMs: CLOSE_MS });
});
after(async () => {
  await browser?.close();
  await web?.stop();
  await ds?.stop();
});

const streamPath = () => `/v1/stream/sse${Date.now()}-${++n}`;
const waitRequests = (path, fn, timeoutMs, what) => sharedWaitRequests(ds, path, fn, timeoutMs, what);
const sseRequests = (path) => ds.requests(path).filter((r) => r.query.live === "sse");

test("live sse: a catch-up read, then live=sse on fetch-sse; the server's close every 2.5 s reconnects at once from the last control's offset with its cursor, state open throughout; each message once, in order", async () => {
  const path = streamPath();
  await ds.create(path, "application/json");
  for (let i = 0; i < 3; i++) await ds.append(path, json({ n: i }), "application/json");
  const page = await blankPage(browser, web.url);
  try {
    await subscribe(page, "s", ds.url + path, { parse: "json", live: "sse" });
    await waitLog(page, "s", (l) => l.some((e) => e.type === "uptodate"), 10_000, "uptodate");
    assert.equal(await page.evaluate(() => window.subs.s.sub.transport), "fetch-sse");
    // Appends while live, across three server closes.
    for (let i = 3; i < 9; i++) {
      await sleep(1200);
      await ds.append(path, json({ n: i }), "application/json");
    }
    const l = await waitLog(page, "s", (l) => msgs(l).length >= 9, 10_000, "9 messages");
    await waitRequests(path, () => sseRequests(path).length >= 4, 10_000, "four SSE requests");
    assert.deepEqual(msgs(l).map((m) => m.data.n), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
    assert.deepEqual(l.filter((e) => e.type === "error"), []);
    assert.equal(l.filter((e) => e.type === "uptodate").length, 1);
    assert.deepEqual(l.filter((e) => e.type === "statechange").map((e) => e.state), ["connecting", "open"]);
    const reqs = ds.requests(path);
    assert.equal(reqs[0].search, "?offset=-1");
    const sse = sseRequests(path);
    assert.equal(sse[0].search, `?live=sse&offset=${msgs(l)[2].lastEventId}`);
    for (const [i, r] of sse.entries()) {
      if (i === 0) continue;
      // Within the 100 ms spread of the close (a backoff would wait 1 s or more).
      const gap = r.t - sse[i - 1].t;
      assert.ok(gap >= CLOSE_MS && gap < CLOSE_MS + 600, `SSE request ${i}: ${gap} ms after the previous one`);
      assert.match(r.search, /^\?cursor=\d+&live=sse&offset=[0-9_]+$/);
    }
    // No catch-up read after the first: every reconnect was live.
    assert.equal(reqs.filter((r) => !r.query.live).length, 1);
  } finally {
    await page.closeAll();
  }
});

test("live sse, binary stream: the server's base64 data events arrive as the appended bytes (Uint8Array), caught up and live", async () => {
  const path = streamPath();
  const type = "application/octet-stream";
  await ds.create(path, type);
  await ds.append(path, new Uint8Array([0, 1, 2, 255]), type);
  const page = await blankPage(browser, web.url);
  try {
    await subscribe(page, "b", ds.url + path, { live: "sse" });
    await waitLog(page, "b", (l) => l.some((e) => e.type === "uptodate"), 10_000, "uptodate");
    await waitRequests(path, () => sseRequests(path).length >= 1, 5_000, "the SSE request");
    await sleep(200);
    await ds.append(path, new Uint8Array([10, 13, 0, 128, 254]), type);
    await ds.append(path, new Uint8Array([7]), type);
    const l = await waitLog(page, "b", (l) => msgs(l).reduce((k, m) => k + m.data.bytes.length, 0) >= 10, 10_000, "10 bytes");
    assert.deepEqual(msgs(l).flatMap((m) => m.data.bytes), [0, 1, 2, 255, 10, 13, 0, 128, 254, 7]);
    assert.deepEqual(l.filter((e) => e.type === "error"), []);
  } finally {
    await page.closeAll();
  }
});

test("live sse, closed stream: the data before the close, then statechange closed (stream-closed), no error, no request after it", async () => {
  const path = streamPath();
  await ds.create(path, "text/plain");
  await ds.append(path, "a", "text/plain");
  const page = await blankPage(browser, web.url);
  try {
    await subscribe(page, "c", ds.url + path, { live: "sse" });
    await waitRequests(path, () => sseRequests(path).length >= 1, 10_000, "the SSE request");
    await sleep(200);
    await ds.append(path, "b", "text/plain");
    await ds.close(path);
    const l = await waitLog(page, "c", (l) => l.some((e) => e.state === "closed"), 10_000, "closed");
    assert.deepEqual(msgs(l).map((m) => m.data), ["a", "b"]);
    assert.deepEqual(l.filter((e) => e.type === "statechange").map((e) => [e.state, e.reason]), [["connecting", "start"], ["open", "start"], ["closed", "stream-closed"]]);
    assert.deepEqual(l.filter((e) => e.type === "error"), []);
    const count = ds.requests(path).length;
    await sleep(CLOSE_MS + 500);
    assert.equal(ds.requests(path).length, count, "no request after the close");
    // A subscription to the closed stream: caught up and closed at once.
    await subscribe(page, "c2", ds.url + path, { live: "sse" });
    const l2 = await waitLog(page, "c2", (l) => l.some((e) => e.state === "closed"), 10_000, "closed");
    assert.deepEqual(msgs(l2).map((m) => m.data), ["ab"]);
  } finally {
    await page.closeAll();
  }
});

test("live sse from offset now: uptodate first (a catch-up read at the tail), no old message; then live=sse from the tail, new messages only", async () => {
  const path = streamPath();
  await ds.create(path, "text/plain");
  await ds.append(path, "old", "text/plain");
  const page = await blankPage(browser, web.url);
  try {
    await subscribe(page, "now", ds.url + path, { offset: "now", live: "sse" });
    const first = await waitLog(page, "now", (l) => l.some((e) => e.type === "uptodate"), 10_000, "uptodate");
    const tail = first.find((e) => e.type === "uptodate").lastEventId;
    await waitRequests(path, () => sseRequests(path).length >= 1, 5_000, "the SSE request");
    await sleep(200);
    await ds.append(path, "new", "text/plain");
    const l = await waitLog(page, "now", (l) => msgs(l).length >= 1, 10_000, "the new message");
    assert.deepEqual(l.filter((e) => e.type === "message" || e.type === "uptodate").map((e) => e.type), ["uptodate", "message"]);
    assert.deepEqual(msgs(l).map((m) => m.data), ["new"]);
    const reqs = ds.requests(path);
    assert.equal(reqs[0].search, "?offset=now");
    assert.equal(reqs[1].search, `?live=sse&offset=${tail}`);
  } finally {
    await page.closeAll();
  }
});

test("live: another value, or live without protocol durable-streams, throws invalid-option naming live", async () => {
  const page = await blankPage(browser, web.url);
  try {
    const thrown = await page.evaluate((url) => [
      { live: "sse" },
      { protocol: "durable-streams", live: "websocket" },
    ].map((o) => {
      try {
        window.tidings.subscribe(url, o).close();
        return "none";
      } catch (e) {
        return `${e.code}: ${e.message}`;
      }
    }), ds.url + "/v1/stream/none");
    assert.equal(thrown.length, 2);
    for (const t of thrown) assert.match(t, /^invalid-option: invalid option: live: /);
    assert.match(thrown[0], /none without protocol "durable-streams"/);
    assert.match(thrown[1], /one of/);
  } finally {
    await page.closeAll();
  }
});
