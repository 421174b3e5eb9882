// A remembered downgrade outlives the page: it is kept per endpoint set in the
// tab's `sessionStorage`, under `tidings:downgrade:` and a hash of the URLs
// (tidings_core::keys: never the URL itself; written by
// src/connection/live.rs before every request, read when a connection is
// created) until `fallback.rememberMs` has passed,
// so a reload does not repeat the failed attempts. Another tab has its own
// `sessionStorage` and starts from the preferred transport. Once the time is
// up the preferred transport is probed again and kept when the probe works.
//
// TIDINGS_PKG=<dir> runs this against another build of the package (the
// server's --pkg), e.g. one made with `OUT=<dir> scripts/build-pkg.sh`.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import * as h from "./tidings-page.mjs";

const REMEMBER_MS = 6000;
const OPTIONS = {
  seed: 5, transports: ["fetch-sse", "long-poll", "poll"],
  urls: { "long-poll": "/long-poll?hold_ms=300", poll: "/poll" },
  backoff: { floorMs: 100, baseMs: 100 }, watchdog: { firstEventTimeoutMs: 400, idleTimeoutMs: 5000 },
  fallback: { afterFailures: 2, rememberMs: REMEMBER_MS },
};
const URL_PATH = "/sse?case=persist";
/** The page's remembered downgrades: [key, record] pairs. */
const downgrades = (page) => page.evaluate(() => Object.keys(sessionStorage)
  .filter((k) => k.startsWith("tidings:downgrade:")).map((k) => [k, sessionStorage.getItem(k)]));

let browser, server;
before(async () => {
  browser = await launchBrowser();
  const pkg = process.env.TIDINGS_PKG ? ["--pkg", process.env.TIDINGS_PKG] : [];
  server = await startServer(["--quiet", "--retry-ms", "100", ...pkg]);
});
after(async () => { await browser?.close(); await server?.stop(); });

test("a downgrade survives a reload in the same tab (no stream attempt), not in a new tab; failback after rememberMs", async () => {
  const page = await h.blankPage(browser, server.url);
  try {
    await h.faults(server, { path: "/sse", times: 2, fault: { kind: "buffer" } });
    const { id: start } = await server.publish("start");
    await h.subscribe(page, "s", URL_PATH, { ...OPTIONS, lastEventId: start });
    // (The first transportchange, `previous: null`, announces the start.)
    const switched = (e) => e.type === "transportchange" && e.previous !== null;
    await h.waitEvents(page, "s", (l) => l.some(switched), 5000, "the downgrade");
    await server.publish("via long-poll");
    const log1 = await h.waitEvents(page, "s", (l) => l.some((e) => e.data === "via long-poll"), 5000, "a message over long-poll");
    assert.equal(log1.find((e) => e.data === "via long-poll").transport, "long-poll");
    const down = log1.find(switched);
    assert.deepEqual([down.previous, down.transport, down.reason], ["fetch-sse", "long-poll", "buffered-stream"]);
    const remembered = await downgrades(page);
    assert.equal(remembered.length, 1);
    assert.match(remembered[0][0], /^tidings:downgrade:[0-9a-f]{16}$/);
    const [transport, until] = remembered[0][1].split(" ");
    assert.equal(transport, "long-poll");
    // rememberMs after the switch, on the wall clock.
    assert.ok(Math.abs(Number(until) - (down.wall + REMEMBER_MS)) <= 50, `stored until ${until}, switch at ${down.wall}`);
    const cursor = await page.evaluate(() => window.subs.s.sub.lastEventId);

    // Reload: same tab, same sessionStorage.
    await page.reload();
    await h.loadPackage(page);
    await h.clearLog(server);
    const reloadedAt = Date.now();
    assert.ok(reloadedAt < Number(until) - 1000, "the reload happened well inside the remembered time");
    await h.subscribe(page, "s", URL_PATH, { ...OPTIONS, lastEventId: cursor });
    assert.equal(await page.evaluate(() => window.subs.s.sub.transport), "long-poll");
    const { id } = await server.publish("after reload");
    const log2 = await h.waitEvents(page, "s", (l) => l.some((e) => e.data === "after reload"), 5000, "the message after the reload");
    assert.deepEqual(log2.filter((e) => e.type === "message").map((e) => [e.id, e.transport]), [[id, "long-poll"]]);
    assert.equal(log2.find((e) => e.type === "open").transport, "long-poll");
    // No stream attempt while the downgrade is remembered.
    assert.equal((await h.requests(server, "/sse")).length, 0);

    // A new tab: its own sessionStorage, so it starts on the stream.
    const tab2 = await page.context().newPage();
    await tab2.goto(`${server.url}/_faults`);
    await h.loadPackage(tab2);
    assert.deepEqual(await downgrades(tab2), []);
    await h.subscribe(tab2, "s", URL_PATH, { ...OPTIONS, lastEventId: cursor });
    await h.waitEvents(tab2, "s", (l) => l.some((e) => e.type === "open"), 5000, "open in the new tab");
    assert.equal(await tab2.evaluate(() => window.subs.s.sub.transport), "fetch-sse");
    await h.closeSub(tab2, "s");
    assert.equal((await h.requests(server, "/sse")).length, 1);

    // The reloaded tab probes the stream once the remembered time is up; the
    // buffering is gone, so the probe delivers and the stream stays.
    const log3 = await h.waitEvents(page, "s", (l) => l.some(switched),
      REMEMBER_MS + 3000, "the failback probe");
    const probe = log3.find(switched);
    assert.deepEqual([probe.previous, probe.transport, probe.reason], ["long-poll", "fetch-sse", "failback-probe"]);
    assert.ok(probe.wall >= Number(until), `probed at ${probe.wall}, remembered until ${until}`);
    const { id: last } = await server.publish("on the stream again");
    const log4 = await h.waitEvents(page, "s", (l) => l.some((e) => e.data === "on the stream again"), 5000, "a message on the stream");
    assert.deepEqual(log4.filter((e) => e.id === last).map((e) => e.transport), ["fetch-sse"]);
    // After the reload: started on the remembered transport (announced as the
    // start: the selector's first pick), then the one switch back.
    assert.deepEqual(log4.filter((e) => e.type === "transportchange").map((e) => [e.previous, e.transport, e.reason]),
      [[null, "long-poll", "start"], ["long-poll", "fetch-sse", "failback-probe"]]);
    // Every message once, in order, across the reload's session.
    const ids = log4.filter((e) => e.type === "message").map((e) => Number(e.id));
    assert.deepEqual(ids, [...ids].sort((x, y) => x - y));
    assert.equal(new Set(ids).size, ids.length);
    await h.closeSub(page, "s");
  } finally { await page.closeAll(); }
});
