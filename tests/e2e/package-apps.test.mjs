// The npm package as an app gets it: `npm pack` of pkg/ → tarball → installed
// into throwaway apps (tests/apps/) built with esbuild and with Vite, each
// served by the reference server and loaded in headless Chromium: the page
// receives a published message and iterates with `for await`. Also Vite's dev
// server (cross-origin to the reference server).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { cp, readFile } from "node:fs/promises";
import { join } from "node:path";
import * as esbuild from "esbuild";
import { build as viteBuild, createServer as viteServer } from "vite";
import { startServer, launchBrowser } from "./harness.mjs";
import { workspace, typecheck, listFiles, exerciseApp } from "./package-pack.mjs";

let ws, tarball, browser;
const servers = [];
before(async () => {
  ws = await workspace();
  ({ tarball } = await ws.pack());
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  for (const s of servers) await s.stop();
  await ws?.cleanup();
});

/** A reference server whose --www is `dir` (the app's build output). */
async function serve(dir) {
  const s = await startServer(["--www", dir, "--quiet"]);
  servers.push(s);
  return s;
}

test("the tarball holds the entry, its types, the glue and the wasm, and nothing else", async () => {
  const { files, info } = await ws.pack();
  // snippets/: the JS half of the message path (src/boundary.js), under
  // the directory wasm-bindgen names after the crate's hash.
  const snippets = files.filter((f) => f.startsWith("snippets/"));
  assert.equal(snippets.length, 1, `one snippet: ${snippets}`);
  assert.match(snippets[0], /^snippets\/tidings-[0-9a-f]+\/src\/boundary\.js$/);
  assert.deepEqual(files.filter((f) => !f.startsWith("snippets/")), ["LICENSE-APACHE", "LICENSE-MIT", "README.md", "index.d.ts", "index.js", "package.json", "tidings.js", "tidings_bg.wasm", "wasm-url.d.ts"]);
  const pkg = JSON.parse(await readFile(new URL("../../pkg/package.json", import.meta.url), "utf8"));
  const cargo = await readFile(new URL("../../Cargo.toml", import.meta.url), "utf8");
  assert.equal(pkg.version, cargo.match(/^version = "(.*)"/m)[1]);
  assert.equal(info.version, pkg.version);
  assert.equal(pkg.sideEffects, false);
  assert.equal(pkg.exports["."].types, "./index.d.ts");
  assert.equal(pkg.exports["."].browser, "./index.js");
  assert.ok(pkg.keywords.includes("server-sent-events"));
  assert.ok(pkg.license);
  // The README is the package's own: install and loading, no make commands
  // or repo-relative links; the licenses the `license` field names ship.
  const readme = await readFile(new URL("../../pkg/README.md", import.meta.url), "utf8");
  assert.match(readme, /npm install tidings/);
  assert.match(readme, /await init\(\)/);
  assert.doesNotMatch(readme, /\bmake \w|\]\((?!https?:)|@REPOSITORY@/);
  assert.match(readme, new RegExp(cargo.match(/^repository = "(.*)"/m)[1].replace(/[.]/g, "\\.")));
  assert.equal(pkg.license, "MIT OR Apache-2.0");
  for (const f of ["LICENSE-MIT", "LICENSE-APACHE"]) {
    assert.match(await readFile(new URL(`../../pkg/${f}`, import.meta.url), "utf8"), /Permission is hereby granted|Apache License/);
  }
});

test("esbuild app, wasm loaded with --loader:.wasm=file", async () => {
  const app = await ws.app("esbuild", tarball);
  await typecheck(app); // the app's TypeScript against the installed package's types
  const dist = join(app, "dist");
  await esbuild.build({
    absWorkingDir: app, entryPoints: ["main.ts"], bundle: true, format: "esm", minify: true,
    outdir: dist, loader: { ".wasm": "file" }, logLevel: "error",
  });
  await cp(join(app, "index.html"), join(dist, "index.html"));
  const files = await listFiles(dist);
  assert.ok(files.some((f) => /^tidings_bg-[\w-]+\.wasm$/.test(f)), `esbuild copied the wasm: ${files}`);
  const server = await serve(dist);
  const seen = await exerciseApp(browser, server, `${server.url}/index.html`);
  console.log(`# esbuild (file loader): ${seen.out.length} messages over ${seen.out[0].transport}`);
});

test("esbuild app, wasm copied next to the bundle, init() with no argument", async () => {
  const app = await ws.app("esbuild", tarball);
  const dist = join(app, "dist");
  await esbuild.build({
    absWorkingDir: app, entryPoints: ["copy.ts"], bundle: true, format: "esm", minify: true,
    outdir: dist, logLevel: "error",
  });
  await cp(join(app, "node_modules/tidings/tidings_bg.wasm"), join(dist, "tidings_bg.wasm"));
  await cp(join(app, "copy.html"), join(dist, "index.html"));
  const server = await serve(dist);
  await exerciseApp(browser, server, `${server.url}/`);
});

test("Vite build (vite build): init() with no argument", async () => {
  const app = await ws.app("vite", tarball);
  const dist = join(app, "dist");
  await viteBuild({ root: app, logLevel: "error", configFile: false, build: { outDir: dist, emptyOutDir: true } });
  const files = await listFiles(dist);
  assert.ok(files.some((f) => f.endsWith(".wasm")), `Vite emitted the wasm: ${files}`);
  const server = await serve(dist);
  const seen = await exerciseApp(browser, server, `${server.url}/`);
  console.log(`# vite build: ${files.length} files, ${seen.out.length} messages over ${seen.out[0].transport}`);
});

test("Vite dev server, cross-origin to the reference server", async () => {
  const app = await ws.app("vite", tarball);
  const server = await serve(join(app)); // any dir: the page comes from Vite
  const dev = await viteServer({
    root: app, logLevel: "error", configFile: false,
    server: { host: "127.0.0.1", port: 0, strictPort: false, hmr: false },
  });
  await dev.listen();
  try {
    const { port } = dev.httpServer.address();
    await exerciseApp(browser, server, `http://127.0.0.1:${port}/?server=${encodeURIComponent(server.url)}`);
  } finally {
    await dev.close();
  }
});
