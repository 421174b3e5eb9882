// Streaming transports against the answers that must stop them, in headless
// Chromium, same-origin and cross-origin: 204 → fatal `no-content`, 200 with
// another or no content type → fatal `bad-content-type`, 404 → fatal
// `http-status`; each after an exact number of requests (the server's log),
// with no message and the state `closed` (BC-10 S1, S3, S4, S5).
//
// A rule that lasts until cleared answers every request, so any retry would
// show up in the count. eventsource: the browser hides the status of a failed
// EventSource, so the adapter learns it with one `fetch` probe of the same
// URL (src/connection/live.rs): 2 requests, then stop.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import { Model } from "./engine-model.mjs";
import * as h from "./tidings-page.mjs";

const BACKOFF = { floorMs: 100, baseMs: 500, maxMs: 60000 };

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

for (const transport of ["eventsource", "fetch-sse"]) {
  describe(`${transport}: answers that stop`, () => {
    let a, b, page, n = 0;
    before(async () => {
      a = await startServer(["--quiet"]);
      b = await startServer(["--quiet"]);
      page = await h.blankPage(browser, a.url);
      page.clock = await h.clockOffset(page, a);
    });
    after(async () => { await page?.closeAll(); await a?.stop(); await b?.stop(); });

    const cases = [
      ["204", { kind: "status", status: 204 }, "no-content"],
      ["200 text/html", { kind: "status", status: 200, content_type: "text/html", body: "<html></html>" }, "bad-content-type"],
      ["200 without a content type", { kind: "status", status: 200, body: "data: x\n\n" }, "bad-content-type"],
      ["404", { kind: "status", status: 404, content_type: "text/event-stream", body: "data: x\n\n" }, "http-status"],
    ];
    test("BC-10 S2: a stream with retry: 100 and one event, then 204 on the reconnect → event a, one reconnect under backoff, closed", async () => {
      await h.clearFaults(a);
      await h.faults(a, [
        { path: "/sse", fault: { kind: "script", status: 200, content_type: "text/event-stream",
          writes: [{ data: "retry: 100\ndata: a\n\n" }], then: "fin" } },
        { path: "/sse", times: null, fault: { kind: "status", status: 204 } },
      ]);
      const tag = `f${++n}`;
      await h.subscribe(page, tag, `/sse?case=${tag}`, { transports: [transport], seed: 4, backoff: BACKOFF });
      const log = await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "error" && e.fatal), 5000, "the fatal error");
      await h.sleep(800);
      const entries = (await h.requests(a, "/sse")).filter((e) => e.query.includes(`case=${tag}`));
      await h.clearFaults(a);
      const count = transport === "eventsource" ? 3 : 2;
      assert.equal(entries.length, count, entries.map(h.logBrief).join("\n"));
      assert.deepEqual(log.filter((e) => e.type === "message").map((e) => [e.data, e.id]), [["a", ""]]);
      // A native EventSource shows a clean end of the body and a dropped
      // connection alike (`error`, readyState CONNECTING): after `open` it is
      // the end of the stream, as fetch-sse sees it, not a network-or-cors
      // error.
      assert.deepEqual(log.filter((e) => e.type === "error").map((e) => [e.code, e.fatal]),
        [["no-content", true]]);
      // The stream ended unhealthy (open < healthyAfterMs): a counted failure,
      // floor max(100, retry: 100) + U[0, 500].
      const m = new Model(4, BACKOFF);
      m.serverRetryMs = 100;
      const waiting = log.find((e) => e.type === "statechange" && e.state === "waiting");
      await h.assertReconnect(page, { clock: page.clock, log, waiting, failedAt: entries[0].end_ms, next: entries[1],
        expected: m.failure(), what: "reconnect after the stream ended" });
    });

    for (const cross of [false, true]) {
      for (const [name, fault, code] of cases) {
        if (cross && name.startsWith("404")) continue;
        // Native EventSource: the request, then the probe that learns why.
        const count = transport === "eventsource" ? 2 : 1;
        test(`${name}${cross ? " (cross-origin)" : ""} → fatal ${code}, exactly ${count} request(s), no message`, async () => {
          const srv = cross ? b : a;
          await h.clearFaults(srv);
          await h.faults(srv, { path: "/sse", times: null, fault });
          const tag = `f${++n}`;
          const path = `/sse?case=${tag}`;
          await h.subscribe(page, tag, cross ? `${b.url}${path}` : path,
            { transports: [transport], seed: 3, backoff: BACKOFF });
          const log = await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "error"), 5000, "the error");
          // Long enough for any retry under this backoff (floor 100 ms, step ≤ 500 ms).
          await h.sleep(800);
          const entries = (await h.requests(srv, "/sse")).filter((e) => e.query.includes(`case=${tag}`));
          await h.clearFaults(srv);
          const state = await page.evaluate((t) => window.subs[t].sub.state, tag);
          const all = await h.events(page, tag);
          assert.equal(entries.length, count, entries.map(h.logBrief).join("\n"));
          const errors = all.filter((e) => e.type === "error");
          assert.deepEqual(errors.map((e) => [e.code, e.status, e.fatal]), [[code, fault.status, true]]);
          assert.equal(all.filter((e) => e.type === "message").length, 0);
          assert.equal(state, "closed");
          assert.deepEqual(log.filter((e) => e.type === "statechange").map((e) => [e.state, e.reason]).at(-1), ["closed", "permanent-error"]);
        });
      }
    }
  });
}
