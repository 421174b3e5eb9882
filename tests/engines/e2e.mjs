// `make test-engines`, second part: the whole e2e suite (tests/e2e/*.test.mjs)
// on another engine than Chromium: `node tests/engines/e2e.mjs [firefox [file…]]`
// (files: a subset, e.g. tests/e2e/poll.test.mjs).
// harness.mjs launches the engine named by TIDINGS_E2E_ENGINE; the tests that
// cannot run there (e2e-skips.mjs) are left out by title and counted as
// skipped, each reason printed. Prints the spec reporter's output, then one
// line: engine, version, pass / fail / skipped, time. Exits 1 on a failure.
// WebKitGTK is not here: Playwright has no route to it on this machine (its
// own WebKit is a browser build from outside Debian; WebKitWebDriver speaks
// WebDriver classic only: no request interception, no network emulation, no
// console, one session per driver process), so it runs the cross-engine
// cases (run.mjs) only.
import { spawn, execFileSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SKIPS } from "./e2e-skips.mjs";

const VERSION = {
  firefox: () => execFileSync(process.env.FIREFOX ?? "/usr/bin/firefox-esr", ["--version"], { encoding: "utf8" }).trim(),
};

const engine = process.argv[2] ?? "firefox";
if (!VERSION[engine]) {
  console.error(`unknown engine ${engine}; the whole e2e suite runs on: ${Object.keys(VERSION).join(", ")}`);
  process.exit(2);
}
const skips = SKIPS[engine] ?? {};
const escape = (t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const titles = Object.keys(skips);
// Node 20 runs every test under a parent whose name matches: the root
// (`<root>`) must not match, or nothing is left out.
const pattern = titles.length ? [`--test-name-pattern=^(?!(?:<root>|${titles.map(escape).join("|")})$)`] : [];
const dir = mkdtempSync(join(tmpdir(), "tidings-e2e-"));
const tap = join(dir, "e2e.tap");
const root = new URL("../../", import.meta.url).pathname;
const t0 = Date.now();
const child = spawn(process.execPath, [
  "--test", `--test-concurrency=${process.env.E2E_CONCURRENCY ?? 2}`, "--test-reporter=spec", "--test-reporter-destination=stdout",
  "--test-reporter=tap", `--test-reporter-destination=${tap}`, ...pattern,
  ...(process.argv.length > 3 ? process.argv.slice(3) : ["tests/e2e/"]),
], { cwd: root, stdio: "inherit", env: { ...process.env, TIDINGS_E2E_ENGINE: engine } });
const [code] = await once(child, "exit");
const text = readFileSync(tap, "utf8");
rmSync(dir, { recursive: true, force: true });
const count = (name) => Number(text.match(new RegExp(`^# ${name} (\\d+)$`, "m"))?.[1] ?? NaN);
const row = { pass: count("pass"), fail: count("fail") + count("cancelled"), skipped: count("skipped") };
console.log(`\nskipped on ${engine} (${titles.length}):`);
for (const [title, why] of Object.entries(skips)) console.log(`  ${title}\n    ${why}`);
console.log("\nengine    version                  pass  fail  skipped  time");
console.log(`${engine.padEnd(9)} ${VERSION[engine]().padEnd(24)} ${String(row.pass).padStart(4)}  ${String(row.fail).padStart(4)}  ${String(row.skipped).padStart(7)}  ${((Date.now() - t0) / 1000).toFixed(1)} s`);
process.exit(code === 0 && row.fail === 0 ? 0 : 1);
