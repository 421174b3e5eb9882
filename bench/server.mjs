// The benchmark's own HTTP server (loopback only, plain node:http, no
// dependencies): the page, the built package (/pkg/), the bundled clients
// (/bench/), and data endpoints with knobs the reference server does not have
// (a 20,000-event burst, one event every 10 ms with its publish time, a stream
// that ends after each event, a "down" switch) and per-client accounting.
//
// A *run* is one event log, created by the first request naming it
// (`?run=<id>&mode=burst|tick|idle|cycle&n=N&every_ms=M`):
//   burst  N events published at once (data {"n":k,"t":…,"p":"…"}, 64 bytes)
//   tick   one event every `every_ms`, N in all, `t` = publish time
//          (performance.timeOrigin + performance.now(): the wall clock in ms,
//          sub-millisecond, on the same machine clock as the page's)
//   idle   no events (streams send a comment every `hb_ms`)
//   big    N events whose data is `size` bytes of JSON each (`size`
//          default 64); with `chunk=C` a stream writes its bytes in C-byte
//          slices, one per macrotask, so a client sees them as separate
//          chunks (one 16 MiB event in 64 KiB chunks: a quadratic join or a
//          byte-at-a-time line scan shows up as time per MB growing)
//   cycle  an event log that grows on demand: each stream or poll answer
//          carries the next event, and streams end right after it
//          (`until=K`: past event K, streams stay open and polls answer 304)
// Endpoints (each takes `c=<client label>` for the accounting):
//   GET /sse       text/event-stream; cursor: Last-Event-ID, else ?lastEventId
//   GET /lp        long-poll: SSE body of up to 1000 events after the cursor,
//                  held up to `hold_ms` (default 25000) for the next, 204 empty;
//                  `next_ms=M`: a JSON envelope {messages, _polling:
//                  {next_interval_ms: M}} instead (the server's pacing hint)
//   GET /poll      answers at once: 200 JSON [{id, data}] of up to 1000 events
//                  after the cursor (cursor: Last-Event-ID, ?lastEventId,
//                  ?after, If-None-Match "k"), ETag "<last id answered>";
//                  nothing new: 304 to If-None-Match "<cursor>", else 200 []
//   GET /resource  an unchanged 2 KB JSON document, ETag "v1",
//                  Cache-Control: no-cache, 304 on If-None-Match
// Accounting per client label: requests, response bytes on the wire (status
// line + headers + body, from the socket's byte counter), 304s, the
// arrival times (Date.now()) of the requests that were not reset, and each
// answered request's [arrival, last byte handed to the socket] on the
// page's clock (`now()`: bench/profile.mjs's gaps between answers).
import http from "node:http";
import { readFile } from "node:fs/promises";
import { extname, join, normalize } from "node:path";
import { performance } from "node:perf_hooks";

const now = () => performance.timeOrigin + performance.now();
const TYPES = { ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".html": "text/html", ".json": "application/json" };
const PAD = "x".repeat(64);
const RESOURCE = JSON.stringify({
  id: "dashboard",
  version: 1,
  items: Array.from({ length: 24 }, (_, i) => ({ id: i, name: `item-${i}`, value: i * 37 % 101, ok: true, tags: ["a", "b"] })),
}).padEnd(2048, " ");
const LAST_MODIFIED = new Date(Date.now() - 3600_000).toUTCString();
const PAGE = `<!doctype html><meta charset=utf-8><title>tidings bench</title><body>bench</body>`;

/** One event's JSON data, padded to `size` bytes (default 64). */
function eventData(n, t, size = 64) {
  const head = `{"n":${n},"t":${t.toFixed(3)},"p":"`;
  const pad = Math.max(0, size - 2 - head.length);
  return head + (pad <= PAD.length ? PAD.slice(0, pad) : "x".repeat(pad)) + `"}`;
}

/** One event of a log, its event-stream block written when it is published:
 * an answer joins blocks, as a server that keeps its log serialised would
 * (written per answer, the 20 answers of a long-poll burst cost the server
 * about 20 ms, each in series with the client's round trip). */
const entry = (id, data) => ({ id, data, sse: `id: ${id}\ndata: ${data}\n\n` });

class Run {
  constructor(q) {
    this.mode = q.get("mode") ?? "idle";
    this.n = Number(q.get("n") ?? 0);
    this.until = Number(q.get("until") ?? Infinity);
    this.events = []; // [{ id: number, data: string, sse: string }]
    this.waiters = new Set();
    if (this.mode === "burst" || this.mode === "big") {
      const t = now();
      const size = Number(q.get("size") ?? 64);
      for (let k = 1; k <= this.n; k++) this.events.push(entry(k, eventData(k, t, size)));
    } else if (this.mode === "tick") {
      const every = Number(q.get("every_ms") ?? 10);
      const start = now();
      let k = 0;
      // Each tick publishes the events whose time has come (a late timer
      // publishes the ones it owes, each with its own scheduled-or-later time).
      this.timer = setInterval(() => {
        while (k < this.n && now() >= start + (k + 1) * every) {
          k++;
          this.publish(eventData(k, now()));
        }
        if (k >= this.n) clearInterval(this.timer);
      }, 1);
    }
  }
  publish(data) {
    this.events.push(entry(this.events.length + 1, data));
    for (const w of [...this.waiters]) w();
  }
  /** The events after `cursor` (ids are 1..len, so this is a slice). */
  after(cursor, max = Infinity) {
    return this.events.slice(cursor, Math.min(this.events.length, cursor + max));
  }
  /** cycle mode: make sure event cursor+1 exists (until `until`). */
  grow(cursor) {
    if (this.mode === "cycle" && cursor >= this.events.length && cursor < this.until) {
      this.events.push(entry(this.events.length + 1, eventData(this.events.length + 1, now())));
    }
  }
  stop() {
    clearInterval(this.timer);
    for (const w of [...this.waiters]) w(true);
  }
}

const sseBlock = (e) => e.sse;

function cursorOf(req, q) {
  const h = req.headers["last-event-id"] ?? q.get("lastEventId") ?? q.get("after");
  if (h != null && h !== "") return Number(h) || 0;
  const inm = req.headers["if-none-match"];
  const m = inm && /"(\d+)"/.exec(inm);
  return m ? Number(m[1]) : 0;
}

/** Start the server on 127.0.0.1 (port 0 = any free one). */
export async function startBenchServer({ root, bundles = {}, port = 0 } = {}) {
  const runs = new Map();
  const stats = new Map(); // label → { requests, bytes, s304, reset }
  const open = new Map(); // data responses in flight → [stats, socket, bytes before] (for "down" and live bytes)
  let down = false;

  const stat = (c) => {
    let s = stats.get(c);
    if (!s) stats.set(c, (s = { requests: 0, bytes: 0, s304: 0, reset: 0, statuses: {}, arrivals: [], answers: [] }));
    return s;
  };
  const runOf = (q) => {
    const id = q.get("run") ?? "default";
    let r = runs.get(id);
    if (!r) runs.set(id, (r = new Run(q)));
    return r;
  };

  const server = http.createServer({ noDelay: true, keepAliveTimeout: 60_000 }, async (req, res) => {
    const url = new URL(req.url, "http://x");
    const q = url.searchParams;
    const path = url.pathname;
    if (path === "/") return send(res, 200, { "content-type": "text/html" }, PAGE);
    if (path.startsWith("/pkg/") || path.startsWith("/bench/")) return serveFile(res, path);
    if (!["/sse", "/lp", "/poll", "/resource"].includes(path)) return send(res, 404, {}, "not found");

    // A data request: account it to its client.
    const s = stat(q.get("c") ?? "?");
    s.requests++;
    if (down) { s.reset++; req.socket.destroy(); return; }
    s.arrivals.push(Date.now());
    const arrived = now();
    res.on("finish", () => s.answers.push([arrived, now()]));
    const before = req.socket.bytesWritten;
    open.set(res, [s, req.socket, before]);
    res.on("close", () => {
      open.delete(res);
      s.bytes += req.socket.bytesWritten - before;
      s.statuses[res.statusCode] = (s.statuses[res.statusCode] ?? 0) + 1;
      if (res.statusCode === 304) s.s304++;
    });
    if (path === "/resource") {
      const tag = '"v1"';
      const h = { etag: tag, "last-modified": LAST_MODIFIED, "cache-control": "no-cache", "content-type": "application/json" };
      if ((req.headers["if-none-match"] ?? "").includes(tag)) return send(res, 304, h);
      return send(res, 200, h, RESOURCE);
    }
    const run = runOf(q);
    const cursor = cursorOf(req, q);
    if (path === "/sse") return sse(req, res, run, cursor, q);
    if (path === "/lp") return longPoll(req, res, run, cursor, q);
    return poll(req, res, run, cursor);
  });

  function send(res, status, headers, body) {
    res.writeHead(status, headers);
    res.end(body);
  }

  async function serveFile(res, path) {
    const name = normalize(path).replace(/^\/+/, "");
    try {
      const body = bundles[name] ?? await readFile(join(root, name));
      send(res, 200, { "content-type": TYPES[extname(name)] ?? "application/octet-stream", "cache-control": "no-cache" }, body);
    } catch {
      send(res, 404, {}, "not found");
    }
  }

  function sse(req, res, run, cursor, q) {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
    if (run.mode === "cycle" && cursor < run.until) {
      // One event, then the end of the stream: the client reconnects.
      run.grow(cursor);
      return res.end(run.after(cursor, 1).map(sseBlock).join(""));
    }
    if (q.has("chunk")) return chunked(res, run.after(cursor).map(sseBlock).join(""), Number(q.get("chunk")));
    let sent = cursor;
    const flush = () => {
      // 500 events per write: big writes, but not one 1.3 MB string.
      while (sent < run.events.length) {
        const batch = run.after(sent, 500);
        sent += batch.length;
        res.write(batch.map(sseBlock).join(""));
      }
    };
    flush();
    if (res.writableEnded) return;
    res.write(": open\n\n");
    const hbMs = Number(q.get("hb_ms") ?? 0);
    const hb = hbMs > 0 ? setInterval(() => res.write(": hb\n\n"), hbMs) : null;
    const w = (stop) => (stop ? res.end() : flush());
    run.waiters.add(w);
    res.on("close", () => { run.waiters.delete(w); clearInterval(hb); });
  }

  /** Write `text` in `size`-byte slices, one per macrotask, then end. */
  async function chunked(res, text, size) {
    const bytes = Buffer.from(text);
    for (let at = 0; at < bytes.length && !res.destroyed; at += size) {
      res.write(bytes.subarray(at, at + size));
      await new Promise((r) => setImmediate(r));
    }
    res.end();
  }

  function longPoll(req, res, run, cursor, q) {
    run.grow(cursor);
    const answer = () => {
      const batch = run.after(cursor, 1000);
      if (!batch.length) return send(res, 204, { "cache-control": "no-store" });
      if (q.has("next_ms")) {
        // The JSON envelope with a server hint: "ask again in next_ms".
        return send(res, 200, { "content-type": "application/json", "cache-control": "no-store" }, JSON.stringify({
          messages: batch.map((e) => ({ id: String(e.id), data: e.data })),
          _polling: { next_interval_ms: Number(q.get("next_ms")) },
        }));
      }
      send(res, 200, { "content-type": "text/event-stream", "cache-control": "no-store", etag: `"${batch.at(-1).id}"` },
        batch.map(sseBlock).join(""));
    };
    if (run.events.length > cursor) return answer();
    const hold = setTimeout(() => finish(), Number(q.get("hold_ms") ?? 25_000));
    const finish = () => { clearTimeout(hold); run.waiters.delete(finish); if (!res.writableEnded && !res.destroyed) answer(); };
    run.waiters.add(finish);
    res.on("close", () => { clearTimeout(hold); run.waiters.delete(finish); });
  }

  function poll(req, res, run, cursor) {
    run.grow(cursor);
    const batch = run.after(cursor, 1000);
    const h = { "cache-control": "no-cache", "content-type": "application/json" };
    if (!batch.length) {
      // Nothing new: 304 to a conditional request, else an empty list.
      const tag = `"${cursor}"`;
      return (req.headers["if-none-match"] ?? "").includes(tag) ? send(res, 304, { ...h, etag: tag }) : send(res, 200, { ...h, etag: tag }, "[]");
    }
    send(res, 200, { ...h, etag: `"${batch.at(-1).id}"` },
      JSON.stringify(batch.map((e) => ({ id: String(e.id), data: e.data }))));
  }

  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    /** Accounting of one client label (zeros when it made no request); the
     * bytes include those of its responses still open (streams). */
    stats(c) {
      const s = { ...(stats.get(c) ?? { requests: 0, bytes: 0, s304: 0, reset: 0, statuses: {}, arrivals: [], answers: [] }) };
      for (const [st, socket, before] of open.values()) if (st === stats.get(c)) s.bytes += socket.bytesWritten - before;
      return s;
    },
    resetStats() { stats.clear(); },
    /** Down: every data request's connection is reset without an answer, and
     * the data responses in flight are cut off. */
    setDown(d) {
      down = d;
      if (d) for (const [, socket] of open.values()) socket.destroy();
    },
    /** cycle mode: move `until` and end the streams and holds that sat
     * past the old one, so the clients come back and cycle on. */
    extendRun(id, until) {
      const r = runs.get(id);
      r.until = until;
      for (const w of [...r.waiters]) w(true);
    },
    async close() {
      for (const r of runs.values()) r.stop();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
