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

/**
 * A page on `origin` whose `window.t` is the package entry (/pkg/index.js, as
 * an app loads it: the async iterator, report(), send()), initialised, with
 * the wasm exports as `window.w`; `p.errors` collects uncaught page errors.
 * `context`: open it there (default: a context of its own, browser.newPage).
 * `setup` runs in the page after that (page.evaluate), for a test file's own
 * page-side helpers. The document is `GET /_faults`, as in blankPage.
 */
export async function entryPage(browser, origin, { context, setup } = {}) {
  const p = await (context ?? browser).newPage();
  p.errors = [];
  p.on("pageerror", (e) => p.errors.push(e.message));
  await p.goto(`${origin}/_faults`);
  await p.evaluate(async () => {
    window.t = await import("/pkg/index.js");
    window.w = await window.t.default();
  });
  if (setup) await p.evaluate(setup);
  return p;
}

/**
 * An init script (blankPage's `init`, page.addInitScript): the names of the
 * BroadcastChannels the page opens, in `window.channelNames`. A test that
 * posts on tidings' channel as another script of the origin would learns
 * its name here: it is a hash of the options (tidings_core::keys).
 */
export function recordChannels() {
  window.channelNames = [];
  const BC = window.BroadcastChannel;
  window.BroadcastChannel = class extends BC {
    constructor(name) { super(name); window.channelNames.push(String(name)); }
  };
}

/** Load the package into the page's current document (again after a reload). */
export async function loadPackage(page) {
  await page.evaluate(async () => {
    const m = await import("/pkg/tidings.js");
    // The instance's exports (`memory` for the BC-16 growth check).
    window.wasm = await m.default();
    window.tidings = m;
    window.subs = {};
    // A canary: a 10 ms timer chain recording how late each firing is
    // ([due, fired], page time). A loaded machine delays every timer of the
    // page, the engine's included; timing assertions allow for the stall the
    // canary saw over the same interval (pageStall).
    window.lag = [];
    const tick = () => {
      const due = performance.now() + 10;
      setTimeout(() => {
        window.lag.push([due, performance.now()]);
        if (window.lag.length > 30000) window.lag.splice(0, 15000);
        tick();
      }, 10);
    };
    tick();
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
    const t0 = performance.now();
    const sub = window.tidings.subscribe(url, options);
    // `start`: the moment of subscribe(), the first attempt's start.
    const rec = { sub, log: [], start: { type: "subscribe", t: t0 } };
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

/**
 * Each attempt's start in a recorded `log`: its `statechange` to `connecting`,
 * given the `transport` of the `transportchange` before it (the same objects).
 * For engines that give a held stream no `open` (Firefox), where a deadline
 * runs from the request.
 */
export function attemptStarts(log) {
  let transport;
  const starts = [];
  for (const e of log) {
    if (e.type === "transportchange") transport = e.transport;
    if (e.type === "statechange" && e.state === "connecting") starts.push(Object.assign(e, { transport }));
  }
  return starts;
}

/** Wait until `fn(log)` is truthy for the events of `name`; returns the log. */
export function waitEvents(page, name, fn, timeoutMs = 5000, what = "condition") {
  return pollUntil(() => events(page, name), fn, timeoutMs, what, (log) => `events: ${JSON.stringify(log.map(brief))}`);
}

/**
 * Until `fn(arg)`, run in the page, gives a truthy value (resolved to); fails
 * after `timeoutMs` naming `what`. page.waitForFunction for any `page` with
 * `evaluate(fn, arg)`: a Playwright page or a tests/engines driver.
 */
export function waitPage(page, fn, arg, timeoutMs = 5000, what = "condition") {
  return pollUntil(() => page.evaluate(fn, arg), (v) => v, timeoutMs, what, (v) => `last: ${JSON.stringify(v)}`);
}

/**
 * `read()` every 25 ms until `fn` accepts what it gave (returned); fails after
 * `timeoutMs` saying `what` it waited for and `show` of the last reading.
 */
async function pollUntil(read, fn, timeoutMs, what, show) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await read();
    if (fn(got)) return got;
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}; ${show(got)}`);
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
export function waitRequests(server, path, fn, timeoutMs = 5000, what = "requests") {
  return pollUntil(() => requests(server, path), fn, timeoutMs, what, (entries) => `log: ${JSON.stringify(entries.map(logBrief))}`);
}

export function logBrief(e) {
  return `${e.req} ${e.method} ${e.path}${e.query ? "?" + e.query : ""} ${e.status} t=${e.t_ms} head=${e.head_ms} end=${e.end_ms}/${e.end} ev=${e.events}${e.fault ? " fault=" + e.fault.kind : ""}${e.headers?.["last-event-id"] !== undefined ? " lei=" + e.headers["last-event-id"] : ""}`;
}

/**
 * Assert a measured wait: `actual` within [expected − early, expected × 1.1 +
 * 100 ms + stall]. `early` (default 5 ms: the log's whole milliseconds on two
 * clocks) is larger where the server measures from a request's arrival while
 * the client's clock started when it sent the request. `stall` (default 0) is
 * how long the page's own timers were held up over the interval (pageStall):
 * the engine cannot act before the browser runs it.
 */
export function assertWait(actual, expected, what, early = 5, stall = 0) {
  const hi = expected * 1.1 + 100 + stall;
  assert.ok(actual >= expected - early && actual <= hi,
    `${what}: waited ${actual} ms, the engine's rule says ${expected} ms (allowed ${expected - early}..${Math.round(hi)}` +
    `${stall ? `, of which ${Math.round(stall)} ms the page's timers were held up` : ""})`);
}

/**
 * assertWait between two recorded events of the page (`t`, page time): the
 * engine's own decisions, free of network and server latency. `early`
 * defaults to 30 ms: a listener runs a few ms after the engine's decision
 * when other listeners of the same turn go first, so the `from` event can be
 * recorded late.
 */
export async function assertBetween(page, from, to, expected, what, early = 30) {
  assert.ok(from && to, `${what}: missing event`);
  const stall = await pageStall(page, { offset: 0 }, from.t, to.t);
  assertWait(Math.round(to.t - from.t), expected, what, early, stall);
}

/**
 * The longest any canary timer of the page fired late during the interval
 * [from, to] of the server's clock (ms; `clock` from clockOffset), plus the
 * next 50 ms. 0 on an idle machine; hundreds of ms when the machine is
 * overloaded and the renderer is not scheduled.
 */
export async function pageStall(page, clock, from, to) {
  const a = from - clock.offset, b = to - clock.offset + 50;
  return page.evaluate(([a, b]) => {
    let worst = 0;
    for (const [due, fired] of window.lag) {
      if (fired >= a && due <= b) worst = Math.max(worst, fired - due);
    }
    return worst;
  }, [a, b]);
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
 * The engine's decision and what the server saw of it.
 * - The `waiting` state event carries the delay the engine chose (`delayMs`):
 *   it must be `expected` (the model's value) exactly.
 * - The engine acts on it: the next `connecting` state event (the timer fired
 *   and the request was issued) comes within [expected − 30 ms, expected ×
 *   1.1 + 100 ms] of the decision, on the page's clock, plus however long the
 *   page's own timers were held up meanwhile (pageStall: a loaded machine
 *   delays every timer; the engine cannot act before the browser runs it).
 * - The server's log agrees: the next request arrived no earlier than
 *   `expected` after the failure as the server saw it (`failedAt`: the
 *   faulted answer's `head_ms`, a stream's `end_ms`; the client cannot have
 *   known earlier), and it is the request the engine issued then: it arrived
 *   after it was issued and within 1.5 s of it (on an idle machine within a
 *   few ms; an overloaded one holds a request up in the browser's network
 *   process for hundreds, which is not the engine's delay; the figure is in
 *   the message).
 */
export async function assertReconnect(page, { clock, log, waiting, failedAt, next, expected, what }) {
  assert.ok(waiting, `${what}: no waiting state`);
  assert.equal(waiting.delayMs, expected, `${what}: the engine chose ${waiting.delayMs} ms, the rule says ${expected} ms`);
  const connecting = log.slice(log.indexOf(waiting) + 1).find((e) => e.type === "statechange" && e.state === "connecting");
  assert.ok(connecting, `${what}: no connecting state after the wait`);
  assert.ok(next, `${what}: no next request`);
  const acted = Math.round(connecting.t - waiting.t);
  const stall = await pageStall(page, { offset: 0 }, waiting.t, connecting.t);
  const early = next.t_ms - failedAt;
  const dispatch = Math.round(next.t_ms - (connecting.t + clock.offset));
  const hi = expected * 1.1 + 100 + stall;
  const msg = `${what}: the engine acted ${acted} ms after its decision, the next request reached the server ` +
    `${early} ms after the failure and ${dispatch} ms after it was issued; the engine's rule says ${expected} ms ` +
    `(allowed ${expected - 5}..${Math.round(hi)}${stall ? `, of which ${Math.round(stall)} ms the page's timers were held up` : ""}); ` +
    `next: ${logBrief(next)}`;
  // (The lower side of `acted` is loose: the `waiting` listener runs a few
  // ms after the engine's decision when other listeners of the same turn go
  // first; the server-side bound below is the strict one.)
  assert.ok(acted >= expected - 30 && acted <= hi, msg);
  assert.ok(early >= expected - 5, msg);
  assert.ok(dispatch >= -Math.ceil(clock.err) - 5 && dispatch <= 1500, msg);
}

/** Record every `[tidings]` console.debug line of `page` (the `debug` option) into `logs`, as
 * `{ what, ...details }`. A slot is taken in console order and filled when its arguments are read
 * (asynchronously: handlers of later lines may finish first); own properties are copied, so an
 * Error (the `error` event object) keeps its fields. */
export function recordDebugLog(page, logs) {
  page.on("console", async (m) => {
    if (m.type() !== "debug" || !m.text().startsWith("[tidings]")) return;
    const slot = {};
    logs.push(slot);
    try {
      const args = await Promise.all(m.args().map((a) =>
        a.evaluate((o) => (o && typeof o === "object" ? { ...o } : o))));
      Object.assign(slot, { what: args[1], ...args[2] });
    } catch {
      slot.what = "(page closed)"; // the page went away while the line was read
    }
  });
}
