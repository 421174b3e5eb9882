// Real-world case BC-20 — one connection per origin across tabs (`crossTab: true`).
//
// The case: Six-connections-per-host limit with many tabs (HTTP/1.1). Sources:
// wildware-uk/agent-dashboard #19 (two SSE connections per tab; with three tabs
// the whole origin hung, including plain fetches); burningmantech/ranger-ims-server
// #1320; webpack-hot-middleware #159; dunglas/mercure #254, #950; HTML spec
// authoring notes (share one EventSource, e.g. via a shared worker). Failure:
// every tab, or every component in a tab, opens its own long-lived request,
// exhausts the browser's per-host pool, and unrelated requests to the origin
// wait forever. Server script: plain HTTP/1.1, `/stream` writes "id: N\ndata:
// N\n\n" every 1 s; `/ping` returns 200 ok. Harness: one browser profile; open 8
// tabs one per second; each tab creates two subscriptions to `/stream` (a naive
// client makes 16 requests). Expected: the server never sees more than 1
// concurrent `/stream` request from the profile (2 briefly during a leader
// hand-over); both subscriptions in every tab receive every N exactly once and
// in order; `fetch('/ping')` from tab 8 completes in < 1 s; closing the tab
// that holds the connection makes another tab reconnect within 5 s with the
// last seen id, with no gap and no duplicate. Without cross-tab coordination
// (API missing): at most one connection per URL per tab, and hidden tabs
// release their connections.
//
// Here: the reference server (plain HTTP/1.1 on loopback) stands in for the
// case's server: `/sse?t=<tag>` is `/stream` (the tag keeps each test's
// requests apart in `/_log`), the test publishes (`POST /publish`) every
// 400 ms instead of the server writing every 1 s, and `/blank.html` is
// `/ping`. One Playwright browser context is one profile: its pages share
// BroadcastChannel and Web Locks, and Chromium's per-host pool of 6.
// Concurrency is computed from the server's log (`t_ms`..`end_ms` of every
// `/sse` request; a stream whose peer went away ends when the server next
// writes to it, which is why a hand-over may show 2).
//
// The helpers and the two-tab hand-over are cross-tab.mjs's, which tests/engines
// runs on Firefox and WebKitGTK too.
//
// Visibility is simulated, because headless Chromium cannot change it: every
// page's `document.visibilityState` / `document.hidden` are overridden and
// `visibilitychange` is dispatched (as in lifecycle.test.mjs).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import { recordChannels } from "./tidings-page.mjs";
import {
  assertContiguous, assertHandOver, assertNotOlder, cursorOf, handOver, leaders, maxConcurrent, numbers,
  publisher as sharedPublisher, streams as sharedStreams, subscribeTab, tag, waitAll,
} from "./cross-tab.mjs";

const PAGES = new URL("./pages/", import.meta.url).pathname;
let server, browser;
before(async () => {
  server = await startServer(["--www", PAGES, "--quiet"]);
  browser = await launchBrowser();
});
after(async () => { await browser?.close(); await server?.stop(); });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Visibility override for every page of a context (see the header). */
function overrideVisibility() {
  let hidden = false;
  Object.defineProperty(document, "visibilityState", { configurable: true, get: () => (hidden ? "hidden" : "visible") });
  Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
  window.setHidden = (h) => { hidden = h; document.dispatchEvent(new Event("visibilitychange")); };
}

const streams = (t) => sharedStreams(server, t);
const publisher = (t, ms) => sharedPublisher(server, t, ms);

/** A new page of `context`; its uncaught errors in `page.errors`. */
async function tabPage(context) {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.errors = errors;
  await page.addInitScript(recordChannels);
  return page;
}

/** A page of `context` with the package loaded and `names` subscriptions to `url`. */
async function openTab(context, url, options, names = ["a", "b"]) {
  const page = await tabPage(context);
  await subscribeTab(page, server.url, url, options, names);
  return page;
}

test("BC-20: 8 tabs × 2 subscriptions, crossTab → one stream for the profile; every message once, in order; /ping from tab 8 < 1 s; closing the leader tab hands over within 5 s with the last seen id, no gap, no duplicate", async (tc) => {
  const t = tag();
  const context = await browser.newContext();
  await context.addInitScript(overrideVisibility);
  const url = `/sse?t=${t}`;
  const options = { crossTab: true, backoff: { floorMs: 200, baseMs: 200 } };
  const pub = publisher(t, 400);
  const pages = [];
  try {
    for (let i = 0; i < 8; i++) {
      pages.push(await openTab(context, url, options));
      await sleep(1000);
    }
    // Every tab is in; let a few messages reach all of them.
    const joinedAt = pub.n;
    const deadline = Date.now() + 10_000;
    while (pub.n < joinedAt + 3 && Date.now() < deadline) await sleep(50);

    // The origin is not starved: a plain fetch from tab 8 completes at once.
    const ping = await pages[7].evaluate(async () => {
      const t0 = performance.now();
      const r = await fetch("/blank.html", { cache: "no-store" });
      await r.text();
      return { status: r.status, ms: performance.now() - t0 };
    });
    assert.equal(ping.status, 200);
    assert.ok(ping.ms < 1000, `fetch('/ping') from tab 8 took ${Math.round(ping.ms)} ms`);

    const before = await streams(t);
    assert.equal(maxConcurrent(before), 1, `concurrent /sse requests before the hand-over: ${JSON.stringify(before.map((e) => [e.t_ms, e.end_ms]))}`);
    const lead = await leaders(pages);
    assert.equal(lead.length, 1, `exactly one tab runs the request (tabs with requests: ${lead})`);
    assert.equal(lead[0], 0, "the first tab leads");

    // Close the leader tab; another tab takes over.
    const lastSeen = (await pages[1].evaluate(() => window.subs.a.lastEventId));
    const { now_ms: closedAt } = await server.log();
    await pages[0].close();
    const rest = pages.slice(1);
    const next = await assertHandOver(server, t, closedAt);
    const cursor = cursorOf(next);

    // Keep publishing through the hand-over, then stop and check every subscription.
    await sleep(2000);
    const last = await pub.stop();
    assertNotOlder(pub.ids, cursor, lastSeen);
    await waitAll(rest, t, last, 8000, "after the hand-over");
    for (let i = 0; i < rest.length; i++) {
      const got = await numbers(rest[i], t);
      assertContiguous(got.a, last, `tab ${i + 2} sub a`);
      assertContiguous(got.b, last, `tab ${i + 2} sub b`);
      assert.deepEqual(got.a, got.b, `tab ${i + 2}: both subscriptions got the same messages`);
      // Tabs that joined before the last one received everything published after it joined.
      assert.ok(got.a[0] <= joinedAt + 1, `tab ${i + 2} got messages from ${got.a[0]} (everyone was in at ${joinedAt})`);
      assert.deepEqual(rest[i].errors, [], `tab ${i + 2}: page errors`);
    }
    const all = await streams(t);
    assert.ok(maxConcurrent(all) <= 2, `concurrent /sse requests overall (2 allowed during the hand-over): ${maxConcurrent(all)}`);
    const after = all.filter((e) => e.t_ms > closedAt);
    assert.equal(after.length, 1, `one request after the hand-over: ${JSON.stringify(after.map((e) => [e.t_ms, e.end_ms, e.query]))}`);
    assert.equal((await leaders(rest)).length, 1, "exactly one tab runs the request after the hand-over");
    tc.diagnostic(`ping ${Math.round(ping.ms)} ms; /sse requests ${all.length}, max concurrent ${maxConcurrent(before)} before the hand-over and ${maxConcurrent(all)} overall; ` +
      `hand-over ${next.t_ms - closedAt} ms after the close, cursor ${cursor} (last seen ${lastSeen}); ${last} messages published`);
  } finally {
    if (pub.running) await pub.stop();
    await context.close();
  }
});

test("BC-20 control, crossTab off: one stream per tab (its two subscriptions share it); six tabs take the whole per-host pool, and a plain fetch from the sixth does not complete", async () => {
  // (A seventh tab could not even load its page: its navigation waits for the pool too.)
  const t = tag();
  const context = await browser.newContext();
  const url = `/sse?t=${t}`;
  const pages = [];
  try {
    for (let i = 0; i < 6; i++) {
      pages.push(await openTab(context, url, { transports: ["fetch-sse"] }));
      await pages[i].waitForFunction(() => window.subs.a.state === "open", null, { timeout: 5000 });
    }
    const open = (await streams(t)).filter((e) => e.end_ms == null);
    assert.equal(open.length, 6, "six tabs, six streams");
    const ping = await pages[5].evaluate(async () => {
      const c = new AbortController();
      const timer = setTimeout(() => c.abort(), 2000);
      try {
        await fetch("/blank.html", { cache: "no-store", signal: c.signal });
        return "completed";
      } catch (e) {
        return e.name;
      } finally {
        clearTimeout(timer);
      }
    });
    assert.equal(ping, "AbortError", "the plain fetch was still waiting for a connection after 2 s");
  } finally {
    await context.close();
  }
});

test("BC-20 visibility: a hidden leader pauses; a visible follower takes the connection over (steal) with the cursor; all hidden → no request; visible again → one request, nothing lost or repeated", async () => {
  const t = tag();
  const context = await browser.newContext();
  await context.addInitScript(overrideVisibility);
  const url = `/sse?t=${t}`;
  const options = { crossTab: true, transports: ["fetch-sse"], backoff: { floorMs: 200, baseMs: 200 } };
  const pub = publisher(t, 300);
  try {
    const a = await openTab(context, url, options, ["a"]);
    await a.waitForFunction(() => window.subs.a.state === "open", null, { timeout: 5000 });
    const b = await openTab(context, url, options, ["a"]);
    await b.waitForFunction(() => window.subs.a.state === "open", null, { timeout: 5000 });
    await sleep(700);
    assert.deepEqual(await leaders([a, b]), [0], "the first tab leads");

    // The leader is hidden: it pauses; the visible tab steals and resumes from the cursor.
    const { now_ms: hiddenAt } = await server.log();
    await a.evaluate(() => window.setHidden(true));
    let took;
    const deadline = Date.now() + 3000;
    while (!took && Date.now() < deadline) {
      took = (await streams(t)).find((e) => e.t_ms > hiddenAt);
      await sleep(25);
    }
    assert.ok(took, "the visible tab opened a request after the leader was hidden");
    assert.ok(took.t_ms - hiddenAt < 1500, `took over ${took.t_ms - hiddenAt} ms after the leader was hidden`);
    assert.ok(cursorOf(took) !== "", "with the cursor");
    await sleep(1000);
    assert.deepEqual(await leaders([a, b]).then((l) => l.filter((i) => i === 1)), [1], "the visible tab runs the request");
    assert.equal(await a.evaluate(() => window.subs.a.state), "open", "the hidden tab follows the new leader's state");

    // Both hidden: the leader pauses, nobody steals, no request at all.
    await b.evaluate(() => window.setHidden(true));
    await b.waitForFunction(() => window.subs.a.state === "paused", null, { timeout: 3000 });
    await sleep(300);
    const quiet = (await streams(t)).length;
    await sleep(1500);
    assert.equal((await streams(t)).length, quiet, "no request while every tab is hidden");
    const open = (await streams(t)).filter((e) => e.end_ms == null);
    assert.equal(open.length, 0, `no open stream while every tab is hidden: ${JSON.stringify(open)}`);

    // The first tab is visible again: it takes over, one request, with the cursor.
    await a.evaluate(() => window.setHidden(false));
    await a.waitForFunction(() => window.subs.a.state === "open", null, { timeout: 3000 });
    await sleep(1000);
    const back = (await streams(t)).slice(quiet);
    assert.equal(back.length, 1, `one request on return: ${JSON.stringify(back.map((e) => [e.t_ms, e.query, e.headers]))}`);
    assert.ok(cursorOf(back[0]) !== "", "with the cursor");

    const last = await pub.stop();
    await waitAll([a, b], t, last, 5000, "after the visibility changes");
    for (const [name, page] of [["first", a], ["second", b]]) {
      const got = await numbers(page, t);
      assertContiguous(got.a, last, `${name} tab`);
      assert.deepEqual(page.errors, [], `${name} tab: page errors`);
    }
    assert.ok(maxConcurrent(await streams(t)) <= 2, "at most 2 concurrent streams (only during a hand-over)");
  } finally {
    if (pub.running) await pub.stop();
    await context.close();
  }
});

test("BC-20 without Web Locks / BroadcastChannel: crossTab falls back to one connection per URL per tab, and a hidden tab releases it", async () => {
  const t = tag();
  const context = await browser.newContext();
  await context.addInitScript(overrideVisibility);
  await context.addInitScript(() => {
    Object.defineProperty(Navigator.prototype, "locks", { configurable: true, get: () => undefined });
    delete window.BroadcastChannel;
  });
  const url = `/sse?t=${t}`;
  const options = { crossTab: true, transports: ["fetch-sse"] };
  const pub = publisher(t, 300);
  try {
    const a = await openTab(context, url, options);
    const b = await openTab(context, url, options);
    for (const p of [a, b]) await p.waitForFunction(() => window.subs.a.state === "open" && window.subs.b.state === "open", null, { timeout: 5000 });
    await sleep(600);
    let open = (await streams(t)).filter((e) => e.end_ms == null);
    assert.equal(open.length, 2, "one stream per tab (two subscriptions share it)");
    await a.evaluate(() => window.setHidden(true));
    await a.waitForFunction(() => window.subs.a.state === "paused", null, { timeout: 3000 });
    await sleep(800); // the server notices the dropped stream when it next writes
    open = (await streams(t)).filter((e) => e.end_ms == null);
    assert.equal(open.length, 1, "the hidden tab released its stream");
    const last = await pub.stop();
    await waitAll([b], t, last, 5000, "the visible tab");
    const got = await numbers(b, t);
    assertContiguous(got.a, last, "visible tab sub a");
    assert.deepEqual(got.a, got.b);
  } finally {
    if (pub.running) await pub.stop();
    await context.close();
  }
});

test("BC-20 channel input is validated: malformed or unknown posts on the tidings channel from another script change nothing and throw nothing", async () => {
  const t = tag();
  const context = await browser.newContext();
  const url = `/sse?t=${t}`;
  const options = { crossTab: true, transports: ["fetch-sse"] };
  const pub = publisher(t, 300);
  try {
    const a = await openTab(context, url, options, ["a"]);
    await a.waitForFunction(() => window.subs.a.state === "open", null, { timeout: 5000 });
    const b = await openTab(context, url, options, ["a"]);
    await b.waitForFunction(() => window.subs.a.state === "open", null, { timeout: 5000 });
    await sleep(500);
    const before = await Promise.all([a, b].map((p) => p.evaluate(() => window.events.length)));
    // Another same-origin script posts on the channel (from the follower's page: every other
    // BroadcastChannel object of that name receives it, the leader's and the follower's).
    await b.evaluate(() => {
      const bc = new BroadcastChannel(window.channelNames[0]);
      const junk = [
        null, 42, "m", {}, { k: "m" }, new Uint8Array(8), new Map([["k", "m"]]),
        [], [1], ["zz"], ["m"],
        ["m", "fetch-sse", 1, "", "message", "x"],
        ["m", "carrier-pigeon", "1", "1", "message", "x"],
        ["m", "fetch-sse", "1", "1", "message", 5],
        ["m", "fetch-sse", "1", "1", "message"],
        ["s", false, "open", "nope", ""],
        ["s", false, "sideways", "start", ""],
        ["s", false, "paused", "hidden", "", -1],
        ["s", false, "paused", "hidden", "", NaN],
        ["s", false, "paused", "hidden", "", Infinity],
        ["s", false, "paused", "hidden"],
        ["e", "auth", true, 70000],
        ["e", "auth", "yes", 401],
        ["e", "teapot", true],
        ["e", "auth", true, null, -5],
        ["t", false, "poll", "start", 5],
        ["t", false, "smoke", "start"],
        ["r", "whatever"],
        ["h", new Array(10)],
        ["s", true, "open", "start", ""], // a re-post saying nothing new
        ["t", true, "fetch-sse", "start"],
      ];
      for (const j of junk) bc.postMessage(j);
      // The control: a well-formed post is delivered (the channel name is right; the wire
      // format is trusted within the origin, like the page's own scripts).
      bc.postMessage(["m", "fetch-sse", "", "", "message", "well-formed"]);
      bc.close();
    });
    await sleep(500);
    for (const p of [a, b]) {
      const got = await p.evaluate(() => window.got.a.map((m) => m.data));
      assert.ok(got.includes("well-formed"), "the well-formed control post was delivered");
    }
    const after = await Promise.all([a, b].map((p) => p.evaluate(() => window.events)));
    assert.deepEqual(after.map((e, i) => e.slice(before[i])), [[], []], "no event from malformed posts");
    assert.equal(await a.evaluate(() => window.subs.a.state), "open");
    assert.equal(await b.evaluate(() => window.subs.a.state), "open");
    const last = await pub.stop();
    await waitAll([a, b], t, last, 5000, "after the junk");
    for (const p of [a, b]) {
      assertContiguous((await numbers(p, t)).a, last, "messages around the junk");
      assert.deepEqual(p.errors, [], "page errors");
    }
  } finally {
    if (pub.running) await pub.stop();
    await context.close();
  }
});

test("BC-20 the leader tab's subscriptions close (the tab stays): the next tab takes over with the cursor, no gap, no duplicate", async () => {
  const context = await browser.newContext();
  try {
    const [a, b] = [await tabPage(context), await tabPage(context)];
    await handOver(server, a, b, (a) => a.evaluate(() => window.subs.a.close()));
    assert.deepEqual(b.errors, []);
  } finally {
    await context.close();
  }
});

test("BC-20 a fatal error of the leader's connection reaches every tab (error fatal, state closed), and no tab retries", async () => {
  const t = tag();
  const context = await browser.newContext();
  const url = `/sse?t=${t}`;
  const options = { crossTab: true, transports: ["fetch-sse"] };
  try {
    const a = await openTab(context, url, options, ["a"]);
    await a.waitForFunction(() => window.subs.a.state === "open", null, { timeout: 5000 });
    const b = await openTab(context, url, options, ["a"]);
    await b.waitForFunction(() => window.subs.a.state === "open", null, { timeout: 5000 });
    // The stream ends; the reconnect is answered 204 No Content: the server's "stop".
    await fetch(`${server.url}/_faults`, { method: "POST", body: JSON.stringify({ path: "/sse", times: null, fault: { kind: "status", status: 204 } }) });
    await fetch(`${server.url}/_restart`, { method: "POST", body: JSON.stringify({}) });
    for (const p of [a, b]) {
      await p.waitForFunction(() => window.subs.a.state === "closed", null, { timeout: 8000 });
      const ev = await p.evaluate(() => window.events);
      assert.ok(ev.some(([, type, code]) => type === "error" && code === "no-content"), `error no-content: ${JSON.stringify(ev)}`);
    }
    const n = (await streams(t)).length;
    await sleep(1500);
    assert.equal((await streams(t)).length, n, "no tab retries after the fatal stop");
  } finally {
    await fetch(`${server.url}/_faults`, { method: "DELETE" });
    await context.close();
  }
});

/**
 * Tabs a (leader) and b (follower) of `url`, both open; then the stream ends
 * and its reconnect fails (refused while the server restarts, or answered
 * 500): with `maxAttempts: 1` the leader gives up and both read `closed`.
 * Returns after the server is back with no fault left.
 */
async function twoTabsWhoseLeaderGaveUp(context, url, options) {
  const a = await openTab(context, url, options, ["a"]);
  await a.waitForFunction(() => window.subs.a.state === "open", null, { timeout: 5000 });
  const b = await openTab(context, url, options, ["a"]);
  await b.waitForFunction(() => window.subs.a.state === "open", null, { timeout: 5000 });
  await fetch(`${server.url}/_faults`, { method: "POST", body: JSON.stringify({ path: "/sse", fault: { kind: "status", status: 500 } }) });
  await fetch(`${server.url}/_restart`, { method: "POST", body: JSON.stringify({}) });
  for (const p of [a, b]) await p.waitForFunction(() => window.subs.a.state === "closed", null, { timeout: 8000 });
  // The server's 1 s refuse window (or the 500) ended it: let the server
  // come back before anyone asks.
  await fetch(`${server.url}/_faults`, { method: "DELETE" });
  await sleep(1500);
  return [a, b];
}

test("crossTab reconnect() in a follower: the leader's connection that gave up is revived from the follower tab; both tabs hear the next message once; the follower queues for the lock again", async () => {
  const t = tag();
  const context = await browser.newContext();
  const url = `/sse?t=${t}`;
  const options = { crossTab: true, transports: ["fetch-sse"], backoff: { maxAttempts: 1 } };
  try {
    const [a, b] = await twoTabsWhoseLeaderGaveUp(context, url, options);
    const before = (await streams(t)).length;
    // The follower's app asks; the leader's engine revives its connection
    // (the answer here: the leader tab was asked).
    assert.equal(await b.evaluate(() => window.subs.a.reconnect()), "leader");
    for (const p of [a, b]) await p.waitForFunction(() => window.subs.a.state === "open", null, { timeout: 8000 });
    assert.equal((await streams(t)).length, before + 1, "one request, by the leader");
    assert.deepEqual(await leaders([a, b]), [0]);
    await server.publish(`${t} 1`);
    await waitAll([a, b], t, 1, 5000, "after the revival");
    for (const p of [a, b]) assert.deepEqual((await numbers(p, t)).a, [1]);
    assert.deepEqual(
      (await b.evaluate(() => window.events)).filter(([, type]) => type === "statechange").map(([, , s]) => s),
      ["open", "closed", "connecting", "open"],
    );
    // The follower dropped its lock request when the leader stopped: it queued
    // again, so closing the leader tab's subscription hands the connection over.
    await a.evaluate(() => window.subs.a.close());
    await b.waitForFunction(() => window.subs.a.stats().requests > 0, null, { timeout: 5000 });
    await server.publish(`${t} 2`);
    await waitAll([b], t, 2, 5000, "after the hand-over");
    assert.deepEqual((await numbers(b, t)).a, [1, 2]);
    assert.deepEqual([...a.errors, ...b.errors], []);
  } finally {
    await fetch(`${server.url}/_faults`, { method: "DELETE" });
    await context.close();
  }
});

test("crossTab reconnect() in a follower after the leader gave up and its tab closed: the follower takes the lock and runs (the post alone reached nobody)", async () => {
  const t = tag();
  const context = await browser.newContext();
  const url = `/sse?t=${t}`;
  const options = { crossTab: true, transports: ["fetch-sse"], backoff: { maxAttempts: 1 } };
  try {
    const [a, b] = await twoTabsWhoseLeaderGaveUp(context, url, options);
    // The leader tab's app closes its subscription (its lock goes; nobody
    // queues for it: every follower dropped its request at `gave-up`).
    await a.evaluate(() => window.subs.a.close());
    await a.close();
    const before = (await streams(t)).length;
    await b.evaluate(() => window.subs.a.reconnect());
    await b.waitForFunction(() => window.subs.a.state === "open", null, { timeout: 8000 });
    assert.equal((await streams(t)).length, before + 1, "one request, by the follower that took over");
    assert.ok((await b.evaluate(() => window.subs.a.stats().requests)) > 0);
    await server.publish(`${t} 1`);
    await waitAll([b], t, 1, 5000, "after the take-over");
    assert.deepEqual((await numbers(b, t)).a, [1]);
    assert.deepEqual(b.errors, []);
  } finally {
    await fetch(`${server.url}/_faults`, { method: "DELETE" });
    await context.close();
  }
});

for (const [how, patch] of [
  ["throws", () => { LockManager.prototype.request = function () { throw new DOMException("refused", "SecurityError"); }; }],
  ["rejects", () => { LockManager.prototype.request = function () { return Promise.reject(new DOMException("refused", "SecurityError")); }; }],
]) {
  test(`BC-20 navigator.locks.request ${how} (a sandboxed frame, an opaque origin): crossTab runs an ordinary per-tab connection`, async () => {
    const t = tag();
    const context = await browser.newContext();
    await context.addInitScript(patch);
    const url = `/sse?t=${t}`;
    const pub = publisher(t, 250);
    try {
      const a = await openTab(context, url, { crossTab: true, transports: ["fetch-sse"] });
      await a.waitForFunction(() => window.subs.a.state === "open" && window.subs.b.state === "open", null, { timeout: 5000 });
      await sleep(500);
      const last = await pub.stop();
      await waitAll([a], t, last, 5000, "the tab");
      const got = await numbers(a, t);
      assertContiguous(got.a, last, "sub a");
      assert.deepEqual(got.a, got.b);
      assert.equal((await streams(t)).length, 1, "one stream for the tab's two subscriptions");
      assert.deepEqual(a.errors, []);
    } finally {
      if (pub.running) await pub.stop();
      await context.close();
    }
  });
}

test("BC-20 visibility with several visible followers: the hidden leader is replaced by exactly one tab; nothing lost or repeated in any tab", async () => {
  const t = tag();
  const context = await browser.newContext();
  await context.addInitScript(overrideVisibility);
  const url = `/sse?t=${t}`;
  const options = { crossTab: true, transports: ["fetch-sse"], backoff: { floorMs: 200, baseMs: 200 } };
  const pub = publisher(t, 200);
  const pages = [];
  try {
    for (let i = 0; i < 4; i++) {
      pages.push(await openTab(context, url, options, ["a"]));
      await pages[i].waitForFunction(() => window.subs.a.state === "open", null, { timeout: 5000 });
    }
    await sleep(500);
    await pages[0].evaluate(() => window.setHidden(true));
    await sleep(2500);
    const lead = await Promise.all(pages.map((p) => p.evaluate(() => window.subs.a.state)));
    assert.deepEqual(lead, ["open", "open", "open", "open"], "every tab follows the new leader");
    const open = (await streams(t)).filter((e) => e.end_ms == null);
    assert.equal(open.length, 1, `one stream open after the take-over: ${JSON.stringify(open.map((e) => [e.t_ms, e.query]))}`);
    const last = await pub.stop();
    await waitAll(pages, t, last, 5000, "after the take-over");
    for (let i = 0; i < pages.length; i++) {
      assertContiguous((await numbers(pages[i], t)).a, last, `tab ${i + 1}`);
      assert.deepEqual(pages[i].errors, [], `tab ${i + 1}: page errors`);
    }
    assert.ok(maxConcurrent(await streams(t)) <= 2, "at most 2 concurrent streams");
  } finally {
    if (pub.running) await pub.stop();
    await context.close();
  }
});

test("BC-20 back-forward cache (real): the leader page leaving hands over at once (pagehide) with the cursor; restored, it follows again (no request) and hears `reset` for what it missed", async () => {
  const b = await launchBrowser({ ignoreDefaultArgs: ["--disable-back-forward-cache"] });
  const t = tag();
  const url = `/sse?t=${t}`;
  const options = { crossTab: true, transports: ["fetch-sse"] };
  const pub = publisher(t, 200);
  try {
    const context = await b.newContext();
    const a = await openTab(context, url, options, ["a"]);
    await a.waitForFunction(() => window.subs.a.state === "open", null, { timeout: 5000 });
    await a.evaluate(() => window.addEventListener("pageshow", (e) => { window.persisted = e.persisted; }));
    const f = await openTab(context, url, options, ["a"]);
    await f.waitForFunction(() => window.subs.a.state === "open", null, { timeout: 5000 });
    await sleep(600);
    const { now_ms: leftAt } = await server.log();
    await a.goto(`${server.url}/other.html`);
    let next;
    const deadline = Date.now() + 5000;
    while (!next && Date.now() < deadline) {
      next = (await streams(t)).find((e) => e.t_ms > leftAt);
      await sleep(25);
    }
    assert.ok(next, "the other tab took over");
    assert.ok(next.t_ms - leftAt < 1000, `took over ${next.t_ms - leftAt} ms after the leader page left`);
    assert.ok(cursorOf(next) !== "", "with the cursor");
    await sleep(800);
    await a.goBack({ waitUntil: "commit" });
    await a.waitForFunction(() => window.persisted !== undefined, null, { timeout: 5000 });
    assert.equal(await a.evaluate(() => window.persisted), true, "restored from the back-forward cache");
    await a.waitForFunction(() => window.events.some(([, type]) => type === "reset"), null, { timeout: 3000 });
    const restoredAt = await a.evaluate(() => window.got.a.length);
    await sleep(800);
    const last = await pub.stop();
    await waitAll([a, f], t, last, 5000, "after the restore");
    assertContiguous((await numbers(f, t)).a, last, "the tab that took over");
    const seqA = (await numbers(a, t)).a;
    assertContiguous(seqA.slice(restoredAt), last, "the restored tab, after its reset");
    assert.equal(new Set(seqA).size, seqA.length, "the restored tab got no message twice");
    assert.equal((await streams(t)).length, 2, "the restored tab made no request");
    await context.close();
  } finally {
    if (pub.running) await pub.stop();
    await b.close();
  }
});

test("crossTab: a message over maxMessageBytes is a too-large error carrying its id in every tab, the follower's too (relayed with the error)", async () => {
  const t = tag();
  const context = await browser.newContext();
  const url = `/sse?t=${t}`;
  const options = { crossTab: true, transports: ["fetch-sse"], maxMessageBytes: 64 };
  try {
    const pages = [];
    for (let i = 0; i < 2; i++) {
      const p = await openTab(context, url, options, ["a"]);
      await p.waitForFunction(() => window.subs.a.state === "open", null, { timeout: 5000 });
      await p.evaluate(() => {
        window.tooLarge = [];
        window.subs.a.addEventListener("error", (e) => window.tooLarge.push([e.code, e.id, e.fatal]));
      });
      pages.push(p);
    }
    const { id: bigId } = await server.publish(`${t} ${"x".repeat(200)}`);
    await server.publish(`${t} 2`);
    for (const p of pages) {
      await p.waitForFunction((t) => window.got.a.some((m) => m.data === `${t} 2`), t, { timeout: 5000 });
      assert.deepEqual(await p.evaluate(() => window.tooLarge), [["too-large", String(bigId), false]]);
      assert.deepEqual(p.errors, []);
    }
    assert.equal((await streams(t)).length, 1, "one stream for both tabs");
  } finally {
    await context.close();
  }
});
