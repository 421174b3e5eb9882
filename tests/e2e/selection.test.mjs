// Transport selection in headless Chromium: start with the first transport
// this browser supports, fall back on evidence, fail back when the evidence is
// gone — and no message lost or repeated across a switch.
// - EventSource deleted from `window` before start → `fetch-sse`;
//   fetch streaming missing (ReadableStream and Response.prototype.body
//   deleted) → `long-poll`, whose answers are then read whole.
// - Streams that fail to open (no response head before the connect deadline,
//   `watchdog.idleTimeoutMs`) twice → `long-poll` (`open-failed`); long-polls
//   that fail the same way → `poll`.
// - A buffering proxy (every open gets headers and no byte until
//   `watchdog.firstEventTimeoutMs`) twice → `long-poll` (`buffered-stream`);
//   after `fallback.rememberMs` the stream is probed (`failback-probe`): a
//   probe still buffered goes back to long-poll and remembers again, a probe
//   that gets bytes stays. Same-origin and cross-origin.
// (Persisting the downgrade across a reload: selection-persist.test.mjs; the
// numbered chaos run: selection-chaos.test.mjs.)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { ENGINE, startServer, launchBrowser } from "./harness.mjs";
import * as h from "./tidings-page.mjs";

const URLS = { "long-poll": "/long-poll?hold_ms=400", poll: "/poll" };
let browser, a, b;
before(async () => {
  browser = await launchBrowser();
  a = await startServer(["--quiet", "--retry-ms", "100"]);
  b = await startServer(["--quiet", "--retry-ms", "100"]);
});
after(async () => { await browser?.close(); await a?.stop(); await b?.stop(); });

// The switches (the first transportchange, `previous: null`, announces the start).
const switches = (log) => log.filter((e) => e.type === "transportchange" && e.previous !== null);
const changes = (log) => switches(log).map((e) => [e.previous, e.transport, e.reason]);
const startedOn = (log) => log.filter((e) => e.type === "transportchange" && e.previous === null).map((e) => [e.transport, e.reason]);
const msgs = (log) => log.filter((e) => e.type === "message").map((e) => [e.id, e.data, e.transport]);

test("EventSource missing (deleted before start) → fetch-sse", async () => {
  const page = await h.blankPage(browser, a.url, { init: () => { delete window.EventSource; } });
  try {
    assert.equal(await page.evaluate(() => typeof EventSource), "undefined");
    await h.clearLog(a);
    await h.subscribe(page, "s", "/sse?case=nes", { seed: 1, urls: URLS });
    await h.waitEvents(page, "s", (l) => l.some((e) => e.type === "open"), 5000, "open");
    const { id } = await a.publish("via fetch");
    const log = await h.waitEvents(page, "s", (l) => l.some((e) => e.type === "message"), 5000, "the message");
    assert.equal(await page.evaluate(() => window.subs.s.sub.transport), "fetch-sse");
    assert.equal(log.find((e) => e.type === "open").transport, "fetch-sse");
    assert.deepEqual(msgs(log), [[id, "via fetch", "fetch-sse"]]);
    // Not the first preference: announced with reason `capability`.
    assert.deepEqual(startedOn(log), [["fetch-sse", "capability"]]);
    assert.deepEqual(changes(log), []);
    const entries = await h.requests(a, "/sse");
    assert.equal(entries.length, 1);
    assert.deepEqual(page.errors, []);
  } finally { await page.closeAll(); }
});

test("fetch streaming missing (ReadableStream, Response.prototype.body deleted) → long-poll, events read from whole bodies", async () => {
  const init = () => { delete window.ReadableStream; delete Response.prototype.body; };
  const page = await h.blankPage(browser, a.url, { init });
  try {
    assert.deepEqual(await page.evaluate(() => [typeof ReadableStream, "body" in Response.prototype]), ["undefined", false]);
    await h.clearLog(a);
    // EventSource is still there: forced off the list here to see the fetch
    // streaming check alone.
    // A cursor from the start: a long-poll without one asks for "the next
    // event" only, and the server's empty answer (204) gives it none, so
    // events published between two holds would not be asked for.
    const { id: start } = await a.publish("start");
    await h.subscribe(page, "s", "/sse?case=nrs", {
      seed: 2, urls: URLS, transports: ["fetch-sse", "long-poll", "poll"], lastEventId: start,
    });
    await h.waitEvents(page, "s", (l) => l.some((e) => e.type === "open"), 5000, "open");
    const ids = [];
    for (const d of ["lp1", "lp2", "lp3"]) ids.push((await a.publish(d)).id);
    const log = await h.waitEvents(page, "s", (l) => l.filter((e) => e.type === "message").length >= 3, 5000, "3 messages");
    assert.equal(await page.evaluate(() => window.subs.s.sub.transport), "long-poll");
    assert.deepEqual(msgs(log), ids.map((id, i) => [id, `lp${i + 1}`, "long-poll"]));
    assert.deepEqual(startedOn(log), [["long-poll", "capability"]]);
    assert.equal((await h.requests(a, "/sse")).length, 0);
    assert.ok((await h.requests(a, "/long-poll")).length >= 2);
    await h.closeSub(page, "s");
  } finally { await page.closeAll(); }
});

test("streams that fail to open → long-poll (open-failed); long-polls that fail → poll; the message comes by poll", async () => {
  const page = await h.blankPage(browser, a.url);
  try {
    await h.clearLog(a);
    await h.clearFaults(a);
    // No answer at all: the client's connect deadline (streams) and hold
    // timeout (long-poll) give up on them.
    await h.faults(a, [
      { path: "/sse", times: null, fault: { kind: "delay", ms: null } },
      { path: "/long-poll", times: null, fault: { kind: "delay", ms: null } },
    ]);
    // With a cursor, so the message is asked for whenever it is published
    // (a client without one asks only for what comes after its first answer).
    const { id: start } = await a.publish("start");
    await h.subscribe(page, "s", "/sse?case=fail", {
      seed: 3, lastEventId: start, urls: { "long-poll": "/long-poll", poll: "/poll" }, transports: ["fetch-sse", "long-poll", "poll"],
      backoff: { floorMs: 100, baseMs: 100 }, watchdog: { idleTimeoutMs: 400 }, longPoll: { timeoutMs: 300 },
      interval: { initialMs: 200, minMs: 100, maxMs: 400 }, fallback: { afterFailures: 2 },
    });
    await h.waitEvents(page, "s", (l) => switches(l).some((e) => e.transport === "poll"), 8000, "poll");
    const { id } = await a.publish("by poll");
    const log = await h.waitEvents(page, "s", (l) => l.some((e) => e.type === "message"), 5000, "the message");
    await h.closeSub(page, "s");
    await h.clearFaults(a);
    assert.deepEqual(startedOn(log), [["fetch-sse", "start"]]);
    assert.deepEqual(changes(log), [["fetch-sse", "long-poll", "open-failed"], ["long-poll", "poll", "open-failed"]]);
    assert.deepEqual(msgs(log), [[id, "by poll", "poll"]]);
    const streams = await h.requests(a, "/sse");
    const holds = await h.requests(a, "/long-poll");
    // 2 opens with no head, both given up by the client.
    assert.equal(streams.length, 2, streams.map(h.logBrief).join("\n"));
    for (const s of streams) assert.deepEqual([s.status, s.end], [0, "dropped"]);
    // Long-poll: the first client timeout is "no news", the next two in a row
    // without a head are failures (evidence): 3 requests.
    assert.equal(holds.length, 3, holds.map(h.logBrief).join("\n"));
    for (const s of holds) assert.deepEqual([s.status, s.end], [0, "dropped"]);
    // The deadlines, between the engine's own events (the requests reach the
    // server late on a loaded machine, so its log is no clock for them):
    const subscribed = await page.evaluate(() => window.subs.s.start);
    // The first event of `type` (and state) after `anchor` in the log.
    const next = (anchor, type, state) => log.find((e) => e.t >= anchor.t && e !== anchor && e.type === type && (!state || e.state === state));
    const [toLongPoll, toPoll] = switches(log);
    const err1 = next(subscribed, "error");
    // stream 1: subscribe → its timeout error; stream 2: connecting → the switch.
    await h.assertBetween(page, subscribed, err1, 400, "connect deadline, stream 1");
    await h.assertBetween(page, next(err1, "statechange", "connecting"), toLongPoll, 400, "connect deadline, stream 2");
    // long-poll 1: connecting → "open" (a hold that ended with no news);
    // long-poll 3: connecting → the switch to poll.
    const lp1 = next(toLongPoll, "statechange", "connecting");
    const noNews = next(lp1, "statechange", "open");
    await h.assertBetween(page, lp1, noNews, 300, "long-poll 1 timeout");
    const lp3 = next(next(noNews, "error"), "statechange", "connecting");
    await h.assertBetween(page, lp3, toPoll, 300, "long-poll 3 timeout");
    const errors = log.filter((e) => e.type === "error").map((e) => e.code);
    assert.deepEqual(errors, ["timeout", "timeout", "timeout", "timeout"]);
    assert.ok((await h.requests(a, "/poll")).length >= 1);
  } finally { await page.closeAll(); }
});

for (const cross of [false, true]) {
  test(`buffering proxy → long-poll (buffered-stream); failback after rememberMs only when the probe gets bytes${cross ? " (cross-origin)" : ""}`, async () => {
    const srv = cross ? b : a;
    const page = await h.blankPage(browser, a.url);
    try {
      await h.clearLog(srv);
      await h.clearFaults(srv);
      const clock = await h.clockOffset(page, srv);
      // 2 buffered opens (the downgrade) + 1 buffered failback probe.
      await h.faults(srv, { path: "/sse", times: 3, fault: { kind: "buffer" } });
      const base = cross ? srv.url : "";
      const { id: start } = await srv.publish("start");
      await h.subscribe(page, "s", `${base}/sse?case=buf`, {
        seed: 4, lastEventId: start, transports: ["fetch-sse", "long-poll", "poll"],
        urls: { "long-poll": `${base}/long-poll?hold_ms=300`, poll: `${base}/poll` },
        backoff: { floorMs: 100, baseMs: 100 }, watchdog: { firstEventTimeoutMs: 400, idleTimeoutMs: 5000 },
        fallback: { afterFailures: 2, rememberMs: 1200 },
      });
      // Publish steadily through all of it: every message once, in order.
      const ids = [];
      const done = (l) => changes(l).length >= 4 && l.some((e) => e.type === "message" && e.transport === "fetch-sse");
      const deadline = Date.now() + 12000;
      let log = [];
      for (let i = 1; Date.now() < deadline; i++) {
        ids.push((await srv.publish(`n${i}`)).id);
        await h.sleep(100);
        log = await h.events(page, "s");
        if (done(log)) break;
      }
      await h.sleep(300);
      log = await h.events(page, "s");
      await h.closeSub(page, "s");
      assert.deepEqual(changes(log), [
        ["fetch-sse", "long-poll", "buffered-stream"],
        ["long-poll", "fetch-sse", "failback-probe"],
        ["fetch-sse", "long-poll", "buffered-stream"],
        ["long-poll", "fetch-sse", "failback-probe"],
      ]);
      assert.deepEqual(msgs(log).map((m) => [m[0], m[1]]), ids.map((id, i) => [id, `n${i + 1}`]));
      assert.equal(msgs(log).at(-1)[2], "fetch-sse");
      const streams = await h.requests(srv, "/sse");
      assert.equal(streams.length, 4, streams.map(h.logBrief).join("\n"));
      assert.deepEqual(streams.map((s) => s.fault?.kind ?? null), ["buffer", "buffer", "buffer", null]);
      for (const s of streams.slice(0, 3)) assert.equal(s.end, "dropped");
      // Each buffered open: from the head (the `open` event) to the abort
      // (the `timeout` error), by the engine's own clock. Firefox resolves a
      // streaming fetch only at the first body byte, so it shows no head:
      // there the deadline runs from the request (`connecting`).
      const began = ENGINE === "firefox"
        ? (e) => e?.type === "statechange" && e.state === "connecting"
        : (e) => e?.type === "open" && e.transport === "fetch-sse";
      const opens = log.filter((e) => began(e) || (e.type === "error" && e.code === "timeout"));
      const pairs = opens.flatMap((e, k) => (e.type === "error" && began(opens[k - 1]) ? [[opens[k - 1], e]] : []));
      assert.equal(pairs.length, 3);
      for (const [o, e] of pairs) {
        await h.assertBetween(page, o, e, 400, "first-event deadline");
      }
      // The probes wait for rememberMs after each downgrade (wall clock).
      const tc = switches(log);
      // (The probe is the next attempt after that: a long-poll in between
      // may hold up to its 300 ms hold first.)
      for (const [down, probe] of [[tc[0], tc[1]], [tc[2], tc[3]]]) {
        // Listener times, not the engine's decision times: a listener that
        // ran late for the downgrade makes the gap look a little short.
        assert.ok(probe.wall - down.wall >= 1200 - 20, `probe ${probe.wall - down.wall} ms after the downgrade`);
        const stall = await h.pageStall(page, clock, down.t + clock.offset, probe.t + clock.offset);
        assert.ok(probe.wall - down.wall <= 1200 * 1.1 + 100 + 400 + stall, `probe ${probe.wall - down.wall} ms after the downgrade (stall ${stall})`);
      }
      // The stream resumes from the cursor the long-polls moved.
      const last = streams.at(-1);
      const cursor = cross ? new URLSearchParams(last.query).get("lastEventId") : last.headers["last-event-id"];
      const before = msgs(log).filter((m) => m[2] === "long-poll").at(-1)[0];
      assert.equal(cursor, before);
      const st = await page.evaluate(() => window.subs.s.sub.stats());
      console.log(`# ${cross ? "cross" : "same"}-origin failback: ${ids.length} messages, duplicatesDropped ${st.duplicatesDropped}`);
    } finally { await page.closeAll(); }
  });
}
