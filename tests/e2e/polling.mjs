// Helpers for the Playwright tests of the request transports (`long-poll`,
// `poll`): a page on one of two reference servers (same-origin: the page and
// the endpoints on one server; cross-origin: the page on a second server), a
// subscription whose every event is recorded in the page, and the reference
// server's test endpoints (/_faults, /_restart, /_log).
import assert from "node:assert/strict";
import { ENGINE, startServer, launchBrowser } from "./harness.mjs";

/**
 * The API server (endpoints, publish, faults, log) and a second server that
 * only serves pages. `origins` are the two setups every test runs in.
 */
export async function setup(args = []) {
  const api = await startServer(["--quiet", ...args]);
  const other = await startServer(["--quiet"]);
  const browser = await launchBrowser();
  const origins = [
    { name: "same-origin", cross: false, page: api.url, base: "" },
    { name: "cross-origin", cross: true, page: other.url, base: api.url },
  ];
  return {
    api,
    browser,
    origins,
    /** Pages kept for the whole file, one per origin and kind (see openPage). */
    pages: new Map(),
    /** Close every subscription a test left open (a failed test must not leave a poller behind). */
    async closePages() {
      for (const p of this.pages.values()) await p.done();
    },
    async close() {
      for (const p of this.pages.values()) await p.context().close();
      this.pages.clear();
      await browser.close();
      await other.stop();
      await api.stop();
    },
  };
}

/**
 * Headless Chromium on loopback reports `navigator.connection.rtt` = 100 (an
 * estimate: effectiveType "4g", nothing measured), which puts the engine's
 * poll interval in the ×3 network tier until a fast request of its own is
 * measured. The tests of exact intervals pin the
 * report to a fast network the way DevTools throttling does (CDP
 * Network.emulateNetworkConditions, 1 ms latency → rtt 0), so the configured
 * interval applies as configured. `realNetworkInfo` keeps the browser's own.
 * Firefox has no `navigator.connection` (nor CDP): nothing to pin there.
 */
export async function pinFastNetwork(page) {
  if (ENGINE !== "chromium") return;
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.emulateNetworkConditions", {
    offline: false, latency: 1, downloadThroughput: -1, uploadThroughput: -1, connectionType: "ethernet",
  });
}

/**
 * A page on `origin` with the package loaded as `window.tidings`; its own
 * browser context, kept for the whole file (one per origin, path and network
 * setting) because a page costs a second or more on a busy machine.
 * `page.done()` closes its subscriptions and clears what it recorded. The page
 * is `path`, by default the package's README (/pkg/README.md): not the demo,
 * which subscribes by itself and would add its own requests to the log.
 */
export async function openPage(env, origin, { realNetworkInfo = false, path = "/pkg/README.md" } = {}) {
  const key = `${origin}${path} ${realNetworkInfo}`;
  const kept = env.pages.get(key);
  if (kept) {
    await kept.done();
    return kept;
  }
  const context = await env.browser.newContext();
  const page = await context.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(e.message));
  if (!realNetworkInfo) await pinFastNetwork(page);
  await page.goto(origin + path);
  await page.evaluate(async (realNetworkInfo) => {
    const info = navigator.connection;
    if (!realNetworkInfo && info && info.rtt !== 0) throw new Error("network info not pinned");
    // A 20 ms probe timer: how late the browser runs timers (the page's
    // share of a busy machine), kept for the last minute.
    window.lateness = [];
    let due = performance.now() + 20;
    const probe = () => {
      const now = performance.now();
      window.lateness.push([now, now - due]);
      if (window.lateness.length > 3000) window.lateness.shift();
      due = now + 20;
      setTimeout(probe, 20);
    };
    setTimeout(probe, 20);
    // Every fetch the page starts, with its start time on the page clock
    // (tidings calls the global fetch; the wrapper only records).
    const realFetch = window.fetch;
    window.fetchLog = [];
    window.fetch = function (input, init) {
      window.fetchLog.push({ t: performance.now(), url: String(input) });
      return realFetch.call(this, input, init);
    };
    const m = await import("/pkg/tidings.js");
    await m.default();
    window.tidings = m;
    window.subs = {};
  }, realNetworkInfo);
  page.done = async () => {
    page.errors.length = 0;
    await page.evaluate(() => {
      for (const s of Object.values(window.subs)) {
        clearInterval(s.sampler);
        s.sub.close();
      }
      window.subs = {};
      window.fetchLog.length = 0;
    });
  };
  env.pages.set(key, page);
  return page;
}

/**
 * `subscribe(url, options)` in the page as `window.subs[name]`; its events are
 * recorded in `window.subs[name].rec` as plain objects with `t`
 * (performance.now()).
 */
export async function subscribe(page, name, url, options) {
  await page.evaluate(({ name, url, options }) => {
    const sub = window.tidings.subscribe(url, options);
    const rec = [];
    const keep = (e) => {
      const o = { type: e.type, t: performance.now() };
      for (const k of ["id", "lastEventId", "event", "data", "transport", "code", "status",
        "retryInMs", "fatal", "state", "reason", "delayMs", "previous"]) {
        if (e[k] !== undefined) o[k] = e[k];
      }
      rec.push(o);
    };
    for (const type of ["message", "open", "error", "statechange", "transportchange", "reset"]) {
      sub.addEventListener(type, keep);
    }
    // Every distinct stats().currentIntervalMs, from the start (changes are
    // at least minMs apart; sampled every 10 ms).
    const intervals = [sub.stats().currentIntervalMs];
    const sampler = setInterval(() => {
      const v = sub.stats().currentIntervalMs;
      if (v !== intervals.at(-1)) intervals.push(v);
    }, 10);
    window.subs[name] = { sub, rec, intervals, sampler, t0: performance.now() };
  }, { name, url, options });
}

/** The recorded events of subscription `name`, optionally of one type. */
export async function events(page, name, type) {
  const rec = await page.evaluate((name) => window.subs[name].rec, name);
  return type ? rec.filter((e) => e.type === type) : rec;
}

/** `stats()` of subscription `name`. */
export function stats(page, name) {
  return page.evaluate((name) => window.subs[name].sub.stats(), name);
}

/**
 * `stats()` of subscription `name` taken in the page the moment `stats()[key]`
 * reaches `n` (checked every 2 ms): a snapshot that belongs to the
 * answer that moved the counter, before any later request can start.
 */
export function statsWhen(page, name, key, n, timeout = 5000) {
  return page.evaluate(({ name, key, n, timeout }) => new Promise((resolve, reject) => {
    const { sub } = window.subs[name];
    const t0 = performance.now();
    const check = setInterval(() => {
      const s = sub.stats();
      if (s[key] >= n) {
        clearInterval(check);
        resolve(s);
      } else if (performance.now() - t0 > timeout) {
        clearInterval(check);
        reject(new Error(`${name}: stats().${key} stayed below ${n}: ${JSON.stringify(s)}`));
      }
    }, 2);
  }), { name, key, n, timeout });
}

/** Close subscription `name`. */
export function close(page, name) {
  return page.evaluate((name) => {
    clearInterval(window.subs[name].sampler);
    window.subs[name].sub.close();
  }, name);
}

/** Every distinct `stats().currentIntervalMs` of subscription `name`, in order. */
export function intervals(page, name) {
  return page.evaluate((name) => window.subs[name].intervals, name);
}

/** Start times (page clock, ms) of the page's fetches whose URL contains `part`. */
export async function fetchStarts(page, part) {
  const log = await page.evaluate(() => window.fetchLog);
  return log.filter((f) => f.url.includes(part)).map((f) => f.t);
}

/** Wait until subscription `name` has recorded `n` events of `type`. */
export async function waitForEvents(page, name, type, n, timeout = 5000) {
  try {
    await page.waitForFunction(({ name, type, n }) =>
      window.subs[name].rec.filter((e) => e.type === type).length >= n,
    { name, type, n }, { timeout, polling: 20 });
  } catch (e) {
    const got = await events(page, name);
    throw new Error(`${name}: wanted ${n} ${type} events within ${timeout} ms; recorded ${JSON.stringify(got)}`);
  }
  return events(page, name, type);
}

/** Resolve after `ms`. */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Queue fault rules (one or an array) on the reference server. */
export async function fault(server, rules) {
  const r = await fetch(`${server.url}/_faults`, { method: "POST", body: JSON.stringify(rules) });
  const text = await r.text();
  assert.equal(r.status, 200, text);
  return JSON.parse(text);
}

/** Clear fault rules and the request log. */
export async function reset(server) {
  await fetch(`${server.url}/_faults`, { method: "DELETE" });
  await fetch(`${server.url}/_log/clear`, { method: "POST" });
}

/** POST /_restart with `body` ({ ms, mode, lose_state }). */
export async function restart(server, body) {
  const r = await fetch(`${server.url}/_restart`, { method: "POST", body: JSON.stringify(body) });
  assert.equal(r.status, 200);
  return r.json();
}

/**
 * GET /_log. Retried once: /_restart drops every connection but its caller's,
 * including the idle keep-alive one the next read would reuse.
 */
export async function readLog(server) {
  try {
    return await server.log();
  } catch {
    return server.log();
  }
}

/** The GET entries of `path` in the server's request log, oldest first. */
export async function gets(server, path) {
  const { entries } = await readLog(server);
  return entries.filter((e) => e.method === "GET" && e.path === path).sort((a, b) => a.req - b.req);
}

/**
 * Whether the engine keeps a CORS preflight (Access-Control-Max-Age) for the
 * conditional `cache: "no-store"` requests of a poll: WebKit does, so one
 * preflight can serve several requests; Chromium and Firefox send one before
 * each (docs/engines.md).
 */
export const PREFLIGHT_CACHE = ENGINE === "webkit";

/** The OPTIONS (preflight) entries of `path`. */
export async function preflights(server, path) {
  const { entries } = await readLog(server);
  return entries.filter((e) => e.method === "OPTIONS" && e.path === path);
}

/** A query parameter of a log entry (decoded), or undefined. */
export function queryParam(entry, name) {
  if (!entry.query) return undefined;
  return new URLSearchParams(entry.query).get(name) ?? undefined;
}

/**
 * The cursor a request carried: the `Last-Event-ID` header same-origin, the
 * `lastEventId` query parameter cross-origin (where the header would force a
 * preflight) and for a cursor that is not visible ASCII (U+2026: the header
 * would be mangled). Asserts it travelled only where it should.
 */
export function cursorOf(entry, cross) {
  const query = queryParam(entry, "lastEventId");
  if (cross || (query !== undefined && !/^[!-~]*$/.test(query))) {
    assert.equal(entry.headers["last-event-id"], undefined, `req ${entry.req}: header cross-origin or not visible ASCII`);
    return query;
  }
  assert.equal(queryParam(entry, "lastEventId"), undefined, `req ${entry.req}: query same-origin`);
  return entry.headers["last-event-id"];
}

/** Milliseconds between the arrival of `b` and the end of `a`'s answer. */
export const gapAfter = (a, b) => b.t_ms - a.end_ms;

/**
 * Assert `actual` is within [want - below, want · 1.1 + over + slack] ms:
 * +10 % + `over` (default 100 ms) of timer and loopback slack, plus `slack`,
 * the page's own timer lateness measured meanwhile (see `lateness`: 0–5 ms
 * on an idle machine, hundreds of ms when other builds starve the browser);
 * below, 2 ms of clock rounding (more for page-clock measures that start at a
 * listener). The lower bound is what a loop fails, whatever the upper.
 */
export function assertDelay(actual, want, what, { below = 2, slack = 0, over = 100 } = {}) {
  assert.ok(actual >= want - below && actual <= want * 1.1 + over + slack,
    `${what}: ${actual} ms, want ${want} ms (-${below} / +10 % +${over} ms + ${slack} ms page timer lateness)`);
}

/**
 * The worst lateness (ms, rounded up) of the page's 20 ms probe timer since
 * subscription `name` started: how late the browser ran timers meanwhile.
 */
export function lateness(page, name) {
  return page.evaluate((name) => {
    const since = window.subs[name].t0;
    let worst = 0;
    for (const [t, late] of window.lateness) if (t >= since && late > worst) worst = late;
    return Math.ceil(worst);
  }, name);
}

export { assert };

/** Poll the server's log until `pred(entries of GET path)` holds; returns them. */
export async function waitForLog(server, path, pred, timeout = 5000) {
  const until = Date.now() + timeout;
  for (;;) {
    const entries = await gets(server, path);
    if (pred(entries)) return entries;
    if (Date.now() > until) {
      throw new Error(`log of ${path} never matched: ${JSON.stringify(entries.map(brief))}`);
    }
    await sleep(40);
  }
}

/** A log entry in one line, for failure messages. */
export function brief(e) {
  return { req: e.req, t: e.t_ms, end: e.end_ms, status: e.status, q: e.query, h: e.headers };
}

// ----- the resume cases of the real-world catalogue, as fixtures -------------
// (data copied from the case descriptions; the long-poll and poll tests
// replay them as scripted answers of their endpoint)

/** A scripted event-stream answer of `path` that ends cleanly. */
const script = (path, data, headers = {}) =>
  ({ path, fault: { kind: "script", headers, writes: [{ data }], then: "fin" } });
/** A scripted answer that sends its head and then nothing (ends the case). */
const hang = (path) => ({ path, fault: { kind: "script", writes: [], then: "hang" } });

export const BC07_LAST_MODIFIED = "Sun, 06 Nov 1994 08:49:37 GMT";

/**
 * BC-07: a NUL in an id is ignored, ids persist, an id-only block moves the
 * cursor. First answer `retry: 500` + a, b (NUL id), c, and `id: 200`; second
 * answer d. The answers carry validators (ETag v1 + Last-Modified, then v2).
 */
export function bc07Rules(path) {
  return [
    { path, fault: { kind: "script", headers: { ETag: "\"v1\"", "Last-Modified": BC07_LAST_MODIFIED },
      writes: [{ data: "retry: 500\nid: 123\ndata: a\n\n" }, { data: "id: bad\u0000id\ndata: b\n\n" },
        { data: "data: c\n\n" }, { data: "id: 200\n\n" }], then: "fin" } },
    script(path, "data: d\n\n", { ETag: "\"v2\"" }),
    hang(path),
  ];
}
/** BC-07 expected deliveries: [data, id, lastEventId]. */
export const BC07_MESSAGES = [["a", "123", "123"], ["b", "", "123"], ["c", "", "123"], ["d", "", "200"]];
/** BC-07 expected requests: [cursor, If-None-Match, If-Modified-Since]. */
export const BC07_REQUESTS = [
  [undefined, undefined, undefined], ["200", "\"v1\"", BC07_LAST_MODIFIED], ["200", "\"v2\"", BC07_LAST_MODIFIED],
];
/** BC-07, separate run: `id: x\0` as the very first block sets nothing. */
export const bc07NulFirstRules = (path) => [script(path, "id: x\u0000\ndata: hello\n\n"), hang(path)];

/**
 * BC-08 (client seeded with `s0`): `retry: 200` only; ids 1, 2 (with ETag
 * e2); c without id; d with a bare `id` (clears); e with id U+2026; f.
 */
export function bc08Rules(path) {
  return [
    script(path, "retry: 200\n"),
    script(path, "id: 1\ndata: a\n\nid: 2\ndata: b\n\n", { ETag: "\"e2\"" }),
    script(path, "data: c\n\n"),
    script(path, "id\ndata: d\n\n"),
    script(path, "id: \u2026\ndata: e\n\n"),
    script(path, "data: f\n\n"),
    hang(path),
  ];
}
export const BC08_MESSAGES = [
  ["a", "1", "1"], ["b", "2", "2"], ["c", "", "2"], ["d", "", ""], ["e", "\u2026", "\u2026"], ["f", "", "\u2026"],
];
/** BC-08 expected cursors of requests 1–7 (undefined: none sent). */
export const BC08_CURSORS = ["s0", "s0", "2", "2", undefined, "\u2026", "\u2026"];
/** BC-08 expected If-None-Match of requests 1–7. */
export const BC08_IF_NONE_MATCH = [null, null, "\"e2\"", "\"e2\"", "\"e2\"", "\"e2\"", "\"e2\""];

/**
 * Stop the poller's clock for a count: every later request of `path` is never
 * answered. Resolves with the log once the newest request is left pending, so
 * the client's counters (stats()) can be compared with the log exactly.
 */
export async function freeze(server, path) {
  await fault(server, { path, times: null, fault: { kind: "delay", ms: null } });
  const { entries } = await readLog(server);
  const before = entries.filter((e) => e.path === path && e.method === "GET").length;
  return waitForLog(server, path, (es) => es.length > before && es.at(-1).status === null);
}
