// The `eventsource` transport's liveness and resume rules in headless
// Chromium against the reference server:
// - with `transports: ["eventsource"]`, a stream that only
//   sends comments is kept open past `firstEventTimeoutMs` (1 request over a
//   window of 4 × the deadline), noted once in the debug log;
// - a server that sends 2 events and ends the stream cleanly
//   is no `network-or-cors` error; the reconnect carries the cursor;
// - against a server that resumes only from
//   `Last-Event-ID` (fault `header-only-resume`, which replays from its start
//   to a request without the header), the resume after a drop goes to
//   `fetch-sse` with the header (and the query) before any replay:
//   `transportchange` reason `resume-by-header`, no `resume-ignored` error,
//   new events without duplicates.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import * as h from "./tidings-page.mjs";

const BACKOFF = { floorMs: 100, baseMs: 100, maxMs: 1000 };
// Every console.debug call of the page, as plain values.
const recordDebug = () => {
  window.debugLog = [];
  const d = console.debug;
  console.debug = (...args) => {
    window.debugLog.push(args.map((x) => (typeof x === "object" ? JSON.parse(JSON.stringify(x)) : x)));
    d.apply(console, args);
  };
};

let browser, server, page;
before(async () => {
  browser = await launchBrowser();
  server = await startServer(["--quiet", "--retry-ms", "100"]);
  page = await h.blankPage(browser, server.url, { init: recordDebug });
});
after(async () => { await page?.closeAll(); await browser?.close(); await server?.stop(); });

const caseLog = async (srv, tag) =>
  (await h.requests(srv, "/sse")).filter((e) => (e.query ?? "").includes(`case=${tag}`));

test("13.6: eventsource alone, a comments-only stream stays open past 2 × firstEventTimeoutMs: 1 request, one debug note", async () => {
  await h.clearFaults(server);
  const writes = Array.from({ length: 40 }, (_, i) => ({ delay_ms: i === 0 ? 0 : 100, data: ": ping\n\n" }));
  await h.faults(server, { path: "/sse", times: null,
    fault: { kind: "script", status: 200, content_type: "text/event-stream", writes, then: "hang" } });
  await page.evaluate(() => { window.debugLog.length = 0; });
  await h.subscribe(page, "quiet", "/sse?case=quiet", {
    transports: ["eventsource"], seed: 6, backoff: BACKOFF, debug: true,
    watchdog: { firstEventTimeoutMs: 500, idleTimeoutMs: 1000 },
  });
  const log = await h.waitEvents(page, "quiet", (l) => l.some((e) => e.type === "open"), 5000, "open");
  const opened = log.find((e) => e.type === "open");
  // A window of 4 × firstEventTimeoutMs after open (waited on the page's clock).
  await page.waitForFunction((t) => performance.now() > t + 2000, opened.t, { polling: 50 });
  const entries = await caseLog(server, "quiet");
  const all = await h.events(page, "quiet");
  const notes = await page.evaluate(() => window.debugLog.filter((a) => a[1] === "note"));
  await h.closeSub(page, "quiet");
  await h.clearFaults(server);
  assert.equal(entries.length, 1, entries.map(h.logBrief).join("\n"));
  assert.equal(entries[0].end_ms, null, "the stream is still open");
  assert.deepEqual(all.filter((e) => e.type === "error"), []);
  // At start: only eventsource, so the cursor can go only in the query.
  assert.deepEqual(notes, [
    ["[tidings]", "note", { note: "cursor-in-query-only" }],
    ["[tidings]", "note", { note: "silent-stream-kept" }],
  ]);
});

test("24.4: 2 events then a clean end on eventsource: no network-or-cors error, reconnect with the cursor", async () => {
  await h.clearFaults(server);
  const script = (data, then) => ({ path: "/sse",
    fault: { kind: "script", status: 200, content_type: "text/event-stream", writes: [{ data }], then } });
  await h.faults(server, [script("id: 1\ndata: a\n\nid: 2\ndata: b\n\n", "fin"), script(": hello\n\n", "hang")]);
  await h.subscribe(page, "end", "/sse?case=end", { transports: ["eventsource"], seed: 7, backoff: BACKOFF });
  await h.waitRequests(server, "/sse", (l) => l.filter((e) => (e.query ?? "").includes("case=end")).length >= 2,
    5000, "the reconnect");
  await h.sleep(200);
  const entries = await caseLog(server, "end");
  const all = await h.events(page, "end");
  await h.closeSub(page, "end");
  await h.clearFaults(server);
  assert.equal(entries.length, 2, entries.map(h.logBrief).join("\n"));
  assert.equal(entries[0].end, "complete");
  assert.equal(new URLSearchParams(entries[1].query).get("lastEventId"), "2");
  assert.deepEqual(all.filter((e) => e.type === "message").map((e) => [e.id, e.data]), [["1", "a"], ["2", "b"]]);
  assert.deepEqual(all.filter((e) => e.type === "error").map(h.brief), []);
  const waiting = all.find((e) => e.type === "statechange" && e.state === "waiting");
  assert.equal(waiting?.reason, "backoff");
});

test("against a header-only-resume server the resume after a drop moves to fetch-sse with Last-Event-ID (resume-by-header): no replay, no resume-ignored", async () => {
  // Its own server (and a page on its origin, so fetch-sse sends the header):
  // header-only-resume replays the whole history to a request without the
  // header, so no other test's events may be in it.
  const srv = await startServer(["--quiet", "--retry-ms", "100"]);
  const p = await h.blankPage(browser, srv.url);
  try {
    await h.faults(srv, { path: "/sse", times: null, fault: { kind: "header-only-resume" } });
    await h.subscribe(p, "hdr", "/sse?case=hdr", { transports: ["eventsource", "fetch-sse"], seed: 8, backoff: BACKOFF });
    await h.waitEvents(p, "hdr", (l) => l.some((e) => e.type === "open"), 5000, "open");
    const ids = [];
    for (const d of ["a", "b", "c"]) ids.push((await srv.publish(d)).id);
    await h.waitEvents(p, "hdr", (l) => l.filter((e) => e.type === "message").length >= 3, 5000, "3 messages");
    // Drop every connection: the resume goes to fetch-sse with the header
    // (on a new native EventSource, ?lastEventId=<c> only, this server would
    // replay a, b, c).
    await h.restart(srv, { ms: 50 });
    const log = await h.waitEvents(p, "hdr",
      (l) => l.some((e) => e.type === "open" && e.transport === "fetch-sse"), 10000, "fetch-sse open");
    ids.push((await srv.publish("d")).id);
    await h.waitEvents(p, "hdr", (l) => l.some((e) => e.type === "message" && e.data === "d"), 5000, "message d");
    await h.sleep(300);
    const all = await h.events(p, "hdr");
    const lastEventId = await p.evaluate(() => window.subs.hdr.sub.lastEventId);
    const entries = await caseLog(srv, "hdr");
    const dropped = (await h.stats(p, "hdr")).duplicatesDropped;
    await h.closeSub(p, "hdr");
    const errors = all.filter((e) => e.type === "error" && e.code === "resume-ignored");
    assert.equal(errors.length, 0, JSON.stringify(all.map(h.brief)));
    const changes = all.filter((e) => e.type === "transportchange" && e.reason !== "start")
      .map((e) => [e.previous, e.transport, e.reason]);
    assert.deepEqual(changes, [["eventsource", "fetch-sse", "resume-by-header"]]);
    assert.deepEqual(all.filter((e) => e.type === "message").map((e) => [e.id, e.data]),
      ids.map((id, i) => [id, "abcd"[i]]));
    assert.equal(lastEventId, ids[3]);
    assert.equal(dropped, 0);
    // The fetch-sse request resumed by the header, with the query too.
    const resumed = entries.find((e) => e.headers["last-event-id"] !== undefined);
    assert.equal(resumed?.headers["last-event-id"], ids[2], entries.map(h.logBrief).join("\n"));
    assert.equal(new URLSearchParams(resumed.query).get("lastEventId"), ids[2]);
    void log;
  } finally {
    await p.closeAll();
    await srv.stop();
  }
});
