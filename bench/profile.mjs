// A CPU profile of one client's ingest (the bench's 20,000-event burst), for
// docs/bench.md's "what the profile shows". Not a test, not part of
// `make bench`: run it after scripts/build-pkg.sh with
//   node bench/profile.mjs tidings:fetch-sse [runs]
// It prints the page's busiest functions by self time (CDP Profiler,
// sampling every 100 µs), summed over `runs` runs (default 3). Wasm
// functions show as the optimiser left their names (`$func123`); the glue's
// JS functions keep theirs. For `long-poll` and `poll` it also prints where
// the time between answers goes (the server's answers hold 1,000 events:
// the first and the last of each are delivered at a multiple of 1,000),
// summed over each run's answers: the server's time from a request's
// arrival to its last byte; from there to the answer's first and last
// delivery in the page; from the last delivery to the next request's
// arrival. BENCH_NO_PROFILE=1 measures that without the sampler's overhead.
// BENCH_TICK=1: the latency section's stream instead of the burst (one event
// every 10 ms, BENCH_N default 200), and per run where each message's
// latency goes: publish → the page first sees it (a body chunk's `read()`
// resolved, or an EventSource listener entered: both hooked in the page)
// and from there → the app's callback, the client's own time (the page's
// clock has 0.1 ms steps, so the mean is the finer figure). For the stream
// clients and long-poll; a poll answer's body is read whole, not hooked.
import * as esbuild from "esbuild";
import { launchBrowser } from "../tests/e2e/harness.mjs";
import { startBenchServer } from "./server.mjs";

const ROOT = new URL("../", import.meta.url).pathname;
const kind = process.argv[2] ?? "tidings:fetch-sse";
const runs = Number(process.argv[3] ?? 3);
const tick = !!process.env.BENCH_TICK;
const N = Number(process.env.BENCH_N ?? (tick ? 200 : 20_000));

const clientsJs = (await esbuild.build({
  entryPoints: [`${ROOT}bench/clients.mjs`], bundle: true, format: "esm", write: false, logLevel: "error", external: ["/pkg/*"],
})).outputFiles[0].contents;
const server = await startBenchServer({ root: ROOT, bundles: { "bench/clients.js": clientsJs } });
const browser = await launchBrowser();
const page = await (await browser.newContext()).newPage();
await page.goto(`${server.url}/`);
await page.evaluate(async () => { window.B = await import("/bench/clients.js"); await window.B.ready(); });
if (tick) await page.evaluate(() => {
  // `seen`: when the page last saw a message arrive, before any client code.
  window.seen = 0;
  const read = ReadableStreamDefaultReader.prototype.read;
  ReadableStreamDefaultReader.prototype.read = function () { return read.call(this).then((r) => ((window.seen = B.now()), r)); };
  const add = EventSource.prototype.addEventListener;
  EventSource.prototype.addEventListener = function (t, f, o) { return add.call(this, t, (e) => ((window.seen = B.now()), f(e)), o); };
  const on = Object.getOwnPropertyDescriptor(EventSource.prototype, "onmessage");
  Object.defineProperty(EventSource.prototype, "onmessage", { get() { return on.get.call(this); }, set(f) { on.set.call(this, (e) => ((window.seen = B.now()), f(e))); } });
});
const cdp = await page.context().newCDPSession(page);
await cdp.send("Profiler.enable");
await cdp.send("Profiler.setSamplingInterval", { interval: 100 });

const sampling = !process.env.BENCH_NO_PROFILE;
const request = /poll/.test(kind);
const self = new Map();
let total = 0, idle = 0, busyMs = 0;
for (let r = 0; r < runs; r++) {
  const path = kind === "tidings:long-poll" ? "/lp" : /poll/.test(kind) ? "/poll" : "/sse";
  const url = `${path}?c=profile${r}&run=p${r}&mode=${tick ? "tick&every_ms=10" : "burst"}&n=${N}`;
  if (sampling) await cdp.send("Profiler.start");
  const { ms, marks, calls, split } = await page.evaluate(({ kind, url, n, tick }) => new Promise((resolve) => {
    let next = 1, c;
    const t0 = B.now(), marks = [], calls = [], split = [];
    const fetch0 = globalThis.fetch;
    globalThis.fetch = (...a) => (calls.push(B.now()), fetch0(...a));
    c = B.open(kind, url, (d) => {
      if (tick) split.push([window.seen - d.t, B.now() - window.seen]);
      if (d.n % 1000 < 2) marks.push(B.now());
      if (d.n === next) next++;
      if (next > n) { c.close(); globalThis.fetch = fetch0; resolve({ ms: B.now() - t0, marks, calls, split }); }
    }, { intervalMs: 10, tidings: kind === "tidings:poll" ? { interval: { mode: "fixed", initialMs: 10, minMs: 10 } } : {} });
  }), { kind, url, n: N, tick });
  busyMs += ms;
  if (request && !tick) gaps(server.stats(`profile${r}`).answers, marks, calls);
  if (tick) latencySplit(split);
  if (!sampling) { console.error(`run ${r + 1}: ${Math.round(N / (ms / 1000))} msg/s`); continue; }
  const { profile } = await cdp.send("Profiler.stop");
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const dt = profile.timeDeltas;
  profile.samples.forEach((id, i) => {
    const f = byId.get(id).callFrame;
    const name = `${f.functionName || "(anonymous)"} ${f.url.split("/").pop()}${f.lineNumber >= 0 ? ":" + (f.lineNumber + 1) : ""}`;
    const us = dt[i] ?? 0;
    total += us;
    if (f.functionName === "(idle)" || f.functionName === "(program)") idle += us;
    self.set(name, (self.get(name) ?? 0) + us);
  });
  console.error(`run ${r + 1}: ${Math.round(N / (ms / 1000))} msg/s`);
}
/** Where one tick run's latency went (module doc), in ms. */
function latencySplit(split) {
  const pct = (a, p) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor((p / 100) * a.length))];
  const pre = split.map(([a]) => a), own = split.map(([, b]) => b);
  const f = (x) => x.toFixed(3);
  console.error(`  ${split.length} events: publish → page p50 ${f(pct(pre, 50))}, p99 ${f(pct(pre, 99))}; page → callback mean ${f(own.reduce((a, b) => a + b, 0) / own.length)}, p50 ${f(pct(own, 50))}, p99 ${f(pct(own, 99))}, max ${f(Math.max(...own))} ms`);
}
/** Where one run's time between answers went (module doc), in ms. */
function gaps(answers, marks, calls) {
  const sum = { server: 0, toFirst: 0, delivering: 0, toNext: 0, toFetch: 0, fetchToServer: 0 };
  const full = answers.filter(([a, b]) => b - a >= 0).slice(0, marks.length / 2);
  full.forEach(([arrived, ended], i) => {
    const [first, last] = [marks[2 * i], marks[2 * i + 1]];
    sum.server += ended - arrived;
    sum.toFirst += first - ended;
    sum.delivering += last - first;
    if (answers[i + 1]) sum.toNext += answers[i + 1][0] - last;
    if (calls[i + 1]) sum.toFetch += calls[i + 1] - last, sum.fetchToServer += answers[i + 1][0] - calls[i + 1];
  });
  const f = (x) => x.toFixed(1).padStart(7);
  console.error(`  ${full.length} answers, summed ms: server ${f(sum.server)}, its end → first delivery ${f(sum.toFirst)}, first → last delivery ${f(sum.delivering)}, last delivery → next request ${f(sum.toNext)} (→ fetch() ${f(sum.toFetch)}, fetch() → server ${f(sum.fetchToServer)})`);
}
await browser.close();
await server.close();
if (!sampling) process.exit(0);
const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 30);
console.log(`${kind}: ${runs} runs, ${(busyMs / runs).toFixed(0)} ms each; sampled ${(total / 1000).toFixed(0)} ms, of which idle/program ${(idle / 1000).toFixed(0)} ms`);
for (const [name, us] of rows) console.log(`${(us / 1000).toFixed(1).padStart(8)} ms ${(100 * us / total).toFixed(1).padStart(5)} %  ${name}`);
