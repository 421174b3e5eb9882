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
import { ROOT, workspace, typecheck, listFiles, exerciseApp } from "./package-pack.mjs";

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
  // snippets/: the JS half of the browser calls (src/boundary.js) and, in
  // the full flavour only, of the upstream calls (src/upstream/request.js,
  // src/upstream/report/stats.js), under the directory wasm-bindgen names
  // after the crate's hash.
  const snippets = files.filter((f) => /^(receive\/)?snippets\//.test(f));
  const shape = (f) => f.replace(/tidings-[0-9a-f]+\//, "tidings-HASH/");
  assert.deepEqual(snippets.map(shape).sort(), [
    "receive/snippets/tidings-HASH/src/boundary.js",
    "snippets/tidings-HASH/src/boundary.js",
    "snippets/tidings-HASH/src/upstream/report/stats.js",
    "snippets/tidings-HASH/src/upstream/request.js",
  ]);
  assert.deepEqual(files.filter((f) => !snippets.includes(f)), [
    "LICENSE-APACHE", "LICENSE-MIT", "README.md", "index.d.ts", "index.js", "package.json",
    "react-hook.js", "react.d.ts", "react.js", "receive-react.d.ts", "receive-react.js",
    "receive.d.ts", "receive.js", "receive/tidings.js", "receive/tidings_bg.wasm",
    "subscription.js", "tidings.js", "tidings_bg.wasm", "timeline.png", "wasm-url.d.ts",
  ]);
  const pkg = JSON.parse(await readFile(new URL("../../pkg/package.json", import.meta.url), "utf8"));
  const cargo = await readFile(new URL("../../Cargo.toml", import.meta.url), "utf8");
  assert.equal(pkg.version, cargo.match(/^version = "(.*)"/m)[1]);
  assert.equal(info.version, pkg.version);
  assert.equal(pkg.sideEffects, false);
  assert.equal(pkg.exports["."].types, "./index.d.ts");
  assert.equal(pkg.exports["."].browser, "./index.js");
  assert.equal(pkg.exports["./receive"].browser, "./receive.js");
  assert.equal(pkg.exports["./receive"].types, "./receive.d.ts");
  // The React hook: its own entries, react an optional peer (no warning for an app without it).
  assert.deepEqual(pkg.exports["./react"], { types: "./react.d.ts", default: "./react.js" });
  assert.deepEqual(pkg.exports["./receive/react"], { types: "./receive-react.d.ts", default: "./receive-react.js" });
  assert.equal(pkg.peerDependenciesMeta.react.optional, true);
  assert.equal(pkg.dependencies, undefined);
  assert.ok(pkg.keywords.includes("server-sent-events"));
  assert.ok(pkg.license);
  // The README is the package's own: install and loading, the hook, the
  // timeline's picture, no make commands; its links resolve in the package
  // (tests/docs-links.test.mjs); the licenses the `license` field names ship.
  const readme = await readFile(new URL("../../pkg/README.md", import.meta.url), "utf8");
  assert.match(readme, /npm install tidings/);
  assert.match(readme, /await init\(\)/);
  assert.match(readme, /from "tidings\/react"/);
  assert.match(readme, /!\[[^\]]+\]\(timeline\.png\)/);
  assert.doesNotMatch(readme, /\bmake \w|@REPOSITORY@|\.invalid\b/);
  assert.doesNotMatch(JSON.stringify(pkg), /\.invalid\b|@REPOSITORY@/);
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

/** Bytes of the receive flavour's wasm as the tarball installed it in `app`. */
const receiveWasm = (app) => readFile(join(app, "node_modules/tidings/receive/tidings_bg.wasm"));

test("receive-only entry: esbuild app gets the receive wasm, not the full one", async () => {
  const app = await ws.app("esbuild", tarball);
  const dist = join(app, "dist-receive"); // the same app dir as the tests before: its own output
  await esbuild.build({
    absWorkingDir: app, entryPoints: ["receive.ts"], bundle: true, format: "esm", minify: true,
    outdir: dist, loader: { ".wasm": "file" }, logLevel: "error",
  });
  await cp(join(app, "receive.html"), join(dist, "index.html"));
  const wasms = (await listFiles(dist)).filter((f) => f.endsWith(".wasm"));
  assert.equal(wasms.length, 1, `one wasm: ${wasms}`);
  const [got, want, full] = await Promise.all([
    readFile(join(dist, wasms[0])), receiveWasm(app), readFile(join(app, "node_modules/tidings/tidings_bg.wasm")),
  ]);
  assert.ok(got.equals(want), "the emitted wasm is receive/tidings_bg.wasm");
  assert.ok(want.length < full.length * 0.85, `receive wasm ${want.length} bytes vs full ${full.length}`);
  const server = await serve(dist);
  const seen = await exerciseApp(browser, server, `${server.url}/index.html`);
  console.log(`# esbuild receive-only: wasm ${want.length} bytes (full ${full.length}); ${seen.out.length} messages over ${seen.out[0].transport}`);
});

test("receive-only entry: Vite build, init() with no argument", async () => {
  const app = await ws.app("vite-receive", tarball);
  const dist = join(app, "dist");
  await viteBuild({ root: app, logLevel: "error", configFile: false, build: { outDir: dist, emptyOutDir: true } });
  const wasms = (await listFiles(dist)).filter((f) => f.endsWith(".wasm"));
  assert.equal(wasms.length, 1, `one wasm: ${wasms}`);
  assert.ok((await readFile(join(dist, wasms[0]))).equals(await receiveWasm(app)), "Vite emitted the receive wasm");
  const server = await serve(dist);
  await exerciseApp(browser, server, `${server.url}/`);
});

test("receive-only entry as a drop-in <script type=module>: subscribe works, ack and the parts it lacks are refused, no upstream calls", async () => {
  const server = await serve(join(ROOT, "www"));
  const page = await browser.newPage();
  try {
    await page.goto(`${server.url}/`);
    const got = await page.evaluate(async () => {
      const m = await import("/pkg/receive.js");
      await m.default();
      const refused = (options) => {
        try { m.subscribe("/sse", options).close(); return null; } catch (e) { return { code: e.code, message: e.message }; }
      };
      const ack = refused({ ack: "/ack" });
      // What this build lacks is refused, never silently ignored; off is fine.
      const lacks = {
        crossTab: refused({ crossTab: true }),
        protocol: refused({ protocol: "durable-streams" }),
        offset: refused({ offset: "-1" }),
        persist: refused({ persist: "session" }),
        debug: refused({ debug: true }),
        method: refused({ method: "POST" }),
        body: refused({ body: "x" }),
        resume: refused({ resume: "replay" }),
        end: refused({ end: { data: "[DONE]" } }),
      };
      const off = refused({ crossTab: false, protocol: "default", debug: false, persist: undefined });
      const sub = m.subscribe("/sse", { parse: "json" });
      const open = await new Promise((r) => sub.addEventListener("open", (e) => r(e.transport), { once: true }));
      window.sub = sub;
      window.got = [];
      sub.addEventListener("message", (e) => window.got.push({ id: e.id, data: e.data }));
      return { exports: Object.keys(m).sort(), ack, lacks, off, open };
    });
    assert.deepEqual(got.exports, ["ErrorCode", "default", "subscribe"]);
    assert.equal(got.ack?.code, "invalid-option", JSON.stringify(got.ack));
    assert.match(got.ack.message, /ack/);
    const features = { crossTab: "cross-tab", protocol: "durable-streams", offset: "durable-streams", persist: "persist", debug: "debug",
      method: "post-streams", body: "post-streams", resume: "post-streams", end: "post-streams" };
    for (const [option, feature] of Object.entries(features)) {
      const e = got.lacks[option];
      assert.equal(e?.code, "invalid-option", `${option}: ${JSON.stringify(e)}`);
      assert.ok(e.message.includes(`${option}: expected none in this build; the "tidings" entry has it (feature "${feature}")`), e.message);
    }
    assert.equal(got.off, null, "options set to their defaults are accepted");
    const sent = await server.publish(JSON.stringify({ n: 1 }));
    await page.waitForFunction(() => window.got.length > 0, null, { timeout: 5000 });
    assert.deepEqual(await page.evaluate(() => window.got), [{ id: sent.id, data: { n: 1 } }]);
    await page.evaluate(() => window.sub.close());
  } finally {
    await page.close();
  }
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
