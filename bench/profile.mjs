// A CPU profile of one client's ingest (the bench's 20,000-event burst), for
// docs/bench.md's "what the profile shows". Not a test, not part of
// `make bench`: run it after scripts/build-pkg.sh with
//   node bench/profile.mjs tidings:fetch-sse [runs]
// It prints the page's busiest functions by self time (CDP Profiler,
// sampling every 100 µs), summed over `runs` runs (default 3). Wasm
// functions show as the optimiser left their names (`$func123`); the glue's
// JS functions keep theirs.
import * as esbuild from "esbuild";
import { launchBrowser } from "../tests/e2e/harness.mjs";
import { startBenchServer } from "./server.mjs";

const ROOT = new URL("../", import.meta.url).pathname;
const kind = process.argv[2] ?? "tidings:fetch-sse";
const runs = Number(process.argv[3] ?? 3);
const N = Number(process.env.BENCH_N ?? 20_000);

const clientsJs = (await esbuild.build({
  entryPoints: [`${ROOT}bench/clients.mjs`], bundle: true, format: "esm", write: false, logLevel: "error", external: ["/pkg/*"],
})).outputFiles[0].contents;
const server = await startBenchServer({ root: ROOT, bundles: { "bench/clients.js": clientsJs } });
const browser = await launchBrowser();
const page = await (await browser.newContext()).newPage();
await page.goto(`${server.url}/`);
await page.evaluate(async () => { window.B = await import("/bench/clients.js"); await window.B.ready(); });
const cdp = await page.context().newCDPSession(page);
await cdp.send("Profiler.enable");
await cdp.send("Profiler.setSamplingInterval", { interval: 100 });

const self = new Map();
let total = 0, idle = 0, busyMs = 0;
for (let r = 0; r < runs; r++) {
  const path = kind === "tidings:long-poll" ? "/lp" : /poll/.test(kind) ? "/poll" : "/sse";
  const url = `${path}?c=profile&run=p${r}&mode=burst&n=${N}`;
  await cdp.send("Profiler.start");
  const ms = await page.evaluate(({ kind, url, n }) => new Promise((resolve) => {
    let next = 1, c;
    const t0 = B.now();
    c = B.open(kind, url, (d) => { if (d.n === next) next++; if (next > n) { c.close(); resolve(B.now() - t0); } },
      { intervalMs: 10, tidings: kind === "tidings:poll" ? { interval: { mode: "fixed", initialMs: 10, minMs: 10 } } : {} });
  }), { kind, url, n: N });
  const { profile } = await cdp.send("Profiler.stop");
  busyMs += ms;
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
await browser.close();
await server.close();
const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 30);
console.log(`${kind}: ${runs} runs, ${(busyMs / runs).toFixed(0)} ms each; sampled ${(total / 1000).toFixed(0)} ms, of which idle/program ${(idle / 1000).toFixed(0)} ms`);
for (const [name, us] of rows) console.log(`${(us / 1000).toFixed(1).padStart(8)} ms ${(100 * us / total).toFixed(1).padStart(5)} %  ${name}`);
