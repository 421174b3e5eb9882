// Wire-level rules, in headless Chromium against the reference
// server, on both streaming transports:
// - rule 1: a server `event: error` / `event: open` is data, never a
//   lifecycle signal. Native EventSource dispatches the server's
//   `event: error` to the same `error` listener as its own failures; tidings
//   tells the MessageEvent apart. Neither reaches the subscription's `error`
//   / `open` listeners, the stream stays open (one request), the next message
//   arrives, and `debug: true` logs each as `ignore`.
// - rule 5: a server that lost its state and reissues ids 1, 2, 3 with new
//   data (`/_restart` with `lose_state` and `reset_old_cursors: false`): every
//   new event is delivered, none taken for a duplicate.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import * as h from "./tidings-page.mjs";

let browser, server, page, n = 0;
const logs = [];
before(async () => {
  browser = await launchBrowser();
  server = await startServer(["--quiet", "--retry-ms", "100"]);
  page = await h.blankPage(browser, server.url);
  h.recordDebugLog(page, logs);
});
after(async () => { await page?.closeAll(); await browser?.close(); await server?.stop(); });

const caseLog = async (tag) =>
  (await h.requests(server, "/sse")).filter((e) => (e.query ?? "").includes(`case=${tag}`));

for (const transport of ["eventsource", "fetch-sse"]) {
  describe(`on ${transport}`, () => {
    test("server `event: error` and `event: open` are dropped: no error/open listener call, 1 request, the next message arrives, debug log says `ignore`", async () => {
      await h.clearFaults(server);
      await h.faults(server, { path: "/sse", fault: {
        kind: "script", status: 200, content_type: "text/event-stream",
        writes: [
          { delay_ms: 0, data: 'id: 1\nevent: error\ndata: {"message":"boom"}\n\n' },
          { delay_ms: 50, data: "id: 2\nevent: open\ndata: hi\n\n" },
          { delay_ms: 50, data: "id: 3\ndata: normal\n\n" },
        ],
        then: "hang",
      } });
      const tag = `e${++n}`;
      logs.length = 0;
      await h.subscribe(page, tag, `/sse?case=${tag}`, {
        transports: [transport], seed: 5, debug: true,
        backoff: { floorMs: 100, baseMs: 100, maxMs: 200 },
      });
      await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "message"), 5000, "the normal message");
      for (let i = 0; !(logs.every((x) => x.what) && logs.filter((x) => x.what === "ignore").length >= 2); i++) {
        assert.ok(i < 200, `no two ignore lines: ${JSON.stringify(logs)}`);
        await h.sleep(25);
      }
      await h.sleep(400); // a reconnect (floor 100 ms) would show by now
      const log = await h.events(page, tag);
      const state = await page.evaluate((t) => window.subs[t].sub.state, tag);
      const entries = await caseLog(tag);
      await h.closeSub(page, tag);
      await h.clearFaults(server);
      const brief = log.map(h.brief).join("\n");
      assert.deepEqual((await h.messages(page, tag)).map((e) => [e.type, e.id, e.data]), [["message", "3", "normal"]], brief);
      assert.equal(log.filter((e) => e.type === "error").length, 0, brief);
      assert.equal(log.filter((e) => e.type === "open").length, 1, brief);
      assert.equal(log.filter((e) => e.state === "waiting").length, 0, brief);
      assert.equal(state, "open");
      assert.equal(entries.length, 1, entries.map(h.logBrief).join("\n"));
      const ignored = logs.filter((x) => x.what === "ignore").map((x) => [x.event, x.id]);
      assert.deepEqual(ignored, [["error", "1"], ["open", "2"]]);
      assert.equal(await page.evaluate((t) => window.subs[t].sub.lastEventId, tag), "3");
    });

    test("ids 1, 2, 3 reissued with new data after a server restart that lost its state are all delivered", async () => {
      await h.clearFaults(server);
      // Ids count from 1 for this case.
      await h.restart(server, { ms: 0, lose_state: true });
      const tag = `r${++n}`;
      await h.subscribe(page, tag, `/sse?case=${tag}`, {
        transports: [transport], seed: 6, backoff: { floorMs: 100, baseMs: 100, maxMs: 200 },
      });
      await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "open"), 5000, "open");
      for (const d of ["a", "b", "c"]) await server.publish(d);
      await h.waitEvents(page, tag, (l) => l.filter((e) => e.type === "message").length >= 3, 5000, "a, b, c");
      const r = await h.restart(server, { ms: 0, lose_state: true, reset_old_cursors: false });
      assert.ok(r.dropped >= 1, JSON.stringify(r));
      await h.waitEvents(page, tag, (l) => l.filter((e) => e.type === "open").length >= 2, 8000, "the reconnect");
      await h.waitRequests(server, "/sse", (es) => es.filter((e) => e.query.includes(`case=${tag}`) && e.status === 200).length >= 2,
        5000, "the second stream");
      for (const d of ["x", "y", "z"]) await server.publish(d);
      const log = await h.waitEvents(page, tag, (l) => l.filter((e) => e.type === "message").length >= 6, 5000, "x, y, z");
      const stats = await h.stats(page, tag);
      await h.closeSub(page, tag);
      const got = log.filter((e) => e.type === "message").map((e) => [e.id, e.data]);
      assert.deepEqual(got, [["1", "a"], ["2", "b"], ["3", "c"], ["1", "x"], ["2", "y"], ["3", "z"]]);
      assert.equal(log.filter((e) => e.type === "reset").length, 0);
      assert.equal(stats.duplicatesDropped, 0);
      // The second stream resumed from the old cursor (the server ignored it).
      const entries = (await caseLog(tag)).filter((e) => e.status === 200);
      const cursor = (e) => e.headers["last-event-id"] ?? new URLSearchParams(e.query).get("lastEventId");
      assert.equal(cursor(entries[1]), "3");
    });
  });
}
