// Helpers for the package smoke tests: pack pkg/ like a publish would, install
// the tarball into a throwaway app copied from tests/apps/ under a temp dir,
// and drive the built app in a page. Offline: the tarball has no dependencies,
// and the build tools are the repo's own devDependencies.
import { execFile } from "node:child_process";
import { cp, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import assert from "node:assert/strict";

const run = promisify(execFile);
export const ROOT = new URL("../../", import.meta.url).pathname;
const NPM_QUIET = ["--no-audit", "--no-fund", "--loglevel=error", "--offline", "--ignore-scripts"];

/** A temp dir removed by `cleanup()`; `pack()` puts `npm pack` of pkg/ there. */
export async function workspace() {
  const dir = await mkdtemp(join(tmpdir(), "tidings-pkg-"));
  return {
    dir,
    async pack() {
      const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", dir, ...NPM_QUIET], { cwd: `${ROOT}pkg` });
      const [info] = JSON.parse(stdout);
      return { tarball: join(dir, info.filename), files: info.files.map((f) => f.path).sort(), info };
    },
    /** Copy tests/apps/<name> + tests/apps/common into <dir>/<name>, install the tarball. */
    async app(name, tarball) {
      const app = join(dir, name);
      await cp(`${ROOT}tests/apps/${name}`, app, { recursive: true });
      await cp(`${ROOT}tests/apps/common`, app, { recursive: true });
      await writeFile(join(app, "package.json"), JSON.stringify({ name: `app-${name}`, private: true, type: "module" }));
      await run("npm", ["install", "--no-package-lock", ...NPM_QUIET, tarball], { cwd: app });
      return app;
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** `tsc --noEmit -p <dir>` with the current TypeScript (node_modules/typescript); rejects with its output. */
export async function typecheck(dir) {
  try {
    await run(process.execPath, [`${ROOT}node_modules/typescript/bin/tsc`, "--noEmit", "-p", dir]);
  } catch (e) {
    throw new Error(`tsc failed in ${dir}:\n${e.stdout}${e.stderr}`);
  }
}

/** The files of a directory, recursively (relative paths, sorted). */
export async function listFiles(dir) {
  return (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath ?? d.path, d.name).slice(dir.length + 1))
    .sort();
}

/**
 * Open `url` (a page built from tests/apps/common/app.ts), wait for `open`,
 * publish a price and a plain message through `server`, and check that the
 * app's `for await` loop saw both, stopped, and closed the subscription.
 * Resolves to what the app saw.
 */
export async function exerciseApp(browser, server, url) {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(m.text());
  });
  page.on("response", (r) => {
    if (r.status() >= 400 && !r.url().endsWith("/favicon.ico")) errors.push(`${r.status()} ${r.url()}`);
  });
  try {
    await page.goto(url);
    await page.waitForFunction(() => document.body?.dataset.state?.startsWith("open"), null, { timeout: 10_000 })
      .catch(async (e) => { throw new Error(`${e.message}; page errors: ${errors.join(" | ")}; state: ${await page.evaluate(() => document.body?.dataset.state)}`); });
    const price = await server.publish(JSON.stringify({ symbol: "TDG", value: 42.5 }), "price");
    const plain = await server.publish(JSON.stringify("hello"));
    await page.waitForFunction(() => window.app?.done, null, { timeout: 5000 });
    const seen = await page.evaluate(() => ({
      out: window.app.out, state: window.app.state(), price: document.body.dataset.price, codes: window.app.codes,
    }));
    assert.deepEqual(seen.out.map(({ event, id, data }) => ({ event, id, data })), [
      { event: "price", id: price.id, data: { symbol: "TDG", value: 42.5 } },
      { event: "message", id: plain.id, data: "hello" },
    ]);
    assert.equal(seen.price, "42.50", "the typed listener ran too");
    assert.equal(seen.state, "closed", "breaking out of for-await closed the subscription");
    assert.equal(seen.codes.length, 18, "every ErrorCode (invalid-option, headers, not-initialized, resume-ignored and the appender's four included)");
    assert.deepEqual(errors, []);
    return seen;
  } finally {
    await page.close();
  }
}
