// The news probe (core/src/engine/news_probe.rs) against the reference
// server, in headless Chromium, with a long-poll endpoint of its own:
// - behind the `buffer` fault holding every stream, on the default transport
//   list: the probe 3 s after the first request finds the server's news,
//   and the first message reaches the app within 10 s of its publish (with
//   the first-event deadline alone: about 187 s), via `long-poll`, once;
// - a quiet server that only pings (here every 5 s, the `ping` fault) with a
//   first-event deadline of 8 s (so a reconnect would show within the test):
//   one stream, 0 reconnects and at most one long-poll per stream opened, on
//   each stream transport.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import * as h from "./tidings-page.mjs";

let browser, srv;
before(async () => {
  browser = await launchBrowser();
  srv = await startServer(["--quiet"]);
});
after(async () => { await browser?.close(); await srv?.stop(); });

const byCase = (entries, tag) => entries.filter((e) => (e.query ?? "").includes(`case=${tag}`));

test("a proxy holding every stream: the first message within 10 s of its publish, via long-poll, once", async () => {
  await h.clearFaults(srv);
  await h.faults(srv, { path: "/sse", times: null, fault: { kind: "buffer" } });
  const page = await h.blankPage(browser, srv.url);
  try {
    await h.subscribe(page, "s", "/sse?case=held", {
      seed: 24, urls: { "long-poll": "/long-poll?case=held", poll: "/poll" },
    });
    await h.waitEvents(page, "s", (l) => l.some((e) => e.type === "open"), 5000, "open");
    // The probe goes out 3 s after the first request and holds.
    await h.waitRequests(srv, "/long-poll", (es) => byCase(es, "held").length >= 1, 6000, "the probe");
    const published = Date.now();
    const { id } = await srv.publish("first");
    const log = await h.waitEvents(page, "s", (l) => l.some((e) => e.type === "message"), 10_000, "the first message");
    const first = log.find((e) => e.type === "message");
    assert.ok(first.wall - published < 10_000, `${first.wall - published} ms after its publish`);
    assert.deepEqual([first.id, first.data, first.transport], [id, "first", "long-poll"]);
    const changes = log.filter((e) => e.type === "transportchange" && e.previous !== null);
    assert.deepEqual(changes.map((e) => [e.previous, e.transport, e.reason]), [["eventsource", "long-poll", "buffered-stream"]]);
    // The next one comes by long-poll too, and the first is not repeated.
    const { id: id2 } = await srv.publish("second");
    const after = await h.waitEvents(page, "s", (l) => l.filter((e) => e.type === "message").length >= 2, 5000, "the second");
    await h.sleep(300);
    const msgs = (await h.events(page, "s", "message")).map((e) => [e.id, e.data]);
    assert.deepEqual(msgs, [[id, "first"], [id2, "second"]], JSON.stringify(after.map(h.brief)));
    const streams = byCase(await h.requests(srv, "/sse"), "held");
    assert.equal(streams.length, 1, streams.map(h.logBrief).join("\n"));
    assert.equal(streams[0].end, "dropped");
  } finally {
    await page.closeAll();
    await h.clearFaults(srv);
  }
});

test("a quiet server that only pings: one stream, 0 reconnects, at most one probe per stream, on eventsource and fetch-sse", async () => {
  await h.clearFaults(srv);
  await h.faults(srv, { path: "/sse", times: null, fault: { kind: "ping", ms: 5000 } });
  const page = await h.blankPage(browser, srv.url);
  const transports = ["eventsource", "fetch-sse"];
  try {
    for (const t of transports) {
      await h.subscribe(page, t, `/sse?case=q-${t}`, {
        seed: 24, transports: [t, "long-poll", "poll"], watchdog: { firstEventTimeoutMs: 8000 },
        urls: { "long-poll": `/long-poll?hold_ms=2000&case=q-${t}`, poll: "/poll" },
      });
    }
    await h.sleep(20_000);
    for (const t of transports) {
      const log = await h.events(page, t);
      const streams = byCase(await h.requests(srv, "/sse"), `q-${t}`);
      const probes = byCase(await h.requests(srv, "/long-poll"), `q-${t}`);
      const { reconnects } = await h.stats(page, t);
      assert.equal(streams.length, 1, `${t}: ${streams.map(h.logBrief).join("\n")}`);
      assert.equal(reconnects, 0, t);
      assert.ok(probes.length <= streams.length, `${t}: ${probes.map(h.logBrief).join("\n")}`);
      assert.deepEqual(log.filter((e) => e.type === "error" || (e.type === "transportchange" && e.reason !== "start")).map(h.brief), [], t);
    }
  } finally {
    await page.closeAll();
    await h.clearFaults(srv);
  }
});
