// appender() (docs/upstream.md) in headless Chromium against the Durable Streams
// reference server from npm (file-backed, started by durable-streams.mjs),
// cross-origin from a page of tidings-server, through a small proxy in this
// test that can drop a POST's response after the server applied it.
// 1,000 appends with dropped responses and a server restart → the stream
// holds each exactly once, in order; the typed 409s and 403; close.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { startServer, launchBrowser } from "./harness.mjs";
import { blankPage, sleep } from "./tidings-page.mjs";
import { startDurableStreams } from "./durable-streams.mjs";

let web;
let browser;
let ds;
let proxy;
let n = 0;

/**
 * A proxy to the npm server: forwards every request; `dropRate` of the POSTs
 * that carry a body have their response destroyed after the server answered
 * (applied, answer lost). `stats` counts POSTs, drops and upstream failures.
 */
function startProxy(target) {
  const stats = { posts: 0, dropped: 0, refused: 0, dropRate: 0 };
  let seed = 1;
  const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const post = req.method === "POST" && body.length > 0;
      if (post) stats.posts++;
      const up = http.request(new URL(req.url, target), { method: req.method, headers: req.headers }, (r) => {
        const parts = [];
        r.on("data", (c) => parts.push(c));
        r.on("end", () => {
          if (post && random() < stats.dropRate) {
            stats.dropped++;
            res.socket?.destroy();
            return;
          }
          res.writeHead(r.statusCode, r.headers);
          res.end(Buffer.concat(parts));
        });
      });
      up.on("error", () => { stats.refused++; res.socket?.destroy(); });
      up.end(body);
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({
    url: `http://127.0.0.1:${server.address().port}`,
    stats,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  })));
}

before(async () => {
  web = await startServer();
  browser = await launchBrowser();
  ds = await startDurableStreams({ dataDir: true });
  proxy = await startProxy(ds.url);
});
after(async () => {
  await browser?.close();
  await web?.stop();
  await proxy?.close();
  await ds?.stop();
});

const streamPath = () => `/v1/stream/a${Date.now()}-${++n}`;
const FAST = { backoff: { floorMs: 50, baseMs: 100, maxMs: 800 }, timeoutMs: 5000 };

test("1,000 appends while responses are dropped after applying and the server restarts: each exactly once, in order", async () => {
  const path = streamPath();
  await ds.create(path, "application/json");
  const page = await blankPage(browser, web.url);
  try {
    proxy.stats.dropRate = 0.2;
    const url = proxy.url + path;
    await page.evaluate(({ url, FAST }) => {
      // maxBatch 10: about 100 requests, so the restart meets some in flight.
      window.ap = window.tidings.appender(url, { ...FAST, maxBatch: 10 });
      window.results = { ok: 0, failed: [] };
      window.appendAll = (from, to) => {
        for (let i = from; i < to; i++) {
          // Every tenth value is an array: stored as one message (wrapped).
          const v = i % 10 === 0 ? [i, "arr"] : { i };
          window.ap.append(v).then(() => window.results.ok++, (e) => window.results.failed.push(`${i}: ${e.code}`));
        }
      };
      window.appendAll(0, 500);
    }, { url, FAST });
    await page.waitForFunction(() => window.results.ok >= 200, null, { timeout: 60_000 });
    await page.evaluate(() => window.appendAll(500, 1000));
    await ds.restart({ downMs: 500 });
    await page.waitForFunction(() => window.results.ok + window.results.failed.length === 1000, null, { timeout: 120_000 });
    const results = await page.evaluate(() => window.results);
    assert.deepEqual(results.failed, []);
    proxy.stats.dropRate = 0;
    const all = await ds.readAll(path);
    const expected = Array.from({ length: 1000 }, (_, i) => (i % 10 === 0 ? [i, "arr"] : { i }));
    assert.equal(all.length, 1000, "each value exactly once");
    assert.deepEqual(all, expected, "in order, arrays kept whole");
    console.log(`# 1,000 appends: ${proxy.stats.posts} POSTs through the proxy, ${proxy.stats.dropped} answers dropped after applying, ${proxy.stats.refused} refused while the server restarted`);
    assert.ok(proxy.stats.dropped > 0, "some answers were dropped");
    assert.ok(proxy.stats.posts >= 100 && proxy.stats.posts < 1000, "batched while a request was in flight, 10 at most");
    assert.deepEqual(page.errors, []);
  } finally {
    proxy.stats.dropRate = 0;
    await page.closeAll();
  }
});

test("close() after pending appends closes the stream; a later append rejects stream-closed naming the stream's URL", async () => {
  const path = streamPath();
  await ds.create(path, "application/json");
  const page = await blankPage(browser, web.url);
  try {
    const out = await page.evaluate(async (url) => {
      const ap = window.tidings.appender(url, { producerId: "closer" });
      const a = [ap.append("x"), ap.append("y")];
      await ap.close();
      await Promise.all(a);
      const late = await ap.append("z").then(() => "resolved", (e) => [e.code, e.message]);
      return { late, id: ap.producerId };
    }, ds.url + path);
    assert.deepEqual(out, { late: ["stream-closed", `append failed: stream-closed (${ds.url + path})`], id: "closer" });
    const r = await fetch(`${ds.url}${path}?offset=-1`);
    assert.equal(r.headers.get("stream-closed"), "true");
    assert.deepEqual(await r.json(), ["x", "y"]);
  } finally {
    await page.closeAll();
  }
});

test("close() goes with the producer headers: a second close() resolves again; another producer's close of the closed stream rejects stream-closed (the server's 409), twice alike", async () => {
  const path = streamPath();
  await ds.create(path, "application/json");
  const page = await blankPage(browser, web.url);
  try {
    const out = await page.evaluate(async (url) => {
      const settle = (p) => p.then(() => "resolved", (e) => e.code);
      const first = window.tidings.appender(url, { producerId: "first" });
      await first.append("x");
      const again = [await settle(first.close()), await settle(first.close())];
      const second = window.tidings.appender(url, { producerId: "second" });
      const other = [await settle(second.close()), await settle(second.close())];
      return { again, other };
    }, ds.url + path);
    assert.deepEqual(out, { again: ["resolved", "resolved"], other: ["stream-closed", "stream-closed"] });
    const r = await fetch(`${ds.url}${path}?offset=-1`);
    assert.equal(r.headers.get("stream-closed"), "true");
    assert.deepEqual(await r.json(), ["x"]);
  } finally {
    await page.closeAll();
  }
});

test("close(last): the final message and the values still queued go in the close's request (JSON and text streams); a second close(last) settles as the first and sends nothing", async () => {
  const json = streamPath();
  const text = streamPath();
  await ds.create(json, "application/json");
  await ds.create(text, "text/plain");
  const page = await blankPage(browser, web.url);
  try {
    const posts = proxy.stats.posts;
    const out = await page.evaluate(async ([j, t]) => {
      const settle = (p) => p.then(() => "resolved", (e) => e.code);
      const ap = window.tidings.appender(j, { producerId: "last" });
      const a = [ap.append("x"), ap.append("y")];
      const closes = [await settle(ap.close({ end: true })), await settle(ap.close("not sent"))];
      await Promise.all(a);
      const tp = window.tidings.appender(t, { contentType: "text/plain" });
      await tp.append("a");
      return { closes, text: await settle(tp.close("b")) };
    }, [proxy.url + json, proxy.url + text]);
    assert.deepEqual(out, { closes: ["resolved", "resolved"], text: "resolved" });
    // [x] in flight, then [y, {end}] with Stream-Closed; a, then b with Stream-Closed.
    assert.equal(proxy.stats.posts - posts, 4);
    const r = await fetch(`${ds.url}${json}?offset=-1`);
    assert.equal(r.headers.get("stream-closed"), "true");
    assert.deepEqual(await r.json(), ["x", "y", { end: true }]);
    const rt = await fetch(`${ds.url}${text}?offset=-1`);
    assert.equal(rt.headers.get("stream-closed"), "true");
    assert.equal(await rt.text(), "ab");
  } finally {
    await page.closeAll();
  }
});

test("a stale epoch is a typed error; autoClaim takes the producer over at the server's epoch + 1", async () => {
  const path = streamPath();
  await ds.create(path, "application/json");
  const page = await blankPage(browser, web.url);
  try {
    const out = await page.evaluate(async (url) => {
      const newer = window.tidings.appender(url, { producerId: "p", epoch: 4 });
      await newer.append("from epoch 4");
      const old = window.tidings.appender(url, { producerId: "p", epoch: 1 });
      const stale = await old.append("zombie").then(() => "resolved", (e) => ({ code: e.code, epoch: e.epoch }));
      const claim = window.tidings.appender(url, { producerId: "p", autoClaim: true });
      await claim.append("claimed");
      return { stale, epoch: claim.epoch };
    }, ds.url + path);
    assert.deepEqual(out, { stale: { code: "stale-epoch", epoch: 4 }, epoch: 5 });
    assert.deepEqual(await ds.readAll(path), ["from epoch 4", "claimed"]);
  } finally {
    await page.closeAll();
  }
});

test("409s are typed and not retried: a closed stream, a content-type mismatch; another refusal says its status", async () => {
  const closed = streamPath();
  await ds.create(closed, "application/json");
  await ds.close(closed);
  const text = streamPath();
  await ds.create(text, "text/plain");
  const page = await blankPage(browser, web.url);
  try {
    const out = await page.evaluate(async ([a, b]) => {
      const code = (p) => p.then(() => "resolved", (e) => e.code);
      const missing = await window.tidings.appender(`${a}-missing`).append(1).then(() => "resolved", (e) => [e.code, e.status, e.message]);
      return {
        closed: await code(window.tidings.appender(a).append(1)),
        mismatch: await code(window.tidings.appender(b).append({ json: true })),
        missing,
      };
    }, [ds.url + closed, ds.url + text]);
    // The message names the status and the stream's URL.
    const missing = `${ds.url}${closed}-missing`;
    assert.deepEqual(out, { closed: "stream-closed", mismatch: "conflict", missing: ["http-status", 404, `append failed: http-status 404 (${missing})`] });
  } finally {
    await page.closeAll();
  }
});

test("a text stream gets the strings' bytes", async () => {
  const path = streamPath();
  await ds.create(path, "text/plain");
  const page = await blankPage(browser, web.url);
  try {
    await page.evaluate(async (url) => {
      const ap = window.tidings.appender(url, { contentType: "text/plain" });
      await Promise.all(["héllo ", "wörld"].map((s) => ap.append(s)));
    }, ds.url + path);
    const r = await fetch(`${ds.url}${path}?offset=-1`);
    assert.equal(await r.text(), "héllo wörld");
  } finally {
    await page.closeAll();
  }
  await sleep(0);
});

test("offline: an appender made while online sends nothing while offline, and its append goes at once when the page is online again", async () => {
  const path = streamPath();
  await ds.create(path, "application/json");
  const page = await blankPage(browser, web.url);
  try {
    // A long backoff: an attempt made while offline would fail and wait 5 s.
    const SLOW = { backoff: { floorMs: 5000, baseMs: 5000, maxMs: 5000 } };
    await page.evaluate(({ url, SLOW }) => {
      window.ap = window.tidings.appender(url, SLOW);
      window.done = null;
    }, { url: ds.url + path, SLOW });
    await page.context().setOffline(true);
    await page.evaluate(() => {
      window.ap.append({ v: 1 }).then(() => (window.done = "ok"), (e) => (window.done = e.code));
    });
    await sleep(600);
    assert.equal(await page.evaluate(() => window.done), null, "pending while offline");
    const t0 = Date.now();
    await page.context().setOffline(false);
    await page.waitForFunction(() => window.done !== null, null, { timeout: 10_000 });
    assert.equal(await page.evaluate(() => window.done), "ok");
    assert.ok(Date.now() - t0 < 2500, `sent when online again, not after a failed attempt's backoff (${Date.now() - t0} ms)`);
    assert.deepEqual(await ds.readAll(path), [{ v: 1 }]);
    assert.deepEqual(page.errors, []);
  } finally {
    await page.closeAll();
  }
});
