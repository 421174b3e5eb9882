// Chaos, numbered: 1,000 numbered messages published at a steady 40 per second
// while the server restarts 10 times (every connection dropped, new ones
// refused for 150 ms) and the client is forced through every switch of
// transport selection:
//   fetch-sse → long-poll (buffered-stream: 2 opens held by a buffering proxy)
//   long-poll → poll (open-failed: long-polls that never get an answer)
//   poll → fetch-sse (failback-probe after fallback.rememberMs)
//   fetch-sse → long-poll (buffered-stream again; long-poll now works)
//   long-poll → fetch-sse (failback-probe)
// Every number must arrive exactly once, in order; the test prints how many
// duplicates the dedupe dropped (stats().duplicatesDropped) and how the
// messages split over the transports. A forced switch starts with a restart
// (the open stream reconnects into the faults); the other restarts wait while
// a switch is under way, so each switch is the one its fault caused.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import * as h from "./tidings-page.mjs";

const COUNT = 1000;
const EVERY_MS = 25;
// Restarts after these message numbers; the ones at 150 and 600 also start a
// forced switch (an open stream only meets the faults when it reconnects).
const RESTARTS = [45, 150, 240, 330, 420, 510, 600, 690, 780, 870];
const RESTART_MS = 150;

let browser, server;
before(async () => {
  browser = await launchBrowser();
  server = await startServer(["--quiet", "--retry-ms", "100", "--buffer", "5000"]);
});
after(async () => { await browser?.close(); await server?.stop(); });

test(`${COUNT} numbered messages through 10 restarts and 5 forced transport switches: each exactly once, in order`, async () => {
  const page = await h.blankPage(browser, server.url);
  try {
    const { id: start } = await server.publish("start");
    await h.subscribe(page, "s", "/sse?case=chaos", {
      seed: 6, lastEventId: start, transports: ["fetch-sse", "long-poll", "poll"],
      urls: { "long-poll": "/long-poll?hold_ms=500", poll: "/poll" },
      backoff: { floorMs: 100, baseMs: 100, maxMs: 1000 },
      // A breaker that opened for the default 30 s would outlast the test.
      breaker: { failureThreshold: 5, cooldownMs: 1000 },
      watchdog: { firstEventTimeoutMs: 400, idleTimeoutMs: 3000 },
      longPoll: { timeoutMs: 400 },
      interval: { initialMs: 200, minMs: 100, maxMs: 400 },
      fallback: { afterFailures: 2, rememberMs: 2000 },
    });
    await h.waitEvents(page, "s", (l) => l.some((e) => e.type === "open"), 5000, "open");

    const transport = () => page.evaluate(() => window.subs.s.sub.transport);
    // Forced switches: at a message number, queue the faults, then follow
    // the client through the phases of each.
    const plan = [
      { at: 150, faults: [
        { path: "/sse", times: 2, fault: { kind: "buffer" } },
        { path: "/long-poll", times: null, fault: { kind: "delay", ms: null } },
      ], phases: [["poll", () => fetch(`${server.url}/_faults?path=/long-poll`, { method: "DELETE" })], ["fetch-sse"]] },
      { at: 600, faults: [{ path: "/sse", times: 2, fault: { kind: "buffer" } }], phases: [["long-poll"], ["fetch-sse"]] },
    ];
    let phases = [];
    const restarts = [];
    const t0 = Date.now();
    for (let i = 1; i <= COUNT; i++) {
      const due = t0 + i * EVERY_MS;
      if (due > Date.now()) await h.sleep(due - Date.now());
      await server.publish(String(i));
      const step = plan.find((p) => p.at === i);
      if (step) { await h.faults(server, step.faults); phases = [...step.phases]; }
      const restartDue = restarts.length < RESTARTS.length && i >= RESTARTS[restarts.length]
        && (!restarts.length || i - restarts.at(-1).i >= 20);
      if (restartDue && (step || !phases.length)) {
        const r = await h.restart(server, { ms: RESTART_MS, mode: "refuse" });
        restarts.push({ i, dropped: r.dropped });
        await h.sleep(RESTART_MS + 30); // publishing is refused meanwhile
      }
      if (phases.length && i % 4 === 0) {
        const [want, then] = phases[0];
        const now = await transport();
        if (process.env.CHAOS_DEBUG) console.log(i, want, now);
        if (now === want) { await then?.(); phases.shift(); }
      }
    }
    const published = Date.now() - t0;
    const log = await h.waitEvents(page, "s", (l) => l.filter((e) => e.type === "message" && e.data !== "start").length >= COUNT,
      10000, `all ${COUNT} messages`);
    await h.sleep(300);
    const all = (await h.events(page, "s")).filter((e) => e.type === "message");
    const st = await h.stats(page, "s");
    await h.closeSub(page, "s");

    const changes = log.filter((e) => e.type === "transportchange" && e.previous !== null).map((e) => [e.previous, e.transport, e.reason]);
    assert.equal(restarts.length, 10, `restarts at ${JSON.stringify(restarts)}; switches ${JSON.stringify(changes)}; phases left ${phases.map((p) => p[0])}`);
    assert.deepEqual(all.map((e) => Number(e.data)), Array.from({ length: COUNT }, (_, k) => k + 1));
    const ids = all.map((e) => Number(e.id));
    assert.deepEqual(ids, [...ids].sort((x, y) => x - y));
    assert.equal(new Set(ids).size, COUNT);
    assert.deepEqual(changes, [
      ["fetch-sse", "long-poll", "buffered-stream"],
      ["long-poll", "poll", "open-failed"],
      ["poll", "fetch-sse", "failback-probe"],
      ["fetch-sse", "long-poll", "buffered-stream"],
      ["long-poll", "fetch-sse", "failback-probe"],
    ]);
    const by = {};
    for (const e of all) by[e.transport] = (by[e.transport] ?? 0) + 1;
    for (const t of ["fetch-sse", "long-poll", "poll"]) assert.ok(by[t] > 0, `no message over ${t}: ${JSON.stringify(by)}`);
    console.log(`# chaos: ${COUNT} messages in ${published} ms, restarts after #${restarts.map((r) => r.i).join(", #")} ` +
      `(dropped ${restarts.map((r) => r.dropped).join("/")} connections), by transport ${JSON.stringify(by)}, ` +
      `requests ${st.requests}, duplicatesDropped ${st.duplicatesDropped}`);
  } finally { await page.closeAll(); }
});
