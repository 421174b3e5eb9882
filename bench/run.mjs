// make bench: tidings side by side with the clients people use instead, in
// headless Chromium on loopback (docs/bench.md). Prints one table of figures with
// tidings' ratios to each peer on the same wire, and the reconnect-leak table.
// Not a test: nothing here asserts, but a client that delivers a wrong or
// missing event is reported as such in its cell.
//
// Ingest and latency interleave the clients over BENCH_RUNS runs (the order
// rotated each run) and report each ratio to the peer as the median of the
// per-run ratios (tidings and its peer measured in the same run, seconds
// apart), with how far the ratios moved between runs (min–max) and the load
// average around each section: one run on a shared 2-core machine swings.
//
// Env: BENCH_ONLY=ingest,latency,idle,hidden,leak,bundle,big (default all),
//      BENCH_RUNS (5), BENCH_N (20000), BENCH_CYCLES (2000: reconnect leak),
//      BENCH_CHURN (10000: subscribe + close rounds),
//      BENCH_IDLE_S (60), BENCH_HIDDEN_S (30), BENCH_LEAK_MAX_S (300),
//      BENCH_JSON=<file> (raw figures), BENCH_OUT=<file> (the table, markdown).
import { gzipSync } from "node:zlib";
import { readFileSync, writeFileSync, readdirSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { execFileSync } from "node:child_process";
import * as esbuild from "esbuild";
import { launchBrowser } from "../tests/e2e/harness.mjs";
import { startBenchServer } from "./server.mjs";

const ROOT = new URL("../", import.meta.url).pathname;
const env = (k, d) => (process.env[k] ? Number(process.env[k]) : d);
const ONLY = (process.env.BENCH_ONLY ?? "ingest,latency,idle,hidden,leak,bundle,big").split(",");
const RUNS = env("BENCH_RUNS", 5);
const N = env("BENCH_N", 20_000);
// 2,000 reconnects per transport keep `make bench` near 5 minutes (10,000
// took 170–200 s and read the same: flat); the churn keeps its 10,000.
const CYCLES = env("BENCH_CYCLES", 2_000);
const CHURN = env("BENCH_CHURN", 10_000);
/** How much the churn may grow and still count as flat: one wasm
 * page, and 256 KB of JS heap (the reconnect rows moved 37–148 KB). */
const CHURN_SLACK = { wasm: 65_536, heap: 262_144 };
const IDLE_S = env("BENCH_IDLE_S", 60);
const HIDDEN_S = env("BENCH_HIDDEN_S", 30);
const LEAK_MAX_S = env("BENCH_LEAK_MAX_S", 300); // bound on the reconnect-leak cycles
const SCALE = 60; // idle cost: 60 s of bench time stand for one hour
const POLL_MS = 5000; // the fixed poll loop's real-world interval (a common refetchInterval)
const TIDINGS = ["tidings:eventsource", "tidings:fetch-sse", "tidings:long-poll", "tidings:poll"];
const PEERS = ["eventsource", "fetch-event-source", "fetch-poll"];
const CLIENTS = [...TIDINGS, ...PEERS];
/** The tidings transport on the same wire as each peer. */
const PAIR = { eventsource: "tidings:eventsource", "fetch-event-source": "tidings:fetch-sse", "fetch-poll": "tidings:poll" };

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]; };
const log = (...a) => console.error("bench:", ...a);
let seq = 0;
const runId = () => `r${++seq}`;

// Whole-run bound: the slowest section is bounded on its own, this is the net.
setTimeout(() => { log("FAILED: over 12 minutes"); process.exit(2); }, 12 * 60_000).unref();

/** Which endpoint each client reads. */
function endpoint(kind, q) {
  const path = kind === "tidings:long-poll" ? "/lp" : kind === "tidings:poll" || kind === "fetch-poll" ? "/poll" : "/sse";
  return `${path}?${new URLSearchParams(q)}`;
}

// ---------------------------------------------------------------- setup
const bundle = async (entry, opts = {}) =>
  (await esbuild.build({ entryPoints: [entry], bundle: true, format: "esm", write: false, logLevel: "error", ...opts })).outputFiles[0].contents;
const clientsJs = await bundle(`${ROOT}bench/clients.mjs`, { external: ["/pkg/*"] });
const server = await startBenchServer({ root: ROOT, bundles: { "bench/clients.js": clientsJs } });
const browser = await launchBrowser();
const chromiumVersion = browser.version();
let connection = null; // navigator.connection as the page sees it (tidings reads it)
log(`server ${server.url}, Chromium ${chromiumVersion}`);

/** A fresh context (own connection pool, own cache) with the clients loaded. */
async function newPage() {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(120_000);
  page.on("pageerror", (e) => log("page error:", e.message));
  await page.goto(`${server.url}/`);
  await page.evaluate(async () => {
    window.B = await import("/bench/clients.js");
    await window.B.ready();
    // Hidden is simulated: headless Chromium cannot hide a page, so
    // document.visibilityState / document.hidden are overridden and
    // visibilitychange dispatched, as the page would see it.
    let hidden = false;
    Object.defineProperty(document, "visibilityState", { configurable: true, get: () => (hidden ? "hidden" : "visible") });
    Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
    window.setHidden = (h) => { hidden = h; document.dispatchEvent(new Event("visibilitychange")); };
  });
  connection ??= await page.evaluate(() => navigator.connection && { rtt: navigator.connection.rtt, effectiveType: navigator.connection.effectiveType });
  return { page, context };
}

const results = { ingest: {}, latency: {}, idle: {}, hidden: {}, leak: {}, bundle: {}, big: {} };

// ---------------------------------------------------------------- ingest
/** Options per client for the event-log sections: poll clients poll every 10 ms. */
const fastOpts = (kind) => ({
  intervalMs: 10,
  tidings: kind === "tidings:poll" ? { interval: { mode: "fixed", initialMs: 10, minMs: 10 } } : {},
});

async function ingest() {
  const pages = {};
  for (const kind of CLIENTS) pages[kind] = await newPage();
  for (const kind of CLIENTS) results.ingest[kind] = { rates: [], byRun: [], bad: 0, missing: 0 };
  for (let r = 0; r < RUNS; r++) {
    // Rotate the order per run so no client always goes first.
    const order = CLIENTS.map((_, i) => CLIENTS[(i + r) % CLIENTS.length]);
    for (const kind of order) {
      const url = endpoint(kind, { c: `ingest:${kind}`, run: runId(), mode: "burst", n: N });
      const out = await pages[kind].page.evaluate(({ kind, url, n, opts }) => new Promise((resolve) => {
        let next = 1, bad = 0, c;
        const t0 = B.now();
        const timer = setTimeout(() => { c.close(); resolve({ count: next - 1, bad, ms: null }); }, 30_000);
        c = B.open(kind, url, (d) => {
          if (d.n !== next) bad++;
          if (++next > n) { const ms = B.now() - t0; clearTimeout(timer); c.close(); resolve({ count: n, bad, ms }); }
        }, opts);
      }), { kind, url, n: N, opts: fastOpts(kind) });
      const row = results.ingest[kind];
      row.bad += out.bad;
      row.missing += N - out.count;
      if (out.ms) row.rates.push(N / (out.ms / 1000));
      row.byRun[r] = out.ms ? N / (out.ms / 1000) : null;
      log(`ingest ${kind} run ${r + 1}: ${out.ms ? Math.round(N / (out.ms / 1000)) + " msg/s" : "TIMEOUT"} (${out.count} events, ${out.bad} wrong)`);
    }
  }
  for (const kind of CLIENTS) results.ingest[kind].median = results.ingest[kind].rates.length === RUNS ? median(results.ingest[kind].rates) : null;
  for (const p of Object.values(pages)) await p.context.close();
}

// ---------------------------------------------------------------- latency
// RUNS runs per client, interleaved like ingest; p50 and p99 of each run, the
// median of each over the runs (one run is at the mercy of a scheduler stall
// on a busy 2-core machine).
async function latency() {
  const pages = {};
  for (const kind of CLIENTS) pages[kind] = await newPage();
  const runs = Object.fromEntries(CLIENTS.map((k) => [k, []]));
  const n = 200;
  for (let r = 0; r < RUNS; r++) {
    const order = CLIENTS.map((_, i) => CLIENTS[(i + r) % CLIENTS.length]);
    for (const kind of order) {
      const url = endpoint(kind, { c: `latency:${kind}`, run: runId(), mode: "tick", n, every_ms: 10 });
      const out = await pages[kind].page.evaluate(({ kind, url, n, opts }) => new Promise((resolve) => {
        const lat = [];
        let c;
        const done = () => { clearTimeout(timer); c.close(); resolve(lat); };
        const timer = setTimeout(done, 2000 + 5000);
        c = B.open(kind, url, (d) => { lat.push(B.now() - d.t); if (lat.length >= n) done(); }, opts);
      }), { kind, url, n, opts: fastOpts(kind) });
      runs[kind].push({ p50: pct(out, 50), p99: pct(out, 99), count: out.length });
      log(`latency ${kind} run ${r + 1}: p50 ${pct(out, 50)?.toFixed(2)} ms, p99 ${pct(out, 99)?.toFixed(2)} ms (${out.length}/${n})`);
    }
  }
  for (const kind of CLIENTS) {
    const rs = runs[kind];
    results.latency[kind] = { p50: median(rs.map((x) => x.p50)), p99: median(rs.map((x) => x.p99)), count: Math.min(...rs.map((x) => x.count)), n, runs: rs };
  }
  for (const p of Object.values(pages)) await p.context.close();
}

// ---------------------------------------------------------------- idle cost
// Every interval ÷ SCALE: 60 s stand for one hour. tidings: its defaults
// scaled (poll interval 5 s in [1 s, 5 min] exponential → 83 ms in [17 ms,
// 5 s]; long-poll hold 30 s → 500 ms; heartbeat 15 s → 250 ms with the
// watchdog at 45 s → 750 ms); the poll loop 5 s → 83 ms.
const scaled = (ms) => Math.round(ms / SCALE);
const scaledTidings = {
  backoff: { floorMs: scaled(1000), baseMs: scaled(500), maxMs: scaled(60_000), healthyAfterMs: scaled(10_000) },
  interval: { initialMs: scaled(5000), minMs: scaled(1000), maxMs: scaled(300_000) },
  watchdog: { idleTimeoutMs: scaled(45_000), firstEventTimeoutMs: scaled(45_000) },
  longPoll: { timeoutMs: scaled(35_000) },
  breaker: { cooldownMs: scaled(30_000) },
};

function idleUrl(kind, c, { hb, hold }) {
  if (kind === "tidings:poll" || kind === "fetch-poll") return `/resource?c=${encodeURIComponent(c)}`;
  if (kind === "tidings:long-poll") return `/lp?${new URLSearchParams({ c, run: runId(), mode: "idle", hold_ms: hold })}`;
  return `/sse?${new URLSearchParams({ c, run: runId(), mode: "idle", hb_ms: hb })}`;
}

async function idle() {
  const pages = {};
  for (const kind of CLIENTS) pages[kind] = await newPage();
  await Promise.all(CLIENTS.map((kind) => pages[kind].page.evaluate(({ kind, url, opts }) => {
    window.client = B.open(kind, url, () => {}, opts);
  }, { kind, url: idleUrl(kind, `idle:${kind}`, { hb: scaled(15_000), hold: scaled(30_000) }), opts: { intervalMs: scaled(POLL_MS), tidings: scaledTidings } })));
  await sleep(IDLE_S * 1000);
  for (const kind of CLIENTS) {
    await pages[kind].page.evaluate(() => window.client.close());
    const s = server.stats(`idle:${kind}`);
    results.idle[kind] = { requests: s.requests, bytes: s.bytes, share304: s.requests ? s.s304 / s.requests : 0 };
    log(`idle ${kind}: ${s.requests} requests, ${s.bytes} bytes, ${s.s304} × 304`);
  }
  for (const p of Object.values(pages)) await p.context.close();
}

// ---------------------------------------------------------------- hidden tab
// Real time, every client with its defaults (the poll loop every 5 s). The
// server goes down (every data connection reset, new ones reset at once),
// 2 s later every page is hidden, for HIDDEN_S; then the server comes back
// and the pages become visible.
async function hidden() {
  const pages = {};
  for (const kind of CLIENTS) pages[kind] = await newPage();
  await Promise.all(CLIENTS.map((kind) => pages[kind].page.evaluate(({ kind, url, opts }) => {
    window.got = 0;
    window.client = B.open(kind, url, () => window.got++, opts);
  }, { kind, url: idleUrl(kind, `hidden:${kind}`, { hb: 15_000, hold: 25_000 }), opts: { intervalMs: POLL_MS } })));
  await sleep(2000);
  server.setDown(true);
  await sleep(2000);
  const before = Object.fromEntries(CLIENTS.map((k) => [k, server.stats(`hidden:${k}`).requests]));
  await Promise.all(CLIENTS.map((k) => pages[k].page.evaluate(() => window.setHidden(true))));
  const t0 = Date.now();
  await sleep(HIDDEN_S * 1000);
  const during = Object.fromEntries(CLIENTS.map((k) => [k, server.stats(`hidden:${k}`).requests - before[k]]));
  server.setDown(false);
  const upAt = Date.now();
  // Each page's own visible moment (Date.now(), the server's clock too).
  const visibleAt = Object.fromEntries(await Promise.all(CLIENTS.map(async (k) =>
    [k, await pages[k].page.evaluate(() => { const t = Date.now(); window.setHidden(false); return t; })])));
  const tv = Math.min(...Object.values(visibleAt));
  await sleep(10_000);
  // The first request that reached the server once it was back, from the
  // page's visible moment (negative: the client came back while still hidden).
  const back = {};
  for (const k of CLIENTS) {
    const first = server.stats(`hidden:${k}`).arrivals.find((t) => t >= upAt);
    if (first !== undefined) back[k] = first - visibleAt[k];
  }
  for (const k of CLIENTS) {
    results.hidden[k] = { requests: during[k], backMs: back[k] ?? null, seconds: (tv - t0) / 1000 };
    log(`hidden ${k}: ${during[k]} requests in ${((tv - t0) / 1000).toFixed(1)} s hidden; first request ${back[k] ?? ">10000"} ms after visible`);
  }
  for (const p of Object.values(pages)) await p.page.evaluate(() => window.client.close());
  for (const p of Object.values(pages)) await p.context.close();
}

// ---------------------------------------------------------------- reconnect leak
// One tidings subscription, CYCLES reconnects: the server ends every stream
// right after one event (eventsource, fetch-sse), answers every long-poll and
// poll with the next event. Backoff and poll interval at their minimum so the
// cycles run back to back. Measured after a warm-up of 100 cycles ("before")
// and after CYCLES more ("after"), the subscription open both times, each
// after three forced GCs: JS heap (CDP Runtime.getHeapUsage), the wasm memory
// (its exports' memory.buffer.byteLength; it only grows), and the event
// listeners registered on window, document, navigator.connection and every
// live EventSource (CDP DOMDebugger.getEventListeners; EventSources found
// with Runtime.queryObjects).
const leakOpts = {
  backoff: { strategy: "none", floorMs: 0, baseMs: 0, maxMs: 0, healthyAfterMs: 0 },
  breaker: { failureThreshold: 1_000_000_000 },
  fallback: { afterFailures: 0 },
  interval: { mode: "fixed", initialMs: 1, minMs: 1 },
};

async function measure(page, cdp) {
  for (let i = 0; i < 3; i++) { await cdp.send("HeapProfiler.collectGarbage"); await sleep(100); }
  const { usedSize } = await cdp.send("Runtime.getHeapUsage");
  const wasm = await page.evaluate(() => B.wasmBytes());
  let listeners = 0;
  const types = [];
  // Every remote object in one group, released at the end: a handle kept by
  // CDP would keep an EventSource alive into the next measurement.
  const objectGroup = "bench-measure";
  for (const expr of ["window", "document", "navigator.connection"]) {
    const { result } = await cdp.send("Runtime.evaluate", { expression: expr, objectGroup });
    if (!result.objectId) continue;
    const found = (await cdp.send("DOMDebugger.getEventListeners", { objectId: result.objectId })).listeners;
    listeners += found.length;
    types.push(...found.map((l) => `${expr}:${l.type}`));
  }
  const proto = await cdp.send("Runtime.evaluate", { expression: "EventSource.prototype", objectGroup });
  const { objects } = await cdp.send("Runtime.queryObjects", { prototypeObjectId: proto.result.objectId, objectGroup });
  const { result: props } = await cdp.send("Runtime.getProperties", { objectId: objects.objectId, ownProperties: true });
  let eventSources = 0;
  for (const p of props) {
    if (!/^\d+$/.test(p.name) || !p.value?.objectId) continue;
    eventSources++;
    const found = (await cdp.send("DOMDebugger.getEventListeners", { objectId: p.value.objectId })).listeners;
    listeners += found.length;
    types.push(...found.map((l) => `EventSource:${l.type}`));
  }
  await cdp.send("Runtime.releaseObjectGroup", { objectGroup });
  return { heap: usedSize, wasm, listeners, eventSources, types: types.sort().join(" ") };
}

async function leak() {
  // The four transports and the churn run at the same time, each in its own page.
  await Promise.all([...TIDINGS.map(leakOne), churn()]);
}

// Subscription churn: CHURN × (subscribe, then close in the next task), on
// fetch-sse against an idle stream; 100 warm-up rounds first.
async function churn() {
  const { page, context } = await newPage();
  const cdp = await context.newCDPSession(page);
  const url = endpoint("tidings:fetch-sse", { c: "leak:churn", run: runId(), mode: "idle" });
  const rounds = (n) => page.evaluate(({ url, n }) => new Promise((resolve) => {
    let i = 0;
    const one = () => {
      if (i++ >= n) return resolve();
      const c = B.open("tidings:fetch-sse", url, () => {});
      setTimeout(() => { c.close(); one(); }, 0);
    };
    one();
  }), { url, n });
  const empty = await measure(page, cdp);
  await rounds(100);
  await sleep(500);
  const before = await measure(page, cdp);
  const t0 = Date.now();
  await rounds(CHURN);
  const secs = (Date.now() - t0) / 1000;
  await sleep(500);
  const after = await measure(page, cdp);
  const s = server.stats("leak:churn");
  results.leak.churn = { empty, before, after, closed: after, cycles: CHURN, bad: 0, secs, requests: s.requests, ok: true };
  log(`leak churn: ${CHURN} subscribe+close in ${secs.toFixed(1)} s (${s.requests} requests); heap ${before.heap} → ${after.heap}, wasm ${before.wasm} → ${after.wasm}, listeners ${before.listeners} → ${after.listeners}`);
  await context.close();
}

async function leakOne(kind) {
  {
    const { page, context } = await newPage();
    const cdp = await context.newCDPSession(page);
    const warm = 100, until = warm + CYCLES, run = runId();
    // long-poll: each answer says "ask again at once" (a JSON envelope with
    // _polling.next_interval_ms: 0), else the U[0, 100] ms jitter tidings
    // waits after each answer would make 10,000 cycles take over 8 minutes.
    // The run stops cycling after `warm` events (the stream stays open, the
    // long-poll is held, polls get 304) for the "before" measurement, and
    // after `until` for "after": both taken in the same state.
    const url = endpoint(kind, { c: `leak:${kind}`, run, mode: "cycle", until: warm, ...(kind === "tidings:long-poll" ? { next_ms: 0 } : {}) });
    const empty = await measure(page, cdp);
    await page.evaluate(({ kind, url, opts }) => {
      window.got = 0;
      window.bad = 0;
      window.client = B.open(kind, url, (d) => { if (d.n !== ++window.got) window.bad++; }, { tidings: opts });
    }, { kind, url, opts: leakOpts });
    // Waiting in the page itself: Playwright's waitForFunction would add
    // listeners of its own to window.
    const reach = (n, ms) => page.evaluate(({ n, ms }) => new Promise((resolve, reject) => {
      const t0 = Date.now();
      const check = () => (window.got >= n ? resolve() : Date.now() - t0 > ms ? reject(new Error("timeout")) : setTimeout(check, 50));
      check();
    }), { n, ms });
    await reach(warm, 30_000);
    await sleep(500);
    const before = await measure(page, cdp);
    const t0 = Date.now();
    server.extendRun(run, until);
    let ok = true;
    await reach(until, LEAK_MAX_S * 1000).catch(() => { ok = false; });
    const secs = (Date.now() - t0) / 1000;
    await sleep(500);
    const after = await measure(page, cdp);
    const { got, bad } = await page.evaluate(() => ({ got: window.got, bad: window.bad }));
    await page.evaluate(() => window.client.close());
    const closed = await measure(page, cdp);
    const s = server.stats(`leak:${kind}`);
    results.leak[kind] = { empty, before, after, closed, cycles: got - warm, bad, secs, requests: s.requests, ok };
    log(`leak ${kind}: ${got - warm} cycles in ${secs.toFixed(1)} s (${s.requests} requests, ${bad} wrong); heap ${before.heap} → ${after.heap}, wasm ${before.wasm} → ${after.wasm}, listeners ${before.listeners} → ${after.listeners} (closed: ${closed.listeners}, none: ${empty.listeners})`);
    await context.close();
  }
}

// ---------------------------------------------------------------- bundle
// gzip -9 bytes as shipped. tidings: `make size`'s figure (the pkg/ wasm +
// its JS files minified with esbuild); peers: bundled and minified with esbuild.
async function bundleSizes() {
  const gz = (b) => gzipSync(b, { level: 9 }).length;
  const wasm = readFileSync(`${ROOT}pkg/tidings_bg.wasm`);
  const js = Buffer.concat(readdirSync(`${ROOT}pkg`, { recursive: true }).filter((f) => f.endsWith(".js")).sort()
    .map((f) => Buffer.from(execFileSync(`${ROOT}node_modules/.bin/esbuild`, ["--minify", "--format=esm", `${ROOT}pkg/${f}`]))));
  const t = { wasm: gz(wasm), js: gz(js) };
  for (const k of TIDINGS) results.bundle[k] = { gzip: t.wasm + t.js, detail: `wasm ${t.wasm} + JS ${t.js}` };
  const fes = await bundle(`${ROOT}bench/entry-fes.mjs`, { minify: true });
  results.bundle["fetch-event-source"] = { gzip: gz(fes) };
  const loop = await bundle(`${ROOT}bench/poll-loop.mjs`, { minify: true });
  results.bundle["fetch-poll"] = { gzip: gz(loop) };
  results.bundle.eventsource = { gzip: 0, detail: "built in" };
  log(`bundle: tidings ${t.wasm + t.js} (wasm ${t.wasm} + JS ${t.js}), fetch-event-source ${gz(fes)}, poll loop ${gz(loop)}`);
}

// ---------------------------------------------------------------- big
// Long lines and one big event, the two public parser failures: a join of
// one event's chunks in quadratic time, and a line split without a byte
// search. Each case is one stream of 1 MiB and one of 16 MiB, timed from the
// open call to the last callback, as ms per MiB; the peak JS heap above the
// baseline (CDP Runtime.getHeapUsage sampled every 25 ms) and the wasm
// memory's growth, per MiB. No quadratic growth: ms per MiB at 16 MiB
// within 2× of that at 1 MiB, for the lines and for the event.
const MiB = 1 << 20;
const BIG_CASES = [
  { name: "1 KiB lines, 1 MiB", q: { n: 1024, size: 1024 }, mib: 1 },
  { name: "1 KiB lines, 16 MiB", q: { n: 16 * 1024, size: 1024 }, mib: 16 },
  { name: "one 1 MiB event in 64 KiB chunks", q: { n: 1, size: MiB, chunk: 65536 }, mib: 1 },
  { name: "one 16 MiB event in 64 KiB chunks", q: { n: 1, size: 16 * MiB, chunk: 65536 }, mib: 16 },
];
const BIG_CLIENTS = ["tidings:fetch-sse", "tidings:eventsource", "eventsource", "fetch-event-source"];

async function bigOne(kind, bc) {
  const { page, context } = await newPage();
  const cdp = await context.newCDPSession(page);
  for (let i = 0; i < 2; i++) await cdp.send("HeapProfiler.collectGarbage");
  const base = (await cdp.send("Runtime.getHeapUsage")).usedSize;
  const wasm0 = await page.evaluate(() => B.wasmBytes());
  let peak = base, sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, (await cdp.send("Runtime.getHeapUsage").catch(() => ({ usedSize: 0 }))).usedSize);
      await sleep(25);
    }
  })();
  const url = endpoint(kind, { c: `big:${kind}`, run: runId(), mode: "big", ...bc.q });
  const out = await page.evaluate(({ kind, url, n, opts }) => new Promise((resolve) => {
    let c;
    const t0 = B.now();
    const timer = setTimeout(() => { c.close(); resolve({ ms: null }); }, 60_000);
    c = B.open(kind, url, (d) => {
      if (d.n === n) { const ms = B.now() - t0; clearTimeout(timer); c.close(); resolve({ ms }); }
    }, opts);
  }), { kind, url, n: bc.q.n, opts: { tidings: { maxMessageBytes: 64 * MiB } } });
  sampling = false;
  await sampler;
  const wasm1 = await page.evaluate(() => B.wasmBytes());
  await context.close();
  return { msPerMiB: out.ms == null ? null : out.ms / bc.mib, heapPerMiB: (peak - base) / bc.mib, wasmPerMiB: kind.startsWith("tidings:") ? (wasm1 - wasm0) / bc.mib : null };
}

async function big() {
  for (const bc of BIG_CASES) {
    for (const kind of BIG_CLIENTS) {
      const r = await bigOne(kind, bc);
      (results.big[bc.name] ??= {})[kind] = r;
      log(`big ${bc.name} ${kind}: ${r.msPerMiB == null ? "TIMEOUT" : r.msPerMiB.toFixed(1) + " ms/MiB"}, peak JS heap +${(r.heapPerMiB / 1024).toFixed(0)} KB/MiB${r.wasmPerMiB == null ? "" : `, wasm +${(r.wasmPerMiB / 1024).toFixed(0)} KB/MiB`}`);
    }
  }
}

function bigTable(R) {
  const cases = Object.keys(R.big);
  if (!cases.length) return [];
  const f = (x, d = 1) => (x == null ? "–" : x.toFixed(d));
  const out = ["", "| case | client | ms per MiB | peak JS heap KB per MiB | wasm memory growth KB per MiB |", "|---|---|---|---|---|"];
  for (const c of cases) for (const [k, r] of Object.entries(R.big[c])) {
    out.push(`| ${c} | ${k} | ${f(r.msPerMiB)} | ${f(r.heapPerMiB / 1024, 0)} | ${r.wasmPerMiB == null ? "–" : f(r.wasmPerMiB / 1024, 0)} |`);
  }
  for (const what of ["1 KiB lines", "one event in 64 KiB chunks"]) {
    const name = (mib) => (what === "1 KiB lines" ? `1 KiB lines, ${mib} MiB` : `one ${mib} MiB event in 64 KiB chunks`);
    const one = R.big[name(1)], sixteen = R.big[name(16)];
    if (!one || !sixteen) continue;
    const growth = BIG_CLIENTS.filter((k) => one[k]?.msPerMiB && sixteen[k]?.msPerMiB)
      .map((k) => `${k} ${(sixteen[k].msPerMiB / one[k].msPerMiB).toFixed(2)}×`);
    out.push("", `${what}, ms per MiB at 16 MiB ÷ at 1 MiB (no quadratic growth: ≤ 2): ${growth.join(", ")}.`);
  }
  out.push("big: one stream per case and client, from the open call to the last callback; JSON data (tidings with maxMessageBytes 64 MiB); the wasm memory grows once to its high-water mark (it never shrinks), so its row is what one big event costs the page for good.");
  return out;
}

// ---------------------------------------------------------------- run
const t0 = Date.now();
const load0 = loadavg()[0];
const loads = {}; // section → [1-minute load average at its start, at its end]
try {
  for (const [name, f] of [["ingest", ingest], ["latency", latency], ["idle", idle], ["hidden", hidden], ["leak", leak], ["bundle", bundleSizes], ["big", big]]) {
    if (!ONLY.includes(name)) continue;
    const ts = Date.now();
    const l0 = loadavg()[0];
    await f();
    loads[name] = [l0, loadavg()[0]];
    log(`${name} done in ${((Date.now() - ts) / 1000).toFixed(1)} s (load average ${l0.toFixed(1)} → ${loadavg()[0].toFixed(1)})`);
  }
} finally {
  await browser.close().catch(() => {});
  await server.close();
}
results.loads = loads;
if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(results, null, 2));
const table = report(results, (Date.now() - t0) / 1000);
if (process.env.BENCH_OUT) writeFileSync(process.env.BENCH_OUT, table + "\n");
console.log(table);

// ---------------------------------------------------------------- targets
// Issue 19's targets, each from per-run pairs: tidings and the figure it is
// held against, measured in the same run.

/** Figure `fig` of client `k` in run `r` (null when missing). */
function perRun(R, k, fig, r) {
  if (fig === "ingest") return R.ingest[k]?.byRun?.[r] ?? null;
  return R.latency[k]?.runs?.[r]?.[fig] ?? null;
}

function targetTable(R) {
  const TARGETS = [
    { what: "ingest, fetch-sse ÷ fetch-event-source", t: "tidings:fetch-sse", p: "fetch-event-source", fig: "ingest", goal: 1.0, more: true },
    { what: "ingest, eventsource ÷ native EventSource", t: "tidings:eventsource", p: "eventsource", fig: "ingest", goal: 0.9, more: true },
    { what: "ingest, poll ÷ fetch poll loop", t: "tidings:poll", p: "fetch-poll", fig: "ingest", goal: 1.0, more: true },
    { what: "ingest, long-poll ÷ tidings fetch-sse", t: "tidings:long-poll", p: "tidings:fetch-sse", fig: "ingest", goal: 0.8, more: true },
    { what: "latency p50, fetch-sse ÷ fetch-event-source", t: "tidings:fetch-sse", p: "fetch-event-source", fig: "p50", goal: 1.1 },
    { what: "latency p99, fetch-sse ÷ fetch-event-source", t: "tidings:fetch-sse", p: "fetch-event-source", fig: "p99", goal: 1.3 },
    { what: "latency p50, eventsource ÷ native EventSource", t: "tidings:eventsource", p: "eventsource", fig: "p50", goal: 1.1 },
    { what: "latency p99, eventsource ÷ native EventSource", t: "tidings:eventsource", p: "eventsource", fig: "p99", goal: 1.3 },
    { what: "latency p50, long-poll (ms, not a ratio)", t: "tidings:long-poll", fig: "p50", goal: 5 },
  ];
  const out = ["| target | goal | median over runs | min – max (moved) | runs | met |", "|---|---|---|---|---|---|"];
  for (const x of TARGETS) {
    const vals = [];
    for (let r = 0; r < RUNS; r++) {
      const t = perRun(R, x.t, x.fig, r);
      const p = x.p ? perRun(R, x.p, x.fig, r) : 1;
      if (t != null && p) vals.push(t / p);
    }
    if (!vals.length) continue;
    const m = median(vals), lo = Math.min(...vals), hi = Math.max(...vals);
    const met = x.more ? m >= x.goal : m <= x.goal;
    const d = x.p ? 2 : 1;
    out.push(`| ${x.what} | ${x.more ? "≥" : "≤"} ${x.goal} | ${m.toFixed(d)} | ${lo.toFixed(d)} – ${hi.toFixed(d)} (${(hi - lo).toFixed(d)}) | ${vals.length} | ${met ? "yes" : "**no**"} |`);
  }
  return out;
}

// ---------------------------------------------------------------- table
function report(R, secs) {
  const num = (x, d = 0) => (x == null ? "–" : x.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d }));
  const ratio = (t, p, higherIsBetter) => {
    if (t == null || p == null || t === 0 && p === 0) return "";
    if (p === 0 || t === 0) return higherIsBetter ? "" : ` (tidings ${t === 0 ? "0" : "∞"}×)`;
    return ` (tidings ${num(t / p, 2)}×)`;
  };
  const cell = (sec, k, f, d, higherIsBetter = false) => {
    const v = R[sec][k] ? f(R[sec][k]) : null;
    const pair = PAIR[k];
    const tv = pair && R[sec][pair] ? f(R[sec][pair]) : null;
    return num(v, d) + (pair ? ratio(tv, v, higherIsBetter) : "");
  };
  const ingestCell = (k) => {
    const r = R.ingest[k];
    if (!r) return "–";
    const flag = r.bad || r.missing ? ` ⚠ ${r.bad} wrong, ${r.missing} missing` : "";
    return cell("ingest", k, (x) => x.median, 0, true) + flag;
  };
  const lines = [];
  const when = new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC";
  const cpu = cpus()[0]?.model?.trim() ?? "?";
  lines.push(`tidings browser benchmark — ${when}; ${cpus().length} × ${cpu}, ${Math.round(totalmem() / 2 ** 30)} GiB; headless Chromium ${chromiumVersion}; loopback; ${secs.toFixed(0)} s; load average ${load0.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end`);
  lines.push(`load average (1 min) per section, start → end: ${Object.entries(loads).map(([k, [a, b]]) => `${k} ${a.toFixed(1)} → ${b.toFixed(1)}`).join(", ")}.`);
  lines.push("");
  lines.push(...targetTable(R));
  lines.push("");
  lines.push("| client | ingest msg/s | latency p50 ms | p99 ms | idle requests | idle bytes | idle 304 | hidden: requests | bundle gzip B |");
  lines.push("|---|---|---|---|---|---|---|---|---|");
  for (const k of CLIENTS) {
    const lat = R.latency[k];
    const latFlag = lat && lat.count < lat.n ? ` ⚠ ${lat.count}/${lat.n}` : "";
    lines.push(`| ${k} | ${ingestCell(k)} | ${cell("latency", k, (x) => x.p50, 2)}${latFlag} | ${cell("latency", k, (x) => x.p99, 2)} | `
      + `${cell("idle", k, (x) => x.requests, 0)} | ${cell("idle", k, (x) => x.bytes, 0)} | ${R.idle[k] ? num(100 * R.idle[k].share304, 1) + " %" : "–"} | `
      + `${cell("hidden", k, (x) => x.requests, 0)} | ${cell("bundle", k, (x) => x.gzip, 0)} |`);
  }
  lines.push("");
  lines.push(`(tidings N×) in a peer's row: the tidings transport on the same wire ÷ that peer (eventsource ↔ tidings:eventsource, fetch-event-source ↔ tidings:fetch-sse, fetch-poll ↔ tidings:poll); above 1 is better for ingest, below 1 for everything else.`);
  lines.push(`ingest: ${N.toLocaleString("en-US")} JSON events of 64 bytes pushed at once, decoded and checked in order, from the open call to the last callback; median of ${RUNS} runs; poll clients poll every 10 ms, long-poll and poll answers carry at most 1,000 events.`);
  lines.push(`latency: one event every 10 ms for 2 s (200 events); server publish → app callback on the machine clock (performance.timeOrigin + performance.now() on both sides); p50 and p99 per run, median of ${RUNS} runs; poll clients every 10 ms.`);
  lines.push(`idle: ${IDLE_S} s with every interval ÷ ${SCALE} (so ${IDLE_S} s stand for ${IDLE_S} min): a 2 KB JSON resource that never changes (ETag, Cache-Control: no-cache) for the poll clients, an idle stream with a comment every 250 ms (15 s) for the streams, a 500 ms (30 s) hold for long-poll; tidings with its defaults scaled, the poll loop every 83 ms (5 s). Bytes: status line + headers + body on the wire.`);
  lines.push(`hidden: the server down (every data connection reset), 2 s later the page hidden for ${HIDDEN_S} s (simulated: document.visibilityState/hidden overridden, visibilitychange dispatched); requests the server saw meanwhile. Real time, each client's defaults, the poll loop every 5 s.`);
  if (connection && connection.rtt >= 50) {
    lines.push(`network tier: Chromium reports navigator.connection.rtt = ${connection.rtt} ms (${connection.effectiveType}) even on loopback; tidings takes the smaller of that and the fastest of its last 4 measured poll request times, so on loopback tidings:poll polls at its configured 10 ms like the poll loop.`);
  }
  const back = CLIENTS.map((k) => R.hidden[k] && `${k} ${R.hidden[k].backMs == null ? ">10 s" : R.hidden[k].backMs + " ms"}`).filter(Boolean);
  if (back.length) lines.push(`server back, then visible: the first request the server saw, from the visible moment (negative: while still hidden): ${back.join(", ")}.`);
  const b = R.bundle["tidings:poll"];
  if (b) lines.push(`bundle: tidings = ${b.detail} (pkg/, as make size); fetch-event-source and the poll loop bundled + minified by esbuild; native EventSource is built in (0).`);
  lines.push(...bigTable(R));
  if (Object.keys(R.leak).length) {
    lines.push("");
    lines.push(`Reconnect leak: ${CYCLES.toLocaleString("en-US")} reconnect cycles of one tidings subscription (stream ended by the server after each event / one event per answer; backoff and interval at their minimum), measured after 100 warm-up cycles and after the ${CYCLES.toLocaleString("en-US")}, each time with the subscription open and the server holding still (stream open, long-poll held, polls answered 304), after forced GC; then closed, and before subscribing ("none").`);
    lines.push("");
    lines.push(`wasm memory is a high-water mark: a wasm memory never shrinks. A closed subscription frees its connection's memory in close() (not when its JS object is collected), so the churn row must stay flat: within ${CHURN_SLACK.wasm / 1024} KB of wasm memory (one page) and ${CHURN_SLACK.heap / 1024} KB of JS heap after forced GCs.`);
    const c = R.leak.churn;
    if (c) lines.push(`churn flat within that slack: ${c.after.wasm - c.before.wasm <= CHURN_SLACK.wasm && c.after.heap - c.before.heap <= CHURN_SLACK.heap ? "yes" : "**no**"} (wasm ${((c.after.wasm - c.before.wasm) / 1024).toFixed(0)} KB, JS heap ${((c.after.heap - c.before.heap) / 1024).toFixed(0)} KB).`);
    lines.push("");
    lines.push("| transport | cycles | time s | JS heap before → after | wasm memory before → after | listeners before → after (closed; none) | live EventSources after |");
    lines.push("|---|---|---|---|---|---|---|");
    for (const k of [...TIDINGS, "churn"]) {
      const l = R.leak[k];
      if (!l) continue;
      const label = k === "churn" ? "subscribe + close (fetch-sse), no reconnect" : k;
      const kb = (x) => `${num(x / 1024, 0)} KB`;
      lines.push(`| ${label} | ${num(l.cycles)}${l.bad ? ` ⚠ ${l.bad} wrong` : ""}${l.ok ? "" : " ⚠ timed out"} | ${num(l.secs, 1)} | ${kb(l.before.heap)} → ${kb(l.after.heap)} (${l.after.heap >= l.before.heap ? "+" : "−"}${kb(Math.abs(l.after.heap - l.before.heap))}) | `
        + `${kb(l.before.wasm)} → ${kb(l.after.wasm)} | ${l.before.listeners} → ${l.after.listeners} (${l.closed.listeners}; ${l.empty.listeners}) | ${l.after.eventSources} |`);
    }
  }
  return lines.join("\n");
}
