// Page-side helpers for the Playwright tests of the streaming transports and
// of transport selection: a blank page on a server's origin with the package
// loaded, subscriptions whose every event is recorded with both clocks, and
// the server's test endpoints (/_faults, /_restart, /_log).
import assert from "node:assert/strict";

/**
 * A fresh page on `origin` with the package loaded as `window.tidings`. The
 * document is the server's `GET /_faults` JSON (any document of the origin
 * will do; `/_…` requests stay out of the request log). It must come from the
 * real server: Chromium's Local Network Access treats a document fulfilled by
 * Playwright's router as public and blocks its requests to another loopback
 * port. `init` runs in the page before any of its scripts (page.addInitScript).
 */
export async function blankPage(browser, origin, { init, context: ctx } = {}) {
  const context = ctx ?? await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.errors = errors;
  if (init) await page.addInitScript(init);
  await page.goto(`${origin}/_faults`);
  await loadPackage(page);
  page.closeAll = async () => { await context.close(); };
  return page;
}

/** Load the package into the page's current document (again after a reload). */
export async function loadPackage(page) {
  await page.evaluate(async () => {
    const m = await import("/pkg/tidings.js");
    // The instance's exports (`memory` for the BC-16 growth check).
    window.wasm = await m.default();
    window.tidings = m;
    window.subs = {};
  });
}

/**
 * `subscribe(url, options)` in the page as `window.subs[name]`; every event
 * (message, named events, open, error, statechange, transportchange, reset)
 * is recorded as a plain object with `t` (performance.now) and `wall`
 * (Date.now).
 */
export async function subscribe(page, name, url, options = {}, events = []) {
  await page.evaluate(({ name, url, options, events }) => {
    const sub = window.tidings.subscribe(url, options);
    const rec = { sub, log: [] };
    const types = ["message", "open", "error", "statechange", "transportchange", "reset", ...events];
    for (const type of types) {
      sub.addEventListener(type, (e) => {
        const o = { type, t: performance.now(), wall: Date.now() };
        for (const k of ["id", "lastEventId", "event", "data", "transport", "previous", "reason",
          "state", "delayMs", "code", "status", "retryInMs", "fatal"]) {
          if (e[k] !== undefined) o[k] = e[k];
        }
        rec.log.push(o);
      });
    }
    window.subs[name] = rec;
  }, { name, url, options, events });
}

/** The recorded events of `name` (optionally of one type). */
export async function events(page, name, type) {
  const log = await page.evaluate((name) => window.subs[name].log, name);
  return type ? log.filter((e) => e.type === type) : log;
}

/** The message events (message + named) of `name`. */
export async function messages(page, name) {
  const log = await events(page, name);
  return log.filter((e) => !["open", "error", "statechange", "transportchange", "reset"].includes(e.type));
}

/** Wait until `fn(log)` is truthy for the events of `name`; returns the log. */
export async function waitEvents(page, name, fn, timeoutMs = 5000, what = "condition") {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const log = await events(page, name);
    if (fn(log)) return log;
    if (Date.now() > deadline) {
      assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}; events: ${JSON.stringify(log.map(brief))}`);
    }
    await sleep(25);
  }
}

/** Short form of an event for failure messages. */
export function brief(e) {
  const parts = [e.type];
  for (const k of ["state", "reason", "transport", "code", "status", "retryInMs", "id", "data"]) {
    if (e[k] !== undefined) parts.push(`${k}=${typeof e[k] === "string" && e[k].length > 40 ? e[k].slice(0, 40) + "…" : e[k]}`);
  }
  return parts.join(" ");
}

export async function stats(page, name) {
  return page.evaluate((name) => window.subs[name].sub.stats(), name);
}

export async function closeSub(page, name) {
  await page.evaluate((name) => window.subs[name].sub.close(), name);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ----- the server's test endpoints ------------------------------------------

export async function faults(server, rules) {
  const r = await fetch(`${server.url}/_faults`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(rules),
  });
  const body = await r.json();
  assert.equal(r.status, 200, JSON.stringify(body));
  return body;
}

export async function clearFaults(server) {
  await fetch(`${server.url}/_faults`, { method: "DELETE" });
}

export async function restart(server, opts = {}) {
  const r = await fetch(`${server.url}/_restart`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(opts),
  });
  return r.json();
}

export async function clearLog(server) {
  await fetch(`${server.url}/_log/clear`, { method: "POST" });
}

/** The /_log entries of `path` (all paths when omitted), in arrival order. */
export async function requests(server, path) {
  const q = path ? `?path=${encodeURIComponent(path)}` : "";
  const body = await (await fetch(`${server.url}/_log${q}`)).json();
  return body.entries.filter((e) => e.method !== "OPTIONS");
}

/** Wait until the log of `path` satisfies `fn`; returns the entries. */
export async function waitRequests(server, path, fn, timeoutMs = 5000, what = "requests") {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const entries = await requests(server, path);
    if (fn(entries)) return entries;
    if (Date.now() > deadline) {
      assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}; log: ${JSON.stringify(entries.map(logBrief))}`);
    }
    await sleep(25);
  }
}

export function logBrief(e) {
  return `${e.req} ${e.method} ${e.path}${e.query ? "?" + e.query : ""} ${e.status} t=${e.t_ms} head=${e.head_ms} end=${e.end_ms}/${e.end} ev=${e.events}${e.fault ? " fault=" + e.fault.kind : ""}${e.headers?.["last-event-id"] !== undefined ? " lei=" + e.headers["last-event-id"] : ""}`;
}

/**
 * Assert a measured wait: `actual` within [expected − early, expected × 1.1 +
 * 100 ms]. `early` (default 5 ms: the log's whole milliseconds on two clocks)
 * is larger where the server measures from a request's arrival while the
 * client's clock started when it sent the request.
 */
export function assertWait(actual, expected, what, early = 5) {
  const hi = expected * 1.1 + 100;
  assert.ok(actual >= expected - early && actual <= hi,
    `${what}: waited ${actual} ms, the engine's rule says ${expected} ms (allowed ${expected - early}..${Math.round(hi)})`);
}

/**
 * The page's clock (`performance.now()`, the `t` of recorded events) on
 * `server`'s log clock (`t_ms`, ms since the server started): both are
 * monotonic clocks of this machine, so one offset holds for the run. Best of
 * 5 round trips; `err` is half the shortest one (the most the offset is off).
 */
export async function clockOffset(page, server) {
  return page.evaluate(async (url) => {
    let best = { rtt: Infinity, off: 0 };
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const { now_ms } = await (await fetch(`${url}/_log?path=/none`)).json();
      const t1 = performance.now();
      if (t1 - t0 < best.rtt) best = { rtt: t1 - t0, off: now_ms - (t0 + t1) / 2 };
    }
    return { offset: best.off, err: best.rtt / 2 };
  }, server.url);
}

/**
 * The engine's decision and what the server saw of it. The `waiting` state
 * event carries the delay the engine chose (`delayMs`), which must be
 * `expected` (the model's value) exactly. The next request must then reach
 * the server within [expected − 5 ms, expected × 1.1 + 100 ms] of the
 * decision. The decision lies between the failure as the server saw it
 * (`failedAt`: the faulted answer's `head_ms`, or a stream's `end_ms`; the
 * client cannot have known earlier) and the page time of the `waiting` event
 * (moved to the server's clock with `clock` from clockOffset): the lower bound
 * is measured from the first, the upper from the second, so neither a loaded
 * machine's late delivery of the failure nor its late dispatch of the event
 * makes a correct client fail.
 */
export function assertReconnect({ clock, waiting, failedAt, next, expected, what }) {
  assert.ok(waiting, `${what}: no waiting state`);
  assert.equal(waiting.delayMs, expected, `${what}: the engine chose ${waiting.delayMs} ms, the rule says ${expected} ms`);
  assert.ok(next, `${what}: no next request`);
  const early = next.t_ms - failedAt;
  const late = Math.round(next.t_ms - (waiting.t + clock.offset) - clock.err);
  const hi = expected * 1.1 + 100;
  assert.ok(early >= expected - 5 && late <= hi,
    `${what}: the next request came ${early} ms after the failure and ${late} ms after the decision; ` +
    `the engine's rule says ${expected} ms (allowed ${expected - 5}..${Math.round(hi)}); next: ${logBrief(next)}`);
}
