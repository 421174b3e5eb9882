// Engine drivers for the cross-engine suite: one shape for every browser, so a
// test body is written once:
//   { name, version, goto(url), evaluate(fn, arg), newPage(), setOffline(bool) | null,
//     lacks: { offline? }, close() }
// `evaluate` runs `fn(arg)` in the page (fn may be async) and resolves to its
// JSON-serialisable result, or rejects with the page's error. The driver is
// its first page; `newPage()` opens another of the same profile (shared
// BroadcastChannel, Web Locks and storage) as `{ goto, evaluate, close }`.
// `setOffline` is the browser's own network emulation, null where the driver
// has none (`lacks.offline` says why).
// Chromium and Firefox go through playwright-core (Firefox over WebDriver
// BiDi); WebKitGTK through WebKitWebDriver's WebDriver classic endpoints,
// called with fetch (no driver library), on an Xvfb display.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { launchBrowser, launchFirefox as launchFirefoxBrowser } from "../e2e/harness.mjs";

const FIREFOX = process.env.FIREFOX ?? "/usr/bin/firefox-esr";
export const WEBKIT_DRIVER = process.env.WEBKIT_DRIVER ?? "/usr/bin/WebKitWebDriver";
export const MINIBROWSER = process.env.MINIBROWSER ?? "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser";
// How long one evaluate may run in WebKit (the script timeout).
const SCRIPT_TIMEOUT_MS = 30_000;

/** The engines by name, each `() => Promise<driver>`. */
export const ENGINES = { chromium: launchChromium, firefox: launchFirefox, webkit: launchWebKit };

/** Why `name` cannot run here (its browser is not installed), or null. */
export function missing(name) {
  const need = {
    chromium: [process.env.CHROMIUM ?? "/usr/bin/chromium"],
    firefox: [FIREFOX],
    webkit: [WEBKIT_DRIVER, MINIBROWSER, "/usr/bin/Xvfb"],
  }[name];
  const absent = need.filter((p) => !existsSync(p));
  return absent.length ? `not installed: ${absent.join(", ")} (run scripts/bootstrap.sh engines)` : null;
}

/** A Playwright browser, a context of it and one page of that as a driver. */
async function playwrightDriver(name, browser) {
  const context = await browser.newContext();
  const wrap = (page) => ({
    async goto(url) { await page.goto(url); },
    evaluate: (fn, arg) => page.evaluate(fn, arg),
    async close() { await page.close(); },
  });
  return {
    name,
    version: browser.version(),
    ...wrap(await context.newPage()),
    newPage: async () => wrap(await context.newPage()),
    setOffline: (offline) => context.setOffline(offline),
    lacks: {},
    async close() { await browser.close(); },
  };
}

async function launchChromium() {
  return playwrightDriver("chromium", await launchBrowser());
}

async function launchFirefox() {
  return playwrightDriver("firefox", await launchFirefoxBrowser());
}

// ----- WebKitGTK over WebDriver classic ---------------------------------------

/** A free loopback TCP port (listen on 0, close, reuse the number). */
export async function freePort() {
  const srv = createServer();
  srv.listen(0, "127.0.0.1");
  await once(srv, "listening");
  const { port } = srv.address();
  srv.close();
  await once(srv, "close");
  return port;
}

/** Start Xvfb on a display it picks itself (`-displayfd`); resolves to { display, child }. */
export async function startXvfb() {
  const child = spawn("Xvfb", ["-displayfd", "3", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"], {
    stdio: ["ignore", "ignore", "ignore", "pipe"],
  });
  let out = "";
  const display = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("Xvfb did not start in 10 s")), 10_000);
    child.once("exit", (code) => reject(new Error(`Xvfb exited with ${code}`)));
    child.stdio[3].on("data", (d) => {
      out += d;
      if (out.includes("\n")) { clearTimeout(timer); resolve(`:${out.trim()}`); }
    });
  });
  return { display, child };
}

/** One W3C WebDriver call; resolves to `value`, rejects on a WebDriver error. */
export async function wd(base, method, path, body) {
  const r = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await r.json();
  if (!r.ok || json.value?.error) {
    throw new Error(`WebDriver ${method} ${path}: ${json.value?.error}: ${json.value?.message}`);
  }
  return json.value;
}

/** Poll WebKitWebDriver's /status until it is ready (it starts in well under a second). */
export async function waitReady(base, child) {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`WebKitWebDriver exited with ${child.exitCode}`);
    try {
      if ((await wd(base, "GET", "/status")).ready) return;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("WebKitWebDriver not ready in 10 s");
}

/**
 * The page-side wrapper of `evaluate` for execute/async: runs the function
 * with the argument, hands back `{ ok }` or `{ err }` (a rejection would
 * otherwise surface as a bare "javascript error" without the message).
 */
const ASYNC_WRAPPER = `const done = arguments[arguments.length - 1];
const fn = FN;
Promise.resolve().then(() => fn(arguments[0])).then(
  (v) => done({ ok: v === undefined ? null : v }),
  (e) => done({ err: String(e) + (e && e.stack ? "\\n" + e.stack : "") }));`;

/**
 * The windows of one WebDriver session as pages. WebDriver classic runs
 * every command in the session's current window, so each page switches to
 * its own first, and the commands of all pages run one at a time. `first`
 * is the window the session opened with (`handle`); `open()` adds one.
 */
function webkitPages(base, s, handle) {
  let current = handle;
  let queue = Promise.resolve();
  const serial = (f) => {
    const run = queue.then(f);
    queue = run.catch(() => {});
    return run;
  };
  const page = (h) => {
    const on = async () => {
      if (current !== h) { await wd(base, "POST", `${s}/window`, { handle: h }); current = h; }
    };
    return {
      goto: (url) => serial(async () => { await on(); await wd(base, "POST", `${s}/url`, { url }); }),
      evaluate: (fn, arg) => serial(async () => {
        await on();
        const script = ASYNC_WRAPPER.replace("FN", () => fn.toString());
        const r = await wd(base, "POST", `${s}/execute/async`, { script, args: [arg ?? null] });
        if (r && "err" in r) throw new Error(`in the page: ${r.err}`);
        return r?.ok;
      }),
      close: () => serial(async () => { await on(); await wd(base, "DELETE", `${s}/window`); current = null; }),
    };
  };
  // A window, not a tab: MiniBrowser shows one tab of a window at a time, so
  // a second tab is really hidden (visibilityState "hidden") and tidings pauses it.
  const open = () => serial(async () => page((await wd(base, "POST", `${s}/window/new`, { type: "window" })).handle));
  return { first: page(handle), open };
}

async function launchWebKit() {
  const xvfb = await startXvfb();
  const port = await freePort();
  const driver = spawn(WEBKIT_DRIVER, [`--port=${port}`], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, DISPLAY: xvfb.display },
  });
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    for (const c of [driver, xvfb.child]) {
      if (c.exitCode === null && c.signalCode === null) { c.kill("SIGTERM"); await once(c, "exit"); }
    }
  };
  try {
    await waitReady(base, driver);
    const session = await wd(base, "POST", "/session", {
      capabilities: { alwaysMatch: { "webkitgtk:browserOptions": { binary: MINIBROWSER, args: ["--automation"] } } },
    });
    const s = `/session/${session.sessionId}`;
    await wd(base, "POST", `${s}/timeouts`, { script: SCRIPT_TIMEOUT_MS });
    const pages = webkitPages(base, s, await wd(base, "GET", `${s}/window`));
    return {
      name: "webkit",
      version: session.capabilities.browserVersion,
      ...pages.first,
      newPage: pages.open,
      setOffline: null,
      lacks: { offline: "WebDriver classic has no network emulation (no offline mode in WebKitWebDriver)" },
      async close() {
        await wd(base, "DELETE", s).catch(() => {});
        await stop();
      },
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
