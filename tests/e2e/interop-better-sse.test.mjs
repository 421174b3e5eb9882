// Interop with better-sse (npm, pinned in package.json), the smallest server
// its docs show: `createSession(req, res, options)` on a plain `node:http`
// server, `session.push(data, event, id)`. better-sse sends `retry: 2000` at
// open and an empty comment every `keepAlive` ms (default 10 s), and resumes
// from the `Last-Event-ID` header or the `lastEventId` query. The page runs on
// the reference server's origin, so better-sse is cross-origin (CORS `*`; the
// cursor travels in the query).
// - `fetch-sse` and `eventsource` receive named events in order, and resume
//   from the cursor after the server ends the stream, nothing lost or repeated.
// - A quiet server with keepAlive 15 s (the interval of axum `KeepAlive` and
//   sse-starlette) is one request per subscription for 19 s, past the old
//   15 s first-event deadline, on both transports: `fetch-sse` sees the
//   `retry:` and the comments, `eventsource` sees nothing at all and is still
//   not taken for a buffering proxy before 45 s (the old deadline reconnected
//   it at 15 s).
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { once } from "node:events";
import { createSession } from "better-sse";
import { startServer, launchBrowser } from "./harness.mjs";
import * as h from "./tidings-page.mjs";

/** A better-sse app with an in-memory history replayed after the cursor. */
async function startBetterSse({ keepAlive } = {}) {
  const history = [];
  const live = new Set();
  const requests = [];
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, "http://localhost");
    if (req.method === "OPTIONS") {
      res.writeHead(204, { "Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "*" });
      res.end();
      return;
    }
    if (url.pathname !== "/sse") {
      res.writeHead(404);
      res.end();
      return;
    }
    const session = await createSession(req, res, {
      keepAlive, headers: { "Access-Control-Allow-Origin": "*" },
    });
    requests.push({ t: Date.now(), query: url.search, header: req.headers["last-event-id"] ?? null, lastId: session.lastId });
    const from = history.findIndex((e) => e.id === session.lastId) + 1;
    for (const e of history.slice(from)) session.push(e.data, e.event, e.id);
    const entry = { session, res, query: url.search };
    live.add(entry);
    session.on("disconnected", () => live.delete(entry));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    live,
    publish(event, data) {
      const e = { id: String(history.length + 1), event, data };
      history.push(e);
      for (const { session } of live) session.push(e.data, e.event, e.id);
    },
    /** End every open stream cleanly (a serverless time limit, a deploy). */
    endAll() {
      // Out of `live` at once: better-sse learns of the end only at the
      // response's `close`, and a push before that writes after the end.
      for (const e of [...live]) {
        live.delete(e);
        e.res.end();
      }
    },
    async stop() {
      for (const { res } of live) res.destroy();
      server.closeAllConnections();
      server.close();
    },
  };
}

let browser, ref, page, n = 0;
before(async () => {
  browser = await launchBrowser();
  ref = await startServer(["--quiet"]);
  page = await h.blankPage(browser, ref.url);
});
after(async () => { await page?.closeAll(); await browser?.close(); await ref?.stop(); });

for (const transport of ["fetch-sse", "eventsource"]) {
  describe(transport, () => {
    let app;
    before(async () => { app = await startBetterSse(); });
    after(async () => { await app?.stop(); });

    test("named events in order; the server ends the stream; resumed from the cursor (lastEventId query), nothing lost or repeated", async () => {
      const tag = `n${++n}`;
      await h.subscribe(page, tag, `${app.url}/sse?case=${tag}`,
        { transports: [transport], events: ["price", "trade"], parse: "json", seed: 24 }, ["price", "trade"]);
      await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "open"), 5000, "open");
      app.publish("price", { p: 1 });
      app.publish("trade", { q: 2 });
      app.publish("price", { p: 3 });
      await h.waitEvents(page, tag, (l) => l.filter((e) => e.id).length >= 3, 5000, "3 events");
      app.endAll();
      // Published while the client is away: replayed after its cursor.
      app.publish("trade", { q: 4 });
      app.publish("price", { p: 5 });
      const log = await h.waitEvents(page, tag, (l) => l.filter((e) => e.id).length >= 5, 10000, "5 events");
      await h.sleep(300);
      const all = await h.events(page, tag);
      await h.closeSub(page, tag);
      const got = all.filter((e) => e.id).map((e) => [e.type, e.id, JSON.stringify(e.data), e.transport]);
      assert.deepEqual(got, [
        ["price", "1", '{"p":1}', transport], ["trade", "2", '{"q":2}', transport], ["price", "3", '{"p":3}', transport],
        ["trade", "4", '{"q":4}', transport], ["price", "5", '{"p":5}', transport],
      ], JSON.stringify(log.map(h.brief)));
      const mine = app.requests.filter((r) => r.query.includes(`case=${tag}`));
      assert.equal(mine.length, 2, JSON.stringify(mine));
      assert.equal(new URLSearchParams(mine[1].query).get("lastEventId"), "3");
      assert.equal(mine[1].lastId, "3");
      // better-sse's `retry: 2000` is the floor of the reconnect (fetch-sse
      // reads it; native EventSource hides it, so the engine's floor, 1000 ms,
      // applies there).
      const waiting = all.find((e) => e.type === "statechange" && e.state === "waiting");
      const floor = transport === "fetch-sse" ? 2000 : 1000;
      assert.ok(waiting.delayMs >= floor && waiting.delayMs < 2 * floor, `waited ${waiting.delayMs} ms`);
    });
  });
}

test("a quiet better-sse server (keepAlive 15 s) for 19 s: one request per transport, no error, no transport change", async () => {
  const app = await startBetterSse({ keepAlive: 15000 });
  try {
    const tags = { "fetch-sse": `q${++n}`, eventsource: `q${++n}` };
    for (const [transport, tag] of Object.entries(tags)) {
      await h.subscribe(page, tag, `${app.url}/sse?case=${tag}`, { transports: [transport], seed: 24 });
    }
    for (const tag of Object.values(tags)) {
      await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "open"), 5000, "open");
    }
    const t0 = Date.now();
    // The first keep-alive comment reaches fetch-sse about 15 s after the head.
    const atOpen = (await h.stats(page, tags["fetch-sse"])).bytes;
    for (;;) {
      if ((await h.stats(page, tags["fetch-sse"])).bytes > atOpen) break;
      assert.ok(Date.now() - t0 < 25000, "no keep-alive comment arrived");
      await h.sleep(200);
    }
    await h.sleep(Math.max(0, 19000 - (Date.now() - t0)));
    for (const [transport, tag] of Object.entries(tags)) {
      const log = await h.events(page, tag);
      await h.closeSub(page, tag);
      const mine = app.requests.filter((r) => r.query.includes(`case=${tag}`));
      assert.equal(mine.length, 1, `${transport}: ${JSON.stringify(log.map(h.brief))}`);
      assert.deepEqual(log.filter((e) => e.type === "error" || (e.type === "transportchange" && e.reason !== "start")).map(h.brief), [],
        transport);
    }
  } finally {
    await app.stop();
  }
});
