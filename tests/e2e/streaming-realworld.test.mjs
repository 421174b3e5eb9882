// The real-world cases of the project's case list that need a browser,
// replayed through the reference server (headless Chromium, same-origin):
// - BC-02, BC-03, BC-05, BC-07, BC-08 on fetch-sse: the fixtures of
//   tests/fixtures/sse/*.json, one `script` fault per response, each write
//   flushed on its own 50 ms after the previous one; the events delivered and
//   the Last-Event-ID of every request must be the fixture's.
// - BC-11 (a stream that opens and dies at once never resets the backoff; the
//   gaps follow the engine's rule with k growing; maxAttempts stops it; 401
//   without a token refresh is fatal after one request), both streaming
//   transports.
// - BC-14 V3 (one event then silence: aborted at idle timeout after the last
//   byte, not later), fetch-sse.
// - BC-16 V1 (one 1.5 MiB line without a newline, then the body ends: read
//   through without buffering past 1 MiB, one `too-large` (not fatal) when
//   the body ends inside it, reconnect under backoff; wasm memory grows
//   < 8 MiB), fetch-sse. (One oversize event among others is skipped and the
//   stream goes on: streaming-oversize.test.mjs.)
// (BC-10 is in streaming-stop.test.mjs, BC-14 V1 and BC-15 in
// streaming-liveness.test.mjs.)
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { startServer, launchBrowser } from "./harness.mjs";
import { Model } from "./engine-model.mjs";
import * as h from "./tidings-page.mjs";

const FIXTURES = new URL("../fixtures/sse/", import.meta.url);
const fixture = (name) => JSON.parse(readFileSync(new URL(name, FIXTURES), "utf8"));

let browser, server, page, n = 0;
before(async () => {
  browser = await launchBrowser();
  server = await startServer(["--quiet", "--retry-ms", "100"]);
  page = await h.blankPage(browser, server.url);
  page.clock = await h.clockOffset(page, server);
});
after(async () => { await page?.closeAll(); await browser?.close(); await server?.stop(); });

const caseLog = async (tag) =>
  (await h.requests(server, "/sse")).filter((e) => (e.query ?? "").includes(`case=${tag}`));

/** A `script` fault that writes `writes` 50 ms apart, then `end`. */
function script(writes, end) {
  return {
    kind: "script", status: 200, content_type: "text/event-stream",
    writes: writes.map((data, i) => ({ delay_ms: i === 0 ? 0 : 50, data })),
    then: end,
  };
}

describe("fixtures replayed on fetch-sse", () => {
  const variants = ["bc02-line-endings.json", "bc03-field-parsing.json", "bc05-partial-event-at-fin.json",
    "bc07-id-rules.json", "bc08-cursor-across-reconnects.json"].flatMap(fixture);
  for (const v of variants) {
    test(`${v.case} ${v.variant}: ${v.title}`, async () => {
      const responses = v.responses ?? [{ writes: v.writes, end: v.end }];
      await h.clearFaults(server);
      await h.faults(server, responses.map((r) => ({ path: "/sse", fault: script(r.writes, r.end) })));
      const tag = `f${++n}`;
      const named = [...new Set(v.expected.map((e) => e.event).filter((e) => e !== "message"))];
      await h.subscribe(page, tag, `/sse?case=${tag}`, {
        transports: ["fetch-sse"], events: named, seed: 31, lastEventId: v.initialLastEventId ?? "",
        backoff: { floorMs: 100, baseMs: 20, maxMs: 100 },
      }, named);
      const isMsg = (e) => e.type === "message" || named.includes(e.type);
      await h.waitEvents(page, tag, (l) => l.filter(isMsg).length >= v.expected.length, 8000, `${v.expected.length} events`);
      await h.waitRequests(server, "/sse", (es) => es.filter((e) => e.query.includes(`case=${tag}`)).length >= responses.length,
        5000, `${responses.length} requests`);
      await h.sleep(150); // anything extra would show now
      await h.closeSub(page, tag);
      const log = await h.events(page, tag);
      const got = log.filter(isMsg).map((e) => ({ event: e.event, data: e.data, lastEventId: e.lastEventId, id: e.id }));
      const want = v.expected.map((e) => ({ ...e, id: e.id ?? "" }));
      assert.deepEqual(got, want);
      for (const e of log.filter(isMsg)) assert.equal(e.type, e.event);
      assert.equal(await page.evaluate((t) => window.subs[t].sub.lastEventId, tag), v.finalLastEventId);
      const entries = (await caseLog(tag)).slice(0, responses.length);
      const cursors = v.cursorBeforeEachResponse ?? [v.initialLastEventId ?? ""];
      // Same-origin fetch-sse: the cursor in the Last-Event-ID header alone,
      // none when it is empty; a cursor that is not visible ASCII (U+2026)
      // in the lastEventId query alone (percent-encoded UTF-8).
      const visible = (c) => /^[!-~]*$/.test(c);
      const sent = (e) => [e.headers["last-event-id"] ?? "", new URLSearchParams(e.query).get("lastEventId") ?? ""];
      assert.deepEqual(entries.slice(0, cursors.length).map(sent), cursors.map((c) => (visible(c) ? [c, ""] : ["", c])));
      for (const e of entries.slice(cursors.length)) assert.equal(sent(e)[1], "", "ASCII ids: no query");
      if (v.case === "BC-02" && v.variant === "D") {
        // The lone final CR ends the line: `z` is delivered before the reconnect.
        const reconnect = log.find((e) => e.type === "statechange" && e.state === "waiting");
        assert.ok(log.find(isMsg).t <= reconnect.t);
      }
      assert.equal(log.filter((e) => e.type === "error" && e.fatal).length, 0);
    });
  }
});

for (const transport of ["eventsource", "fetch-sse"]) {
  describe(`BC-11 on ${transport}`, () => {
    const backoff = { floorMs: 100, baseMs: 100, maxMs: 60000, maxAttempts: 5 };
    for (const [variant, body, events] of [
      ["A", '{"message":"Internal error"}', []],
      ["B", 'event: goaway\ndata: {"reason":"limit"}\n\n', ["goaway"]],
    ]) {
      test(`${variant}: 200 + event stream, closed at 100 ms, every time: gaps grow floor + U[0, base·2^k], never reset; maxAttempts 5 → gave-up after 5 requests`, async () => {
        await h.clearFaults(server);
        await h.faults(server, { path: "/sse", times: null, fault: {
          kind: "script", status: 200, content_type: "text/event-stream",
          writes: [{ delay_ms: 0, data: body }, { delay_ms: 100, data: "" }], then: "fin",
        } });
        const tag = `b${++n}`;
        await h.subscribe(page, tag, `/sse?case=${tag}`, { transports: [transport], events, seed: 41, backoff }, events);
        const log = await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "error" && e.fatal), 10000, "gave-up");
        await h.sleep(300);
        const entries = await caseLog(tag);
        await h.clearFaults(server);
        assert.equal(entries.length, 5, entries.map(h.logBrief).join("\n"));
        const m = new Model(41, backoff);
        const waits = log.filter((e) => e.state === "waiting");
        for (let i = 1; i < entries.length; i++) {
          await h.assertReconnect(page, { clock: page.clock, log, waiting: waits[i - 1], failedAt: entries[i - 1].end_ms,
            next: entries[i], expected: m.failure(), what: `gap ${i}` });
        }
        const errors = log.filter((e) => e.type === "error");
        assert.deepEqual(errors.at(-1).code, "gave-up");
        assert.equal(errors.filter((e) => e.fatal).length, 1);
        // B: the goaway event is delivered once per connection.
        assert.deepEqual(log.filter((e) => e.type === "goaway").map((e) => e.data),
          variant === "B" ? Array(5).fill('{"reason":"limit"}') : []);
      });
    }

    test("C: 401 with a JSON body and no headers option → fatal auth, no retry", async () => {
      await h.clearFaults(server);
      await h.faults(server, { path: "/sse", times: null, fault: { kind: "status", status: 401, content_type: "application/json", body: "{}" } });
      const tag = `b${++n}`;
      await h.subscribe(page, tag, `/sse?case=${tag}`, { transports: [transport], seed: 42, backoff });
      const log = await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "error"), 5000, "the error");
      await h.sleep(700);
      const entries = await caseLog(tag);
      await h.clearFaults(server);
      // eventsource: the request and the probe that learns the status.
      assert.equal(entries.length, transport === "eventsource" ? 2 : 1, entries.map(h.logBrief).join("\n"));
      assert.deepEqual(log.filter((e) => e.type === "error").map((e) => [e.code, e.status, e.fatal]), [["auth", 401, true]]);
    });
  });
}

test("BC-14 V3 (fetch-sse): one event then silence → aborted idleTimeoutMs after the last byte", async () => {
  await h.clearFaults(server);
  await h.faults(server, { path: "/sse", fault: script(["data: a\n\n"], "hang") });
  const tag = `v${++n}`;
  await h.subscribe(page, tag, `/sse?case=${tag}`, {
    transports: ["fetch-sse"], seed: 43, watchdog: { idleTimeoutMs: 700 }, backoff: { floorMs: 100 },
  });
  const log = await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "error"), 5000, "the watchdog");
  await h.closeSub(page, tag);
  const msg = log.find((e) => e.type === "message");
  const err = log.find((e) => e.type === "error");
  assert.equal(msg.data, "a");
  assert.deepEqual([err.code, err.fatal], ["timeout", false]);
  await h.assertBetween(page, msg, err, 700, "abort after the last byte");
  const entries = await caseLog(tag);
  assert.equal(entries[0].end, "dropped");

});

test("BC-16 V1 (fetch-sse): an endless line is read through without buffering, too-large when the body ends inside it, reconnect under backoff, memory bounded", async () => {
  await h.clearFaults(server);
  const chunk = "x".repeat(65536);
  // "data: " then 24 writes of 64 KiB 20 ms apart (1.5 MiB), never a newline, then the end.
  const writes = [{ delay_ms: 0, data: "data: " }, ...Array.from({ length: 24 }, () => ({ delay_ms: 20, data: chunk }))];
  await h.faults(server, { path: "/sse", fault: { kind: "script", status: 200, content_type: "text/event-stream", writes, then: "fin" } });
  const tag = `v${++n}`;
  const mem0 = await page.evaluate(() => window.wasm.memory.buffer.byteLength);
  await h.subscribe(page, tag, `/sse?case=${tag}`, { transports: ["fetch-sse"], seed: 44, backoff: { floorMs: 100 } });
  const log = await h.waitEvents(page, tag, (l) => l.filter((e) => e.type === "open").length >= 2, 8000, "the reconnect");
  const st = await h.stats(page, tag);
  const mem1 = await page.evaluate(() => window.wasm.memory.buffer.byteLength);
  await h.closeSub(page, tag);
  const entries = await caseLog(tag);
  const errors = log.filter((e) => e.type === "error");
  // One error, when the body ended inside the event being dropped; nothing
  // retried because of it (the clean end is what reconnects).
  assert.deepEqual(errors.map((e) => [e.code, e.fatal, e.retryInMs]), [["too-large", false, undefined]]);
  assert.equal(log.filter((e) => e.type === "message").length, 0);
  // Read through to the end, not aborted.
  assert.ok(st.bytes >= 6 + 24 * 65536, `bytes read: ${st.bytes}`);
  assert.equal(entries[0].end, "complete");
  // Not an immediate retry: the backoff rule for a stream that ended unhealthy.
  const waiting = log.find((e) => e.state === "waiting");
  await h.assertReconnect(page, { clock: page.clock, log, waiting, failedAt: entries[0].end_ms,
    next: entries[1], expected: new Model(44, { floorMs: 100 }).failure(), what: "reconnect after the body ended" });
  const MiB = 1 << 20;
  assert.ok(mem1 - mem0 < 8 * MiB, `wasm memory grew by ${mem1 - mem0} bytes`);
});
