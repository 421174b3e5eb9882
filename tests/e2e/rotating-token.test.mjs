// A token that rotates: the reference server's `rotating-token` fault accepts
// a token for `PERIOD_MS` (default 2 s) and ends a stream when its token
// expires; the page asks `/_token` for a fresh one only when the `url` or
// `headers` function is told a 401/403. On each of the four transports at once
// for `FOR_MS` (default 20 s; `ROTATE_PERIOD_MS=2000 ROTATE_FOR_MS=60000` is
// the full run) while messages are published every 100 ms: 0 lost, 0
// duplicated, every 401 followed by exactly one request, with a new token,
// that is let through; no request with a token after its first 401 (on
// `eventsource` the status probe, a second `GET` of the same URL right after
// the browser failed it, is how the 401 is learned, and is left out).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import * as h from "./tidings-page.mjs";

const PERIOD_MS = Number(process.env.ROTATE_PERIOD_MS ?? 2000);
const FOR_MS = Number(process.env.ROTATE_FOR_MS ?? 20000);

let browser, server, page;
before(async () => {
  browser = await launchBrowser();
  server = await startServer(["--quiet"]);
  page = await h.entryPage(browser, server.url);
});
after(async () => { await page?.close(); await browser?.close(); await server?.stop(); });

// Where each transport reads and how it carries the token.
const CASES = [
  { transport: "eventsource", path: "/sse", carry: "url" },
  { transport: "fetch-sse", path: "/sse", carry: "headers" },
  { transport: "long-poll", path: "/long-poll", carry: "url" },
  { transport: "poll", path: "/poll", carry: "headers" },
];

/** The token a logged request presented (bearer header, else `token` in the query). */
const tokenOf = (e) =>
  e.headers?.authorization?.replace(/^Bearer /, "") ?? new URLSearchParams(e.query ?? "").get("token") ?? "";

test(`rotating token every ${PERIOD_MS} ms for ${FOR_MS} ms on the four transports: 0 lost, 0 duplicated, one refresh per 401, no expired token reused`, { timeout: FOR_MS + 60_000 }, async () => {
  await h.clearFaults(server);
  for (const path of ["/sse", "/long-poll", "/poll"]) {
    await h.faults(server, { path, times: null, fault: { kind: "rotating-token", period_ms: PERIOD_MS } });
  }
  await page.evaluate(({ cases, period }) => {
    window.rot = {};
    for (const { transport, path, carry } of cases) {
      const rec = { ids: [], errors: [], asked: [] };
      let token = null;
      // A cached token, refreshed only when the server refused it.
      const fresh = async (status) => {
        rec.asked.push(status ?? null);
        if (token === null || status === 401 || status === 403) {
          token = (await (await fetch(`/_token?period_ms=${period}`)).json()).token;
        }
        return token;
      };
      const options = {
        transports: [transport], seed: 5, backoff: { floorMs: 50, baseMs: 50, maxMs: 200 },
        interval: { minMs: 300, maxMs: 600 },
      };
      if (carry === "url") {
        options.url = async ({ status, url }) => {
          const u = new URL(url);
          u.searchParams.set("token", await fresh(status));
          return u.href;
        };
      } else {
        options.headers = async ({ status }) => ({ Authorization: `Bearer ${await fresh(status)}` });
      }
      const sub = window.t.subscribe(`${path}?case=${transport}`, options);
      sub.addEventListener("message", (e) => rec.ids.push(Number(e.id)));
      sub.addEventListener("error", (e) => rec.errors.push([e.code, e.status ?? null, e.fatal]));
      rec.sub = sub;
      window.rot[transport] = rec;
    }
  }, { cases: CASES, period: PERIOD_MS });
  // Publish every 100 ms for FOR_MS.
  const published = [];
  const t0 = Date.now();
  while (Date.now() - t0 < FOR_MS) {
    published.push(Number((await server.publish(`m${published.length}`)).id));
    await h.sleep(100);
  }
  const last = published.at(-1);
  await h.waitPage(page, (last) => Object.values(window.rot).every((r) => r.ids.at(-1) >= last), last,
    PERIOD_MS * 3 + 5000, "every transport has the last message");
  const got = await page.evaluate(() => {
    const out = {};
    for (const [t, r] of Object.entries(window.rot)) {
      r.sub.close();
      out[t] = { ids: r.ids, errors: r.errors, asked: r.asked };
    }
    return out;
  });
  await h.clearFaults(server);
  const log = await h.requests(server);
  for (const { transport } of CASES) {
    const { ids, errors } = got[transport];
    const mine = log.filter((e) => new URLSearchParams(e.query ?? "").get("case") === transport);
    const brief = mine.map((e) => `${h.logBrief(e)} token=${tokenOf(e)}`).join("\n");
    // 0 lost, 0 duplicated: consecutive ids from the first received to the last published.
    const first = ids[0];
    assert.deepEqual(ids, Array.from({ length: last - first + 1 }, (_, i) => first + i), `${transport}: ids`);
    assert.ok(first <= published[5], `${transport}: started late (${first})`);
    assert.deepEqual(errors.filter((e) => e[2]), [], `${transport}: no fatal error`);
    // On eventsource, a request followed at once by one of the same URL is
    // the EventSource and its status probe: one attempt.
    const attempts = [];
    for (const e of mine) {
      const prev = attempts.at(-1);
      if (transport === "eventsource" && prev && prev.query === e.query && prev.status === 401 && !prev.probed) {
        prev.probed = true;
        continue;
      }
      attempts.push({ ...e });
    }
    const refusals = attempts.filter((e) => e.status === 401);
    // A token rotates every PERIOD_MS: each transport met it refused.
    assert.ok(refusals.length >= Math.floor(FOR_MS / PERIOD_MS / 2), `${transport}: ${refusals.length} 401s\n${brief}`);
    const expired = new Set();
    attempts.forEach((e, i) => {
      const token = tokenOf(e);
      assert.ok(!expired.has(token), `${transport}: request ${e.req} reuses expired ${token}\n${brief}`);
      if (e.status !== 401) return;
      expired.add(token);
      const next = attempts[i + 1];
      if (!next) return;
      assert.notEqual(tokenOf(next), token, `${transport}: after 401 ${e.req}\n${brief}`);
      assert.ok([200, 204, 304].includes(next.status), `${transport}: the refreshed request ${next.req} got ${next.status}\n${brief}`);
    });
    console.log(`${transport}: ${ids.length} messages, ${attempts.length} requests, ${refusals.length} 401s`);
    // Every 401 was told to the function once, and only then did it refresh.
    const told = got[transport].asked.filter((s) => s === 401 || s === 403).length;
    assert.equal(told, refusals.length, `${transport}: refreshes`);
  }
});

test("url function: its context; a throw, a rejection or a bad URL is an `error` with code `headers` (cause), retried; not a function is invalid-option", async () => {
  await h.clearFaults(server);
  const got = await page.evaluate(async () => {
    const waitErrors = (fn, n) => new Promise((resolve) => {
      const codes = [];
      const sub = window.t.subscribe("/sse?case=bad-url", {
        transports: ["fetch-sse"], seed: 2, backoff: { floorMs: 20, baseMs: 20, maxMs: 40 }, url: fn,
      });
      sub.addEventListener("error", (e) => {
        codes.push([e.code, e.fatal, e.cause?.code ?? String(e.cause)]);
        if (codes.length === n) { sub.close(); resolve(codes); }
      });
    });
    const out = {};
    out.number = await waitErrors(() => 42, 2);
    out.object = await waitErrors(() => ({ href: "/sse?case=bad-url-object" }), 2);
    out.scheme = await waitErrors(async () => "javascript:alert(1)", 2);
    out.throws = await waitErrors(() => { throw new Error("no token"); }, 2);
    out.rejects = await waitErrors(() => Promise.reject(new Error("refresh failed")), 2);
    try { window.t.subscribe("/sse", { url: "/sse?token=x" }); } catch (e) { out.option = e.code; }
    // A working one: what it is asked, and a URL object as its string.
    const ctxs = [];
    out.messages = await new Promise((resolve) => {
      const sub = window.t.subscribe("/sse?case=ctx", {
        transports: ["eventsource"], seed: 2, backoff: { floorMs: 20, baseMs: 20, maxMs: 40 },
        url: (ctx) => { ctxs.push({ ...ctx }); const u = new URL(ctx.url); u.searchParams.set("n", ctxs.length); return u; },
      });
      sub.addEventListener("open", () => { sub.close(); resolve(ctxs.length); });
    });
    out.ctx = ctxs[0];
    return out;
  });
  const retried = (cause) => [["headers", false, cause], ["headers", false, cause]];
  assert.deepEqual(got.number, retried("invalid-url"));
  // A plain object is not a URL (only a URL object is taken for its href): never "/[object Object]".
  assert.deepEqual(got.object, retried("invalid-url"));
  assert.deepEqual(got.scheme, retried("invalid-url"));
  assert.deepEqual(got.throws, retried("Error: no token"));
  assert.deepEqual(got.rejects, retried("Error: refresh failed"));
  assert.equal(got.option, "invalid-option");
  assert.equal(got.messages, 1);
  assert.deepEqual(got.ctx, {
    attempt: 1, status: null, cursor: null, transport: "eventsource",
    url: `${server.url}/sse?case=ctx`,
  });
  const asked = (await h.requests(server, "/sse")).filter((e) => (e.query ?? "").startsWith("case=ctx"));
  assert.equal(asked[0].query, "case=ctx&n=1");
  // Nothing was sent for the bad ones.
  assert.deepEqual((await h.requests(server, "/sse")).filter((e) => (e.query ?? "").includes("bad-url")), []);
  assert.deepEqual((await h.requests(server)).filter((e) => e.path.includes("object")), []);
});
