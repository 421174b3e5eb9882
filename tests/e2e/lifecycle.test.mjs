// Page lifecycle (docs/lifecycle.md): quiet while hidden, offline or frozen; prompt and
// lossless on return. Counts requests at the reference server (/_log). The hidden and
// offline scenarios are lifecycle.mjs's, which tests/engines runs on Firefox and WebKitGTK too.
//
// Real mechanisms: offline/online (Playwright's context.setOffline fires the
// browser's own events) and the back-forward cache (Chromium launched without
// --disable-back-forward-cache). Simulated, because headless Chromium has no
// way to change them (bringToFront, minimising and CDP do not): the page's
// document.visibilityState / document.hidden are overridden and
// visibilitychange dispatched, and freeze/resume are dispatched on document.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import { hiddenThenVisible, offlineThenOnline, subscribed as subscribedOn, tag, tagged } from "./lifecycle.mjs";

const PAGES = new URL("./pages/", import.meta.url).pathname;
let server, browser;
before(async () => {
  server = await startServer(["--www", PAGES]);
  browser = await launchBrowser();
});
after(async () => { await browser?.close(); await server?.stop(); });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const requests = (path, t) => tagged(server, path, t);
const subscribed = (page, url, options) => subscribedOn(page, server.url, url, options);

for (const transport of ["eventsource", "fetch-sse"]) {
  test(`${transport}: hidden → stream released, zero requests while hidden (also during an outage), visible → one request with the cursor, missed messages once each`, async () => {
    const page = await browser.newPage();
    await hiddenThenVisible(page, server, transport);
    await page.close();
  });
}

// Issue 19: one page becoming visible is not a fleet. Seed 32 drew a
// 229 ms resume spread before (U[0, 250)); now the request goes out with the
// visibilitychange itself. The state sequence is exact; the time from the
// event to the fetch call is printed, and bounded loosely (a spread of a
// few hundred ms, or a timer turn on a loaded machine, would still break it).
test("visible → the first request goes out with the event (no waiting, no spread)", async () => {
  const t = tag();
  const page = await browser.newPage();
  await subscribed(page, `/sse?t=${t}`, { transports: ["fetch-sse"], seed: 32 });
  await page.evaluate(() => window.setHidden(true));
  await page.waitForFunction(() => window.sub.state === "paused");
  const gapMs = await page.evaluate(async () => {
    const fetch = window.fetch;
    let called;
    const first = new Promise((resolve) => { called = resolve; });
    window.fetch = function (...args) { called(performance.now()); return fetch.apply(this, args); };
    window.states.length = 0;
    const shown = performance.now();
    window.setHidden(false);
    const at = await first;
    window.fetch = fetch;
    return at - shown;
  });
  await page.waitForFunction(() => window.sub.state === "open");
  console.log(`visible → fetch: ${gapMs.toFixed(1)} ms`);
  assert.deepEqual((await page.evaluate(() => window.states)).slice(0, 2), ["connecting:visible", "open:visible"]);
  assert.ok(gapMs < 150, `visible → fetch ${gapMs} ms`);
  await page.close();
});

test("hidden/visible flipped 10 times within 1 s ends with exactly one open stream", async () => {
  const t = tag();
  const page = await browser.newPage();
  await subscribed(page, `/sse?t=${t}`, { transports: ["fetch-sse"], seed: 5 });
  await page.evaluate(async () => {
    for (let i = 0; i < 10; i++) {
      window.setHidden(i % 2 === 0);
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  await page.waitForFunction(() => window.sub.state === "open");
  await sleep(800);
  // An aborted stream is logged as ended once the server notices the
  // client went away, which a loaded machine can delay: wait up to 3 s
  // more for the count to settle (a leaked stream never would).
  let open = [];
  for (let i = 0; i < 30; i++) {
    open = (await requests("/sse", t)).filter((r) => r.end_ms == null);
    if (open.length === 1) break;
    await sleep(100);
  }
  assert.equal(open.length, 1, "open streams after the flips");
  await page.close();
});

test("offline (real, context.setOffline) → no attempts; online → one prompt attempt", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await offlineThenOnline(page, server, (offline) => context.setOffline(offline));
  await context.close();
});

test("freeze (simulated) releases the stream; resume reconnects once with the cursor", async () => {
  const t = tag();
  const page = await browser.newPage();
  await subscribed(page, `/sse?t=${t}`, { transports: ["fetch-sse"], seed: 11 });
  await server.publish(`${t} a`);
  await page.waitForFunction(() => window.got.length === 1);
  const before = (await requests("/sse", t)).length;
  await page.evaluate(() => document.dispatchEvent(new Event("freeze")));
  await page.waitForFunction(() => window.sub.state === "paused");
  await server.publish(`${t} b`);
  await sleep(300);
  assert.equal((await requests("/sse", t)).length, before);
  await page.evaluate(() => document.dispatchEvent(new Event("resume")));
  await page.waitForFunction(() => window.got.length === 2, null, { timeout: 5000 });
  assert.deepEqual(await page.evaluate(() => window.got), [`${t} a`, `${t} b`]);
  assert.equal((await requests("/sse", t)).length, before + 1);
  await page.close();
});

test("back-forward cache (real): the page stays eligible, pageshow.persisted, exactly one reconnect with the cursor", async () => {
  const b = await launchBrowser({ ignoreDefaultArgs: ["--disable-back-forward-cache"] });
  try {
    const t = tag();
    const page = await b.newPage();
    await subscribed(page, `/sse?t=${t}`, { transports: ["fetch-sse"], seed: 13 });
    await page.evaluate(() => {
      window.addEventListener("pageshow", (e) => { window.persisted = e.persisted; });
    });
    await server.publish(`${t} before`);
    await page.waitForFunction(() => window.got.length === 1);
    const before = (await requests("/sse", t)).length;
    await page.goto(server.url + "/other.html");
    await server.publish(`${t} while cached`);
    await sleep(300);
    assert.equal((await requests("/sse", t)).length, before, "no request while in the cache");
    // A page restored from the back-forward cache fires no `load`.
    await page.goBack({ waitUntil: "commit" });
    await page.waitForFunction(() => window.persisted !== undefined, null, { timeout: 5000 });
    assert.equal(await page.evaluate(() => window.persisted), true, "restored from the back-forward cache");
    await page.waitForFunction(() => window.got.length === 2, null, { timeout: 5000 });
    assert.deepEqual(await page.evaluate(() => window.got), [`${t} before`, `${t} while cached`]);
    const after = await requests("/sse", t);
    assert.equal(after.length, before + 1, "exactly one reconnect");
    assert.ok(after.at(-1).headers["last-event-id"], "with the cursor");
  } finally {
    await b.close();
  }
});
