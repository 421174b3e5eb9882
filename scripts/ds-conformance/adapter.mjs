#!/usr/bin/env node
// A client adapter for the Durable Streams client conformance suite
// (durable-streams/durable-streams, packages/client-conformance-tests; run it
// with scripts/ds-conformance.sh). The runner writes one JSON command a line
// on stdin and reads one JSON result a line on stdout; every command is
// carried out by tidings (pkg/, the built package) in headless Chromium.
//
// The page and the Durable Streams server share one origin: this process
// serves the page and pkg/ and forwards every other request, streamed both
// ways, to the runner's reference server. The suite tests the protocol, not
// CORS, and the reference server's CORS list lacks headers tidings sends
// (`Idempotency-Key`), which would fail every `send()` before it reaches the
// protocol. A dropped upstream connection drops the page's too.
//
// create, connect (a `HEAD`), head and delete are the stream handles
// (`stream(url)` of the "tidings" entry) when the package has them. What
// tidings has no call for is answered `NOT_SUPPORTED` (a failure the runner
// counts, never a pass): those four in a package built without the handles,
// retry-options validation and benchmarks. Dynamic headers and params are
// tidings' own per-request functions (`headers` of subscribe and send, `url`
// of subscribe); what they sent is reported as this process saw it on the
// wire (the path's last request answered 2xx), not as the function returned it.
// `live: "sse"` is tidings' `live: "sse"`.
// DS_FIXTURES=http answers create/connect/head/delete with plain HTTP from
// this process instead (not tidings), to see how reads and appends fare on
// streams set up that way; a table made so must say it.
import { createServer, request } from "node:http";
import { readFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import { launchBrowser } from "../../tests/e2e/harness.mjs";

const ROOT = new URL("../../", import.meta.url).pathname;
const PKG = process.env.TIDINGS_PKG_DIR ?? `${ROOT}pkg`;
const FIXTURES = process.env.DS_FIXTURES === "http";
const VERSION = JSON.parse(await readFile(`${PKG}/package.json`, "utf8")).version;
const log = (...a) => console.error("[tidings adapter]", ...a);

let upstream; // the runner's server, a URL
let origin; // this process's server, the page's origin
let browser;
let page;
let handles; // the package has the stream handles (the glue exports `stream`)
const contentTypes = new Map(); // path → the content type its create command named
const lastSent = new Map(); // path → its last request answered 2xx: { headers, params }
const dynamic = { headers: new Set(), params: new Set() }; // names of the dynamic values set

/** The page's origin: `/` a blank page, `/pkg/…` the package, anything else forwarded. */
function startOrigin() {
  const server = createServer(async (req, res) => {
    if (req.url === "/") {
      res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>ds</title>");
    } else if (req.url.startsWith("/pkg/")) {
      await servePkg(req.url.slice(5).split("?")[0], res);
    } else {
      forward(req, res);
    }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${server.address().port}`)));
}

async function servePkg(name, res) {
  const type = name.endsWith(".wasm") ? "application/wasm" : name.endsWith(".js") ? "text/javascript" : "application/octet-stream";
  try {
    if (name.includes("..")) throw new Error("outside pkg");
    res.writeHead(200, { "content-type": type }).end(await readFile(`${PKG}/${name}`));
  } catch {
    res.writeHead(404).end();
  }
}

function forward(req, res) {
  const to = new URL(req.url, upstream);
  const up = request(to, { method: req.method, headers: { ...req.headers, host: to.host } }, (answer) => {
    // The request that served a command is the last one answered 2xx: a read's catch-up, not
    // the live request tidings starts at once after it (held, then aborted by the read's end).
    if (answer.statusCode < 300) lastSent.set(to.pathname, { headers: req.headers, params: to.searchParams });
    res.writeHead(answer.statusCode, answer.headers);
    answer.pipe(res);
    answer.on("error", () => res.destroy());
  });
  up.on("error", () => res.destroy());
  res.on("close", () => up.destroy());
  req.pipe(up);
}

async function init(command) {
  upstream = command.serverUrl;
  contentTypes.clear();
  if (!page) {
    origin = await startOrigin();
    browser = await launchBrowser();
    page = await browser.newPage();
    page.on("pageerror", (e) => log("page error:", e.message));
    await page.goto(`${origin}/`);
    handles = await page.evaluate(async () => {
      window.tidings = await import("/pkg/tidings.js");
      await window.tidings.default();
      window.entry = await import("/pkg/index.js");
      await window.entry.default();
      return typeof window.tidings.stream === "function";
    });
  }
  await page.evaluate(() => {
    for (const ap of window.aps?.values() ?? []) ap.free();
    window.aps = new Map();
  });
  await setDynamic({ type: "clear-dynamic" });
  return {
    type: "init", success: true, clientName: "tidings", clientVersion: VERSION,
    // `live: true` (catch-up, then the client's choice) is long-poll in tidings.
    features: { batching: true, sse: true, longPoll: true, auto: true, streaming: true, dynamicHeaders: true },
  };
}

const unsupported = (command, why) => ({
  type: "error", success: false, commandType: command.type, errorCode: "NOT_SUPPORTED",
  message: `tidings: ${why}`,
});

/** A result for an error thrown or reported in the page: `{ code, status, message, name }`. */
function failure(command, e) {
  const status = typeof e.status === "number" && e.status > 0 ? e.status : undefined;
  const msg = String(e.message ?? e);
  let errorCode = "UNEXPECTED_STATUS";
  if (e.code === "stream-closed") errorCode = "STREAM_CLOSED";
  else if (e.code === "sequence-gap") errorCode = "SEQUENCE_CONFLICT";
  else if (e.code === "parse" || e.code === "bad-content-type") errorCode = "PARSE_ERROR";
  else if (e.code === "timeout") errorCode = "TIMEOUT";
  else if (e.code === "network-or-cors" || e.code === "gave-up") errorCode = "NETWORK_ERROR";
  else if (e.code === "invalid-option" || e.code === "invalid-url") errorCode = "INVALID_ARGUMENT";
  else if (status === 404) errorCode = "NOT_FOUND";
  // A `Stream-Seq` regression is a bare 409 (the protocol's own client names every 409 to an
  // append that is not `Stream-Closed` so): the append that carried `Stream-Seq` knows.
  else if (status === 409) errorCode = command.seq !== undefined ? "SEQUENCE_CONFLICT" : "CONFLICT";
  else if (status === 400) errorCode = "INVALID_OFFSET";
  else if (!status) errorCode = "INTERNAL_ERROR";
  return { type: "error", success: false, commandType: command.type, status, errorCode, message: msg };
}

const isJson = (path) => (contentTypes.get(path) ?? "").includes("application/json");
const contentType = (path) => contentTypes.get(path) ?? "application/octet-stream";

/** `read`: a tidings subscription from `offset`, until caught up (`live: false`), or chunks, or the time run out. */
async function read(command) {
  const args = {
    url: `${origin}${command.path}`, offset: command.offset ?? "-1", live: command.live !== false && command.live !== undefined,
    sse: command.live === "sse",
    timeoutMs: command.timeoutMs ?? 5000, maxChunks: command.maxChunks ?? 100, waitForUpToDate: !!command.waitForUpToDate,
    headers: command.headers ?? {}, json: isJson(command.path),
    dynHeaders: dynamic.headers.size > 0, dynParams: dynamic.params.size > 0,
  };
  const r = await page.evaluate(readInPage, args);
  if (r.error) return failure(command, r.error);
  // A subscription shows no HTTP status: a live read that ended without a message is reported
  // 204 No Content, the long-poll's own answer for a hold that ended so; any other read 200.
  const status = args.live && r.chunks.length === 0 ? 204 : 200;
  return { type: "read", success: true, status, chunks: r.chunks, offset: r.offset, upToDate: r.upToDate, streamClosed: r.streamClosed, ...sent(command.path) };
}

/**
 * Runs in the page. A JSON stream's messages of one answer make one chunk, the protocol's array:
 * tidings gives each the offset before the answer, the last the answer's next offset.
 */
function readInPage({ url, offset, live, sse, timeoutMs, maxChunks, waitForUpToDate, headers, json, dynHeaders, dynParams }) {
  return new Promise((resolve) => {
    const chunks = [];
    let last = offset === "now" ? undefined : offset;
    let upToDate = false;
    let streamClosed = false;
    let sub;
    const text = (d) => (d instanceof Uint8Array ? new TextDecoder().decode(d) : typeof d === "string" ? d : JSON.stringify(d));
    const result = () => ({
      chunks: chunks.map((c) => ({ data: json ? JSON.stringify(c.items) : c.data, offset: c.offset })),
      offset: last, upToDate, streamClosed,
    });
    let timer;
    const finish = (r) => { clearTimeout(timer); sub?.close(); resolve(r); };
    // Out of time: what was read, and whether it caught up (tidings itself has not failed).
    timer = setTimeout(() => finish(result()), timeoutMs);
    try {
      sub = window.tidings.subscribe(url, {
        // `live: false`: tidings reads to the tail and ends (`closed`, reason `up-to-date`).
        protocol: "durable-streams", offset, ...(json ? { parse: "json" } : {}), live: sse ? "sse" : live ? "long-poll" : false,
        // A dynamic value is tidings' function, called before every request.
        headers: dynHeaders ? () => window.dynHeaders(headers) : headers,
        ...(dynParams ? { url: (ctx) => window.dynUrl(ctx.url) } : {}),
        // Reads retry forever by default (as EventSource, and the protocol's own client); the
        // suite asks a read to fail once errors persist, which this bound gives within its 5 s.
        backoff: { maxAttempts: 3 },
      });
    } catch (e) {
      finish({ error: { code: e.code, status: e.status, message: e.message } });
      return;
    }
    let open = null; // the JSON chunk being filled: its answer's messages before the last carry the offset before it
    sub.addEventListener("message", (e) => {
      if (!json) chunks.push({ data: text(e.data), offset: e.lastEventId });
      else {
        if (!open) chunks.push(open = { items: [], offset: e.lastEventId });
        open.items.push(e.data);
        open.offset = e.lastEventId;
        if (e.lastEventId !== last) open = null;
      }
      last = e.lastEventId;
      if (live && chunks.length >= maxChunks) setTimeout(() => finish(result()), 0);
    });
    sub.addEventListener("uptodate", (e) => {
      upToDate = true;
      last = e.lastEventId;
      // After the events of the same answer (a closure comes with it).
      if (live && waitForUpToDate) setTimeout(() => finish(result()), 0);
    });
    sub.addEventListener("statechange", (e) => {
      if (e.state === "closed" && e.reason === "stream-closed") { streamClosed = true; setTimeout(() => finish(result()), 0); }
      if (e.state === "closed" && e.reason === "up-to-date") finish(result());
    });
    sub.addEventListener("error", (e) => {
      // A body that is not what its type says is skipped by tidings (a non-fatal `parse`
      // error); the read reports it, as the suite asks of a client.
      if (e.fatal || e.code === "parse") finish({ error: { code: e.code, status: e.status, message: e.message } });
    });
  });
}

/** `append`: `tidings.send` (POST) with the stream's content type and `Stream-Seq`. */
async function append(command) {
  const headers = { "content-type": contentType(command.path), ...(command.headers ?? {}) };
  if (command.seq !== undefined) headers["Stream-Seq"] = String(command.seq);
  const r = await page.evaluate(async ({ url, data, binary, headers, dynHeaders, dynParams }) => {
    const body = binary ? Uint8Array.from(atob(data), (c) => c.charCodeAt(0)) : data;
    try {
      // send() takes a `headers` function (called before each attempt), not a `url` one.
      const to = dynParams ? window.dynUrl(url) : url;
      const res = await window.tidings.send(to, body, { headers: dynHeaders ? () => window.dynHeaders(headers) : headers });
      return { status: res.status, offset: res.headers.get("Stream-Next-Offset") ?? undefined };
    } catch (e) {
      return { error: { code: e.code, status: e.status, message: e.message } };
    }
  }, { url: `${origin}${command.path}`, data: command.data, binary: !!command.binary, headers, dynHeaders: dynamic.headers.size > 0, dynParams: dynamic.params.size > 0 });
  if (r.error) return failure(command, r.error);
  // Any 2xx is reported as 200, as the protocol's own adapter does: the cases' `status: 200`
  // means "accepted" (the server answers an append 204).
  return { type: "append", success: true, status: 200, offset: r.offset, ...sent(command.path) };
}

/**
 * The appender commands. `op`: "append" (one value), "batch" (values, then
 * free), "close" (with `values[0]`, if any, as the final message), "detach"
 * (free). One appender per (path, producer, epoch) lives across commands, as
 * the protocol's own adapter keeps its producers.
 */
async function producer(command, op, values) {
  const key = JSON.stringify([command.path, command.producerId, command.epoch]);
  const options = { contentType: contentType(command.path), producerId: command.producerId, epoch: command.epoch ?? 0, autoClaim: !!command.autoClaim, headers: command.headers };
  const r = await page.evaluate(async ({ url, key, options, op, values, json }) => {
    try {
      let ap = window.aps.get(key);
      if (!ap && op === "detach") return {};
      if (!ap) {
        ap = window.tidings.appender(url, options);
        if (op !== "batch") window.aps.set(key, ap);
      }
      const vals = json ? values.map((v) => JSON.parse(v)) : values;
      if (op === "close") await ap.close(...vals);
      else await Promise.all(vals.map((v) => ap.append(v)));
      if (op === "batch" || op === "detach") { ap.free(); window.aps.delete(key); }
      return {};
    } catch (e) {
      return { error: { code: e.code, status: e.status, message: e.message } };
    }
  }, { url: `${origin}${command.path}`, key, options, op, values, json: isJson(command.path) });
  if (r.error) return failure(command, r.error);
  return { type: command.type, success: true, status: 200 };
}

/**
 * `close` (no producer named): the close of one appender per stream, kept for the stream's later
 * closes (a second close settles as the first); `data` is its final message.
 */
async function close(command) {
  const values = command.data === undefined ? [] : [command.data];
  const r = await producer({ ...command, producerId: `close-${command.path}`, epoch: 0 }, "close", values);
  return r.success ? { type: "close", success: true, finalOffset: undefined } : { ...r, commandType: "close" };
}

/** DS_FIXTURES=http only: create/connect/head/delete as plain HTTP from Node, not tidings. */
async function fixture(command) {
  const url = `${upstream}${command.path}`;
  const headers = { ...(command.headers ?? {}) };
  const method = { create: "PUT", delete: "DELETE" }[command.type] ?? "HEAD";
  if (command.type === "create") {
    const ct = command.contentType ?? "application/octet-stream";
    headers["content-type"] = ct;
    if (command.ttlSeconds !== undefined) headers["Stream-TTL"] = String(command.ttlSeconds);
    if (command.expiresAt !== undefined) headers["Stream-Expires-At"] = command.expiresAt;
    if (command.closed) headers["Stream-Closed"] = "true";
    contentTypes.set(command.path, ct);
  }
  const res = await fetch(url, { method, headers, body: command.type === "create" ? command.data : undefined });
  if (!res.ok) {
    const message = `${method} ${command.path}: ${res.status} ${await res.text().catch(() => "")}`;
    return failure(command, { status: res.status, message });
  }
  const offset = res.headers.get("Stream-Next-Offset") ?? undefined;
  if (command.type === "head" || command.type === "connect") {
    const ct = res.headers.get("content-type") ?? undefined;
    if (ct) contentTypes.set(command.path, ct);
    return { type: command.type, success: true, status: 200, offset, contentType: ct, streamClosed: res.headers.get("Stream-Closed") === "true" };
  }
  return { type: command.type, success: true, status: command.type === "delete" ? 200 : res.status, offset };
}

/**
 * create/connect/head/delete with the stream handles (`stream(url, { headers })` of the
 * "tidings" entry): connect is a `HEAD`. A create with no content type names
 * `application/octet-stream`, the protocol's default, as the fixtures do.
 */
async function streamOp(command) {
  const op = { create: "create", delete: "delete" }[command.type] ?? "head";
  const create = command.type !== "create" ? undefined : {
    contentType: command.contentType ?? "application/octet-stream", ttlSeconds: command.ttlSeconds,
    expiresAt: command.expiresAt, closed: command.closed, body: command.data,
  };
  const r = await page.evaluate(async ({ url, op, headers, create }) => {
    try {
      return (await window.entry.stream(url, { headers })[op](create)) ?? {};
    } catch (e) {
      return { error: { code: e.code, status: e.status, message: e.message } };
    }
  }, { url: `${origin}${command.path}`, op, headers: command.headers ?? {}, create });
  if (r.error) return failure(command, r.error);
  const offset = r.offset ?? undefined;
  if (op === "head") {
    const ct = r.contentType ?? undefined;
    if (ct) contentTypes.set(command.path, ct);
    return { type: command.type, success: true, status: 200, offset, contentType: ct, streamClosed: r.closed };
  }
  return { type: command.type, success: true, status: op === "delete" ? 200 : r.status, offset };
}

/** `validate` of producer options: whether `tidings.appender` accepts them (it sends nothing until an append). */
async function validate(command) {
  const t = command.target ?? {};
  if (t.target !== "idempotent-producer") return unsupported(command, `no ${t.target} options to validate`);
  const options = {};
  if (t.producerId !== undefined) options.producerId = t.producerId;
  if (t.epoch !== undefined) options.epoch = t.epoch;
  if (t.maxBatchBytes !== undefined) options.maxBatchBytes = t.maxBatchBytes;
  if (t.maxBatchItems !== undefined) options.maxBatch = t.maxBatchItems;
  const r = await page.evaluate(({ url, options }) => {
    try {
      window.tidings.appender(url, options).free();
      return {};
    } catch (e) {
      return { error: { code: e.code, message: e.message } };
    }
  }, { url: `${origin}/validate`, options });
  return r.error ? failure(command, r.error) : { type: "validate", success: true };
}

/**
 * `set-dynamic-header` / `-param` (`counter`: 1, 2, … per request; `timestamp`; `token`: the
 * value given) and `clear-dynamic`. The values live in the page, where tidings' functions read
 * them: `window.dynHeaders(base)` and `window.dynUrl(url)` give each request its own.
 */
async function setDynamic(command) {
  const kind = command.type === "set-dynamic-param" ? "params" : "headers";
  if (command.type === "clear-dynamic") { dynamic.headers.clear(); dynamic.params.clear(); } else dynamic[kind].add(command.name);
  await page.evaluate(({ type, kind, name, valueType, initialValue }) => {
    if (!window.dyn || type === "clear-dynamic") window.dyn = { headers: new Map(), params: new Map() };
    if (type !== "clear-dynamic") window.dyn[kind].set(name, { valueType, value: initialValue ?? "", counter: 0 });
    const next = (d) => (d.valueType === "counter" ? String(++d.counter) : d.valueType === "timestamp" ? String(Date.now()) : d.value);
    window.dynHeaders = (base) => {
      const h = { ...base };
      for (const [n, d] of window.dyn.headers) h[n] = next(d);
      return h;
    };
    window.dynUrl = (u) => {
      const url = new URL(u);
      for (const [n, d] of window.dyn.params) url.searchParams.set(n, next(d));
      return url.href;
    };
  }, { type: command.type, kind, name: command.name, valueType: command.valueType, initialValue: command.initialValue });
  return { type: command.type, success: true };
}

/** `headersSent` / `paramsSent`: the dynamic values on the path's last request answered 2xx, as forwarded. */
function sent(path) {
  const last = lastSent.get(new URL(path, "http://x").pathname);
  if (!last || (dynamic.headers.size === 0 && dynamic.params.size === 0)) return {};
  const headersSent = {}, paramsSent = {};
  for (const n of dynamic.headers) headersSent[n] = last.headers[n.toLowerCase()];
  for (const n of dynamic.params) paramsSent[n] = last.params.get(n) ?? undefined;
  return {
    ...(dynamic.headers.size ? { headersSent } : {}),
    ...(dynamic.params.size ? { paramsSent } : {}),
  };
}

async function handle(command) {
  switch (command.type) {
    case "init": return init(command);
    case "shutdown": return { type: "shutdown", success: true };
    case "read": return read(command);
    case "append": return append(command);
    case "idempotent-append": return producer(command, "append", [command.data]);
    case "idempotent-append-batch": return producer(command, "batch", command.items);
    case "idempotent-close": return producer(command, "close", command.data === undefined ? [] : [command.data]);
    case "idempotent-detach": return producer(command, "detach", []);
    case "close": return close(command);
    case "validate": return validate(command);
    case "set-dynamic-header": case "set-dynamic-param": case "clear-dynamic": return setDynamic(command);
    case "create": case "connect": case "head": case "delete":
      if (command.type === "create") contentTypes.set(command.path, command.contentType ?? "application/octet-stream");
      if (FIXTURES) return fixture(command);
      return handles ? streamOp(command) : unsupported(command, `no call to ${command.type} a stream`);
    default: return unsupported(command, `no call for ${command.type}`);
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  let command;
  let result;
  try {
    command = JSON.parse(line);
    result = await handle(command);
  } catch (e) {
    result = { type: "error", success: false, commandType: command?.type ?? "init", errorCode: "INTERNAL_ERROR", message: String(e?.stack ?? e) };
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
  if (command?.type === "shutdown") break;
}
await browser?.close();
process.exit(0);
