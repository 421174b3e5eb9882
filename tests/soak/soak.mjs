// make soak (docs/reliability.md): the built package in headless Chromium for SOAK_S
// seconds (default 900) against the reference server, under a fault schedule
// drawn from SOAK_SEED (default 23): server restarts, 503 bursts with
// Retry-After, buffering and silent streams, oversize messages, offline and
// hidden flaps, crossTab leader tabs closed, transports forced to switch.
// Numbered messages are published throughout (10 a second). It prints, per
// tab: published / delivered / lost / duplicated / skipped-as-oversize
// (oversize messages are skipped by design and counted apart), requests per
// hour, JS heap, wasm memory and listener counts at the start (after a
// warm-up that includes the first oversize message) and at the end, and the
// worst delivery delay after each fault. Exit 1 when anything is lost or
// duplicated, a page threw, or memory or listeners grew past the slack below.
//
// Tabs: `auto` (every transport, starts on eventsource), `fetch` (fetch-sse),
// `lp` (long-poll, JSON envelope bodies), `poll` (poll, JSON arrays) in one
// browser context; `x1`..`x3` (crossTab, every transport) in another, whose
// leader is closed now and then and replaced by a new tab (`x4`, …).
import { launchBrowser, startServer } from "../e2e/harness.mjs";
import { clearFaults, faults, restart, sleep } from "../e2e/tidings-page.mjs";

const SOAK_S = Number(process.env.SOAK_S ?? 900);
const SEED = Number(process.env.SOAK_SEED ?? 23);
const PUBLISH_MS = 100;
const OVERSIZE = "x".repeat(3 << 19); // 1.5 MiB: past the 1 MiB default limit
// Slack for "flat": wasm memory never shrinks, and it may grow to hold one
// more oversize message at a new high-water mark; the JS heap (after a forced
// GC) moves with V8's own caches; listeners are exact.
const SLACK = { wasmBytes: 4 << 20, heapBytes: 8 << 20, listeners: 0 };
const MAX_SLOTS = 200_000; // message numbers a page can record

const BACKOFF = { floorMs: 250, baseMs: 250, maxMs: 4000 };
const COMMON = {
  backoff: BACKOFF, seed: 7, watchdog: { idleTimeoutMs: 6000, firstEventTimeoutMs: 4000 },
  longPoll: { timeoutMs: 8000 }, fallback: { afterFailures: 2, rememberMs: 30_000 },
  interval: { mode: "fixed", initialMs: 1000, minMs: 1000 }, maxRetryAfterMs: 3000,
  breaker: { failureThreshold: 8, cooldownMs: 3000 },
};
const urls = (tab) => ({
  eventsource: `/sse?tab=${tab}`, "fetch-sse": `/sse?tab=${tab}`,
  "long-poll": `/long-poll?tab=${tab}&format=json&envelope=1&hold_ms=3000`, poll: `/poll?tab=${tab}`,
});
const SOLO = {
  auto: { ...COMMON, urls: urls("auto") },
  fetch: { ...COMMON, urls: urls("fetch"), transports: ["fetch-sse"] },
  lp: { ...COMMON, urls: urls("lp"), transports: ["long-poll"] },
  poll: { ...COMMON, urls: urls("poll"), transports: ["poll"] },
};
const CROSS = { ...COMMON, urls: urls("x"), crossTab: true };

/** mulberry32: the fault schedule's PRNG. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KINDS = ["restart", "503-burst", "buffering", "silent", "oversize", "offline", "hidden",
  "leader-closed", "switch"];

/** Faults at [start, end) s, 8–20 s apart (3–6 s in runs under 2 min), kinds in shuffled rounds of all nine. */
function schedule(rand, start, end) {
  const out = [];
  let t = start, round = [];
  while (t < end) {
    if (round.length === 0) {
      round = [...KINDS];
      for (let i = round.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [round[i], round[j]] = [round[j], round[i]];
      }
    }
    out.push({ at: t, kind: round.pop(), pick: rand() });
    // A short run (the 20 s smoke of `make test`) packs its faults closer.
    t += SOAK_S < 120 ? 3 + rand() * 3 : 8 + rand() * 12;
  }
  return out;
}

// Page side: one subscription whose every message is tallied in preallocated
// typed arrays (the record itself must not grow the heap it measures).
const PAGE_INIT = ({ slots }) => {
  let hidden = false;
  Object.defineProperty(document, "visibilityState", { configurable: true, get: () => (hidden ? "hidden" : "visible") });
  Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
  window.setHidden = (h) => { hidden = h; document.dispatchEvent(new Event("visibilitychange")); };
  window.soak = { count: new Uint8Array(slots), at: new Float64Array(slots), errors: {}, tooLarge: 0, other: 0 };
};

async function openTab(context, origin, name, options) {
  const page = await context.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(e.message));
  await page.addInitScript(PAGE_INIT, { slots: MAX_SLOTS });
  await page.goto(`${origin}/blank.html`);
  await page.evaluate(async (options) => {
    const m = await import("/pkg/index.js");
    window.wasm = await m.default();
    const s = window.soak;
    const sub = m.subscribe(location.origin + "/sse", options);
    sub.addEventListener("message", (e) => {
      const n = Number(e.data);
      if (Number.isInteger(n) && n > 0 && n < s.count.length) {
        if (s.count[n] < 255) s.count[n]++;
        if (!s.at[n]) s.at[n] = Date.now();
      } else s.other++;
    });
    sub.addEventListener("error", (e) => {
      s.errors[e.code] = (s.errors[e.code] ?? 0) + 1;
      if (e.code === "too-large") s.tooLarge++;
    });
    window.sub = sub;
  }, options);
  const cdp = await context.newCDPSession(page);
  await cdp.send("HeapProfiler.enable");
  return { name, page, cdp, opened: Date.now(), closed: null, start: null, end: null };
}

/** JS heap after a forced GC, wasm memory, and the page's JS event listeners. */
async function measure(tab) {
  await tab.cdp.send("HeapProfiler.collectGarbage");
  const heap = await tab.cdp.send("Runtime.getHeapUsage");
  const dom = await tab.cdp.send("Memory.getDOMCounters");
  const wasm = await tab.page.evaluate(() => window.wasm.memory.buffer.byteLength);
  return { heap: heap.usedSize, wasm, listeners: dom.jsEventListeners };
}

async function tally(tab) {
  return tab.page.evaluate(() => {
    const s = window.soak;
    const got = [];
    for (let n = 1; n < s.count.length; n++) if (s.count[n]) got.push([n, s.count[n], s.at[n]]);
    return { got, errors: s.errors, tooLarge: s.tooLarge, other: s.other, stats: window.sub.stats() };
  });
}

/** The crossTab leader: the open x tab whose stats count requests or bytes going up. */
async function leader(xs) {
  const live = xs.filter((t) => !t.closed);
  const read = () => Promise.all(live.map((t) => t.page.evaluate(() => window.sub.stats())));
  const a = await read();
  await sleep(1200);
  const b = await read();
  let best = null, most = 0;
  live.forEach((t, i) => {
    const d = (b[i].bytes - a[i].bytes) + 1000 * (b[i].requests - a[i].requests);
    if (d > most) { most = d; best = t; }
  });
  return best;
}

const T0 = Date.now();
const say = (what) => console.log(`soak: t=${Math.round((Date.now() - T0) / 1000)}s ${what}`);

async function main() {
  const t0 = T0;
  const pages = new URL("../e2e/pages", import.meta.url).pathname;
  const server = await startServer(["--www", pages, "--quiet", "--retry-ms", "250", "--heartbeat-ms", "2000",
    "--buffer", "50000", "--log-capacity", "2000000"]);
  const browser = await launchBrowser();
  // Never hang: past the run, the settling and a margin, stop with an error.
  const hard = setTimeout(async () => {
    console.log("soak: FAILED: still running 240 s past SOAK_S");
    await browser.close().catch(() => {});
    await server.stop().catch(() => {});
    process.exit(2);
  }, (SOAK_S + 240) * 1000);
  hard.unref();
  const solo = await browser.newContext();
  const cross = await browser.newContext();
  const tabs = [];
  for (const [name, options] of Object.entries(SOLO)) tabs.push(await openTab(solo, server.url, name, options));
  const xs = [];
  let xn = 0;
  const newX = async () => { const t = await openTab(cross, server.url, `x${++xn}`, CROSS); xs.push(t); tabs.push(t); return t; };
  for (let i = 0; i < 3; i++) await newX();
  say(`${tabs.length} tabs open`);

  // Publisher: numbered messages; a refused or failed publish is retried with the same number.
  const published = new Map(); // n → Date.now() at publish
  const oversize = [];
  let n = 0, publishing = true;
  const post = async (body) => {
    for (;;) {
      try {
        const r = await fetch(`${server.url}/publish`, { method: "POST", body });
        if (r.ok) return (await r.json()).id;
      } catch { /* refused during a restart */ }
      await sleep(100);
    }
  };
  const publisher = (async () => {
    while (publishing) {
      const k = ++n;
      const at = Date.now();
      await post(String(k));
      published.set(k, at);
      await sleep(PUBLISH_MS);
    }
  })();

  const runMs = SOAK_S * 1000;
  const rand = prng(SEED);
  // A warm-up of min(10 %, 30 s) with one oversize message, then the start figures.
  const warm = Math.min(30, Math.max(4, SOAK_S * 0.1));
  await sleep(1500);
  oversize.push({ id: await post(OVERSIZE), at: Date.now() });
  await sleep(warm * 1000 - 1500);
  for (const t of tabs) t.start = await measure(t);
  say("start figures taken");
  // The faults run from now to 12 s before the end (the last one's recovery is measured).
  const base = Date.now();
  const span = Math.max(2, (t0 + runMs - base) / 1000 - 12);
  const plan = schedule(rand, 1, span);
  const applied = [];
  for (const f of plan) {
    const due = base + f.at * 1000;
    if (Date.now() < due) await sleep(due - Date.now());
    // The previous fault's rules that no request took are cleared, so each
    // fault's window measures that fault alone (rules queue per path and
    // only that path's requests take them: left queued, a tab with one
    // transport would drain them all at the next reconnect).
    if (applied.length) applied[applied.length - 1].left = await clearRules(server);
    applied.push({ ...f, t: Date.now(), n: n });
    say(`fault ${f.kind} (message ${n})`);
    // The server's control endpoints share its fate during a restart: retry.
    for (let i = 0; ; i++) {
      try {
        await fault(f, { server, solo, cross, tabs, xs, newX, oversize, post });
        break;
      } catch (e) {
        if (i >= 4) { say(`fault ${f.kind} failed: ${e.message}`); break; }
        await sleep(300);
      }
    }
  }
  const endAt = t0 + runMs;
  if (Date.now() < endAt) await sleep(endAt - Date.now());
  await clearFaults(server);
  publishing = false;
  await publisher;
  const last = n;
  say(`publishing stopped at ${last}; settling`);
  // Settle: every open tab has the last message, or 30 s passed.
  const settleEnd = Date.now() + 30_000;
  for (const t of tabs.filter((t) => !t.closed)) {
    while (Date.now() < settleEnd && !(await t.page.evaluate((k) => window.soak.count[k] > 0, last))) await sleep(200);
  }
  for (const t of tabs.filter((t) => !t.closed)) t.end = await measure(t);
  const log = (await (await fetch(`${server.url}/_log`)).json()).entries;
  const report = await summarize({ tabs, published, oversize, applied, log, last, t0 });
  await browser.close();
  await server.stop();
  process.exit(report.ok ? 0 : 1);
}

async function fault(f, ctx) {
  const { server, solo, cross, tabs, xs, newX, oversize, post } = ctx;
  const endpoints = ["/sse", "/long-poll", "/poll"];
  switch (f.kind) {
    case "restart":
      await restart(server, { ms: 1000, mode: f.pick < 0.5 ? "refuse" : "503" });
      break;
    case "503-burst":
      await faults(server, endpoints.map((path) => ({ path, times: 4,
        fault: { kind: "status", status: 503, retry_after: 1 } })));
      break;
    case "buffering":
      await faults(server, [{ path: "/sse", times: 3, fault: { kind: "buffer" } }]);
      break;
    case "silent":
      await faults(server, [{ path: "/sse", times: 2, fault: { kind: "silent", after_events: 3 } },
        { path: "/long-poll", times: 1, fault: { kind: "delay", ms: null } }]);
      await restartLater(server, 9000);
      break;
    case "oversize":
      oversize.push({ id: await post(OVERSIZE), at: Date.now() });
      break;
    case "offline": {
      const c = f.pick < 0.5 ? solo : cross;
      await c.setOffline(true);
      await sleep(2000);
      await c.setOffline(false);
      break;
    }
    case "hidden": {
      const open = tabs.filter((t) => !t.closed);
      const t = open[Math.floor(f.pick * open.length)];
      await t.page.evaluate(() => window.setHidden(true));
      await sleep(3000);
      await t.page.evaluate(() => window.setHidden(false));
      break;
    }
    case "leader-closed": {
      const l = (await leader(xs)) ?? xs.find((t) => !t.closed);
      l.end = await measure(l);
      l.final = await tally(l);
      l.closed = Date.now();
      await l.page.close();
      await newX();
      break;
    }
    case "switch":
      // Streams that open and never deliver (a buffering proxy) on every
      // streaming endpoint for a while: the engine skips streaming transports.
      await faults(server, [{ path: "/sse", times: 6, fault: { kind: "buffer" } }]);
      break;
  }
}

/** Clear the queued fault rules of the endpoints (not a restart window); how many were left. */
async function clearRules(server) {
  let left = 0;
  for (const path of ["/sse", "/long-poll", "/poll"]) {
    try {
      const r = await fetch(`${server.url}/_faults?path=${encodeURIComponent(path)}`, { method: "DELETE" });
      left += (await r.json()).cleared ?? 0;
    } catch { /* the server is restarting: its rules are kept, counted next time */ }
  }
  return left;
}

/** A silent stream stays open until a restart: end the ones left after `ms`. */
function restartLater(server, ms) {
  setTimeout(() => { restart(server, { ms: 0 }).catch(() => {}); }, ms).unref();
}

function pct(xs, p) {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
}

async function summarize({ tabs, published, oversize, applied, log, last, t0 }) {
  const oversizeIds = new Set(oversize.map((o) => o.id));
  const hours = (Date.now() - t0) / 3_600_000;
  let ok = true;
  const rows = [];
  const delays = []; // [publish time, delay]
  const errors = [];
  for (const t of tabs) {
    const r = t.final ?? await tally(t);
    const got = new Map(r.got.map(([k, c, at]) => [k, { c, at }]));
    const first = r.got.length ? r.got[0][0] : 1;
    const upto = t.closed ? (r.got.length ? r.got[r.got.length - 1][0] : 0) : last;
    let lost = 0, dup = 0, delivered = 0;
    for (let k = first; k <= upto; k++) {
      const g = got.get(k);
      if (!g) { lost++; continue; }
      delivered++;
      dup += g.c - 1;
      if (published.has(k)) delays.push([published.get(k), g.at - published.get(k), t.name]);
    }
    const tag = t.name.startsWith("x") ? "x" : t.name;
    const reqs = log.filter((e) => (e.query ?? "").includes(`tab=${tag}`) && e.method === "GET").length;
    if (lost || dup || t.page.errors.length) ok = false;
    // Flat: the end within the slack of the largest start figure of the tabs
    // doing the same job (a crossTab follower that became the leader runs an
    // engine and its transport's listeners, as the first leader did).
    const s = t.start, e = t.end;
    const peers = tabs.filter((p) => p.start && (t.name.startsWith("x") ? p.name.startsWith("x") : p === t));
    const base = (k) => Math.max(...peers.map((p) => p.start[k]));
    const grew = e && peers.length > 0 && (e.wasm - base("wasm") > SLACK.wasmBytes ||
      e.heap - base("heap") > SLACK.heapBytes || e.listeners - base("listeners") > SLACK.listeners);
    if (grew) ok = false;
    rows.push({ tab: t.name, published: upto - first + 1, delivered, lost, duplicated: dup,
      oversize: r.tooLarge, reqs, s, e, closed: !!t.closed, pageErrors: t.page.errors.length, grew });
    if (t.page.errors.length) errors.push(`${t.name}: ${t.page.errors.slice(0, 3).join(" | ")}`);
  }
  const mb = (b) => (b / 1048576).toFixed(1);
  const sec = Math.round((Date.now() - t0) / 1000);
  console.log(`soak: ${sec} s, seed ${SEED}, ${last} messages published (${PUBLISH_MS} ms apart), ` +
    `${oversize.length} oversize (1.5 MiB), ${applied.length} faults`);
  console.log("soak: tab      published delivered lost dup oversize-skipped req/h(tab's URL) " +
    "heap MiB start→end  wasm MiB start→end  listeners start→end");
  console.log("soak: (counted from the first message a tab received: a tab that joins later, or a long-poll" +
    " without a cursor, starts with the next message)");
  for (const r of rows) {
    const req = r.tab.startsWith("x") ? `${Math.round(r.reqs / hours)} (x*)` : `${Math.round(r.reqs / hours)}`;
    const m = r.s && r.e
      ? `${mb(r.s.heap)}→${mb(r.e.heap)}  ${mb(r.s.wasm)}→${mb(r.e.wasm)}  ${r.s.listeners}→${r.e.listeners}`
      : "(joined after the start)";
    console.log(`soak: ${r.tab.padEnd(8)} ${String(r.published).padStart(9)} ${String(r.delivered).padStart(9)} ` +
      `${String(r.lost).padStart(4)} ${String(r.duplicated).padStart(3)} ${String(r.oversize).padStart(16)} ` +
      `${req.padStart(16)}  ${m}${r.closed ? "  (closed as leader)" : ""}${r.grew ? "  GREW" : ""}`);
  }
  // Worst delivery delay of messages published after each fault, until the next.
  const byKind = {};
  applied.forEach((f, i) => {
    const until = applied[i + 1]?.t ?? Infinity;
    let w = [0, ""];
    for (const [p, d, tab] of delays) if (p >= f.t && p < until && d > w[0]) w = [d, tab];
    (byKind[f.kind] ??= []).push(w);
  });
  const all = delays.map(([, d]) => d);
  // A tab's own pauses (hidden, offline) hold its messages by design; the
  // delays include them.
  console.log(`soak: delivery delay over all messages and tabs: p50 ${pct(all, 0.5)} ms, p99 ${pct(all, 0.99)} ms, max ${Math.max(0, ...all)} ms`);
  for (const [kind, ws] of Object.entries(byKind)) {
    const worst = ws.reduce((a, b) => (b[0] > a[0] ? b : a));
    console.log(`soak: after ${kind.padEnd(13)} ×${String(ws.length).padStart(2)}: worst delivery delay ${worst[0]} ms ` +
      `(per fault, ms@tab: ${ws.map(([d, tab]) => `${d}@${tab}`).join(", ")})`);
  }
  const left = applied.reduce((a, f) => a + (f.left ?? 0), 0);
  console.log(`soak: fault rules no request took before the next fault (cleared then): ${left}`);
  console.log(`soak: slack: wasm +${mb(SLACK.wasmBytes)} MiB, heap +${mb(SLACK.heapBytes)} MiB, listeners +${SLACK.listeners}`);
  for (const e of errors) console.log(`soak: page error ${e}`);
  const lost = rows.reduce((a, r) => a + r.lost, 0), dup = rows.reduce((a, r) => a + r.duplicated, 0);
  console.log(`soak: ${ok ? "OK" : "FAILED"}: ${lost} lost, ${dup} duplicated`);
  return { ok };
}

main().catch((e) => { console.error(e); process.exit(1); });
