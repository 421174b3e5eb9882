// Streams started by a POST (`method`, `body`, `resume`, `end`), in headless
// Chromium against the reference server's `POST /answer`: 1,000 tokens cut
// mid-body three times (after tokens 300, 600 and 900), ended by
// `data: [DONE]`. On fetch-sse and long-poll with `resume: "replay"` and
// with a resume function: every token once, in order; exactly four requests,
// carrying no cursor then 300, 600, 900; none after `[DONE]`. Then the option
// checks, and a `for await` loop that ends at the marker.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import * as h from "./tidings-page.mjs";

let browser, server, page, n = 0;
before(async () => {
  browser = await launchBrowser();
  server = await startServer(["--quiet"]);
  page = await h.entryPage(browser, server.url);
});
after(async () => { await page?.close(); await browser?.close(); await server?.stop(); });

/** The cursor a logged request carried: its Last-Event-ID, else the query's. */
const cursorOf = (e) =>
  e.headers?.["last-event-id"] ?? new URLSearchParams(e.query ?? "").get("lastEventId") ?? "";

/**
 * Subscribe in the page to `/answer?case=<tag>` with `options` (`resume:
 * "function"` becomes a function that GETs the answer by its id); resolves
 * when the subscription is closed, with every message's data, the closing
 * state's reason and the errors.
 */
async function answer(tag, options) {
  return page.evaluate(async ({ tag, options }) => {
    const url = `/answer?case=${tag}`;
    const asked = [];
    if (options.resume === "function") {
      options.resume = (lastEventId) => {
        asked.push(lastEventId);
        return { url: `/answer?case=${tag}&stream=${tag}&lastEventId=${lastEventId}`, method: "GET" };
      };
    }
    const sub = window.t.subscribe(url, { seed: 3, backoff: { floorMs: 50, baseMs: 50, maxMs: 100 }, ...options });
    const data = [], errors = [];
    let reason;
    sub.addEventListener("message", (e) => data.push(e.data));
    sub.addEventListener("error", (e) => errors.push(e.code));
    await new Promise((resolve) => sub.addEventListener("statechange", (e) => {
      if (e.state === "closed") { reason = e.reason; resolve(); }
    }));
    return { data, reason, errors, asked };
  }, { tag, options });
}

const tokens = Array.from({ length: 1000 }, (_, i) => `t${i + 1}`);

for (const [transport, resume] of [["fetch-sse", "replay"], ["long-poll", "replay"], ["fetch-sse", "function"]]) {
  test(`${transport}, resume ${resume}: 1,000 tokens once each across 3 cuts, requests at cursors none/300/600/900, none after [DONE]`, async () => {
    const tag = `a${++n}`;
    const got = await answer(tag, {
      transports: [transport], method: "POST", body: JSON.stringify({ prompt: tag }),
      headers: { "Content-Type": "application/json" }, resume, end: { data: "[DONE]" },
    });
    assert.equal(got.data.length, 1000, `tokens: ${got.data.length}`);
    assert.deepEqual(got.data, tokens);
    assert.equal(got.reason, "stream-closed");
    await h.sleep(500); // a reconnect (floor 50 ms) would show by now
    const log = (await h.requests(server, "/answer")).filter((e) => (e.query ?? "").includes(`case=${tag}`));
    const brief = log.map(h.logBrief).join("\n");
    assert.deepEqual(log.map(cursorOf), ["", "300", "600", "900"], brief);
    const methods = resume === "replay" ? ["POST", "POST", "POST", "POST"] : ["POST", "GET", "GET", "GET"];
    assert.deepEqual(log.map((e) => e.method), methods, brief);
    assert.deepEqual(log.map((e) => e.status), [200, 200, 200, 200], brief);
    if (resume === "function") assert.deepEqual(got.asked, ["300", "600", "900"]);
    // Three cut mid-body, the last complete (the client aborted at [DONE] or it ended).
    assert.equal(log.filter((e) => e.end === "error").length, 3, brief);
    assert.deepEqual(got.errors.filter((c) => c !== "network-or-cors"), [], got.errors.join());
  });
}

test("option checks: a method or body eventsource cannot send, a body with GET, a method fetch refuses, a bad resume", async () => {
  const codes = await page.evaluate(() => {
    const tries = [
      { method: "POST", transports: ["eventsource"] },
      { method: "POST", body: "x", transports: ["eventsource", "poll"] },
      { body: "x" },
      { method: "HEAD", body: "x" },
      { method: "CONNECT" },
      { method: "PO ST" },
      { resume: "again" },
      { end: "[DONE]" },
      { end: { data: 1 } },
    ];
    return tries.map((o) => {
      try { window.t.subscribe("/answer", o).close(); return "ok"; } catch (e) { return `${e.code} ${e.message}`; }
    });
  });
  const names = ["transports", "transports", "body", "body", "method", "method", "resume", "end", "data"];
  codes.forEach((c, i) => assert.match(c, new RegExp(`^invalid-option invalid option: ${names[i]}:`), c));
});

test("a for await loop ends at the end marker, the marker not among its messages", async () => {
  const tag = `f${++n}`;
  const got = await page.evaluate(async (tag) => {
    const data = [];
    const sub = window.t.subscribe(`/answer?case=${tag}&n=5&cuts=`, {
      method: "POST", body: JSON.stringify({ prompt: "hi" }), end: { data: "[DONE]" },
    });
    for await (const m of sub) data.push(m.data);
    return { data, state: sub.state };
  }, tag);
  assert.deepEqual(got, { data: ["t1", "t2", "t3", "t4", "t5"], state: "closed" });
  const log = (await h.requests(server, "/answer")).filter((e) => (e.query ?? "").includes(`case=${tag}`));
  assert.equal(log.length, 1, log.map(h.logBrief).join("\n"));
});
