// The React hook (tidings/react, tidings/receive/react) as an app gets it: `npm pack` of pkg/
// installed into tests/apps/react, bundled by esbuild with the real react and react-dom (their
// development build, where <StrictMode> mounts, unmounts and mounts again), served by the
// reference server and driven in headless Chromium. Connections are counted at the server
// (`GET /_log?path=/sse`: one entry per request, `end_ms` null while it is open).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { cp } from "node:fs/promises";
import { join } from "node:path";
import * as esbuild from "esbuild";
import { startServer, launchBrowser } from "./harness.mjs";
import { ROOT, workspace } from "./package-pack.mjs";

let ws, server, browser;
before(async () => {
  ws = await workspace();
  const { tarball } = await ws.pack();
  const app = await ws.app("react", tarball);
  const dist = join(app, "dist");
  await esbuild.build({
    absWorkingDir: app, entryPoints: ["main.js", "receive.js"], bundle: true, format: "esm",
    outdir: dist, loader: { ".wasm": "file" }, logLevel: "error",
    define: { "process.env.NODE_ENV": '"development"' },
    nodePaths: [join(ROOT, "node_modules")], // react and react-dom: the repo's devDependencies
  });
  for (const f of ["main.html", "receive.html"]) await cp(join(app, f), join(dist, f));
  // Heartbeats every second: a write to a stream the page closed ends its log entry soon.
  server = await startServer(["--www", dist, "--quiet", "--heartbeat-ms", "1000"]);
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
  await ws?.cleanup();
});

/** A page of the app (`main` or `receive`), its hook ready to mount; the server log cleared. */
async function open(name) {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(m.text());
  });
  page.on("response", (r) => {
    if (r.status() >= 400 && !r.url().endsWith("/favicon.ico")) errors.push(`${r.status()} ${r.url()}`);
  });
  await page.goto(`${server.url}/${name}.html`);
  await page.waitForFunction(() => document.body.dataset.state === "ready", null, { timeout: 10_000 })
    .catch((e) => { throw new Error(`${e.message}; page errors: ${errors.join(" | ")}`); });
  await fetch(`${server.url}/_log/clear`, { method: "POST" });
  return { page, errors };
}

/** The /sse requests the server saw since the log was cleared: how many, and how many are open. */
async function connections() {
  const { entries } = await (await fetch(`${server.url}/_log?path=/sse`)).json();
  return { made: entries.length, open: entries.filter((e) => e.end_ms == null).length };
}

/** Poll `read` (every 50 ms, up to `ms`) until `ok(value)`; resolves to the last value read. */
async function until(read, ok, ms = 10_000) {
  const end = Date.now() + ms;
  let v = await read();
  while (!ok(v) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 50));
    v = await read();
  }
  return v;
}

/** Event listeners on the page's window and document (Chrome DevTools Protocol). */
async function pageListeners(page) {
  const cdp = await page.context().newCDPSession(page);
  let n = 0;
  for (const expression of ["window", "document"]) {
    const { result } = await cdp.send("Runtime.evaluate", { expression });
    n += (await cdp.send("DOMDebugger.getEventListeners", { objectId: result.objectId })).listeners.length;
  }
  await cdp.detach();
  return n;
}

const view = (page) => page.evaluate(() => {
  const o = document.getElementById("view");
  return o && { status: o.dataset.status, error: o.dataset.error, text: o.textContent };
});

test("strict mode's double mount makes one subscription and one connection; a published message renders", async () => {
  const { page, errors } = await open("main");
  try {
    await page.evaluate(() => window.app.mount("/sse"));
    await page.waitForFunction(() => document.getElementById("view")?.dataset.status === "connected", null, { timeout: 10_000 });
    const sent = await server.publish(JSON.stringify({ n: 1 }));
    await page.waitForFunction(() => document.getElementById("view").textContent === '{"n":1}', null, { timeout: 5000 });
    assert.deepEqual(await view(page), { status: "connected", error: "", text: '{"n":1}' });
    assert.ok(sent.id, "published");
    // The message came in, so any second connection of the double mount has been made by now.
    assert.equal(await page.evaluate(() => window.app.subs.size), 1, "one subscription for the double mount");
    assert.deepEqual(await connections(), { made: 1, open: 1 });
    await page.evaluate(() => window.app.unmount());
    assert.deepEqual(await until(connections, (c) => c.open === 0), { made: 1, open: 0 }, "unmount closed it");
    assert.equal(await page.evaluate(() => window.app.live()), 0);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test("strict mode mount/unmount ×100 leaves no open connection, no live subscription, no window/document listener", async () => {
  const { page, errors } = await open("main");
  try {
    const before = await pageListeners(page);
    await page.evaluate(() => window.app.mount("/sse"));
    await page.waitForFunction(() => document.getElementById("view")?.dataset.status === "connected", null, { timeout: 10_000 });
    const mounted = await pageListeners(page);
    await page.evaluate(() => window.app.unmount());
    await page.evaluate(() => window.app.cycle("/sse", 99));
    const subs = await page.evaluate(() => window.app.subs.size);
    assert.equal(subs, 100, "one subscription per strict mount, not two");
    assert.equal(await page.evaluate(() => window.app.live()), 0, "every subscription closed");
    const c = await until(connections, (x) => x.open === 0);
    assert.equal(c.open, 0, `open connections at the server: ${JSON.stringify(c)}`);
    assert.ok(c.made >= 1 && c.made <= 100, `at most one connection per mount: ${c.made}`);
    const after = await pageListeners(page);
    assert.equal(after, before, `window+document listeners: ${before} before, ${mounted} mounted, ${after} after`);
    console.log(`# ×100: ${c.made} connections made, 0 open; listeners ${before} → ${mounted} mounted → ${after}`);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test("a re-render with a new options literal keeps the subscription; a new URL re-subscribes and closes the old one", async () => {
  const { page, errors } = await open("main");
  try {
    const connected = () => page.waitForFunction(() => document.getElementById("view")?.dataset.status === "connected", null, { timeout: 10_000 });
    await page.evaluate(() => window.app.mount("/sse"));
    await connected();
    await page.evaluate(() => window.app.mount("/sse")); // the same props: options(false) is a new object
    assert.equal(await page.evaluate(() => window.app.subs.size), 1, "same URL and options JSON: the same subscription");
    await page.evaluate(() => window.app.mount("/sse?room=2"));
    await connected();
    const sent = await server.publish(JSON.stringify({ room: 2 }));
    await page.waitForFunction(() => document.getElementById("view").textContent === '{"room":2}', null, { timeout: 5000 });
    assert.ok(sent.id);
    assert.deepEqual(await page.evaluate(() => [window.app.subs.size, window.app.live()]), [2, 1], "the old one closed");
    assert.deepEqual(await until(connections, (c) => c.open === 1), { made: 2, open: 1 });
    await page.evaluate(() => window.app.unmount());
    assert.equal((await until(connections, (c) => c.open === 0)).open, 0);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test("tidings/receive/react: a reducer's state renders; a bad URL is the error, status closed", async () => {
  const { page, errors } = await open("receive");
  try {
    await page.evaluate(() => window.app.mount("/sse", true));
    assert.equal((await view(page)).text, '{"count":0,"last":null}', "initial before any message");
    await page.waitForFunction(() => document.getElementById("view")?.dataset.status === "connected", null, { timeout: 10_000 });
    await server.publish(JSON.stringify("a"));
    await server.publish(JSON.stringify("b"));
    await page.waitForFunction(() => document.getElementById("view").textContent === '{"count":2,"last":"b"}', null, { timeout: 5000 });
    await page.evaluate(() => window.app.unmount());
    assert.equal(await page.evaluate(() => window.app.live()), 0);
    assert.equal((await until(connections, (c) => c.open === 0)).open, 0);

    await page.evaluate(() => window.app.mount("ftp://example.com/x"));
    await page.waitForFunction(() => document.getElementById("view")?.dataset.error, null, { timeout: 5000 });
    assert.deepEqual(await view(page), { status: "closed", error: "invalid-url", text: "null" });
    await page.evaluate(() => window.app.unmount());
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});
