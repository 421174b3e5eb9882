// Streaming transports against the reference server's status faults, in
// headless Chromium, same-origin and cross-origin (the page on server A, the
// stream on server B). For `eventsource` and `fetch-sse` each (forced with
// `transports: [...]`): messages arrive in order with their ids; 503 and 429
// with `Retry-After` (seconds, HTTP-date with and without `Date`, a skewed
// server clock) are waited out exactly as the engine's rule says, checked
// against the server's request log within +10 % +100 ms; 204 and a wrong
// content type stop with a typed fatal error after a counted number of
// requests.
//
// The expected delays come from engine-model.mjs (the engine's seeded PRNG and
// backoff rule, restated in JS): `floor + U[0, min(cap, base·m·2^k)]`, plus the
// server's wait (core/src/engine/retry.rs, "the delay after a failure").
//
// eventsource: the browser hides the status of a failed EventSource, so the
// engine asks for one `fetch` probe of the same URL (core/src/engine/
// native_probe.rs). Each eventsource fault below is therefore queued for 2 requests
// (the native one and the probe) and the counts include the probe.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { ENGINE, startServer, launchBrowser } from "./harness.mjs";
import { Model } from "./engine-model.mjs";
import * as h from "./tidings-page.mjs";
import { SKIPS } from "../engines/e2e-skips.mjs";

const BACKOFF = { floorMs: 100, baseMs: 500, maxMs: 60000 };

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

for (const transport of ["eventsource", "fetch-sse"]) {
  for (const origin of ["same-origin", "cross-origin"]) {
    describe(`${transport}, ${origin}`, () => {
      const cross = origin === "cross-origin";
      // Requests one faulted open costs: the native request plus the probe.
      const perOpen = transport === "eventsource" ? 2 : 1;
      let a, b, page, n = 0;
      // The server the stream lives on.
      const srv = () => (cross ? b : a);
      before(async () => {
        a = await startServer(["--quiet"]);
        b = cross ? await startServer(["--quiet"]) : a;
        page = await h.blankPage(browser, a.url);
        page.clock = await h.clockOffset(page, srv());
        // The Retry-After each case's responses carried, as the browser saw it
        // (WebKitGTK's driver shows no responses: the one test that reads it
        // is skipped there, tests/engines/e2e-skips.mjs).
        page.retryAfter = new Map();
        if (ENGINE !== "webkit") page.on("response", (r) => {
          const m = r.url().match(/[?&]case=(\w+)/);
          const ra = r.headers()["retry-after"];
          if (m && ra) page.retryAfter.set(m[1], ra);
        });
      });
      after(async () => {
        await page?.closeAll();
        await a?.stop();
        if (cross) await b?.stop();
      });

      /** A subscription to this suite's stream with a fresh case tag. */
      async function sub(options = {}, events = []) {
        const tag = `c${++n}`;
        const path = `/sse?case=${tag}`;
        const url = cross ? `${b.url}${path}` : path;
        await h.subscribe(page, tag, url, { transports: [transport], backoff: BACKOFF, ...options }, events);
        return tag;
      }
      const caseLog = async (tag) =>
        (await h.requests(srv(), "/sse")).filter((e) => (e.query ?? "").includes(`case=${tag}`));

      /**
       * Queue `fault` for one open, subscribe with `seed`, and check: the
       * error event (code, status, retryInMs = the model's delay), the
       * `waiting` state's reason and delay, and the gap between the faulted
       * response and the next request in the server's log.
       */
      async function retryCase({ fault, seed, reason, waitMs, multiplier = 1, options = {} }) {
        await h.clearFaults(srv());
        await h.faults(srv(), { path: "/sse", times: perOpen, fault });
        const tag = await sub({ seed, ...options });
        const log = await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "open"), 8000, "open after the fault");
        const entries = await caseLog(tag);
        await h.closeSub(page, tag);
        assert.equal(entries.length, perOpen + 1, entries.map(h.logBrief).join("\n"));
        assert.deepEqual(entries.map((e) => e.status), [...Array(perOpen).fill(fault.status), 200]);
        const err = log.find((e) => e.type === "error");
        const wait = typeof waitMs === "function" ? waitMs(tag, err) : waitMs;
        const expected = new Model(seed, BACKOFF).failure({ waitMs: wait, multiplier });
        assert.equal(err.code, "http-status");
        assert.equal(err.status, fault.status);
        assert.equal(err.fatal, false);
        // The no-`Date` case measures against the page's clock: ±3 ms (±5 with the spread,
        // which is a tenth of the wait).
        assert.ok(Math.abs(err.retryInMs - expected) <= (typeof waitMs === "function" ? 5 : 0),
          `retryInMs ${err.retryInMs}, the engine's rule gives ${expected}`);
        const waiting = log.find((e) => e.type === "statechange" && e.state === "waiting");
        assert.equal(waiting.reason, reason);
        await h.assertReconnect(page, { clock: page.clock, log, waiting, failedAt: entries[perOpen - 1].head_ms,
          next: entries[perOpen], expected: err.retryInMs, what: `${fault.status} ${JSON.stringify(fault)}` });
        return { err, entries };
      }

      test("published messages arrive in order with their ids and the transport's name", async () => {
        const tag = await sub({ events: ["price"] }, ["price"]);
        await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "open"), 5000, "open");
        const ids = [];
        for (let i = 1; i <= 5; i++) ids.push((await srv().publish(`m${i}`, i === 3 ? "price" : undefined)).id);
        const log = await h.waitEvents(page, tag, (l) => l.filter((e) => e.data?.startsWith("m")).length === 5, 5000, "5 messages");
        await h.closeSub(page, tag);
        const msgs = log.filter((e) => e.type === "message" || e.type === "price");
        assert.deepEqual(msgs.map((m) => [m.type, m.event, m.id, m.lastEventId, m.data, m.transport]),
          ids.map((id, i) => [i === 2 ? "price" : "message", i === 2 ? "price" : "message", id, id, `m${i + 1}`, transport]));
        assert.deepEqual(ids.map(Number), [1, 2, 3, 4, 5].map((k) => Number(ids[0]) + k - 1));
        const entries = await caseLog(tag);
        assert.equal(entries.length, 1);
        if (cross) assert.equal(entries[0].headers.origin, a.url);
      });

      test("503 with Retry-After in seconds: waits 1000 ms as asked plus at most 100 ms of spread, no backoff term (reason retry-after)", async () => {
        await retryCase({ fault: { kind: "status", status: 503, retry_after: 1 }, seed: 11, reason: "retry-after", waitMs: 1000 });
      });

      test("429 with an HTTP-date Retry-After and Date: waits the date minus Date (1000 ms)", async () => {
        await retryCase({
          fault: { kind: "status", status: 429, retry_after_date_s: 1, date: true },
          seed: 12, reason: "retry-after", waitMs: 1000,
        });
      });

      test("409 to a resume (Electric's must-refetch): reset cursor-invalid, then everything from the start, no error", async () => {
        await h.clearFaults(srv());
        await srv().publish("s1");
        const last = await srv().publish("s2");
        // 409 to every request that carries a cursor (the native EventSource
        // and its status probe: perOpen), as a server that lost the position.
        await h.faults(srv(), { path: "/sse", when: "cursor", times: perOpen, fault: { kind: "status", status: 409 } });
        const tag = `c${++n}`;
        const path = `/sse?case=${tag}&from_start=1`;
        await h.subscribe(page, tag, cross ? `${b.url}${path}` : path,
          { transports: [transport], backoff: BACKOFF, lastEventId: last.id });
        let log = await h.waitEvents(page, tag, (l) => l.some((e) => e.id === last.id), 8000, "the replay from the start");
        const resets = log.filter((e) => e.type === "reset");
        assert.deepEqual(resets.map((e) => e.reason), ["cursor-invalid"]);
        const msgs = log.filter((e) => e.type === "message");
        assert.ok(log.indexOf(resets[0]) < log.indexOf(msgs[0]), "the reset comes before the replay");
        // Every buffered event from id 1 (named events of other cases are
        // filtered out by `events`), ending with the two published above.
        assert.equal(msgs[0].id, "1");
        assert.ok(msgs.every((m, i) => i === 0 || Number(m.id) > Number(msgs[i - 1].id)), JSON.stringify(msgs.map((m) => m.id)));
        assert.deepEqual(msgs.slice(-2).map((m) => [m.id, m.data]), [[String(Number(last.id) - 1), "s1"], [last.id, "s2"]]);
        assert.deepEqual(log.filter((e) => e.type === "error"), []);
        // Live from there on.
        const next = await srv().publish("s3");
        log = await h.waitEvents(page, tag, (l) => l.some((e) => e.data === "s3"), 5000, "s3");
        assert.equal(log.filter((e) => e.type === "message").at(-1).id, next.id);
        const entries = await caseLog(tag);
        await h.closeSub(page, tag);
        assert.deepEqual(entries.map((e) => e.status).slice(0, perOpen + 1), [...Array(perOpen).fill(409), 200],
          entries.map(h.logBrief).join("\n"));
        const cursorOf = (e) => new URLSearchParams(e.query ?? "").get("lastEventId") ?? e.headers["last-event-id"];
        assert.deepEqual(entries.slice(0, perOpen + 1).map(cursorOf), [...Array(perOpen).fill(last.id), undefined]);
      });

      // Cross-origin, the two cases above are the key ones (Retry-After and
      // Date are readable only because the server exposes them); the rest is
      // clock arithmetic, the same on any origin.
      if (cross) return;

      test("503 with an HTTP-date Retry-After, Date, and the server's clock an hour slow: still 1000 ms", async () => {
        await retryCase({
          fault: { kind: "status", status: 503, retry_after_date_s: 1, date: true, clock_skew_s: -3600 },
          seed: 13, reason: "retry-after", waitMs: 1000,
        });
      });

      const NO_DATE = "503 with an HTTP-date Retry-After and no Date: measured against the client clock";
      test(NO_DATE, { skip: SKIPS[ENGINE]?.[NO_DATE] ?? false }, async () => {
        await retryCase({
          fault: { kind: "status", status: 503, retry_after_date_s: 2, date: false },
          seed: 14, reason: "retry-after",
          // The date (whole seconds) minus the client's wall clock when the
          // head arrived: between 1000 and 2000 ms.
          waitMs: (tag, err) => {
            const ms = Date.parse(page.retryAfter.get(tag)) - err.wall;
            assert.ok(ms > 990 && ms <= 2000, `wait ${ms}`);
            return ms;
          },
        });
      });

      test("503 with an HTTP-date an hour in the past (skewed clock, no Date): no extra wait, the backoff floor stays", async () => {
        const { err } = await retryCase({
          fault: { kind: "status", status: 503, retry_after_date_s: 1, date: false, clock_skew_s: -3600 },
          seed: 15, reason: "retry-after", waitMs: 0,
        });
        assert.ok(err.retryInMs >= BACKOFF.floorMs);
      });

      test("503 with a Retry-After past maxRetryAfterMs: clamped to it", async () => {
        await retryCase({
          fault: { kind: "status", status: 503, retry_after: 3600 },
          seed: 16, reason: "retry-after", waitMs: 700, options: { maxRetryAfterMs: 700 },
        });
      });

      test("429 without any hint: backoff with a doubled step (reason backoff)", async () => {
        await retryCase({ fault: { kind: "status", status: 429 }, seed: 17, reason: "backoff", multiplier: 2 });
      });

      test("500: plain backoff, no server wait", async () => {
        await retryCase({ fault: { kind: "status", status: 500 }, seed: 18, reason: "backoff" });
      });
    });
  }
}
