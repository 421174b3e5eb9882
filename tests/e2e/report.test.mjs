// report() (docs/upstream.md) in headless Chromium against the reference server's
// POST /send (an idempotency store: key → first answer, replayed) and its
// faults. The package entry (/pkg/index.js) is loaded, as an app would.
//
// Every report goes to `/send?close=1&r=<tag>`: a fresh connection per
// request, so a dropped response is a network error in the page (Chromium
// re-sends a POST by itself on a reused keep-alive connection closed before
// any byte; server/README.md, drop-response), and the tag picks this test's
// requests out of the log.
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import { entryPage, faults, clearFaults, clearLog, restart, requests, sleep } from "./tidings-page.mjs";

const PAGES = new URL("./pages/", import.meta.url).pathname;
let server, browser;
before(async () => {
  server = await startServer(["--www", PAGES]);
  browser = await launchBrowser();
});
after(async () => { await browser?.close(); await server?.stop(); });
// A failed test must not leave its reporters running into the next one.
const contexts = [];
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.close().catch(() => {})));
  await clearFaults(server);
});

/**
 * A fresh context and page on the server's origin with `window.t` = the
 * package, `document.hidden` under the test's control (`window.hide(bool)`
 * dispatches `visibilitychange`), and `window.start(name, url, options)`:
 * a reporter whose task gives `<name>-1`, `<name>-2`, … and records its
 * events and calls in `window.r[name]`.
 */
async function page() {
  const context = await browser.newContext();
  contexts.push(context);
  const p = await entryPage(browser, server.url, { context, setup: () => {
    let hidden = false;
    Object.defineProperty(document, "visibilityState", { configurable: true, get: () => (hidden ? "hidden" : "visible") });
    Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
    window.hide = (h) => { hidden = h; document.dispatchEvent(new Event("visibilitychange")); };
    window.r = {};
    window.start = (name, url, options, give = (n) => `${name}-${n}`) => {
      const s = (window.r[name] = { calls: [], states: [], errors: [] });
      s.reporter = window.t.report(url, () => { s.calls.push(performance.now()); return give(s.calls.length); }, options);
      s.reporter.addEventListener("statechange", (e) => s.states.push({ state: e.state, reason: e.reason, delayMs: e.delayMs }));
      s.reporter.addEventListener("error", (e) => s.errors.push({ code: e.code, status: e.status, retryInMs: e.retryInMs, fatal: e.fatal, message: e.message }));
    };
    window.view = (name) => {
      const s = window.r[name];
      return { calls: s.calls.length, states: s.states, errors: s.errors, stats: s.reporter.stats(), state: s.reporter.state };
    };
  } });
  return p;
}

/**
 * `f()` again after a network error: `/_restart` cuts this process's idle
 * keep-alive connections too, and a request sent on one before the close is
 * noticed fails without reaching the server.
 */
async function retrying(f) {
  for (let i = 0; ; i++) {
    try { return await f(); } catch (e) {
      if (i >= 3 || !(e instanceof TypeError)) throw e;
      await sleep(50);
    }
  }
}

const tag = () => `t${Date.now()}${Math.floor(Math.random() * 1e6)}`;
const url = (t) => `/send?close=1&r=${t}`;
/** The applied list of the server's idempotency store (all tests). */
const applied = () => retrying(async () => (await (await fetch(`${server.url}/_send`)).json()).applied);
/** This tag's applied bodies, in apply order. */
const appliedOf = async (t) => (await applied()).filter((a) => a.body.startsWith(t));
/** This tag's /send requests in the server's log. */
const requestsOf = async (t) => (await retrying(() => requests(server, "/send"))).filter((e) => (e.query || "").includes(`r=${t}`));

async function until(f, what, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${typeof what === "function" ? what() : what}`);
    await sleep(25);
  }
}

test("startup spread: 10 reporters on 2 pages started together send their first reports spread over the startup window, not in the same instant", async () => {
  await clearLog(server);
  const t = tag();
  const pages = [await page(), await page()];
  // interval 4 s → the first report U[0, 4 s] after start (window ± 2 s).
  const options = { interval: { initialMs: 4000 } };
  await Promise.all(pages.map((p, i) => p.evaluate(({ t, i, options }) => {
    for (let k = 0; k < 5; k++) window.start(`${t}-p${i}r${k}`, `/send?close=1&r=${t}`, options);
  }, { t, i, options: { ...options, interval: { ...options.interval } } })));
  const started = Date.now();
  const firsts = await until(async () => {
    const a = await appliedOf(t);
    const names = new Set(a.map((x) => x.body.replace(/-\d+$/, "")));
    return names.size === 10 ? a : null;
  }, "a first report from each of the 10 reporters", 15_000);
  for (const p of pages) await p.evaluate(() => Object.values(window.r).forEach((s) => s.reporter.stop()));
  const byName = new Map();
  for (const x of firsts) {
    const name = x.body.replace(/-\d+$/, "");
    if (!byName.has(name)) byName.set(name, x.t_ms);
  }
  const times = [...byName.values()].sort((a, b) => a - b);
  const spread = times[times.length - 1] - times[0];
  // Uniform over 4 s, 10 draws: the expected range is 3.3 s; below 1 s has
  // a probability of 10 × 0.25^9 ≈ 4e-5. In step (no jitter) it is ~0.
  assert.ok(spread >= 1000, `first reports spread over ${spread} ms: ${times.map((x) => x - times[0])}`);
  assert.ok(times.every((x, i) => i === 0 || x - times[i - 1] < 4000), "one window");
  assert.ok(Date.now() - started < 15_000);
  // Each reporter's first report is report 1, sent once.
  for (const [name] of byName) assert.ok(firsts.some((x) => x.body === `${name}-1`), name);
  for (const p of pages) assert.deepEqual(p.errors, []);
});

test("hidden stop: no report is collected nor sent while the page is hidden; the missed one goes right after visible", async () => {
  await clearLog(server);
  const t = tag();
  const p = await page();
  await p.evaluate(({ t, u }) => window.start(t, u, { interval: { initialMs: 300, minMs: 100 }, startupJitterMs: 0 }), { t, u: url(t) });
  await until(async () => (await appliedOf(t)).length >= 2, "two reports while visible");
  await p.evaluate(() => window.hide(true));
  // Paused, and the report in flight (if any) answered.
  let last;
  const hiddenView = await until(async () => {
    const v = last = await p.evaluate((n) => window.view(n), t);
    // Every request answered: delivered, failed transiently (a loaded box
    // can time an attempt out; its retry waits for visible) or for good.
    const answered = v.stats.delivered + v.stats.transientFailures + v.stats.failed;
    return v.state === "paused" && v.stats.requests === answered ? v : null;
  }, () => `paused with nothing in flight (last: ${JSON.stringify({ state: last?.state, stats: last?.stats })})`, 20_000);
  assert.equal(hiddenView.states.at(-1).reason, "hidden");
  const before = (await requestsOf(t)).length;
  // Five intervals hidden: a reporter that ignored hidden would send ~5.
  await sleep(1500);
  const hidden = await p.evaluate((n) => window.view(n), t);
  assert.equal(hidden.calls, hiddenView.calls, "the task is not called while hidden");
  assert.equal(hidden.stats.requests, hiddenView.stats.requests, "no request while hidden");
  assert.equal((await requestsOf(t)).length, before, "the server saw nothing while hidden");
  assert.equal(hidden.state, "paused");
  await p.evaluate(() => window.hide(false));
  await until(async () => (await requestsOf(t)).length > before, "a report after visible", 3000);
  const shown = await p.evaluate((n) => window.view(n), t);
  assert.ok(shown.states.some((s) => s.reason === "visible"), JSON.stringify(shown.states));
  await p.evaluate((n) => window.r[n].reporter.stop(), t);
  assert.deepEqual(p.errors, []);
});

test("supersede (default): after a 503 the next report replaces the pending retry; the server applies the newer body and never the stale one", async () => {
  await clearLog(server);
  const t = tag();
  await faults(server, { path: "/send", times: 1, fault: { kind: "status", status: 503 } });
  const p = await page();
  await p.evaluate(({ t, u }) => window.start(t, u, { interval: { initialMs: 500, minMs: 100 }, startupJitterMs: 0 }), { t, u: url(t) });
  await until(async () => (await appliedOf(t)).length >= 3, "three reports applied");
  await p.evaluate((n) => window.r[n].reporter.stop(), t);
  const v = await p.evaluate((n) => window.view(n), t);
  const a = (await appliedOf(t)).map((x) => x.body);
  assert.ok(!a.includes(`${t}-1`), `the stale report 1 is never applied: ${a}`);
  assert.equal(a[0], `${t}-2`, "the newer body is applied first");
  const nums = a.map((b) => Number(b.slice(t.length + 1)));
  assert.ok(nums.every((n, i) => i === 0 || n > nums[i - 1]), `applied in order, once each: ${nums}`);
  assert.equal(v.stats.superseded, 1, JSON.stringify(v.stats));
  assert.equal(v.stats.retries, 0, "the retry of report 1 was never sent");
  assert.equal(v.errors.length, 1);
  assert.deepEqual([v.errors[0].code, v.errors[0].status, v.errors[0].fatal], ["http-status", 503, false]);
  assert.equal(v.errors[0].message, `unusable HTTP status 503 (${new URL(url(t), p.url()).href})`);
  // One request per report: the 503, then one per applied report (a loop or
  // a retry storm would add more); the one in flight at stop() may be cut.
  const sent = (await requestsOf(t)).length;
  assert.ok(sent >= 1 + a.length && sent <= 2 + a.length, `${sent} requests for ${a.length} applied`);
  assert.deepEqual(p.errors, []);
});

test("keepAll: a dropped response is retried with the same key and applied once (the server replays it); every report arrives once, in order", async () => {
  await clearLog(server);
  const t = tag();
  await faults(server, { path: "/send", times: 1, fault: { kind: "drop-response" } });
  const p = await page();
  // Cut the page's idle keep-alive connections (from loading it), so the
  // first attempt goes on a fresh one and its drop reaches the page instead
  // of being re-sent by Chromium itself (server/README.md, drop-response).
  await restart(server, { ms: 0 });
  await p.evaluate(({ t, u }) => window.start(t, u, {
    interval: { initialMs: 400, minMs: 100 }, startupJitterMs: 0, keepAll: true,
    backoff: { floorMs: 50, baseMs: 100, maxMs: 500 },
  }), { t, u: url(t) });
  await until(async () => (await appliedOf(t)).length >= 3, "three reports applied");
  await p.evaluate((n) => window.r[n].reporter.stop(), t);
  const v = await p.evaluate((n) => window.view(n), t);
  const a = (await appliedOf(t)).map((x) => x.body);
  assert.equal(a[0], `${t}-1`);
  assert.equal(a.filter((b) => b === `${t}-1`).length, 1, `report 1 applied once: ${a}`);
  const nums = a.map((b) => Number(b.slice(t.length + 1)));
  assert.deepEqual(nums, nums.map((_, i) => i + 1), "every report once, in order");
  const log = await requestsOf(t);
  assert.equal(log[0].end, "dropped", JSON.stringify(log[0]));
  const keys = log.slice(0, 2).map((e) => e.headers?.["idempotency-key"]);
  assert.ok(keys[0] && keys[0] === keys[1], `the retry carries report 1's key: ${keys}`);
  assert.ok(v.stats.retries >= 1 && v.stats.retries <= 2, JSON.stringify(v.stats));
  assert.equal(v.errors[0]?.code, "network-or-cors");
  assert.ok(log.length <= a.length + 3, `${log.length} requests for ${a.length} applied`);
  assert.deepEqual(p.errors, []);
});

test("supersede mode, nothing newer to report: the report whose response was dropped is retried with its key at its slot and applied once", async () => {
  await clearLog(server);
  const t = tag();
  await faults(server, { path: "/send", times: 1, fault: { kind: "drop-response" } });
  const p = await page();
  await restart(server, { ms: 0 });
  // The task has a body once, then nothing: the waiting report's retry goes.
  await p.evaluate(({ t, u }) => window.start(t, u, { interval: { initialMs: 400, minMs: 100 }, startupJitterMs: 0 },
    (n) => (n === 1 ? `${t}-1` : undefined)), { t, u: url(t) });
  await until(async () => (await requestsOf(t)).length >= 2 && (await p.evaluate((n) => window.view(n).stats.delivered, t)) === 1,
    "the retry delivered");
  const calls = await p.evaluate((n) => window.view(n).calls, t);
  await until(async () => (await p.evaluate((n) => window.view(n).calls, t)) >= calls + 3, "three more (empty) collections");
  await p.evaluate((n) => window.r[n].reporter.stop(), t);
  const v = await p.evaluate((n) => window.view(n), t);
  assert.deepEqual((await appliedOf(t)).map((x) => x.body), [`${t}-1`], "applied once");
  const log = await requestsOf(t);
  assert.equal(log.length, 2, "the dropped attempt and its retry, nothing for the empty collections");
  assert.equal(log[0].end, "dropped");
  assert.equal(log[1].status, 201);
  assert.equal(log[0].headers["idempotency-key"], log[1].headers["idempotency-key"]);
  assert.deepEqual([v.stats.reports, v.stats.retries, v.stats.delivered, v.stats.superseded], [1, 1, 1, 0], JSON.stringify(v.stats));
  assert.ok(v.stats.skipped >= 3);
  assert.deepEqual(p.errors, []);
});

test("flush() reports now within the pace (minMs), not once per call; stop() ends it: state closed, nothing after", async () => {
  await clearLog(server);
  const t = tag();
  const p = await page();
  await p.evaluate(({ t, u }) => window.start(t, u, { interval: { initialMs: 20_000, minMs: 300 }, startupJitterMs: 0 }), { t, u: url(t) });
  await until(async () => (await appliedOf(t)).length === 1, "the first report (at once)");
  const first = await until(async () => {
    const v = await p.evaluate((n) => window.view(n), t);
    return v.stats.delivered === 1 ? v : null;
  }, "the first report delivered");
  assert.deepEqual(first.states.map((s) => [s.state, s.reason, s.delayMs]),
    [["waiting", "start", 0], ["connecting", "start", undefined], ["open", "start", undefined]]);
  // Three flushes in a row: one report, not three (the next slot is 20 s away).
  await p.evaluate((n) => { const r = window.r[n].reporter; r.flush(); r.flush(); r.flush(); }, t);
  await until(async () => (await appliedOf(t)).length === 2, "the flushed report", 5000);
  await sleep(600);
  assert.equal((await requestsOf(t)).length, 2, "three flushes, one report");
  await p.evaluate((n) => window.r[n].reporter.stop(), t);
  const v = await p.evaluate((n) => window.view(n), t);
  assert.equal(v.state, "closed");
  assert.deepEqual(v.states.at(-1), { state: "closed", reason: "closed-by-user", delayMs: undefined });
  assert.deepEqual([v.stats.reports, v.stats.delivered, v.stats.requests], [2, 2, 2]);
  await p.evaluate((n) => window.r[n].reporter.flush(), t);
  await sleep(400);
  assert.equal((await requestsOf(t)).length, 2, "nothing after stop()");
  assert.deepEqual(p.errors, []);
});

test("report() checks its arguments up front: invalid-option (what was expected, what was given) for a task that is not a function or a bad option, not-initialized before init", async () => {
  const p = await page();
  const codes = await p.evaluate(async () => {
    const code = (f) => { try { f(); return "no throw"; } catch (e) { return `${e.code}: ${e.message}`; } };
    const fresh = await import(`/pkg/index.js?fresh=${Math.random()}`);
    return [
      code(() => window.t.report("/send", "not a function")),
      code(() => window.t.report("/send", () => "x", { idempotencyKey: "k" })),
      code(() => window.t.report("/send", () => "x", { whenHidden: "slow" })),
      code(() => window.t.report("/send", () => "x", { maxQueued: 0 })),
      code(() => window.t.report("/send", () => "x", { interval: { initialMs: -1 } })),
      code(() => window.t.report("ftp://x/", () => "x")),
      code(() => fresh.report("/send", () => "x")),
    ];
  });
  assert.deepEqual(codes, [
    'invalid-option: invalid option: task: expected a function, got "not a function" (string)',
    'invalid-option: invalid option: idempotencyKey: expected none (not a report() option), got "k" (string)',
    'invalid-option: invalid option: whenHidden: expected "stop", "continue" or { intervalMs }, got "slow" (string)',
    "invalid-option: invalid option: maxQueued: expected a number ≥ 1 or Infinity, got 0 (number)",
    "invalid-option: invalid option: interval.initialMs: expected a non-negative number of milliseconds, got -1 (number)",
    codes[5].startsWith("invalid-url") ? codes[5] : "invalid-url",
    "not-initialized: call init() before report()",
  ]);
});

test("breaker: after failureThreshold failed attempts in a row no request for the cool-down (breaker-open), then one probe (breaker-probe), delivered: closed", async () => {
  await clearLog(server);
  const t = tag();
  await faults(server, { path: "/send", times: 2, fault: { kind: "status", status: 500 } });
  const p = await page();
  const breaker = { failureThreshold: 2, cooldownMs: 1500 };
  await p.evaluate(({ t, u, breaker }) => window.start(t, u, { interval: { initialMs: 300, minMs: 100 }, startupJitterMs: 0, breaker }), { t, u: url(t), breaker });
  await until(async () => (await appliedOf(t)).length >= 1, "a report applied after the cool-down", 15_000);
  await p.evaluate((n) => window.r[n].reporter.stop(), t);
  const v = await p.evaluate((n) => window.view(n), t);
  const open = v.states.filter((s) => s.reason === "breaker-open");
  assert.equal(open.length, 1, JSON.stringify(v.states));
  // U[750, 2250] ms (cooldownMs ± 50 %), or longer if the backoff already chose more.
  const cooldown = open[0].delayMs;
  assert.ok(open[0].state === "waiting" && cooldown >= 750, JSON.stringify(open));
  assert.ok(v.states.some((s) => s.reason === "breaker-probe"), JSON.stringify(v.states));
  assert.equal(v.errors.length, 2, JSON.stringify(v.errors));
  assert.ok(v.errors[1].retryInMs >= 750, JSON.stringify(v.errors));
  // On the wire: the probe came at least the cool-down after the second failure.
  const reqs = await requestsOf(t);
  assert.ok(reqs.length >= 3, JSON.stringify(reqs.map((r) => r.status)));
  assert.deepEqual(reqs.slice(0, 2).map((r) => r.status), [500, 500]);
  assert.ok(reqs[2].t_ms - reqs[1].t_ms >= cooldown, `${reqs[2].t_ms - reqs[1].t_ms} ms, cool-down ${cooldown} ms`);
  assert.deepEqual(p.errors, []);
});
