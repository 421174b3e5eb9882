// Shared helpers for the Playwright browser tests: start the reference server
// on a free loopback port, launch Debian's headless Chromium (or Firefox ESR
// with `TIDINGS_E2E_ENGINE=firefox`, WebKitGTK with `webkit`: `make
// test-engines` runs the whole suite so), read the server's request log.
// Nothing here downloads a browser.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { chromium, firefox } from "playwright-core";

const ROOT = new URL("../../", import.meta.url).pathname;
const SERVER_BIN = process.env.TIDINGS_SERVER_BIN ?? `${ROOT}target/release/tidings-server`;
// The package the server serves (`OUT=… scripts/build-pkg.sh` builds another).
const PKG_DIR = process.env.TIDINGS_PKG_DIR ?? `${ROOT}pkg`;

/** Start tidings-server on port 0; resolves to { url, stop(), log(), lines }. */
export async function startServer(args = []) {
  // Defaults for what `args` does not set itself (the server rejects a repeated flag).
  const defaults = [["--port", "0"], ["--www", `${ROOT}www`], ["--pkg", PKG_DIR]]
    .filter(([flag]) => !args.includes(flag))
    .flat();
  const child = spawn(SERVER_BIN, [...defaults, ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = [];
  const rl = createInterface({ input: child.stdout });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("server did not start in 10 s")), 10_000);
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
    rl.on("line", (line) => {
      lines.push(line);
      const m = line.match(/listening on (http:\/\/\S+)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
  });
  return {
    url,
    lines,
    async log() { return (await fetch(`${url}/_log`)).json(); },
    async publish(data, event) {
      const q = event ? `?event=${encodeURIComponent(event)}` : "";
      return (await fetch(`${url}/publish${q}`, { method: "POST", body: data })).json();
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.kill("SIGINT");
      await once(child, "exit");
    },
  };
}

/** The engine `launchBrowser` starts: `chromium` (default), `firefox` or `webkit`. */
export const ENGINE = process.env.TIDINGS_E2E_ENGINE ?? "chromium";

const FIREFOX_SHIM = new URL("../engines/firefox-bidi-shim.mjs", import.meta.url).pathname;

/**
 * Debian's Firefox ESR over WebDriver BiDi. `channel: "moz-firefox"` selects
 * Playwright's BiDi route for stock Firefox; the shim runs `FIREFOX` behind a
 * proxy that answers the one command it lacks (firefox-bidi-shim.mjs).
 */
export function launchFirefox() {
  return firefox.launch({
    channel: "moz-firefox", executablePath: FIREFOX_SHIM, headless: true,
    env: { ...process.env, FIREFOX: process.env.FIREFOX ?? "/usr/bin/firefox-esr" },
  });
}

/**
 * Launch /usr/bin/chromium headless with the flags this machine needs
 * (`options` are Chromium's launch options); with `ENGINE` `firefox`, Firefox
 * ESR instead, and with `webkit`, WebKitGTK's MiniBrowser, without them.
 */
export async function launchBrowser(options = {}) {
  if (ENGINE === "firefox") return launchFirefox();
  if (ENGINE === "webkit") {
    // WebKitGTK over WebDriver classic (tests/engines/webkit-playwright.mjs: what it maps, what it lacks).
    const { launchWebKitBrowser } = await import("../engines/webkit-playwright.mjs");
    return launchWebKitBrowser();
  }
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
      "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-quic"],
    ...options,
  });
}
