// `make test-engines`: the cross-engine cases (cases.mjs) on Chromium (the
// control), Firefox and WebKitGTK. Prints each case's result, then one line
// per engine with its version and pass / fail counts; exits 1 on any failure
// or a missing engine. `node tests/engines/run.mjs [engine…]` runs a subset;
import { startServer } from "../e2e/harness.mjs";
import { ENGINES, missing } from "./drivers.mjs";
import { TRANSPORTS, heldBodyIsBuffered, receiveAndResume, resetBodyIsNoMessage, resumeFromNonAsciiId } from "./cases.mjs";
import { Skip, crossTabHandOver, durableStreamsRead, hiddenVisible, offlineOnline, sendKeepsKey } from "./cases.mjs";

// The pages of the shared e2e scenarios (/blank.html).
const PAGES = new URL("../e2e/pages/", import.meta.url).pathname;

// WebKitGTK ends a chunked body cut by a connection reset as if it were
// complete: a JSON answer that does not parse is a failed attempt in the
// engine, never a message, so the cut answer of a polling transport must
// not reach the app on any engine.
const CASES = [
  ...TRANSPORTS.map((t) => [`${t}: receive once and in order, resume after a restart`,
    (engine, server) => receiveAndResume(engine, server, t)]),
  ...["long-poll", "poll"].map((t) => [`${t}: a body cut by a reset is no message`,
    (engine, server) => resetBodyIsNoMessage(engine, server, t)]),
  // WebKitGTK sent a non-ASCII Last-Event-ID double-encoded: the core puts a
  // cursor that is not visible ASCII in the query only.
  ...["fetch-sse", "long-poll", "poll"].map((t) => [`${t}: resume from a non-ASCII id`,
    (engine, server) => resumeFromNonAsciiId(engine, server, t)]),
  ["send: one Idempotency-Key across a 503", sendKeepsKey],
  ["crossTab: two pages share one stream; the leader's page closes, the other takes over with the cursor", crossTabHandOver],
  ...["eventsource", "fetch-sse"].map((t) => [`${t}: hidden → nothing while hidden; visible → one request with the cursor`,
    (engine, server) => hiddenVisible(engine, server, t)]),
  ["fetch-sse: offline → no attempt; online → one, with what was missed", offlineOnline],
  ["durable-streams: catch-up in three chunks, uptodate, then live long-poll", durableStreamsRead],
  // Firefox resolves a streaming fetch only at the first body byte: behind a
  // proxy that holds the body it sees no head at all.
  ["fetch-sse: a proxy that holds the body is buffered-stream, then long-poll delivers", heldBodyIsBuffered],
];


/** Run every case on `name`; resolves to { name, version, pass, fail, skipped, ms }. */
async function runEngine(name) {
  const t0 = Date.now();
  const row = { name, version: "-", pass: 0, fail: 0, skipped: 0, ms: 0 };
  const why = missing(name);
  if (why) {
    console.log(`${name}: ${why}`);
    row.fail = CASES.length;
    return row;
  }
  let engine;
  try {
    engine = await ENGINES[name]();
    row.version = engine.version;
    for (const [title, body] of CASES) {
      const server = await startServer(["--www", PAGES]);
      const c0 = Date.now();
      try {
        await body(engine, server);
        row.pass++;
        console.log(`ok   ${name} ${title} (${Date.now() - c0} ms)`);
      } catch (e) {
        if (e instanceof Skip) {
          row.skipped++;
          console.log(`skip ${name} ${title}: skipped: ${e.message}`);
        } else {
          row.fail++;
          console.log(`FAIL ${name} ${title} (${Date.now() - c0} ms)\n     ${String(e.stack ?? e).split("\n").join("\n     ")}`);
        }
      } finally {
        await server.stop();
      }
    }
  } catch (e) {
    console.log(`FAIL ${name}: could not drive the engine: ${e.stack ?? e}`);
    row.fail = CASES.length - row.pass - row.skipped;
  } finally {
    await engine?.close().catch(() => {});
  }
  row.ms = Date.now() - t0;
  return row;
}

const picked = process.argv.slice(2);
const names = picked.length ? picked : Object.keys(ENGINES);
const unknown = names.filter((n) => !ENGINES[n]);
if (unknown.length) {
  console.error(`unknown engine(s): ${unknown.join(", ")}; known: ${Object.keys(ENGINES).join(", ")}`);
  process.exit(2);
}
const t0 = Date.now();
const rows = [];
for (const name of names) rows.push(await runEngine(name));
console.log("\nengine    version        pass  fail  skipped  time");
for (const r of rows) {
  console.log(`${r.name.padEnd(9)} ${String(r.version).padEnd(14)} ${String(r.pass).padStart(4)}  ${String(r.fail).padStart(4)}  ${String(r.skipped).padStart(7)}  ${(r.ms / 1000).toFixed(1)} s`);
}
console.log(`total ${((Date.now() - t0) / 1000).toFixed(1)} s`);
process.exit(rows.some((r) => r.fail > 0) ? 1 : 0);
