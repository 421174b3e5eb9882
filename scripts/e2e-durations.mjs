// A node:test reporter for scripts/browser-tests.sh: at the end of the run, the
// ten e2e files whose tests took longest (the sum of their top-level tests'
// durations, so a file's own before/after hooks are not counted), so a slow
// run shows where the time went. The spec reporter prints each test.
import { relative } from "node:path";

export default async function* durations(source) {
  const perFile = new Map();
  for await (const { type, data } of source) {
    if ((type !== "test:pass" && type !== "test:fail") || data.nesting !== 0) continue;
    const file = data.file ? relative(process.cwd(), data.file) : "(unknown file)";
    const entry = perFile.get(file) ?? { ms: 0, tests: 0, failed: 0 };
    entry.ms += data.details?.duration_ms ?? 0;
    entry.tests += 1;
    if (type === "test:fail") entry.failed += 1;
    perFile.set(file, entry);
  }
  const slowest = [...perFile].sort((a, b) => b[1].ms - a[1].ms).slice(0, 10);
  if (slowest.length === 0) return;
  yield "\ne2e: the 10 slowest files (seconds, summed over their tests)\n";
  for (const [file, { ms, tests, failed }] of slowest) {
    const fails = failed ? `, ${failed} failed` : "";
    yield `e2e: ${(ms / 1000).toFixed(1).padStart(7)} s  ${file} (${tests} tests${fails})\n`;
  }
}
