// The `poll` transport against servers people actually run, each started by
// this test on loopback, same-origin (the page served by that server) and
// cross-origin (the page on the reference server):
//  - an Express 5 app with its default ETag handling: a JSON route
//    (`res.json`) and `express.static`;
//  - nginx (Debian `nginx-light`) serving a static file.
// An unchanged resource must cost only 304s: each server's own log shows the
// conditional request and its 304, the client counts it (stats().notModified)
// and delivers nothing for it. A change is delivered once.
//
// Why tidings sends `Cache-Control: max-age=0` on conditional requests: with
// `cache: "no-store"` Chromium adds `Cache-Control: no-cache` to every
// request, and Express's freshness check (the `fresh` package) treats that as
// "ignore the validators": every conditional poll got a full 200. The first
// Express test shows that behaviour with a plain fetch.
//
// nginx must be installed (`make test` needs Debian's nginx-light:
// `apt-get install -y nginx-light`); the test fails, not skips, without it.
import { test, before, after, beforeEach } from "node:test";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import express from "express";
import {
  assert, setup, openPage, subscribe, events, statsWhen, waitForEvents, sleep, PREFLIGHT_CACHE,
} from "./polling.mjs";

const ROOT = new URL("../../", import.meta.url).pathname;
const NGINX = process.env.NGINX ?? "/usr/sbin/nginx";
const RUN = `${ROOT}target/e2e-real-servers/${process.pid}`;

// Poll only; the interval 200 → (news) 200 → 400 → 400 leaves 400 ms between
// an answer and the next request, time enough to compare the client's
// counters with the server's log exactly.
const OPTS = {
  transports: ["poll"],
  seed: 21,
  interval: { initialMs: 200, minMs: 200, maxMs: 400 },
  backoff: { strategy: "none", floorMs: 100, baseMs: 100 },
};

/** A free loopback port (bound, read, released). */
async function freePort() {
  const s = net.createServer();
  s.listen(0, "127.0.0.1");
  await once(s, "listening");
  const { port } = s.address();
  s.close();
  await once(s, "close");
  return port;
}

// ----- Express ---------------------------------------------------------------

/**
 * An Express app on loopback: GET /state.json (`res.json(state)`), static
 * files under /static, a blank page and the package under /pkg (for
 * same-origin pages). CORS
 * as a cross-origin API would set it up: the request's Origin echoed, ETag and
 * Last-Modified exposed, the two validators and Cache-Control allowed.
 * Every request is logged with the headers that decide freshness.
 */
async function startExpress(staticDir) {
  const app = express();
  const log = [];
  const state = { value: { version: 1, text: "first" } };
  app.use((req, res, next) => {
    const entry = {
      method: req.method, path: req.path, t: Date.now(), origin: req.headers.origin,
      inm: req.headers["if-none-match"], ims: req.headers["if-modified-since"],
      cc: req.headers["cache-control"], status: null,
    };
    log.push(entry);
    res.on("finish", () => { entry.status = res.statusCode; });
    if (req.headers.origin) {
      res.set("Access-Control-Allow-Origin", req.headers.origin);
      res.set("Access-Control-Expose-Headers", "ETag, Last-Modified");
      res.vary("Origin");
      if (req.method === "OPTIONS") {
        res.set("Access-Control-Allow-Headers", "If-None-Match, If-Modified-Since, Cache-Control");
        res.set("Access-Control-Max-Age", "600");
        return res.status(204).end();
      }
    }
    next();
  });
  app.get("/state.json", (req, res) => res.json(state.value));
  app.get("/blank.html", (req, res) => res.type("html").send("<!doctype html><title>blank</title>"));
  app.use("/static", express.static(staticDir));
  app.use("/pkg", express.static(`${ROOT}pkg`));
  const server = app.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    log,
    state,
    async stop() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

// ----- nginx -------------------------------------------------------------------

/**
 * nginx in the foreground (one process, no master: nothing to switch users
 * for) with its own prefix, pid, temp paths and logs under target/. Serves
 * `www` (and the package under /pkg/) with CORS headers; the access log
 * records the validators, Cache-Control and the status of every request.
 */
async function startNginx(dir, www) {
  if (!existsSync(NGINX)) {
    throw new Error(`${NGINX} not found: this test needs Debian's nginx-light (apt-get install -y nginx-light)`);
  }
  for (const d of ["tmp", "logs"]) mkdirSync(`${dir}/${d}`, { recursive: true });
  const port = await freePort();
  writeFileSync(`${dir}/nginx.conf`, `
daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log warn;
events { worker_connections 64; }
http {
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;
  types {
    text/html html;
    text/markdown md;
    application/json json;
    text/javascript js;
    application/wasm wasm;
  }
  default_type application/octet-stream;
  # One JSON object per request: what decides a 304 and what was answered.
  log_format probe escape=json '{"t":$msec,"method":"$request_method","path":"$uri","origin":"$http_origin",'
    '"inm":"$http_if_none_match","ims":"$http_if_modified_since","cc":"$http_cache_control","status":$status}';
  access_log ${dir}/logs/access.log probe;
  server {
    listen 127.0.0.1:${port};
    root ${www};
    location /pkg/ {
      alias ${ROOT}pkg/;
    }
    location / {
      if ($request_method = OPTIONS) {
        add_header Access-Control-Allow-Origin $http_origin always;
        add_header Access-Control-Allow-Headers "If-None-Match, If-Modified-Since, Cache-Control" always;
        add_header Access-Control-Max-Age 600 always;
        add_header Vary Origin always;
        return 204;
      }
      add_header Access-Control-Allow-Origin $http_origin always;
      add_header Access-Control-Expose-Headers "ETag, Last-Modified" always;
      add_header Vary Origin always;
    }
  }
}
`);
  const child = spawn(NGINX, ["-p", `${dir}/`, "-c", `${dir}/nginx.conf`, "-e", `${dir}/logs/error.log`], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${readFileSync(`${dir}/logs/error.log`, "utf8")}`);
    try {
      if ((await fetch(`${url}/blank.html`)).ok) break;
    } catch { /* not listening yet */ }
    if (i > 100) throw new Error("nginx did not answer within 5 s");
    await sleep(50);
  }
  return {
    url,
    get log() {
      const text = existsSync(`${dir}/logs/access.log`) ? readFileSync(`${dir}/logs/access.log`, "utf8") : "";
      // Absent headers are logged as "": make them undefined, as in Express's log.
      return text.split("\n").filter(Boolean).map((l) => JSON.parse(l)).map((e) => {
        for (const k of ["origin", "inm", "ims", "cc"]) if (e[k] === "") e[k] = undefined;
        return e;
      });
    },
    /**
     * Empty the access log. nginx writes an entry when a request ends, which
     * can be just after the client has read the answer: wait for the entries
     * of `pending` requests first, or one would land after the truncation.
     */
    async clearLog(pending = 0) {
      for (let i = 0; this.log.length < pending; i++) {
        if (i > 250) throw new Error(`nginx logged ${this.log.length} of ${pending} requests within 5 s`);
        await sleep(20);
      }
      writeFileSync(`${dir}/logs/access.log`, "");
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}

// ----- the tests ---------------------------------------------------------------

let env, app, nginx;
const staticDir = `${RUN}/express-static`;
const nginxWww = `${RUN}/nginx-www`;

before(async () => {
  rmSync(RUN, { recursive: true, force: true });
  mkdirSync(staticDir, { recursive: true });
  mkdirSync(nginxWww, { recursive: true });
  writeFileSync(`${nginxWww}/blank.html`, "<!doctype html><title>blank</title>");
  env = await setup();
  app = await startExpress(staticDir);
  nginx = await startNginx(`${RUN}/nginx`, nginxWww);
});
after(async () => {
  await env?.close();
  await app?.stop();
  await nginx?.stop();
  rmSync(RUN, { recursive: true, force: true });
});
beforeEach(async () => { await env.closePages(); });

/** Page origin and resource URL for a server in a setup. */
function where(server, path, cross) {
  return cross
    ? { page: env.api.url, url: server.url + path, path: undefined }
    : { page: server.url, url: path, path: "/blank.html" };
}

/**
 * Poll `url` until the server has answered one 200 and three 304s, then
 * compare: the server saw the validators (and Cache-Control: max-age=0) on
 * every conditional request and answered 304; the client counted each
 * (stats().notModified) and delivered one message. Returns the message and
 * the conditional requests.
 */
async function onlyNotModified(page, url, serverLog, path, { etag, lastModified }) {
  await subscribe(page, "p", url, OPTS);
  const mine = () => serverLog().filter((e) => e.method === "GET" && e.path === path);
  // The client's counters the moment it has read the third 304 (the next
  // request is 400 ms away) ...
  const s = await statsWhen(page, "p", "notModified", 3);
  // ... and the first four requests in the server's own log.
  for (let i = 0; mine().filter((e) => e.status !== null).length < 4; i++) {
    assert.ok(i < 100, `four answers in the server's log: ${JSON.stringify(mine())}`);
    await sleep(20);
  }
  const reqs = mine().slice(0, 4);
  assert.deepEqual(reqs.map((e) => e.status), [200, 304, 304, 304], JSON.stringify(mine()));
  assert.equal(reqs[0].inm, undefined);
  for (const r of reqs.slice(1)) {
    assert.equal(r.inm, etag);
    assert.equal(r.ims, lastModified);
    assert.equal(r.cc, "max-age=0");
  }
  assert.equal(s.requests, 4);
  assert.equal(s.notModified, 3);
  assert.equal(s.currentIntervalMs, 400);
  const msgs = await events(page, "p", "message");
  assert.equal(msgs.length, 1);
  assert.equal(msgs[0].id, etag);
  assert.equal(msgs[0].transport, "poll");
  assert.deepEqual(await events(page, "p", "error"), []);
  return msgs[0];
}

/** After a change: the next poll gets a 200 whose body is delivered once, then 304s again. */
async function changeArrives(page, serverLog, path, wantData) {
  const [, changed] = await waitForEvents(page, "p", "message", 2, 3000);
  assert.equal(changed.data, wantData);
  const mine = () => serverLog().filter((e) => e.method === "GET" && e.path === path);
  const since = mine().length;
  for (let i = 0; !(mine().length > since && mine()[since].status !== null); i++) {
    assert.ok(i < 100, "an answered poll after the change");
    await sleep(30);
  }
  const next = mine()[since];
  assert.deepEqual([next.status, next.inm], [304, changed.id]);
  return changed;
}

for (const cross of [false, true]) {
  const name = cross ? "cross-origin" : "same-origin";

  test(`${name}: Express res.json route: only 304s while unchanged (Chromium's no-cache would have made them 200s), a change arrives once`, async () => {
    app.log.length = 0;
    app.state.value = { version: 1, text: "first", cross };
    const { page: pageOrigin, url, path } = where(app, "/state.json", cross);
    const page = await openPage(env, pageOrigin, { path });
    const first = JSON.stringify(app.state.value);
    const etag = (await fetch(`${app.url}/state.json`)).headers.get("etag");
    assert.match(etag, /^W\/"/); // Express's default: a weak ETag of the body
    app.log.length = 0;
    // What Express does with the request Chromium sends for `cache: "no-store"`
    // when nothing else sets Cache-Control: a full 200, the validators ignored.
    const plain = await page.evaluate(async ({ url, etag }) =>
      (await fetch(url, { cache: "no-store", headers: { "If-None-Match": etag } })).status, { url, etag });
    assert.equal(plain, 200);
    assert.deepEqual(app.log.filter((e) => e.method === "GET" && e.path === "/state.json").map((e) => [e.inm, e.cc, e.status]),
      [[etag, "no-cache", 200]]);
    app.log.length = 0;

    const msg = await onlyNotModified(page, url, () => app.log, "/state.json", { etag, lastModified: undefined });
    assert.equal(msg.data, first);
    // WebKit may serve these from the preflight of the test's own request above.
    if (cross && !PREFLIGHT_CACHE) assert.ok(app.log.some((e) => e.method === "OPTIONS"));
    app.state.value = { version: 2, text: "second" };
    await changeArrives(page, () => app.log, "/state.json", JSON.stringify(app.state.value));
  });

  test(`${name}: express.static file: only 304s while unchanged, a rewritten file arrives once`, async () => {
    app.log.length = 0;
    const body = `{"file":"first","cross":${cross}}\n`;
    writeFileSync(`${staticDir}/data.json`, body);
    const probe = await fetch(`${app.url}/static/data.json`);
    const [etag, lastModified] = [probe.headers.get("etag"), probe.headers.get("last-modified")];
    assert.match(etag, /^W\/"/);
    app.log.length = 0;
    const { page: pageOrigin, url, path } = where(app, "/static/data.json", cross);
    const page = await openPage(env, pageOrigin, { path });
    const msg = await onlyNotModified(page, url, () => app.log, "/static/data.json", { etag, lastModified });
    assert.equal(msg.data, body);
    const changed = `{"file":"second, longer","cross":${cross}}\n`;
    writeFileSync(`${staticDir}/data.json`, changed);
    await changeArrives(page, () => app.log, "/static/data.json", changed);
  });

  test(`${name}: nginx static file: only 304s while unchanged (If-Modified-Since sent back byte for byte), a rewritten file arrives once`, async () => {
    const body = `{"nginx":"first","cross":${cross}}\n`;
    writeFileSync(`${nginxWww}/data.json`, body);
    await nginx.clearLog();
    const probe = await fetch(`${nginx.url}/data.json`);
    const [etag, lastModified] = [probe.headers.get("etag"), probe.headers.get("last-modified")];
    assert.match(etag, /^"[0-9a-f]+-[0-9a-f]+"$/); // nginx: strong, "<mtime>-<size>"
    await nginx.clearLog(1); // the probe's entry, which may still be on its way
    const { page: pageOrigin, url, path } = where(nginx, "/data.json", cross);
    const page = await openPage(env, pageOrigin, { path });
    // nginx answers 304 only when every validator sent passes, and its
    // If-Modified-Since check is an exact match (`if_modified_since exact`):
    // the Last-Modified value must come back unchanged, which it does.
    const msg = await onlyNotModified(page, url, () => nginx.log, "/data.json", { etag, lastModified });
    assert.equal(msg.data, body);
    if (cross) assert.ok(nginx.log.some((e) => e.method === "OPTIONS" && e.status === 204));
    // A different size gives a different ETag even within the same second.
    const changed = `{"nginx":"second, longer","cross":${cross}}\n`;
    writeFileSync(`${nginxWww}/data.json`, changed);
    await changeArrives(page, () => nginx.log, "/data.json", changed);
  });
}
