// Issue 30: resume without silent loss against SSE servers written the
// textbook way, in headless Chromium.
//
// The servers are small Node `http` servers in this file, in the style of the
// common sse-starlette and Express examples: consecutive integer ids published
// on a timer (every 30 ms, so events happen while a client is reconnecting),
// a history to replay from, and every stream ENDED by the server after a few
// live events (serverless time limits, rolling deploys), 10 times per test;
// the 11th stream stays open. Two ways of reading the cursor:
//   - header: `request.headers.get("last-event-id")` only. With it, every
//     event after it from the history, then live; without it, live from "now".
//   - query: the same, reading only the `lastEventId` query parameter.
// Each server also serves the blank page and the built package (pkg/), so the
// page and the stream are same-origin (a `fetch` with `Last-Event-ID` needs
// no preflight there).
//
// What the app gets is compared with what the server published: every id from
// the first delivered to the last delivered, once each, in order (0 lost,
// 0 duplicated), on the default transport list, across a crossTab hand-over
// (the leader tab closes mid-stream) and across a reload with `persist`.
// Every request after the first carries the cursor where the server reads it;
// on the default list a resume moves from `eventsource`, which cannot send
// the header, to same-origin `fetch-sse` (transportchange `resume-by-header`).
// Where no transport can carry the header without a preflight
// (`transports: ["eventsource"]`, or a cross-origin stream) the header server
// loses events at each resume, but not silently: each jump of the ids comes
// with a `reset` of reason `gap`.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { readFile } from "node:fs/promises";
import { extname, normalize, join } from "node:path";
import { launchBrowser } from "./harness.mjs";
import * as h from "./tidings-page.mjs";

const ROOT = new URL("../../", import.meta.url).pathname;
const PKG_DIR = process.env.TIDINGS_PKG_DIR ?? `${ROOT}pkg`;
const MIME = { ".js": "text/javascript", ".wasm": "application/wasm", ".json": "application/json", ".ts": "text/plain" };

const EVERY_MS = 30; // the publishing timer
const LIVE_PER_STREAM = 5; // live events written before the server ends a stream
const ENDS = 10; // streams the server ends per test; the next one stays open
const AFTER = 3; // messages of that open stream the app must get before the counts
const T = 40_000;
// Reconnects after a clean end wait the floor plus U[0, floor): 150–300 ms,
// so 5–10 events are published while the client is away.
const BACKOFF = { floorMs: 150, baseMs: 100 };

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

/**
 * A textbook SSE server reading the cursor from `reads` ("header": the
 * `Last-Event-ID` request header; "query": the `lastEventId` parameter) at
 * `/sse`; any other path but `/pkg/…` is a blank HTML page. `streams` records
 * every `/sse` request: the cursor as the server read it, both carriers as
 * they came, the ids written, how it ended.
 */
async function startTextbook(reads) {
  // `hold`: end no stream for now (the test is closing or reloading a page
  // mid-stream, and the stream must still be open when it does).
  const srv = { reads, history: [], streams: [], live: new Set(), ended: 0, hold: false, preflights: 0 };
  let next = 1;
  const timer = setInterval(() => {
    const id = next++;
    srv.history.push(id);
    for (const s of [...srv.live]) {
      writeEvent(s, id);
      if (++s.liveCount >= LIVE_PER_STREAM && srv.ended < ENDS && !srv.hold) {
        srv.ended++;
        s.end = "server";
        srv.live.delete(s);
        s.res.end();
      }
    }
  }, EVERY_MS);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    // Like Express's `cors()` for simple requests; a preflight gets no CORS
    // headers (so it fails) and is counted.
    if (req.method === "OPTIONS") { srv.preflights++; res.writeHead(204).end(); return; }
    if (url.pathname === "/sse") return openStream(srv, req, res, url);
    if (url.pathname.startsWith("/pkg/")) return servePkg(res, url.pathname.slice(5));
    res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>textbook</title>");
  });
  server.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  srv.url = `http://127.0.0.1:${server.address().port}`;
  srv.stop = async () => {
    clearInterval(timer);
    for (const s of srv.live) s.res.end();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  };
  return srv;
}

/** One event `id` (its data the same number) on stream `s`. */
function writeEvent(s, id) {
  s.res.write(`id: ${id}\ndata: ${id}\n\n`);
  s.ids.push(id);
}

/**
 * A `/sse` request of `srv`: the cursor read where `srv.reads` says; with
 * an integer cursor, every event after it from the history; then live.
 */
function openStream(srv, req, res, url) {
  const header = req.headers["last-event-id"];
  const query = url.searchParams.get("lastEventId");
  const raw = (srv.reads === "header" ? header : query) ?? null;
  const s = { n: srv.streams.length + 1, header, query, cursor: raw, res, ids: [], liveCount: 0, replayed: 0, end: null };
  srv.streams.push(s);
  res.writeHead(200, {
    "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive",
    "access-control-allow-origin": "*",
  });
  res.flushHeaders();
  // Replay and join the live set in one turn: no event falls in between.
  if (raw !== null && /^\d+$/.test(raw)) {
    for (const id of srv.history) if (id > Number(raw)) { writeEvent(s, id); s.replayed++; }
  }
  srv.live.add(s);
  req.on("close", () => { if (srv.live.delete(s)) s.end = "client"; });
}

/** A file of the built package, with the MIME type a browser needs for a module and for wasm. */
async function servePkg(res, path) {
  const rel = normalize(decodeURIComponent(path));
  if (rel.startsWith("..")) { res.writeHead(403).end(); return; }
  try {
    const body = await readFile(join(PKG_DIR, rel));
    res.writeHead(200, { "content-type": MIME[extname(rel)] ?? "application/octet-stream" }).end(body);
  } catch {
    res.writeHead(404).end();
  }
}

/** One line per `/sse` request, for failure messages. */
function streamLog(srv) {
  return srv.streams.map((s) => {
    const ids = s.ids.length ? `${s.ids[0]}..${s.ids.at(-1)}` : "-";
    return `#${s.n} header=${s.header ?? "-"} query=${s.query ?? "-"} replayed=${s.replayed} ids=${ids} end=${s.end ?? "open"}`;
  }).join("\n  ");
}

/**
 * `subscribe(url, options)` in `page` as `window.subs[name]` (the shape of
 * tidings-page.mjs `subscribe`, so its `events` and `stats` read it); every
 * message's id is also appended to `localStorage["rec:" + name]` in the same
 * listener, so a record survives a reload that comes at any moment.
 */
async function open(page, name, url, options) {
  await page.evaluate(({ name, url, options }) => {
    const sub = window.tidings.subscribe(url, options);
    const rec = { sub, log: [] };
    for (const type of ["message", "open", "error", "statechange", "transportchange", "reset"]) {
      sub.addEventListener(type, (e) => {
        const o = { type, t: performance.now() };
        for (const k of ["id", "transport", "previous", "reason", "state", "code", "status"]) {
          if (e[k] !== undefined) o[k] = e[k];
        }
        rec.log.push(o);
        if (type === "message") {
          const key = `rec:${name}`;
          localStorage.setItem(key, `${localStorage.getItem(key) ?? ""}${e.id},`);
        }
      });
    }
    window.subs[name] = rec;
  }, { name, url, options });
}

/** The message ids recorded for `names` in `page`'s localStorage, in order. */
async function recorded(page, names) {
  const raw = await page.evaluate((names) => names.map((n) => localStorage.getItem(`rec:${n}`) ?? ""), names);
  return raw.join("").split(",").filter((s) => s !== "").map(Number);
}

/** Poll `read()` every 50 ms until `fn` accepts it; fails after `ms` with `show()`. */
async function waitFor(read, fn, ms, what, show) {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await read();
    if (fn(got)) return got;
    if (Date.now() > deadline) assert.fail(`timed out after ${ms} ms waiting for ${what}; ${show(got)}`);
    await h.sleep(50);
  }
}

/**
 * Wait until the server ended `n` streams and the stream open now has written
 * ≥ 2 live events; from then on the server holds it open (`srv.hold`) until
 * the caller releases it. Resolves to `ids()` and that stream.
 */
async function midStreamAfter(srv, n, ids) {
  await waitFor(async () => null, () => {
    const cur = srv.streams.at(-1);
    srv.hold = srv.ended >= n && cur && cur.end === null && cur.liveCount >= 2;
    return srv.hold;
  }, 15_000, `${n} ends and a stream in progress`, () => `ended ${srv.ended}\n  ${streamLog(srv)}`);
  return { before: await ids(), stream: srv.streams.at(-1) };
}

/** Release `srv.hold` once the held `stream` was closed by its client (the browser closes the socket a little after the page went). */
async function release(srv, stream) {
  await waitFor(async () => stream.end, (end) => end !== null, 10_000, "the held stream to close",
    () => streamLog(srv));
  srv.hold = false;
}

/** Every request after the first carried the cursor where the server reads it. */
function assertCursorEachTime(srv, what) {
  const without = srv.streams.slice(1).filter((s) => s.cursor === null).map((s) => `#${s.n}`);
  assert.deepEqual(without, [], `${what}: requests without the cursor where the ${srv.reads} server reads it\n  ${streamLog(srv)}`);
}

// On the default list a resume moves from `eventsource` (no header) to
// same-origin `fetch-sse`, which sends `Last-Event-ID`.
const BY_HEADER = ["transportchange reason=start transport=eventsource", "transportchange reason=resume-by-header transport=fetch-sse"];

/**
 * Wait until the server ended its ENDS streams and the app (`ids()`) got AFTER
 * messages newer than the last id of the last ended stream.
 */
function untilTheEnd(srv, ids) {
  return waitFor(ids, (got) => {
    if (srv.ended < ENDS) return false;
    const lastEnded = srv.streams.filter((s) => s.end === "server").at(-1).ids.at(-1);
    return got.filter((id) => id > lastEnded).length >= AFTER;
  }, 20_000, `${ENDS} server ends and ${AFTER} messages after them`,
  (got) => `ended ${srv.ended}; app got ${got.length} ids, last ${got.at(-1)}\n  ${streamLog(srv)}`);
}

/**
 * 0 lost, 0 duplicated: `ids` is exactly the ids the server published from
 * the first delivered to the last delivered, once each, in order.
 */
function assertNoLoss(ids, srv, what) {
  assert.ok(ids.length > 0, `${what}: the app got nothing`);
  const first = ids[0], last = Math.max(...ids);
  const published = srv.history.filter((id) => id >= first && id <= last);
  const got = new Set(ids);
  const lost = published.filter((id) => !got.has(id));
  const duplicated = ids.filter((id, i) => ids.indexOf(id) !== i);
  assert.equal(`lost [${ranges(lost)}], duplicated [${ranges(duplicated)}]`, "lost [], duplicated []",
    `${what}: ids ${first}..${last}\n  ${streamLog(srv)}`);
  assert.deepEqual(ids, published, `${what}: in order`);
}

/** Sorted integers as runs: [3, 4, 5, 9] → "3..5 9". */
function ranges(xs) {
  const out = [];
  for (const x of [...xs].sort((a, b) => a - b)) {
    const run = out.at(-1);
    if (run && x === run[1] + 1) run[1] = x;
    else out.push([x, x]);
  }
  return out.map(([a, b]) => (a === b ? `${a}` : `${a}..${b}`)).join(" ");
}

/** The events of `name` other than messages and state changes, briefly. */
async function signals(page, name) {
  return (await h.events(page, name)).filter((e) => ["error", "reset", "transportchange"].includes(e.type)).map(h.brief);
}

/** The transportchange / reset / error events of `name`, asserted: no reset, no error. */
async function assertQuiet(page, name, what) {
  const got = await signals(page, name);
  assert.deepEqual(got.filter((s) => !s.startsWith("transportchange")), [], `${what}: ${got.join("; ")}`);
  return got;
}

const options = (extra = {}) => ({ backoff: BACKOFF, ...extra });
// `subscribe` resolves a relative URL against the page: same-origin.
const URL_ = "/sse";

for (const reads of ["header", "query"]) {
  test(`${reads} server, default transports, the stream ended ${ENDS} times: 0 lost, 0 duplicated, no duplicate dropped`, { timeout: T }, async () => {
    const srv = await startTextbook(reads);
    const page = await h.blankPage(browser, srv.url);
    try {
      await open(page, "a", URL_, options());
      await untilTheEnd(srv, () => recorded(page, ["a"]));
      await h.closeSub(page, "a");
      const sig = await assertQuiet(page, "a", reads);
      assertNoLoss(await recorded(page, ["a"]), srv, `${reads} server (${sig.join("; ") || "no transportchange"})`);
      assertCursorEachTime(srv, reads);
      if (reads === "header") assert.deepEqual(sig, BY_HEADER);
      assert.equal(srv.ended, ENDS);
      assert.equal((await h.stats(page, "a")).duplicatesDropped, 0);
      assert.deepEqual(page.errors, []);
    } finally {
      await page.closeAll();
      await srv.stop();
    }
  });

  test(`${reads} server, crossTab: the leader tab closes mid-stream, the follower goes on: 0 lost, 0 duplicated on the follower`, { timeout: T }, async () => {
    const srv = await startTextbook(reads);
    const context = await browser.newContext();
    const leader = await h.blankPage(browser, srv.url, { context });
    const follower = await h.blankPage(browser, srv.url, { context });
    try {
      const opts = options({ crossTab: true });
      await open(leader, "a", URL_, opts);
      await h.waitEvents(leader, "a", (l) => l.some((e) => e.type === "open"), 10_000, "the leader's open");
      await open(follower, "b", URL_, opts);
      const { before, stream } = await midStreamAfter(srv, 4, () => recorded(follower, ["b"]));
      assert.ok(before.length > 0, "the follower got relayed messages before the hand-over");
      await leader.close();
      await release(srv, stream);
      await untilTheEnd(srv, () => recorded(follower, ["b"]));
      await h.closeSub(follower, "b");
      const sig = await assertQuiet(follower, "b", `${reads} follower`);
      assertNoLoss(await recorded(follower, ["b"]), srv,
        `${reads} server, follower (the leader closed during stream #${stream.n}; ${sig.join("; ") || "no transportchange"})`);
      assert.equal(stream.end, "client", `the leader closed mid-stream\n  ${streamLog(srv)}`);
      assertCursorEachTime(srv, `${reads} follower`);
      // The leader's changes (relayed; a follower that joins after the
      // leader's first change hears the current transport only, as a
      // newcomer does), then the follower's own from its start.
      if (reads === "header") {
        const relayed = [BY_HEADER, BY_HEADER.slice(1)].map((r) => [...r, ...BY_HEADER]);
        assert.ok(relayed.some((r) => JSON.stringify(r) === JSON.stringify(sig)), `transportchanges: ${sig.join("; ")}`);
      }
      assert.equal(srv.ended, ENDS);
      assert.equal((await h.stats(follower, "b")).duplicatesDropped, 0);
      assert.deepEqual(follower.errors, []);
    } finally {
      await context.close();
      await srv.stop();
    }
  });

  test(`${reads} server, persist "local": a reload mid-stream, 0 lost, 0 duplicated across it`, { timeout: T }, async () => {
    const srv = await startTextbook(reads);
    const page = await h.blankPage(browser, srv.url);
    try {
      const opts = options({ persist: "local" });
      await open(page, "a", URL_, opts);
      const { before, stream } = await midStreamAfter(srv, 4, () => recorded(page, ["a"]));
      assert.ok(before.length > 0, "messages before the reload");
      await page.reload();
      await release(srv, stream);
      await h.loadPackage(page);
      await open(page, "b", URL_, opts);
      await untilTheEnd(srv, () => recorded(page, ["a", "b"]));
      await h.closeSub(page, "b");
      const sig = await assertQuiet(page, "b", `${reads} after the reload`);
      const a = await recorded(page, ["a"]);
      assertNoLoss(await recorded(page, ["a", "b"]), srv,
        `${reads} server, across the reload (during stream #${stream.n}, the last id before it ${a.at(-1)}; ${sig.join("; ") || "no transportchange"})`);
      assert.equal(stream.end, "client", `the reload came mid-stream\n  ${streamLog(srv)}`);
      assertCursorEachTime(srv, `${reads} after the reload`);
      if (reads === "header") assert.deepEqual(sig, BY_HEADER);
      assert.equal(srv.ended, ENDS);
      assert.equal((await h.stats(page, "b")).duplicatesDropped, 0);
      assert.deepEqual(page.errors, []);
    } finally {
      await page.closeAll();
      await srv.stop();
    }
  });
}

/**
 * The header server went on from "now" at every resume of `name`: the ids
 * jump (the loss no query-only carrier can avoid), and each jump is told: a
 * `reset` of reason `gap` after the last id before it and before the message
 * after the first id past it; no other reset.
 */
async function assertGapsAnnounced(page, name, srv) {
  const log = (await h.events(page, name)).filter((e) => e.type === "message" || e.type === "reset");
  const shown = () => log.map((e) => (e.type === "message" ? e.id : `reset(${e.reason})`)).join(" ");
  const msgs = log.filter((e) => e.type === "message");
  const jumps = [];
  for (let i = 1; i < msgs.length; i++) if (Number(msgs[i].id) !== Number(msgs[i - 1].id) + 1) jumps.push(i);
  assert.ok(jumps.length >= 1, `the server skipped events at a resume: ${shown()}\n  ${streamLog(srv)}`);
  const unannounced = jumps.filter((i) => {
    const from = log.indexOf(msgs[i - 1]);
    const to = i + 1 < msgs.length ? log.indexOf(msgs[i + 1]) : log.length;
    return !log.slice(from + 1, to).some((e) => e.type === "reset" && e.reason === "gap");
  }).map((i) => `${msgs[i - 1].id}→${msgs[i].id}`);
  assert.deepEqual(unannounced, [], `jumps without a reset "gap": ${shown()}\n  ${streamLog(srv)}`);
  const resets = log.filter((e) => e.type === "reset").map((e) => e.reason);
  assert.deepEqual(resets, jumps.map(() => "gap"), `one reset "gap" per jump: ${shown()}`);
}

test(`header server, transports ["eventsource"] (no header carrier): each jump of the ids comes with a reset of reason "gap"`, { timeout: T }, async () => {
  const srv = await startTextbook("header");
  const page = await h.blankPage(browser, srv.url);
  try {
    await open(page, "a", URL_, options({ transports: ["eventsource"] }));
    await untilTheEnd(srv, () => recorded(page, ["a"]));
    await h.closeSub(page, "a");
    await assertGapsAnnounced(page, "a", srv);
    assert.equal(srv.ended, ENDS);
  } finally {
    await page.closeAll();
    await srv.stop();
  }
});

// Cross-origin (the page on 127.0.0.1, the stream on localhost, the server
// allowing any origin the simple way, no preflight answered): a header would
// force a CORS preflight, so the cursor stays in the query, and the loss is told.
test(`header server cross-origin, default transports: no preflight, each jump of the ids comes with a reset of reason "gap"`, { timeout: T }, async () => {
  const srv = await startTextbook("header");
  const page = await h.blankPage(browser, srv.url);
  try {
    await open(page, "a", srv.url.replace("127.0.0.1", "localhost") + URL_, options());
    await untilTheEnd(srv, () => recorded(page, ["a"]));
    await h.closeSub(page, "a");
    await assertGapsAnnounced(page, "a", srv);
    assert.equal(srv.preflights, 0);
    assert.equal(srv.ended, ENDS);
  } finally {
    await page.closeAll();
    await srv.stop();
  }
});
