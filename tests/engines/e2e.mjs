// `make test-engines`, second part: the whole e2e suite (tests/e2e/*.test.mjs)
// on other engines than Chromium: `node tests/engines/e2e.mjs [engine…] [file…]`
// (engines: firefox, webkit, one after the other; default firefox. Files: a
// subset, e.g. tests/e2e/poll.test.mjs).
// harness.mjs launches the engine named by TIDINGS_E2E_ENGINE: Firefox ESR
// through Playwright over WebDriver BiDi, WebKitGTK through a mapping of the
// Playwright API the suite uses onto WebKitWebDriver's WebDriver classic
// (webkit-playwright.mjs). The tests that cannot run on an engine
// (e2e-skips.mjs) are left out by title and counted as skipped, each reason
// printed. Prints the spec reporter's output per engine, then one table: engine,
// version, pass / fail / skipped, time. Exits 1 on a failure.
import { spawn, execFileSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SKIPS } from "./e2e-skips.mjs";

const VERSION = {
  firefox: () => execFileSync(process.env.FIREFOX ?? "/usr/bin/firefox-esr", ["--version"], { encoding: "utf8" }).trim(),
  webkit: () => `WebKitGTK ${execFileSync("dpkg-query", ["-W", "-f", "${Version}", "libwebkit2gtk-4.1-0"], { encoding: "utf8" }).trim()}`,
};

const args = process.argv.slice(2);
const engines = args.filter((a) => VERSION[a]);
const files = args.filter((a) => !VERSION[a]);
const unknown = files.filter((f) => !f.includes("/") && !f.endsWith(".mjs"));
if (unknown.length) {
  console.error(`unknown engine ${unknown.join(", ")}; the whole e2e suite runs on: ${Object.keys(VERSION).join(", ")}`);
  process.exit(2);
}
if (!engines.length) engines.push("firefox");
const escape = (t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const root = new URL("../../", import.meta.url).pathname;

/** The suite on `engine`: its row. */
async function runOn(engine) {
  const skips = SKIPS[engine] ?? {};
  const titles = Object.keys(skips);
  // Node 20 runs every test under a parent whose name matches: the root
  // (`<root>`) must not match, or nothing is left out.
  const pattern = titles.length ? [`--test-name-pattern=^(?!(?:<root>|${titles.map(escape).join("|")})$)`] : [];
  const dir = mkdtempSync(join(tmpdir(), "tidings-e2e-"));
  const tap = join(dir, "e2e.tap");
  const t0 = Date.now();
  console.log(`\n== the e2e suite on ${engine}`);
  const child = spawn(process.execPath, [
    "--test", `--test-concurrency=${process.env.E2E_CONCURRENCY ?? 2}`, "--test-reporter=spec", "--test-reporter-destination=stdout",
    "--test-reporter=tap", `--test-reporter-destination=${tap}`, ...pattern,
    ...(files.length ? files : ["tests/e2e/"]),
  ], { cwd: root, stdio: "inherit", env: { ...process.env, TIDINGS_E2E_ENGINE: engine } });
  const [code] = await once(child, "exit");
  const text = readFileSync(tap, "utf8");
  rmSync(dir, { recursive: true, force: true });
  const count = (name) => Number(text.match(new RegExp(`^# ${name} (\\d+)$`, "m"))?.[1] ?? NaN);
  console.log(`\nskipped on ${engine} (${titles.length}):`);
  for (const [title, why] of Object.entries(skips)) console.log(`  ${title}\n    ${why}`);
  return {
    engine, code, version: VERSION[engine](), time: (Date.now() - t0) / 1000,
    pass: count("pass"), fail: count("fail") + count("cancelled"), skipped: count("skipped"),
  };
}

const rows = [];
for (const engine of engines) rows.push(await runOn(engine));
console.log("\nengine    version                     pass  fail  skipped  time");
for (const r of rows) {
  console.log(`${r.engine.padEnd(9)} ${r.version.padEnd(27)} ${String(r.pass).padStart(4)}  ${String(r.fail).padStart(4)}  ${String(r.skipped).padStart(7)}  ${r.time.toFixed(1)} s`);
}
process.exit(rows.every((r) => r.code === 0 && r.fail === 0) ? 0 : 1);
