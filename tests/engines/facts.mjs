// `node tests/engines/facts.mjs [engine…]`: measure the engine facts that
// docs/engines.md tabulates, on the engines installed here. Prints one JSON
// line per engine. Not a test: the figures describe the engines, and the
// table cites them with the engine versions.
import { startServer } from "../e2e/harness.mjs";
import { requests } from "../e2e/tidings-page.mjs";
import { ENGINES, missing } from "./drivers.mjs";

async function script(server, rules) {
  const r = await fetch(`${server.url}/_faults`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(rules),
  });
  if (r.status !== 200) throw new Error(await r.text());
}

/** The APIs the adapter reads where they exist. */
const apis = () => ({
  connection: "connection" in navigator,
  freeze: "onfreeze" in document,
  streamAsyncIteration: typeof ReadableStream.prototype[Symbol.asyncIterator] === "function",
  locks: "locks" in navigator,
  broadcastChannel: typeof BroadcastChannel === "function",
});

/** When a streaming fetch resolves: the head is sent at once, the first body byte 1 s later. */
async function firstByte(engine, server) {
  await script(server, [{ path: "/sse", fault: {
    kind: "script", headers: { "Content-Type": "text/event-stream" },
    writes: [{ delay_ms: 1000, data: ": ping\n\n" }], then: "hang",
  } }]);
  return engine.evaluate(async (url) => {
    const ac = new AbortController();
    const t0 = performance.now();
    const r = await fetch(url, { signal: ac.signal, cache: "no-store" });
    const head = performance.now() - t0;
    await r.body.getReader().read();
    const byte = performance.now() - t0;
    ac.abort();
    return { headMs: Math.round(head), firstByteMs: Math.round(byte) };
  }, `${server.url}/sse`);
}

/**
 * How many requests one failed fetch() makes: `drop` closes every connection
 * without a byte of the answer; `abort` sends the head, then breaks it.
 */
async function resetRequests(engine, server, kind) {
  const fault = kind === "drop" ? { kind: "drop-response" } : { kind: "script", writes: [], then: "abort" };
  await script(server, [{ path: "/poll", times: null, fault }]);
  const outcome = await engine.evaluate(async (url) => {
    try { await fetch(url, { cache: "no-store" }); return "resolved"; } catch (e) { return e.name; }
  }, `${server.url}/poll`);
  await new Promise((r) => setTimeout(r, 500));
  const n = (await requests(server, "/poll")).length;
  return `${outcome}, ${n} request(s) at the server`;
}

const names = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(ENGINES);
for (const name of names) {
  if (missing(name)) { console.log(JSON.stringify({ name, missing: missing(name) })); continue; }
  const engine = await ENGINES[name]();
  const server = await startServer();
  try {
    await engine.goto(`${server.url}/_faults`);
    const row = { name, version: engine.version, ...(await engine.evaluate(apis)) };
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await firstByte(engine, server));
    row.fetchResolves = runs;
    row.reset = [];
    for (const kind of ["drop", "drop", "abort", "abort"]) {
      const fresh = await startServer();
      try {
        await engine.goto(`${fresh.url}/_faults`);
        row.reset.push(`${kind}: ${await resetRequests(engine, fresh, kind)}`);
      } finally {
        await fresh.stop().catch(() => {});
      }
    }
    console.log(JSON.stringify(row));
  } finally {
    await server.stop().catch(() => {});
    await engine.close().catch(() => {});
  }
}
