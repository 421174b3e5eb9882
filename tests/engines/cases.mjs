// The cross-engine test bodies, written once against the driver shape of
// drivers.mjs (`goto`, `evaluate`), run by run.mjs on every engine. Each case
// gets a fresh reference server (a fresh origin: no storage carried over).
import assert from "node:assert/strict";
import { restart, requests } from "../e2e/tidings-page.mjs";
import { loadPackage } from "../e2e/tidings-page.mjs";
import { handOver } from "../e2e/cross-tab.mjs";
import { startDurableStreams } from "../e2e/durable-streams.mjs";
import { catchUpThenLive } from "../e2e/durable-streams-page.mjs";
import { hiddenThenVisible, offlineThenOnline } from "../e2e/lifecycle.mjs";
import { assertOneKey, settled, trackSends } from "../e2e/send.mjs";

export const TRANSPORTS = ["eventsource", "fetch-sse", "long-poll", "poll"];

/** The endpoint of each transport on the reference server. */
const PATHS = { eventsource: "/sse", "fetch-sse": "/sse", "long-poll": "/long-poll", poll: "/poll" };

// Unjittered backoff with a 1 s floor: after the restart window (400 ms) the
// client reconnects only once n6..n8 are published, so it gets them by
// resuming from its cursor, not live (asserted from the server's log).
const OPTIONS = {
  seed: 7,
  backoff: { strategy: "none", floorMs: 1000, baseMs: 1000 },
  interval: { initialMs: 200, minMs: 100, maxMs: 400 },
  longPoll: { timeoutMs: 5000 },
};
const RESTART_MS = 400;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Load the package on the server's origin and subscribe; events go to `window.log`. */
async function open(engine, server, transport) {
  await engine.goto(`${server.url}/_faults`);
  await engine.evaluate(async ({ url, options }) => {
    const m = await import(`${location.origin}/pkg/tidings.js`);
    await m.default();
    window.log = [];
    const sub = m.subscribe(url, options);
    for (const type of ["message", "open", "error"]) {
      sub.addEventListener(type, (e) => window.log.push({ type, id: e.lastEventId, data: e.data }));
    }
    window.sub = sub;
  }, { url: server.url + PATHS[transport], options: { ...OPTIONS, transports: [transport] } });
}

/** Read `window.log` until `fn` accepts it; fails after `timeoutMs` naming `what`. */
async function until(engine, fn, what, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const log = await engine.evaluate(() => window.log);
    if (fn(log)) return log;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; log: ${JSON.stringify(log)}`);
    await sleep(50);
  }
}

/** Until the server's log of `path` satisfies `fn`. */
async function untilServer(server, path, fn, what, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const entries = await requests(server, path);
    if (fn(entries)) return entries;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; log: ${JSON.stringify(entries)}`);
    await sleep(50);
  }
}

/**
 * Ready to receive what is published next: a stream is open; a long-poll
 * request is held at the server; a poll has had its first answer (whose ETag
 * is the starting point).
 */
async function ready(engine, server, transport) {
  const path = PATHS[transport];
  if (transport === "long-poll") {
    await untilServer(server, path, (es) => es.some((e) => e.status === null), "a held long-poll");
  } else if (transport === "poll") {
    await untilServer(server, path, (es) => es.some((e) => e.status === 304), "a 304 poll");
  } else {
    await until(engine, (log) => log.some((e) => e.type === "open"), "open");
  }
}

const messages = (log) => log.filter((e) => e.type === "message");

/**
 * `transport` receives n1..n5 once and in order, then across a server restart
 * (connections dropped, refused for 400 ms) n6..n10: n6..n8 published before
 * the client is back (it resumes from n5's id), n9..n10 after. None lost,
 * none twice, ids as published.
 */
export async function receiveAndResume(engine, server, transport) {
  await open(engine, server, transport);
  await ready(engine, server, transport);
  const ids = [];
  for (let i = 1; i <= 5; i++) ids.push((await server.publish(`n${i}`)).id);
  await until(engine, (log) => messages(log).length >= 5, "n1..n5");
  const { now_ms: restartAt } = await server.log();
  const r = await restart(server, { ms: RESTART_MS, mode: "refuse" });
  if (transport !== "poll") assert.ok(r.dropped >= 1, `restart dropped nothing: ${JSON.stringify(r)}`);
  await sleep(RESTART_MS + 50);
  const { now_ms: publishedAt } = await server.log();
  for (let i = 6; i <= 8; i++) ids.push((await server.publish(`n${i}`)).id);
  await until(engine, (log) => messages(log).length >= 8, "n6..n8 (resumed)");
  for (let i = 9; i <= 10; i++) ids.push((await server.publish(`n${i}`)).id);
  await until(engine, (log) => messages(log).length >= 10, "n9..n10");
  // Long enough for a duplicate or a replay from an older cursor to show.
  await sleep(500);
  const log = await engine.evaluate(() => { window.sub.close(); return window.log; });
  const got = messages(log);
  assert.deepEqual(got.map((m) => m.data), ["n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9", "n10"]);
  assert.deepEqual(got.map((m) => m.id), ids);
  // The first request answered after the restart came once n6..n8 were
  // being published and carried n5's id: they reached the page by resuming.
  // A poll that missed the refused window goes on at its interval, answered
  // 304 until n6 is published: its first 200 is the one that resumed.
  const answered = (e) => (transport === "poll" ? e.status === 200 : e.status > 0);
  const back = (await requests(server, PATHS[transport])).find((e) => e.t_ms > restartAt && answered(e));
  assert.ok(back && back.t_ms >= publishedAt, `resumed before n6..n8 were published: ${JSON.stringify(back)}`);
  assert.equal(cursorOf(back), ids[4], JSON.stringify(back));
}

/** The cursor a request carried: Last-Event-ID, else `lastEventId` in the query, else the ETag it revalidates. */
function cursorOf(entry) {
  const query = new URLSearchParams(entry.query ?? "");
  return entry.headers["last-event-id"] ?? query.get("lastEventId") ?? entry.headers["if-none-match"]?.replace(/^W\/|"/g, "");
}

// ----- where the engines differ ---------------------------------------------

/** The reference server's scripted answers (`POST /_faults`). */
async function script(server, rules) {
  const r = await fetch(`${server.url}/_faults`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(rules),
  });
  assert.equal(r.status, 200, await r.text());
}

/**
 * A JSON answer whose chunked body is cut by a connection reset is a failed
 * attempt, retried, never a message: the server sends the first 36 bytes of
 * a two-message array, then resets the connection; the retry is held.
 */
export async function resetBodyIsNoMessage(engine, server, transport) {
  const path = PATHS[transport];
  const cut = {
    kind: "script", headers: { "Content-Type": "application/json" },
    writes: [{ data: "[{\"id\":\"1\",\"data\":\"m1\"},{\"id\":\"2\",\"da" }], then: "abort",
  };
  await script(server, [{ path, fault: cut }, { path, fault: { kind: "script", writes: [], then: "hang" } }]);
  await open(engine, server, transport);
  await untilServer(server, path, (es) => es.length >= 2, "the retry after the reset");
  // Long enough for the cut answer's messages, if any, to be dispatched.
  await sleep(300);
  const log = await engine.evaluate(() => { window.sub.close(); return window.log; });
  assert.deepEqual(messages(log).map((m) => m.data), [], JSON.stringify(log));
}

/**
 * A proxy that sends a stream's head at once and holds its body (the
 * server's `buffer` fault) is `buffered-stream` on every engine: Chromium and
 * WebKit see the head and no byte, Firefox (its streaming `fetch` resolves
 * only at the first body byte) sees nothing at all, and the first-event
 * deadline runs from the head or, without one, from the request. Two such
 * streams move the subscription to long-poll, which delivers what is
 * published next. The connect deadline (`idleTimeoutMs`, 10 s) lies past
 * this case's wait: an `open-failed` verdict fails it.
 */
export async function heldBodyIsBuffered(engine, server) {
  await script(server, [{ path: "/sse", times: null, fault: { kind: "buffer" } }]);
  await engine.goto(`${server.url}/_faults`);
  const { id: start } = await server.publish("start");
  await engine.evaluate(async ({ base, start }) => {
    const m = await import(`${location.origin}/pkg/tidings.js`);
    await m.default();
    window.log = [];
    const sub = m.subscribe(`${base}/sse`, {
      seed: 7, lastEventId: start, transports: ["fetch-sse", "long-poll"], urls: { "long-poll": `${base}/long-poll` },
      backoff: { strategy: "none", floorMs: 100, baseMs: 100 }, fallback: { afterFailures: 2 },
      watchdog: { firstEventTimeoutMs: 500, idleTimeoutMs: 10_000 }, longPoll: { timeoutMs: 5000 },
    });
    for (const type of ["message", "transportchange", "statechange"]) {
      sub.addEventListener(type, (e) => window.log.push({
        type, data: e.data, state: e.state, reason: e.reason, transport: e.transport, previous: e.previous,
      }));
    }
    window.sub = sub;
  }, { base: server.url, start });
  const moved = (log) => log.some((e) => e.type === "transportchange" && e.transport === "long-poll");
  await until(engine, moved, "the move to long-poll", 8000);
  await untilServer(server, "/long-poll", (es) => es.some((e) => e.status === null), "a held long-poll");
  await server.publish("after");
  await until(engine, (log) => messages(log).length >= 1, "the message by long-poll");
  const log = await engine.evaluate(() => { window.sub.close(); return window.log; });
  const changes = log.filter((e) => e.type === "transportchange" && e.previous);
  assert.deepEqual(changes.map((e) => [e.previous, e.transport, e.reason]), [["fetch-sse", "long-poll", "buffered-stream"]]);
  const waits = log.filter((e) => e.type === "statechange" && e.state === "waiting").map((e) => e.reason);
  assert.deepEqual(waits, ["buffered-stream", "buffered-stream"], JSON.stringify(log));
  assert.deepEqual(messages(log).map((m) => m.data), ["after"]);
}

/**
 * Resume from a non-ASCII event id (`…`, U+2026) on a fetch transport: the
 * request after it carries the id intact where a server that reads
 * `Last-Event-ID` first and the `lastEventId` query parameter second finds
 * it (the npm README's contract), and the answer to that request is
 * delivered with the id as its `lastEventId`. tidings sends such an id only
 * in the query (WebKitGTK sent the header's UTF-8 bytes encoded twice), so
 * no `Last-Event-ID` may come with it.
 */
export async function resumeFromNonAsciiId(engine, server, transport) {
  const path = PATHS[transport];
  const answer = (data) => ({ kind: "script", headers: {}, writes: [{ data }], then: "fin" });
  await script(server, [
    { path, fault: answer("id: \u2026\ndata: e\n\n") },
    { path, fault: answer("data: f\n\n") },
    { path, fault: { kind: "script", writes: [], then: "hang" } },
  ]);
  await open(engine, server, transport);
  await until(engine, (log) => messages(log).length >= 2, "e (id …) and f after the resume");
  const reqs = await untilServer(server, path, (es) => es.length >= 3, "the request after f");
  const log = await engine.evaluate(() => { window.sub.close(); return window.log; });
  assert.deepEqual(messages(log).map((m) => [m.data, m.id]), [["e", "\u2026"], ["f", "\u2026"]]);
  const sent = reqs.slice(1, 3).map((r) => [r.headers["last-event-id"], cursorOf(r)]);
  const hex = (s) => Buffer.from(s ?? "").toString("hex");
  assert.deepEqual(sent, [[undefined, "\u2026"], [undefined, "\u2026"]],
    `sent (header, cursor read header-first): ${JSON.stringify(sent)}; header bytes ${sent.map((s) => hex(s[0])).join(", ")}`);
}

// ----- send, crossTab, lifecycle, Durable Streams ---------------------------
// The scenarios and their assertions are the Chromium e2e tests' own
// (tests/e2e/send.mjs, cross-tab.mjs, lifecycle.mjs, durable-streams-page.mjs),
// run here through the engine's driver. Their pages are /blank.html of a
// server started with `--www tests/e2e/pages` (run.mjs).

/** A case the engine cannot run: reported as skipped with the driver's reason, never passed. */
export class Skip extends Error {}

/**
 * `send` keeps its Idempotency-Key across a 503: two attempts with one
 * generated key (a UUID), resolved with the second's 201, applied once.
 */
export async function sendKeepsKey(engine, server) {
  await engine.goto(`${server.url}/blank.html`);
  await engine.evaluate(async () => {
    window.t = await import("/pkg/index.js");
    await window.t.default();
  });
  await engine.evaluate(trackSends);
  await script(server, [{ path: "/send", times: 1, fault: { kind: "status", status: 503 } }]);
  // `close=1`: a fresh connection per request, so no engine re-sends the
  // POST by itself on a reused one (tests/e2e/send.test.mjs).
  await engine.evaluate(() => window.track("k", window.t.send("/send?close=1", "x", { backoff: { floorMs: 50, baseMs: 100, maxMs: 1000 } })));
  const k = await settled(engine, "k");
  assert.deepEqual(k.value && [k.value.status, k.value.attempts, k.value.replayed], [201, 2, false], JSON.stringify(k));
  const reqs = await requests(server, "/send");
  assert.deepEqual(reqs.map((r) => r.status), [503, 201]);
  assertOneKey(reqs);
  const { applied } = await (await fetch(`${server.url}/_send`)).json();
  assert.equal(applied.length, 1, JSON.stringify(applied));
}

/**
 * `crossTab`: two pages of one profile share one stream; the leader's page
 * closes and the other takes over with the cursor, nothing lost or repeated.
 */
export async function crossTabHandOver(engine, server) {
  const a = await engine.newPage();
  const b = await engine.newPage();
  let closed = false;
  try {
    await handOver(server, a, b, async (leader) => { await leader.close(); closed = true; });
  } finally {
    if (!closed) await a.close().catch(() => {});
    await b.close().catch(() => {});
  }
}

/** Hidden → visible (simulated; see tests/e2e/lifecycle.mjs) on `transport`. */
export async function hiddenVisible(engine, server, transport) {
  await hiddenThenVisible(engine, server, transport);
}

/** Offline → online through the driver's network emulation; skipped where it has none. */
export async function offlineOnline(engine, server) {
  if (!engine.setOffline) throw new Skip(engine.lacks.offline);
  await offlineThenOnline(engine, server, engine.setOffline);
}

/** The Durable Streams read against `@durable-streams/server`, cross-origin from the page. */
export async function durableStreamsRead(engine, server) {
  // The server's `[info]` lines (recovery, and every append slower than 50 ms
  // on a loaded machine) would bury the suite's report; warnings and errors stay.
  const info = console.info;
  console.info = () => {};
  try {
    const ds = await startDurableStreams({ dataDir: true, longPollTimeoutMs: 3000, maxChunkMessages: 50 });
    try {
      await engine.goto(`${server.url}/blank.html`);
      await loadPackage(engine);
      await catchUpThenLive(engine, ds, `/v1/stream/engines-${Date.now()}`);
    } finally {
      await engine.evaluate(() => window.subs?.s?.sub.close()).catch(() => {});
      await ds.stop();
    }
  } finally {
    console.info = info;
  }
}
