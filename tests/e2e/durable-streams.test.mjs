// `protocol: "durable-streams"` in headless Chromium against the Durable
// Streams reference server from npm (`@durable-streams/server`, file-backed,
// started in this process by durable-streams.mjs), cross-origin from a page
// of tidings-server: catch-up in several chunks then live long-poll, resume
// from a stored offset after a reload, 1,000 appends through a server
// restart, JSON batches, text and binary bodies, closure, 410, hidden. The
// catch-up read is durable-streams-page.mjs's, which tests/engines runs on
// Firefox and WebKitGTK too.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import { blankPage, loadPackage, recordChannels, recordDebugLog, sleep } from "./tidings-page.mjs";
import { startDurableStreams } from "./durable-streams.mjs";
import {
  brief, catchUpThenLive, json, log, msgs, subscribe, waitLog, waitRequests as sharedWaitRequests,
} from "./durable-streams-page.mjs";

let web;
let browser;
let ds;
let n = 0;

before(async () => {
  web = await startServer();
  browser = await launchBrowser();
  ds = await startDurableStreams({ dataDir: true, longPollTimeoutMs: 3000, maxChunkMessages: 50 });
});
after(async () => {
  await browser?.close();
  await web?.stop();
  await ds?.stop();
});

/** A fresh stream path per test. */
const streamPath = () => `/v1/stream/t${Date.now()}-${++n}`;

/** Page init: `window.setHidden(bool)` overrides the page visibility. */
const VISIBILITY = () => {
  let hidden = false;
  Object.defineProperty(document, "visibilityState", { configurable: true, get: () => (hidden ? "hidden" : "visible") });
  Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
  window.setHidden = (h) => { hidden = h; document.dispatchEvent(new Event("visibilitychange")); };
};

const waitRequests = (path, fn, timeoutMs, what) => sharedWaitRequests(ds, path, fn, timeoutMs, what);

test("catch-up of 110 JSON messages in three chunks (50, 50, 10), then uptodate, then live long-poll with the server's cursor echoed; a JSON batch is one message per element; each message once, in order", async () => {
  const page = await blankPage(browser, web.url);
  try {
    await catchUpThenLive(page, ds, streamPath());
  } finally {
    await page.closeAll();
  }
});

test("offset now: uptodate first (a catch-up read at the tail), no old message; then live from the tail, new messages only", async () => {
  const path = streamPath();
  await ds.create(path, "application/json");
  for (let i = 0; i < 3; i++) await ds.append(path, json({ n: i }), "application/json");
  const page = await blankPage(browser, web.url);
  try {
    await subscribe(page, "now", ds.url + path, { parse: "json", offset: "now" });
    const first = await waitLog(page, "now", (l) => l.some((e) => e.type === "uptodate"), 10_000, "uptodate");
    const tail = first.find((e) => e.type === "uptodate").lastEventId;
    await waitRequests(path, (r) => r.some((q) => q.query.live), 5_000, "a live request");
    await ds.append(path, json({ n: 3 }), "application/json");
    const l = await waitLog(page, "now", (l) => msgs(l).length >= 1, 10_000, "the new message");
    assert.deepEqual(l.filter((e) => e.type === "message" || e.type === "uptodate").map((e) => e.type), ["uptodate", "message"]);
    assert.deepEqual(msgs(l).map((m) => m.data.n), [3]);
    assert.deepEqual(l.filter((e) => e.type === "error"), []);
    const reqs = ds.requests(path);
    assert.equal(reqs[0].search, "?offset=now");
    assert.equal(reqs[1].search, `?live=long-poll&offset=${tail}`);
  } finally {
    await page.closeAll();
  }
});

test("live: false reads to the tail in chunks, then uptodate and closed (up-to-date): no live request, no error; from now it ends at the first answer", async () => {
  const path = streamPath();
  await ds.create(path, "application/json");
  for (let i = 0; i < 60; i++) await ds.append(path, json({ n: i }), "application/json");
  const page = await blankPage(browser, web.url);
  try {
    await subscribe(page, "once", ds.url + path, { parse: "json", live: false });
    const l = await waitLog(page, "once", (l) => l.some((e) => e.state === "closed"), 10_000, "closed");
    assert.deepEqual(msgs(l).map((m) => m.data.n), [...Array(60).keys()]);
    const ends = l.filter((e) => e.type === "uptodate" || e.state === "closed").map((e) => e.type === "uptodate" ? "uptodate" : e.reason);
    assert.deepEqual(ends, ["uptodate", "up-to-date"]);
    assert.deepEqual(l.filter((e) => e.type === "error"), []);
    const count = ds.requests(path).length;
    assert.equal(count, 2, "two catch-up reads of 50 and 10");
    await ds.append(path, json({ n: 60 }), "application/json");
    await sleep(1_500);
    assert.equal(ds.requests(path).length, count, "a request after the tail");
    assert.ok(ds.requests(path).every((r) => !r.query.live), "a live request");

    await subscribe(page, "now", ds.url + path, { parse: "json", offset: "now", live: false });
    const n = await waitLog(page, "now", (l) => l.some((e) => e.state === "closed"), 10_000, "closed");
    assert.deepEqual(msgs(n), []);
    assert.deepEqual(n.filter((e) => e.type === "uptodate" || e.state === "closed").map((e) => e.reason ?? e.type), ["uptodate", "up-to-date"]);
    assert.equal(ds.requests(path).length, count + 1);
  } finally {
    await page.closeAll();
  }
});

test("resume after a reload from the stored offset: the messages appended meanwhile arrive, nothing lost or repeated", async () => {
  const path = streamPath();
  await ds.create(path, "application/json");
  for (let i = 0; i < 10; i++) await ds.append(path, json({ n: i }), "application/json");
  const page = await blankPage(browser, web.url);
  try {
    await subscribe(page, "r", ds.url + path, { parse: "json" });
    await waitLog(page, "r", (l) => msgs(l).length === 10 && l.some((e) => e.type === "uptodate"), 10_000, "10 messages");
    const stored = await page.evaluate(() => localStorage.getItem("r"));
    await page.reload();
    for (let i = 10; i < 15; i++) await ds.append(path, json({ n: i }), "application/json");
    await loadPackage(page);
    ds.clearRequests();
    await subscribe(page, "r", ds.url + path, { parse: "json", offset: stored });
    const l = await waitLog(page, "r", (l) => l.some((e) => e.type === "uptodate"), 10_000, "caught up after reload");
    await sleep(300);
    assert.deepEqual(msgs(await log(page, "r")).map((m) => m.data.n), [10, 11, 12, 13, 14]);
    assert.equal(ds.requests(path)[0].search, `?offset=${stored}`);
    assert.deepEqual(l.filter((e) => e.type === "error" || e.type === "reset"), []);
  } finally {
    await page.closeAll();
  }
});

test("persist: after a reload the stored offset is restored (zero requests from offset -1), the messages appended meanwhile arrive once, none delivered twice", async () => {
  const path = streamPath();
  await ds.create(path, "application/json");
  for (let i = 0; i < 10; i++) await ds.append(path, json({ n: i }), "application/json");
  const page = await blankPage(browser, web.url);
  const options = { parse: "json", persist: "local", persistKey: path };
  try {
    await subscribe(page, "p", ds.url + path, options);
    await waitLog(page, "p", (l) => msgs(l).length === 10 && l.some((e) => e.type === "uptodate"), 10_000, "10 messages");
    const stored = await page.evaluate((k) => localStorage.getItem(k), `tidings:cursor:${path}`);
    assert.equal(stored, msgs(await log(page, "p"))[9].lastEventId, "the offset after the 10th message is stored");
    await page.reload();
    for (let i = 10; i < 15; i++) await ds.append(path, json({ n: i }), "application/json");
    await loadPackage(page);
    ds.clearRequests();
    await subscribe(page, "p", ds.url + path, options);
    const l = await waitLog(page, "p", (l) => msgs(l).length >= 5 && l.some((e) => e.type === "uptodate"), 10_000, "caught up after reload");
    // Live again (the long-poll after the catch-up), so every request of the
    // reload that could read from the start has been made.
    await waitRequests(path, (r) => r.some((q) => q.query.live), 5_000, "a live request");
    const reqs = ds.requests(path);
    assert.equal(reqs.filter((r) => r.query.offset === "-1").length, 0, JSON.stringify(reqs.map((r) => r.search)));
    assert.equal(reqs[0].search, `?offset=${stored}`);
    assert.deepEqual(msgs(await log(page, "p")).map((m) => m.data.n), [10, 11, 12, 13, 14]);
    assert.deepEqual(l.filter((e) => e.type === "error" || e.type === "reset"), []);
  } finally {
    await page.closeAll();
  }
});

test("1,000 appends published while the server restarts (file-backed): every message exactly once, in the stream's order", async () => {
  const path = streamPath();
  await ds.create(path, "application/json");
  const page = await blankPage(browser, web.url);
  try {
    // Small backoff numbers and a short breaker cool-down: the restart (the
    // listener closed, then the store reopened) refuses connections for a
    // few seconds, which opens the breaker at the default 30 s.
    await subscribe(page, "x", ds.url + path, {
      parse: "json",
      backoff: { floorMs: 200, baseMs: 200, maxMs: 1000 },
      breaker: { cooldownMs: 1000 },
    });
    await waitLog(page, "x", (l) => l.some((e) => e.type === "uptodate"), 10_000, "live");
    // Ten producers of 100 appends each, with idempotent producer headers (PROTOCOL.md §5.2.1): a POST retried across the restart is
    // applied once, whatever the publisher saw. The restart comes after 300.
    let sent = 0;
    let restarted;
    // A server that never comes back fails the test instead of stalling it.
    const deadline = Date.now() + 60_000;
    const producer = async (p) => {
      for (let seq = 0; seq < 100; seq++) {
        for (;;) {
          if (Date.now() > deadline) throw new Error(`append ${p * 100 + seq} not accepted within 60 s (${sent} sent)`);
          try {
            const r = await fetch(ds.url + path, {
              method: "POST",
              body: json({ n: p * 100 + seq }),
              headers: { "content-type": "application/json", "producer-id": `p${p}`, "producer-epoch": "0", "producer-seq": String(seq) },
            });
            if (r.status === 200 || r.status === 204) break;
          } catch { /* the server is down: retry */ }
          await sleep(20);
        }
        if (++sent === 300) restarted = ds.restart({ downMs: 500 });
      }
    };
    await Promise.all(Array.from({ length: 10 }, (_, p) => producer(p)));
    await restarted;
    const l = await waitLog(page, "x", (l) => msgs(l).length >= 1000, 30_000, "1000 messages");
    await sleep(500);
    const got = msgs(await log(page, "x")).map((m) => m.data.n);
    assert.equal(got.length, 1000, "no message twice");
    assert.deepEqual([...got].sort((a, b) => a - b), Array.from({ length: 1000 }, (_, i) => i));
    // The stream's own order, as a fresh catch-up read returns it.
    const stream = await ds.readAll(path);
    assert.deepEqual(got, stream.map((m) => m.n));
    // The restart was seen: failed requests, retried.
    assert.ok(l.some((e) => e.type === "error" && e.fatal === false), "an error during the restart");
    assert.ok(!l.some((e) => e.fatal === true));
  } finally {
    await page.closeAll();
  }
});

test("text/* through one streaming UTF-8 decoder (a character split across chunks arrives whole); any other type as Uint8Array bytes, whatever parse says", async () => {
  const text = streamPath();
  const bin = streamPath();
  await ds.create(text, "text/plain");
  await ds.create(bin, "application/octet-stream");
  // "é" = C3 A9, split across two appends; with chunks of one message each
  // (the server's cap is 50: the appends go one per live answer below).
  await ds.append(text, new Uint8Array([0x61, 0xc3]), "text/plain");
  await ds.append(bin, new Uint8Array([0, 1, 2, 255]), "application/octet-stream");
  const page = await blankPage(browser, web.url);
  try {
    await subscribe(page, "t", ds.url + text);
    await subscribe(page, "b", ds.url + bin, { parse: "json" });
    await waitLog(page, "t", (l) => l.some((e) => e.type === "uptodate"), 10_000, "text live");
    await waitLog(page, "b", (l) => l.some((e) => e.type === "uptodate"), 10_000, "binary live");
    await waitRequests(text, (r) => r.some((q) => q.query.live), 5_000, "text live request");
    await ds.append(text, new Uint8Array([0xa9, 0x62]), "text/plain");
    await ds.append(bin, new Uint8Array([10, 20]), "application/octet-stream");
    const t = await waitLog(page, "t", (l) => msgs(l).length === 2, 10_000, "two text chunks");
    assert.deepEqual(msgs(t).map((m) => m.data), ["a", "\u00e9b"]);
    const b = await waitLog(page, "b", (l) => msgs(l).length === 2, 10_000, "two binary chunks");
    assert.deepEqual(msgs(b).map((m) => m.data), [{ bytes: [0, 1, 2, 255] }, { bytes: [10, 20] }]);
    assert.deepEqual([...t, ...b].filter((e) => e.type === "error"), []);
  } finally {
    await page.closeAll();
  }
});

test("Stream-Closed while live: the last message, then closed (stream-closed), no error, and no request after EOF", async () => {
  const path = streamPath();
  await ds.create(path, "application/json");
  await ds.append(path, json({ n: 0 }), "application/json");
  const page = await blankPage(browser, web.url);
  try {
    await subscribe(page, "c", ds.url + path, { parse: "json" });
    await waitLog(page, "c", (l) => l.some((e) => e.type === "uptodate"), 10_000, "live");
    await waitRequests(path, (r) => r.some((q) => q.query.live), 5_000, "a held live request");
    await ds.append(path, json({ n: 1 }), "application/json");
    await ds.close(path);
    const l = await waitLog(page, "c", (l) => l.some((e) => e.state === "closed"), 10_000, "closed");
    const closedAt = Date.now();
    assert.deepEqual(msgs(l).map((m) => m.data.n), [0, 1]);
    assert.deepEqual(l.filter((e) => e.type === "statechange").at(-1), { ...l.find((e) => e.state === "closed"), reason: "stream-closed" });
    assert.deepEqual(l.filter((e) => e.type === "error"), []);
    assert.equal(await page.evaluate(() => window.subs.c.sub.state), "closed");
    const count = ds.requests(path).length;
    await sleep(2_000);
    assert.equal(ds.requests(path).length, count, "requests after EOF");
    assert.ok(ds.requests(path).every((r) => r.t <= closedAt));
  } finally {
    await page.closeAll();
  }
});

test("410 Gone: reset (gone) and one restart from the start, which re-reads the stream; a second 410 right after is fatal", async () => {
  const path = streamPath();
  await ds.create(path, "application/json");
  for (let i = 0; i < 3; i++) await ds.append(path, json({ n: i }), "application/json");
  const page = await blankPage(browser, web.url);
  try {
    await subscribe(page, "g0", ds.url + path, { parse: "json" });
    const first = await waitLog(page, "g0", (l) => msgs(l).length === 3, 10_000, "3 messages");
    const stored = msgs(first)[1].lastEventId;
    await page.evaluate(() => window.subs.g0.sub.close());
    // Resume from a stored offset the server no longer serves (410 once).
    await ds.inject(path, 410, 1);
    ds.clearRequests();
    await subscribe(page, "g", ds.url + path, { parse: "json", offset: stored });
    const l = await waitLog(page, "g", (l) => l.some((e) => e.type === "uptodate"), 10_000, "caught up after the reset");
    assert.deepEqual(l.filter((e) => e.type === "reset").map((e) => e.reason), ["gone"]);
    assert.deepEqual(msgs(l).map((m) => m.data.n), [0, 1, 2], "refetched from the start after the reset");
    assert.deepEqual(ds.requests(path).slice(0, 2).map((r) => r.query.offset), [stored, "-1"]);
    assert.deepEqual(l.filter((e) => e.type === "error"), []);
    // Twice: the restart is refused too → fatal http-status 410.
    await ds.inject(path, 410, 2);
    await subscribe(page, "g2", ds.url + path, { parse: "json", offset: stored });
    const l2 = await waitLog(page, "g2", (l) => l.some((e) => e.state === "closed"), 10_000, "fatal");
    assert.deepEqual(l2.filter((e) => e.type === "reset").map((e) => e.reason), ["gone"]);
    const errs = l2.filter((e) => e.type === "error");
    assert.deepEqual(errs.map((e) => [e.code, e.status, e.fatal]), [["http-status", 410, true]]);
    assert.deepEqual(msgs(l2), []);
  } finally {
    await page.closeAll();
  }
});

test("hidden → the held request is released and zero requests go out while hidden (appends meanwhile); visible → one request from the offset, the missed messages once", async () => {
  const path = streamPath();
  await ds.create(path, "application/json");
  const page = await blankPage(browser, web.url, { init: VISIBILITY });
  try {
    await subscribe(page, "h", ds.url + path, { parse: "json" });
    await waitLog(page, "h", (l) => l.some((e) => e.type === "uptodate"), 10_000, "live");
    await waitRequests(path, (r) => r.some((q) => q.query.live), 5_000, "a held live request");
    await page.evaluate(() => window.setHidden(true));
    await waitLog(page, "h", (l) => l.some((e) => e.state === "paused"), 5_000, "paused");
    const before = ds.requests(path).length;
    for (let i = 0; i < 3; i++) await ds.append(path, json({ n: i }), "application/json");
    await sleep(4_000); // longer than the server's 3 s hold
    assert.equal(ds.requests(path).length, before, "requests while hidden");
    assert.deepEqual(msgs(await log(page, "h")), []);
    await page.evaluate(() => window.setHidden(false));
    const l = await waitLog(page, "h", (l) => msgs(l).length === 3, 5_000, "missed messages");
    await sleep(300);
    assert.deepEqual(msgs(await log(page, "h")).map((m) => m.data.n), [0, 1, 2]);
    assert.equal(ds.requests(path)[before].query.offset, l.find((e) => e.type === "uptodate").lastEventId);
  } finally {
    await page.closeAll();
  }
});

test("crossTab: two tabs of one profile read the stream through one poller (no offset requested twice), both get every message once; the debug log shows each request's offset and the uptodate moment", async () => {
  const path = streamPath();
  await ds.create(path, "application/json");
  await ds.append(path, json({ n: 0 }), "application/json");
  const context = await browser.newContext();
  const a = await blankPage(browser, web.url, { context });
  const b = await blankPage(browser, web.url, { context });
  const debug = [];
  recordDebugLog(a, debug);
  try {
    const opts = { parse: "json", crossTab: true, debug: true };
    await subscribe(a, "s", ds.url + path, opts);
    await waitLog(a, "s", (l) => l.some((e) => e.type === "uptodate"), 10_000, "tab A live");
    await subscribe(b, "s", ds.url + path, opts);
    await waitLog(b, "s", (l) => l.some((e) => e.state === "open"), 10_000, "tab B following");
    for (let i = 1; i <= 5; i++) {
      await ds.append(path, json({ n: i }), "application/json");
      await sleep(150);
    }
    for (const [page, from] of [[a, 0], [b, 1]]) {
      const l = await waitLog(page, "s", (l) => msgs(l).some((m) => m.data.n === 5), 10_000, "message 5");
      assert.deepEqual(msgs(l).map((m) => m.data.n), Array.from({ length: 6 - from }, (_, i) => i + from));
    }
    // One poller: every offset asked for once (two tabs polling on their
    // own would each ask for every offset). The server's hold is 3 s: no
    // empty answer re-asks an offset within this test.
    const offsets = ds.requests(path).map((r) => r.query.offset);
    assert.equal(new Set(offsets).size, offsets.length, JSON.stringify(offsets));
    const opens = debug.filter((d) => d.what === "open");
    assert.ok(opens.length >= 6, JSON.stringify(debug.map((d) => d.what)));
    assert.equal(new URL(opens[0].url).search, "?offset=-1");
    assert.match(new URL(opens.at(-1).url).search, /^\?cursor=\d+&live=long-poll&offset=[0-9_]+$/);
    assert.equal(debug.filter((d) => d.what === "uptodate").length, 1);
  } finally {
    await context.close();
  }
});

test("crossTab: a tab that joins after the leader caught up hears uptodate once (at the leader's offset), and the tabs that heard it already do not hear it again", async () => {
  const path = streamPath();
  await ds.create(path, "application/json");
  await ds.append(path, json({ n: 0 }), "application/json");
  const context = await browser.newContext();
  const pages = [];
  try {
    const opts = { parse: "json", crossTab: true };
    const ups = async (p) => (await log(p, "s")).filter((e) => e.type === "uptodate");
    for (let i = 0; i < 3; i++) {
      const p = await blankPage(browser, web.url, { context });
      pages.push(p);
      await subscribe(p, "s", ds.url + path, opts);
      await waitLog(p, "s", (l) => l.some((e) => e.type === "uptodate"), 10_000, `tab ${i} caught up`);
      if (i === 0) {
        // Live: the leader's offset moves past the one it caught up at.
        await ds.append(path, json({ n: 1 }), "application/json");
        await waitLog(p, "s", (l) => msgs(l).some((m) => m.data.n === 1), 10_000, "message 1");
      }
    }
    await sleep(500);
    const first = await ups(pages[0]);
    const leaderNow = (await log(pages[0], "s")).filter((e) => e.type === "message").at(-1).lastEventId;
    for (const [i, p] of pages.entries()) {
      const u = await ups(p);
      assert.equal(u.length, 1, `tab ${i}: ${JSON.stringify(u)}`);
      if (i > 0) assert.equal(u[0].lastEventId, leaderNow, `tab ${i}`);
    }
    assert.notEqual(first[0].lastEventId, leaderNow);
    for (const p of pages) assert.deepEqual(p.errors, []);
  } finally {
    await context.close();
  }
});

test("crossTab: a second leader's copy of the stream (the overlap of a steal: the same chunks and uptodate posted again on the channel) is heard once in every tab; later messages still arrive", async () => {
  const path = streamPath();
  await ds.create(path, "application/json");
  await ds.append(path, json({ n: 0 }), "application/json");
  const context = await browser.newContext();
  try {
    const opts = { parse: "json", crossTab: true };
    const [a, b, c] = [await blankPage(browser, web.url, { context, init: recordChannels }), await blankPage(browser, web.url, { context }), await blankPage(browser, web.url, { context })];
    await subscribe(a, "s", ds.url + path, opts);
    await waitLog(a, "s", (l) => l.some((e) => e.type === "uptodate"), 10_000, "tab A live");
    // Page c plays the other leader of a steal: it records what the leader
    // posts on the channel (named as tab A named it), then posts it again,
    // as an overlapping leader reading the same offsets would.
    await c.evaluate((name) => {
      window.bc = new BroadcastChannel(name);
      window.posted = [];
      window.bc.onmessage = (e) => { if (Array.isArray(e.data) && "mu".includes(e.data[0])) window.posted.push(e.data); };
    }, await a.evaluate(() => window.channelNames[0]));
    await subscribe(b, "s", ds.url + path, opts);
    await waitLog(b, "s", (l) => l.some((e) => e.state === "open"), 10_000, "tab B following");
    // One chunk of three messages (a JSON batch), then one more.
    await ds.append(path, json([{ n: 1 }, { n: 2 }, { n: 3 }]), "application/json");
    for (const p of [a, b]) await waitLog(p, "s", (l) => msgs(l).some((m) => m.data.n === 3), 10_000, "message 3");
    await ds.append(path, json({ n: 4 }), "application/json");
    for (const p of [a, b]) await waitLog(p, "s", (l) => msgs(l).some((m) => m.data.n === 4), 10_000, "message 4");
    const posted = await c.evaluate(() => window.posted.length);
    assert.ok(posted >= 4, `the leader posted ${posted} messages`);
    await c.evaluate(() => { for (const p of window.posted) window.bc.postMessage(p); });
    await sleep(500);
    await ds.append(path, json({ n: 5 }), "application/json");
    for (const [page, from] of [[a, 0], [b, 1]]) {
      const l = await waitLog(page, "s", (l) => msgs(l).some((m) => m.data.n === 5), 10_000, "message 5");
      assert.deepEqual(msgs(l).map((m) => m.data.n), Array.from({ length: 6 - from }, (_, i) => i + from));
      assert.equal(l.filter((e) => e.type === "uptodate").length, 1, JSON.stringify(l.map(brief)));
    }
    for (const p of [a, b]) assert.deepEqual(p.errors, []);
  } finally {
    await context.close();
  }
});
