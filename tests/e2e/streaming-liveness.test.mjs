// Streaming transports while the stream itself misbehaves, in headless
// Chromium: a stream closed mid-way reconnects under backoff with the cursor
// (the `Last-Event-ID` header same-origin on fetch-sse, the `lastEventId`
// query on eventsource and cross-origin); a silent stream is aborted by the
// idle watchdog at `watchdog.idleTimeoutMs`; comment-only heartbeats keep
// fetch-sse alive (BC-14 V1) and named heartbeat events keep eventsource alive;
// a stream trickled a byte at a time stays up and decodes UTF-8 split across
// reads (BC-14 V2); a buffering proxy is caught by `firstEventTimeoutMs` and,
// after `fallback.afterFailures` such opens, every stream is skipped for
// `long-poll` (BC-15; a native stream with no event is skipped for `fetch-sse`
// first, which sees comments); `/_restart` drops every connection and the client comes
// back after the fleet-spread delay with nothing lost or repeated.
//
// Delays are checked against engine-model.mjs (the engine's rule with the
// same seed) and the server's request log, within +10 % +100 ms.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { ENGINE, startServer, launchBrowser } from "./harness.mjs";
import { Model } from "./engine-model.mjs";
import * as h from "./tidings-page.mjs";

// The server's `retry:` is 100 ms too (--retry-ms), so the floor stays 100.
const BACKOFF = { floorMs: 100, baseMs: 500, maxMs: 60000 };
const SERVER_ARGS = ["--quiet", "--retry-ms", "100"];
const URLS = { "long-poll": "/long-poll", poll: "/poll" };

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

for (const transport of ["eventsource", "fetch-sse"]) {
  describe(transport, () => {
    let a, b, page, n = 0;
    before(async () => {
      a = await startServer(SERVER_ARGS);
      b = await startServer(SERVER_ARGS);
      page = await h.blankPage(browser, a.url);
      page.clocks = new Map([[a, await h.clockOffset(page, a)], [b, await h.clockOffset(page, b)]]);
    });
    after(async () => { await page?.closeAll(); await a?.stop(); await b?.stop(); });

    async function sub(srv, options, query = "") {
      const tag = `c${++n}`;
      const path = `/sse?case=${tag}${query}`;
      const url = srv === a ? path : `${srv.url}${path}`;
      await h.subscribe(page, tag, url, { transports: [transport], backoff: BACKOFF, ...options });
      return tag;
    }
    const caseLog = async (srv, tag) =>
      (await h.requests(srv, "/sse")).filter((e) => (e.query ?? "").includes(`case=${tag}`));
    const opened = (tag, count = 1) => h.waitEvents(page, tag,
      (l) => l.filter((e) => e.type === "open").length >= count, 5000, `${count} open(s)`);

    for (const cross of [false, true]) {
      const viaQuery = cross || transport === "eventsource";
      test(`closed mid-stream${cross ? " (cross-origin)" : ""}: reconnects under backoff with the cursor in the ${viaQuery ? "lastEventId query" : "Last-Event-ID header"}`, async () => {
        const srv = cross ? b : a;
        await h.clearFaults(srv);
        await h.faults(srv, { path: "/sse", fault: { kind: "close", after_events: 2 } });
        const tag = await sub(srv, { seed: 21 });
        await opened(tag);
        const ids = [];
        for (const d of ["m1", "m2", "m3"]) ids.push((await srv.publish(d)).id);
        const log = await h.waitEvents(page, tag, (l) => l.filter((e) => e.type === "message").length >= 3, 5000, "3 messages");
        await h.sleep(200);
        const entries = await caseLog(srv, tag);
        await h.closeSub(page, tag);
        assert.equal(entries.length, 2, entries.map(h.logBrief).join("\n"));
        assert.deepEqual([entries[0].events, entries[0].end], [2, "complete"]);
        const [first, second] = entries;
        const cursor = viaQuery ? new URLSearchParams(second.query).get("lastEventId") : second.headers["last-event-id"];
        assert.equal(cursor, ids[1]);
        if (viaQuery) assert.equal(second.headers["last-event-id"], undefined, "no header on a request that carries the query");
        assert.equal(new URLSearchParams(first.query).get("lastEventId"), null);
        // All three exactly once, in order; m3 came by replay on the new stream.
        const msgs = (await h.events(page, tag, "message")).map((e) => [e.id, e.data]);
        assert.deepEqual(msgs, ids.map((id, i) => [id, `m${i + 1}`]));
        // Opened, delivered new events with ids, ended cleanly: healthy
        // whatever its length, the floor + U[0, max(floor, base)). A native
        // EventSource's error in readyState CONNECTING after `open` is that
        // clean end too, so both transports agree.
        const m = new Model(21, BACKOFF);
        const expected = m.healthyEnd();
        await h.assertReconnect(page, { clock: page.clocks.get(srv), log, waiting: log.find((e) => e.state === "waiting"),
          failedAt: first.end_ms, next: second, expected, what: "reconnect after the close" });
        assert.equal(log.filter((e) => e.type === "open").length, 2);
      });
    }

    test("a silent stream is aborted by the idle watchdog at idleTimeoutMs, then reconnects", async () => {
      await h.clearFaults(a);
      await h.faults(a, { path: "/sse", fault: { kind: "silent", after_events: 1 } });
      // The message comes as the replay right at open (a cursor one behind),
      // so a slow publish cannot race the watchdog.
      const { id: before } = await a.publish("before");
      const { id } = await a.publish("last words");
      const tag = await sub(a, { seed: 22, lastEventId: before, watchdog: { idleTimeoutMs: 600 } });
      const log = await h.waitEvents(page, tag, (l) => l.filter((e) => e.type === "open").length >= 2, 5000, "the reopen");
      const entries = await caseLog(a, tag);
      await h.closeSub(page, tag);
      const msg = log.find((e) => e.type === "message");
      const err = log.find((e) => e.type === "error");
      const waiting = log.find((e) => e.type === "statechange" && e.state === "waiting");
      assert.equal(msg.id, id);
      assert.deepEqual([err.code, err.fatal, waiting.reason], ["timeout", false, "stalled"]);
      // The last thing the client heard was the message: silence from there.
      await h.assertBetween(page, msg, err, 600, "idle watchdog");
      assert.equal(entries.length, 2, entries.map(h.logBrief).join("\n"));
      assert.deepEqual([entries[0].fault.kind, entries[0].end], ["silent", "dropped"]);
      assert.equal(err.retryInMs, new Model(22, BACKOFF).failure());
      // The client's abort is the failure; it came at least idleTimeoutMs
      // after the head (which carried the message).
      await h.assertReconnect(page, { clock: page.clocks.get(a), log, waiting, failedAt: entries[0].head_ms + 600, next: entries[1],
        expected: err.retryInMs, what: "reconnect after the watchdog" });
      const cursor = transport === "eventsource"
        ? new URLSearchParams(entries[1].query).get("lastEventId") : entries[1].headers["last-event-id"];
      assert.equal(cursor, id);
    });

    if (transport === "fetch-sse") {
      test("BC-14 V1: comment-only heartbeats (bare ':' lines) keep fetch-sse alive: 1 request, 0 events, then the watchdog after they stop", async () => {
        await h.clearFaults(a);
        const writes = Array.from({ length: 15 }, (_, i) => ({ delay_ms: i === 0 ? 0 : 200, data: ":\n" }));
        await h.faults(a, { path: "/sse", times: null, fault: { kind: "script", status: 200, content_type: "text/event-stream", writes, then: "hang" } });
        const tag = await sub(a, { seed: 23, watchdog: { idleTimeoutMs: 600, firstEventTimeoutMs: 600 } });
        await opened(tag);
        await h.sleep(2700);
        // 2.8 s of comments every 200 ms: alive.
        assert.equal((await caseLog(a, tag)).length, 1);
        assert.deepEqual((await h.events(page, tag)).filter((e) => e.type !== "statechange" && e.reason !== "start").map(h.brief), ["open transport=fetch-sse"]);
        // The last comment went out at 2.8 s; silence from there → abort at +600 ms.
        const log = await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "error"), 3000, "the watchdog");
        await h.closeSub(page, tag);
        const err = log.find((e) => e.type === "error");
        assert.equal(err.code, "timeout");
        assert.equal(log.filter((e) => e.type === "message").length, 0);
        // From the head (`open`) to the abort, on the page's clock: the last
        // comment came 2.8 s after the head (±50 ms of transit), then 600 ms.
        await h.assertBetween(page, log.find((e) => e.type === "open"), err, 14 * 200 + 600, "abort after the last comment", 50);
        const entries = await h.waitRequests(a, "/sse", (es) => es.some((e) => e.query.includes(`case=${tag}`) && e.end), 3000, "the end");
        assert.equal(entries.find((e) => e.query.includes(`case=${tag}`)).end, "dropped");
      });
    } else {
      test("BC-14 V1 NATIVE: comments are invisible, named heartbeat events keep eventsource alive; no idle watchdog before the first event (only firstEventTimeoutMs, 45 s here)", async () => {
        // The real endpoint with a heartbeat (comment + `event: heartbeat`) every 200 ms.
        const tag = await sub(a, { seed: 23, watchdog: { idleTimeoutMs: 600 } }, "&heartbeat_ms=200");
        await opened(tag);
        // A stream that sends comments only: native EventSource sees nothing,
        // so the engine runs no idle watchdog on it (it cannot tell quiet from
        // dead); only the first-event deadline (default 45 s) would end it.
        await h.clearFaults(a);
        const writes = Array.from({ length: 15 }, (_, i) => ({ delay_ms: i === 0 ? 0 : 200, data: ":\n" }));
        await h.faults(a, { path: "/sse", fault: { kind: "script", status: 200, content_type: "text/event-stream", writes, then: "hang" } });
        const quiet = await sub(a, { seed: 24, watchdog: { idleTimeoutMs: 600 } });
        await opened(quiet);
        await h.sleep(3500);
        const beat = await caseLog(a, tag);
        const comments = await caseLog(a, quiet);
        await h.closeSub(page, tag);
        await h.closeSub(page, quiet);
        assert.deepEqual([beat.length, comments.length], [1, 1]);
        for (const t of [tag, quiet]) {
          assert.deepEqual((await h.events(page, t)).filter((e) => e.type !== "statechange" && e.reason !== "start").map(h.brief), ["open transport=eventsource"]);
        }
      });
    }

    test("trickled one byte every 10 ms: no reconnect, the message (multi-byte UTF-8 split across reads) arrives intact", async () => {
      await h.clearFaults(a);
      await h.faults(a, { path: "/sse", fault: { kind: "trickle", ms: 10, bytes: 1 } });
      // fetch-sse: bytes are liveness, so a 600 ms idle timeout holds while a
      // 1.5 s preamble + event trickles in. eventsource counts whole events
      // only (BC-14): its timeout must outlast the slowest event.
      const idle = transport === "fetch-sse" ? 600 : 5000;
      const tag = await sub(a, { seed: 25, watchdog: { idleTimeoutMs: idle, firstEventTimeoutMs: idle } });
      const text = "naïve café ☕ 𝄞 ✓";
      await opened(tag); // the stream is subscribed (no cursor: live events only)
      await a.publish(text);
      const log = await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "message"), 8000, "the trickled message");
      await h.closeSub(page, tag);
      const entries = await caseLog(a, tag);
      assert.equal(entries.length, 1);
      assert.deepEqual(log.filter((e) => e.type === "message").map((e) => e.data), [text]);
      assert.equal(log.filter((e) => e.type === "error").length, 0);
      // The message took longer than the idle timeout to arrive (fetch-sse).
      if (transport === "fetch-sse") assert.ok(log.find((e) => e.type === "message").t - log.find((e) => e.type === "open").t > idle);
    });

    test("/_restart drops every connection: back after floor + U[0, max(floor, base)) (fleet spread), nothing lost or repeated", async () => {
      await h.clearFaults(a);
      const tag = await sub(a, { seed: 26, backoff: { ...BACKOFF, healthyAfterMs: 300 } });
      await opened(tag);
      const ids = [];
      for (const d of ["r1", "r2", "r3"]) ids.push((await a.publish(d)).id);
      await h.waitEvents(page, tag, (l) => l.filter((e) => e.type === "message").length >= 3, 5000, "3 messages");
      await h.sleep(400); // open ≥ healthyAfterMs with bytes: healthy
      const r = await h.restart(a, { ms: 50 });
      assert.ok(r.dropped >= 1);
      await h.sleep(60);
      for (const d of ["r4", "r5"]) ids.push((await a.publish(d)).id);
      await h.waitEvents(page, tag, (l) => l.filter((e) => e.type === "message").length >= 5, 5000, "5 messages");
      const entries = await caseLog(a, tag);
      await h.closeSub(page, tag);
      assert.equal(entries.length, 2, entries.map(h.logBrief).join("\n"));
      assert.equal(entries[0].end, "dropped");
      const msgs = (await h.events(page, tag, "message")).map((e) => [e.id, e.data]);
      assert.deepEqual(msgs, ids.map((id, i) => [id, `r${i + 1}`]));
      const m = new Model(26, BACKOFF);
      const log = await h.events(page, tag);
      const waiting = log.find((e) => e.state === "waiting");
      await h.assertReconnect(page, { clock: page.clocks.get(a), log, waiting, failedAt: entries[0].end_ms, next: entries[1],
        expected: m.healthyEnd(), what: "reconnect after the restart" });
    });

    if (transport === "fetch-sse") {
      test("BC-15 buffering proxy: each open aborted at firstEventTimeoutMs; after 2 such opens → long-poll (buffered-stream), ids continue", async () => {
        await h.clearFaults(a);
        await h.faults(a, { path: "/sse", times: 2, fault: { kind: "buffer" } });
        const { id: before } = await a.publish("before");
        const tag = await sub(a, {
          seed: 27, urls: URLS, transports: ["fetch-sse", "long-poll"], lastEventId: before,
          watchdog: { firstEventTimeoutMs: 500, idleTimeoutMs: 5000 }, fallback: { afterFailures: 2 },
        });
        const log = await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "transportchange" && e.reason !== "start"), 5000, "the switch");
        const { id } = await a.publish("after");
        await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "message"), 5000, "a message over long-poll");
        await h.closeSub(page, tag);
        const streams = await caseLog(a, tag);
        assert.equal(streams.length, 2, streams.map(h.logBrief).join("\n"));
        for (const s of streams) {
          assert.deepEqual([s.status, s.fault.kind, s.end, s.bytes], [200, "buffer", "dropped", 0]);
        }
        // open (the head) → timeout error, twice, by the engine's clock.
        // Firefox resolves a streaming fetch only at the first body byte and
        // shows no head: there the deadline runs from the request.
        const start = ENGINE === "firefox"
          ? (e) => e.type === "statechange" && e.state === "connecting"
          : (e) => e.type === "open" && e.transport === "fetch-sse";
        const oe = (await h.events(page, tag)).filter((e) => start(e) || e.type === "error").slice(0, 4);
        assert.deepEqual(oe.map((e) => (start(e) ? "start" : e.type)), ["start", "error", "start", "error"]);
        await h.assertBetween(page, oe[0], oe[1], 500, "first-event timeout 1");
        await h.assertBetween(page, oe[2], oe[3], 500, "first-event timeout 2");
        const errors = log.filter((e) => e.type === "error");
        assert.deepEqual(errors.map((e) => e.code), ["timeout", "timeout"]);
        const change = log.find((e) => e.type === "transportchange" && e.reason !== "start");
        assert.deepEqual([change.transport, change.previous, change.reason], ["long-poll", "fetch-sse", "buffered-stream"]);
        const polls = await h.requests(a, "/long-poll");
        assert.equal(new URLSearchParams(polls[0].query).get("lastEventId") ?? polls[0].headers["last-event-id"], before);
        const msgs = (await h.events(page, tag, "message")).map((e) => [e.id, e.data, e.transport]);
        assert.deepEqual(msgs, [[id, "after", "long-poll"]]);
      });
    } else {
      test("BC-15 NATIVE: a buffered stream opens and shows no event: aborted at firstEventTimeoutMs (buffered-stream); 2 such opens → fetch-sse, held too → long-poll", async () => {
        await h.clearFaults(a);
        await h.faults(a, { path: "/sse", times: null, fault: { kind: "buffer" } });
        const polled = (await h.requests(a, "/long-poll")).length;
        // No cursor: with one, the first attempt would already resume over
        // fetch-sse with Last-Event-ID (resume-by-header), skipping eventsource.
        const tag = await sub(a, {
          seed: 27, urls: URLS, transports: ["eventsource", "fetch-sse", "long-poll"],
          watchdog: { firstEventTimeoutMs: 500, idleTimeoutMs: 5000 }, fallback: { afterFailures: 2 },
        });
        await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "transportchange" && e.transport === "long-poll"), 10000, "long-poll");
        await h.clearFaults(a);
        // Without a cursor the long-poll gets live events only: publish once it is held.
        await h.waitRequests(a, "/long-poll", (l) => l.length > polled, 5000, "a held long-poll");
        const { id } = await a.publish("after");
        await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "message"), 5000, "a message over long-poll");
        await h.closeSub(page, tag);
        const streams = await caseLog(a, tag);
        assert.equal(streams.length, 4, streams.map(h.logBrief).join("\n"));
        for (const s of streams) assert.deepEqual([s.fault.kind, s.end, s.bytes], ["buffer", "dropped", 0]);
        const log = await h.events(page, tag);
        // open (the head) → timeout error, four times, by the engine's clock.
        // Firefox gives a held stream no `open`, on a native EventSource as
        // on a streaming fetch: there the deadline runs from the request.
        const starts = ENGINE === "firefox" ? h.attemptStarts(log) : log.filter((e) => e.type === "open");
        const oe = log.filter((e) => (starts.includes(e) && e.transport !== "long-poll") || e.type === "error");
        assert.deepEqual(oe.map((e) => `${e.type === "error" ? "error" : "start"} ${e.type === "error" ? e.code : e.transport}`),
          ["start eventsource", "error timeout", "start eventsource", "error timeout",
            "start fetch-sse", "error timeout", "start fetch-sse", "error timeout"]);
        for (let i = 0; i < 8; i += 2) await h.assertBetween(page, oe[i], oe[i + 1], 500, `first-event timeout ${i / 2 + 1}`);
        const changes = log.filter((e) => e.type === "transportchange" && e.reason !== "start").map((e) => [e.previous, e.transport, e.reason]);
        assert.deepEqual(changes, [["eventsource", "fetch-sse", "buffered-stream"], ["fetch-sse", "long-poll", "buffered-stream"]]);
        const msgs = (await h.events(page, tag, "message")).map((e) => [e.id, e.data, e.transport]);
        assert.deepEqual(msgs, [[id, "after", "long-poll"]]);
      });

      test("BC-15 NATIVE: a healthy server that only sends comments looks buffered to eventsource; fetch-sse sees the comments and stays", async () => {
        await h.clearFaults(a);
        const writes = Array.from({ length: 60 }, (_, i) => ({ delay_ms: i === 0 ? 0 : 200, data: ":\n" }));
        await h.faults(a, { path: "/sse", times: null, fault: { kind: "script", status: 200, content_type: "text/event-stream", writes, then: "hang" } });
        const tag = await sub(a, {
          seed: 28, urls: URLS, transports: ["eventsource", "fetch-sse", "long-poll"],
          watchdog: { firstEventTimeoutMs: 500, idleTimeoutMs: 1000 }, fallback: { afterFailures: 2 },
        });
        await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "open" && e.transport === "fetch-sse"), 10000, "fetch-sse open");
        await h.sleep(3000);
        await h.closeSub(page, tag);
        await h.clearFaults(a);
        const streams = await caseLog(a, tag);
        assert.equal(streams.length, 3, streams.map(h.logBrief).join("\n"));
        const log = await h.events(page, tag);
        const changes = log.filter((e) => e.type === "transportchange" && e.reason !== "start").map((e) => [e.previous, e.transport, e.reason]);
        assert.deepEqual(changes, [["eventsource", "fetch-sse", "buffered-stream"]]);
        assert.deepEqual(log.filter((e) => e.type === "error").map((e) => e.code), ["timeout", "timeout"]);
      });
    }
  });
}
