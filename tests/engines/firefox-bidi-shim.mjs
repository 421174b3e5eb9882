#!/usr/bin/env node
// Stands in for the Firefox executable Playwright launches (drivers.mjs gives
// it as `executablePath`): runs the real Firefox with the same arguments and
// puts a WebDriver BiDi proxy between the two. Playwright 1.65 sends
// `emulation.setMediaFeaturesOverride` when it creates a browser context;
// Firefox ESR 153 does not know that command and answers "unknown command",
// which fails every `newPage()`. The proxy answers that one command with an
// empty success (nothing is emulated: the tests set no colour scheme) and
// passes everything else through unchanged.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { once } from "node:events";
import utilsBundle from "playwright-core/lib/utilsBundle";

// The `ws` package Playwright bundles (no dependency of our own).
const { ws: WebSocket, wsServer: WebSocketServer } = utilsBundle;

const FIREFOX = process.env.FIREFOX ?? "/usr/bin/firefox-esr";
const UNSUPPORTED = new Set(["emulation.setMediaFeaturesOverride"]);

const child = spawn(FIREFOX, process.argv.slice(2), { stdio: ["ignore", "inherit", "pipe"] });
for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

/** Proxy BiDi from a local port to `upstream`; resolves to the local ws:// base. */
async function proxy(upstream) {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await once(server, "listening");
  server.on("connection", (client, req) => {
    const up = new WebSocket(upstream + req.url);
    const early = [];
    up.on("open", () => { for (const m of early.splice(0)) up.send(m); });
    client.on("message", (data) => {
      const text = data.toString();
      const msg = JSON.parse(text);
      if (UNSUPPORTED.has(msg.method)) {
        client.send(JSON.stringify({ type: "success", id: msg.id, result: {} }));
      } else if (up.readyState === WebSocket.OPEN) {
        up.send(text);
      } else {
        early.push(text);
      }
    });
    up.on("message", (data) => client.send(data.toString()));
    up.on("close", () => client.close());
    client.on("close", () => up.close());
    up.on("error", () => client.close());
  });
  return `ws://127.0.0.1:${server.address().port}`;
}

// Firefox announces its endpoint on stderr; Playwright reads it there, so
// the announcement is rewritten to the proxy's address.
const lines = createInterface({ input: child.stderr });
lines.on("line", async (line) => {
  const m = line.match(/^(.*WebDriver BiDi listening on )(ws:\/\/\S+)$/);
  if (m) line = m[1] + await proxy(m[2]);
  process.stderr.write(line + "\n");
});
