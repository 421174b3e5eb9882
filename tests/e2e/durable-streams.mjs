// Starts the Durable Streams reference server (`@durable-streams/server`, the
// npm package, a dev dependency) in this process on a loopback port, for the
// e2e tests of `protocol: "durable-streams"`. With `dataDir` it is the
// file-backed store (streams survive `restart()`); without, in memory.
//
// Three things are added around the real server, all through its public
// instance (nothing of its protocol handling is replaced):
// - a request log (`requests()`): every request as it arrives;
// - `sseCloseAfterMs`: PROTOCOL.md §5.8 has servers close an SSE response
//   about every 60 s (for CDN collapsing); the npm server never does, so
//   the helper ends each `live=sse` response cleanly this long after it
//   began (the server's loop sees the close and stops);
// - `maxChunkMessages`: the npm server answers a catch-up read with
//   everything up to the tail in one response, which PROTOCOL.md §5.6 allows
//   any server to cap ("up to a server-defined maximum chunk size"; the
//   response then has no `Stream-Up-To-Date`). The cap is applied to its
//   store's `read`, so the server itself sets `Stream-Next-Offset` and the
//   headers from the shortened read.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DurableStreamTestServer } from "@durable-streams/server";

/**
 * Start a server. Options: `dataDir` (`true`: a fresh temporary directory),
 * `longPollTimeoutMs` (the server's hold, and in SSE mode its keep-alive control event's
 * period; default 30 000), `maxChunkMessages`, `sseCloseAfterMs`.
 * Resolves to { url, port, stop(), restart({ downMs }), requests(), clearRequests(),
 * create(path, contentType, body?), append(path, body, contentType), close(path), gone(path) }.
 */
export async function startDurableStreams({ dataDir, longPollTimeoutMs = 30_000, maxChunkMessages, sseCloseAfterMs } = {}) {
  // A fresh directory on tmpfs when there is one: the store syncs every
  // append (about 18 ms each on this machine's disk, 7 ms on tmpfs).
  const tmp = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
  const dir = dataDir === true ? mkdtempSync(join(tmp, "tidings-ds-")) : dataDir;
  const log = [];
  let port = 0;
  let server;
  let stopping = false;
  const boot = async () => {
    server = new DurableStreamTestServer({ port, host: "127.0.0.1", dataDir: dir, longPollTimeout: longPollTimeoutMs });
    const handle = server.handleRequest.bind(server);
    server.handleRequest = (req, res) => {
      const u = new URL(req.url, "http://x");
      log.push({ method: req.method, path: u.pathname, query: Object.fromEntries(u.searchParams), search: u.search, headers: req.headers, t: Date.now() });
      if (stopping) res.setHeader("connection", "close");
      if (sseCloseAfterMs && u.searchParams.get("live") === "sse") {
        // A write of the server's loop racing the end must not crash the process.
        res.on("error", () => {});
        const t = setTimeout(() => res.end(), sseCloseAfterMs);
        res.on("close", () => clearTimeout(t));
      }
      return handle(req, res);
    };
    if (maxChunkMessages) {
      const store = server.store;
      const read = store.read.bind(store);
      store.read = (path, offset) => {
        const r = read(path, offset);
        return r.messages.length > maxChunkMessages
          ? { messages: r.messages.slice(0, maxChunkMessages), upToDate: false }
          : r;
      };
    }
    const url = await server.start();
    port = Number(new URL(url).port);
    return url;
  };
  const url = await boot();
  // Node's `server.close()` waits for every open connection, and a client
  // that sends its next request on a keep-alive connection before the old
  // one goes idle (a long poll, a publisher retrying every 20 ms) keeps it
  // open forever. While stopping, each response closes its connection, so
  // the requests in flight finish (a graceful restart: dropping them
  // mid-append makes the store's file and index disagree) and no new one
  // holds the server open.
  const stopNow = () => {
    stopping = true;
    return server.stop().finally(() => { stopping = false; });
  };
  const req = async (method, path, body, headers = {}) => {
    const r = await fetch(url + path, { method, body, headers });
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
    return r;
  };
  return {
    url,
    port,
    dataDir: dir,
    requests: (path) => log.filter((e) => e.method === "GET" && (!path || e.path === path)),
    /** Every request of `path` so far, each `{ method, path, query, search, headers, t }`. */
    requestsOf: (path) => log.filter((e) => e.path === path),
    clearRequests: () => { log.length = 0; },
    /** Create a stream (PUT), with an optional initial body. */
    create: (path, contentType, body) => req("PUT", path, body, { "content-type": contentType }),
    /** Append (POST); resolves to the new tail offset. */
    append: async (path, body, contentType) =>
      (await req("POST", path, body, { "content-type": contentType })).headers.get("stream-next-offset"),
    /** Every message of a JSON stream, read chunk by chunk to the tail. */
    async readAll(path) {
      const all = [];
      let offset = "-1";
      for (;;) {
        const r = await req("GET", `${path}?offset=${offset}`);
        all.push(...(await r.json()));
        offset = r.headers.get("stream-next-offset");
        if (r.headers.get("stream-up-to-date") === "true") return all;
      }
    },
    /** Close the stream (POST with `Stream-Closed: true`, no body). */
    close: (path) => req("POST", path, undefined, { "stream-closed": "true" }),
    /** Make the next `count` GETs of `path` answer `status` (the server's own fault injection). */
    inject: (path, status, count = 1) => req("POST", "/_test/inject-error",
      JSON.stringify({ path, status, count, method: "GET" }), { "content-type": "application/json" }),
    /** Stop, stay down `downMs`, start again on the same port and data directory. */
    async restart({ downMs = 0 } = {}) {
      await stopNow();
      if (downMs) await new Promise((r) => setTimeout(r, downMs));
      await boot();
    },
    async stop() {
      await stopNow();
      if (dataDir === true) rmSync(dir, { recursive: true, force: true });
    },
  };
}
