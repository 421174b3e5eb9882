// Two things easy to misread, in headless Chromium against the
// reference server:
// - A message larger than the limit (1 MiB by default) is skipped, not
//   replayed forever: on fetch-sse and long-poll, a 1.5 MiB message published
//   between two small ones gives the small ones, exactly one `too-large` error
//   (not fatal, nothing retried), and no reconnect loop: the server log shows
//   every request's cursor, and none asks for the big message again. Both the
//   one-line form (line limit) and the many-lines form (event data limit).
//   The error carries the skipped message's `id`. `maxMessageBytes` moves the
//   limit both ways: BC-16 V3 (4 MiB: one 2 MiB message delivered whole, no
//   error) and 100 bytes (a 200-byte message is too-large). BC-16 V2: empty
//   `data:` lines past 1 MiB of event data and never a blank line give one
//   too-large when the body ends, with wasm memory bounded.
// - `eventsource`: a one-shot 503 / 429 / 204 hides its status from the
//   native EventSource, and the status probe sent after it gets 200. That is
//   an `http-status` error (no status: the browser hid it), retried under
//   backoff, with no transport change even when it happens twice in a row;
//   before, it read as `network-or-cors` and the second one skipped streams.
// TIDINGS_PKG=<dir> runs this against another build of the package (an older
// one fails every test here).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import * as h from "./tidings-page.mjs";

const MIB = 1 << 20;
const BACKOFF = { floorMs: 100, baseMs: 100, maxMs: 500 };

let browser, server, page, n = 0;
before(async () => {
  browser = await launchBrowser();
  const pkg = process.env.TIDINGS_PKG ? ["--pkg", process.env.TIDINGS_PKG] : [];
  server = await startServer(["--quiet", "--retry-ms", "100", ...pkg]);
  page = await h.blankPage(browser, server.url);
});
after(async () => { await page?.closeAll(); await browser?.close(); await server?.stop(); });

const caseLog = async (path, tag) =>
  (await h.requests(server, path)).filter((e) => (e.query ?? "").includes(`case=${tag}`));
const cursorOf = (e) => Number(e.headers["last-event-id"] ?? 0);

/** 1.5 MiB as one line, or as 1 KiB lines (each within the line limit). */
const BODIES = {
  "one line": "x".repeat(3 * MIB / 2),
  "many lines": Array.from({ length: 1536 }, () => "y".repeat(1023)).join("\n"),
};

for (const [form, big] of Object.entries(BODIES)) {
  test(`fetch-sse: a 1.5 MiB message (${form}) is skipped with one too-large error, the stream goes on, no reconnect`, async () => {
    const tag = `s${++n}`;
    await h.subscribe(page, tag, `/sse?case=${tag}`, { transports: ["fetch-sse"], seed: 5, backoff: BACKOFF });
    await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "open"), 5000, "open");
    const before = await server.publish("before");
    const skipped = await server.publish(big);
    const after = await server.publish("after");
    await h.waitEvents(page, tag, (l) => l.some((e) => e.data === "after"), 8000, "the message after the big one");
    await h.sleep(500); // a reconnect or a second error would show now
    const log = await h.events(page, tag);
    const st = await h.stats(page, tag);
    const lastEventId = await page.evaluate((t) => window.subs[t].sub.lastEventId, tag);
    await h.closeSub(page, tag);
    const entries = await caseLog("/sse", tag);
    assert.deepEqual(log.filter((e) => e.type === "message").map((e) => [e.id, e.data]),
      [[before.id, "before"], [after.id, "after"]]);
    const errors = log.filter((e) => e.type === "error");
    assert.deepEqual(errors.map((e) => [e.code, e.fatal, e.retryInMs]), [["too-large", false, undefined]]);
    assert.equal(errors[0].id, skipped.id, "the error names the skipped message");
    assert.equal(log.filter((e) => e.state === "waiting").length, 0, "no backoff");
    assert.equal(entries.length, 1, entries.map(h.logBrief).join("\n"));
    assert.equal(st.requests, 1);
    assert.ok(st.bytes > 3 * MIB / 2, `the big message was read through: ${st.bytes} bytes`);
    assert.equal(lastEventId, after.id);
    assert.ok(Number(skipped.id) < Number(after.id));
  });
}

test("long-poll: a 1.5 MiB message is skipped with one too-large error; no request asks for it again", async () => {
  const tag = `l${++n}`;
  await h.subscribe(page, tag, `/long-poll?case=${tag}`, { transports: ["long-poll"], seed: 5, backoff: BACKOFF });
  await h.waitRequests(server, "/long-poll", (es) => es.some((e) => e.query.includes(`case=${tag}`)), 5000, "the first hold");
  const skipped = await server.publish(BODIES["one line"]);
  const after = await server.publish("after");
  await h.waitEvents(page, tag, (l) => l.some((e) => e.data === "after"), 8000, "the message after the big one");
  await h.sleep(500);
  const log = await h.events(page, tag);
  await h.closeSub(page, tag);
  const entries = await caseLog("/long-poll", tag);
  assert.deepEqual(log.filter((e) => e.type === "message").map((e) => [e.id, e.data]), [[after.id, "after"]]);
  const errors = log.filter((e) => e.type === "error");
  assert.deepEqual(errors.map((e) => [e.code, e.fatal, e.retryInMs]), [["too-large", false, undefined]]);
  assert.equal(errors[0].id, skipped.id, "the error names the skipped message");
  // The first request has no cursor; every later one is past the big message
  // (its id moved the cursor), so the server never sends it twice.
  assert.equal(cursorOf(entries[0]), 0);
  assert.ok(entries.slice(1).every((e) => cursorOf(e) >= Number(skipped.id)), entries.map(h.logBrief).join("\n"));
  // At most: the hold answered with the big message (alone or with the
  // next), one for the next if it came separately, and the one left holding.
  assert.ok(entries.length <= 3, entries.map(h.logBrief).join("\n"));
  assert.equal(entries.filter((e) => e.bytes > MIB).length, 1, "the big message was sent once");
});

/** A `script` fault on /sse: `writes` ([data, repeat]) 20 ms apart, then `then`. */
const script = (writes, then) => ({
  path: "/sse", fault: {
    kind: "script", status: 200, content_type: "text/event-stream", then,
    writes: writes.map(([data, repeat], i) => ({ delay_ms: i ? 20 : 0, data, repeat })),
  },
});

test("BC-16 V3 (fetch-sse): maxMessageBytes 4 MiB delivers one 2 MiB message whole, no error", async () => {
  await h.clearFaults(server);
  await h.faults(server, script([["data: "], ["y", 2 * MIB], ["\n\n"]], "hang"));
  const tag = `v${++n}`;
  await h.subscribe(page, tag, `/sse?case=${tag}`, { transports: ["fetch-sse"], maxMessageBytes: 4 * MIB, backoff: BACKOFF });
  await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "message"), 8000, "the 2 MiB message");
  await h.sleep(300);
  const got = await page.evaluate((t) => window.subs[t].log.map((e) => [e.type, e.code ?? e.data?.length ?? e.state]), tag);
  await h.closeSub(page, tag);
  await h.clearFaults(server);
  assert.deepEqual(got.filter(([type]) => type === "message" || type === "error"), [["message", 2 * MIB]]);
});

test("maxMessageBytes also narrows the limit: a message over it is too-large (with its id), one within it is delivered", async () => {
  const tag = `m${++n}`;
  await h.subscribe(page, tag, `/sse?case=${tag}`, { transports: ["fetch-sse"], maxMessageBytes: 100, backoff: BACKOFF });
  await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "open"), 5000, "open");
  const big = await server.publish("z".repeat(200));
  const small = await server.publish("z".repeat(50));
  await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "message"), 5000, "the small message");
  const log = await h.events(page, tag);
  await h.closeSub(page, tag);
  assert.deepEqual(log.filter((e) => e.type === "error").map((e) => [e.code, e.id, e.fatal]), [["too-large", big.id, false]]);
  assert.deepEqual(log.filter((e) => e.type === "message").map((e) => e.id), [small.id]);
});

test("BC-16 V2 (fetch-sse): endless empty data lines and never a blank line: one too-large, memory bounded", async () => {
  await h.clearFaults(server);
  // 20 × 65 536 lines "data:\n" (7.5 MiB, 1.25 MiB of event data), then the body ends.
  const chunk = "data:\n".repeat(65536);
  await h.faults(server, script([["id: v2\n"], ...Array.from({ length: 20 }, () => ["data:\n", 65536])], "fin"));
  const tag = `v${++n}`;
  const mem0 = await page.evaluate(() => window.wasm.memory.buffer.byteLength);
  await h.subscribe(page, tag, `/sse?case=${tag}`, { transports: ["fetch-sse"], backoff: BACKOFF });
  const log = await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "error"), 10000, "the too-large error");
  await h.sleep(300);
  const st = await h.stats(page, tag);
  const mem1 = await page.evaluate(() => window.wasm.memory.buffer.byteLength);
  await h.closeSub(page, tag);
  await h.clearFaults(server);
  const errors = (await h.events(page, tag)).filter((e) => e.type === "error");
  assert.deepEqual(errors.map((e) => [e.code, e.fatal]), [["too-large", false]]);
  assert.equal(log.filter((e) => e.type === "message").length, 0);
  assert.ok(st.bytes >= 20 * chunk.length, `read through: ${st.bytes} bytes`);
  assert.ok(mem1 - mem0 < 8 * MIB, `wasm memory grew by ${mem1 - mem0} bytes`);
});

const ONE_SHOT = [
  ["503", { kind: "status", status: 503 }, 1],
  ["429", { kind: "status", status: 429 }, 1],
  ["204", { kind: "status", status: 204 }, 1],
  ["503 twice in a row", { kind: "status", status: 503 }, 2],
];

for (const [name, fault, times] of ONE_SHOT) {
  test(`eventsource: a one-shot ${name} the probe cannot see is http-status, retried, no transport change`, async () => {
    await h.clearFaults(server);
    // Each refusal hits the EventSource request; the probe right after it
    // takes a pass-through rule (a 0 ms delay), so a second refusal hits the
    // next EventSource request, not the probe.
    const pass = { kind: "delay", ms: 0 };
    await h.faults(server, Array.from({ length: times }, () => [{ path: "/sse", fault }, { path: "/sse", fault: pass }]).flat());
    const tag = `e${++n}`;
    await h.subscribe(page, tag, `/sse?case=${tag}`, { seed: 9, backoff: BACKOFF });
    await h.waitEvents(page, tag, (l) => l.some((e) => e.type === "open"), 8000, "open after the refusal");
    const published = await server.publish(`after ${name}`);
    await h.waitEvents(page, tag, (l) => l.some((e) => e.data === `after ${name}`), 5000, "the message");
    const log = await h.events(page, tag);
    await h.closeSub(page, tag);
    await h.clearFaults(server);
    const entries = await caseLog("/sse", tag);
    const errors = log.filter((e) => e.type === "error");
    assert.deepEqual(errors.map((e) => [e.code, e.status, e.fatal]), Array(times).fill(["http-status", undefined, false]));
    for (const e of errors) assert.ok(e.retryInMs >= 100, `retried under backoff: ${e.retryInMs}`);
    assert.deepEqual(log.filter((e) => e.type === "transportchange").map((e) => [e.transport, e.reason]),
      [["eventsource", "start"]]);
    assert.deepEqual(log.filter((e) => e.type === "open").map((e) => e.transport), ["eventsource"]);
    assert.equal(log.find((e) => e.type === "message").id, published.id);
    // Per refusal: the EventSource request (the fault) and the probe (200,
    // aborted after its head); then the stream that opened.
    assert.deepEqual(entries.map((e) => e.status), [...Array(times).fill([fault.status, 200]).flat(), 200],
      entries.map(h.logBrief).join("\n"));
    assert.deepEqual(entries.map((e) => e.fault?.kind ?? null), [...Array(times).fill(["status", "delay"]).flat(), null]);
  });
}
