// Issue 22, what app developers ask for, in headless Chromium against the
// reference server: a cursor that survives a reload (`persist`),
// `reconnect()`, and the calm connection status (`status`, `statuschange`).
// Each test fails on a build without its feature.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import * as h from "./tidings-page.mjs";

let server, browser;
before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});
after(async () => { await browser?.close(); await server?.stop(); });

const T = 90_000;
let n = 0;
const tag = (p) => `${p}${Date.now()}x${++n}`;

/** The page's storage entries whose key starts with `tidings:cursor:`. */
const stored = (page, storage = "sessionStorage") => page.evaluate((s) => Object.fromEntries(
  Object.keys(globalThis[s]).filter((k) => k.startsWith("tidings:cursor:")).map((k) => [k, globalThis[s].getItem(k)])), storage);

/** Wait for `n` messages (type `message`) of `name`. */
const messages = (page, name, count) => h.waitEvents(page, name,
  (l) => l.filter((e) => e.type === "message").length >= count, 10_000, `${count} messages`);

/** An init script: counts the page's writes of cursor keys in `window.writes`. */
const countCursorWrites = () => {
  const set = Storage.prototype.setItem;
  window.writes = 0;
  Storage.prototype.setItem = function (k, v) {
    if (String(k).startsWith("tidings:cursor:")) window.writes++;
    return set.call(this, k, v);
  };
};

/**
 * Two tabs of one context sharing `/sse?t=<t>` (crossTab, persist "local"),
 * both counting their cursor writes; the leader's subscription `a` is open.
 */
async function crossTabPair(t) {
  const context = await browser.newContext();
  const leader = await h.blankPage(browser, server.url, { context, init: countCursorWrites });
  const follower = await h.blankPage(browser, server.url, { context, init: countCursorWrites });
  const options = { transports: ["fetch-sse"], crossTab: true, persist: "local" };
  await h.subscribe(leader, "a", `/sse?t=${t}`, options);
  await h.waitEvents(leader, "a", (l) => l.some((e) => e.type === "open"));
  return { context, leader, follower, options };
}

/**
 * Through the package entry (index.js), `subscribe(url, options)` in `page`
 * whose message listener closes it on the first message; `window.got`
 * resolves to that message's lastEventId. Returns once it is open.
 */
function closeOnFirstMessage(page, url, options) {
  return page.evaluate(async ([url, options]) => {
    const m = await import("/pkg/index.js");
    await m.default();
    const sub = m.subscribe(url, options);
    window.got = new Promise((r) => sub.addEventListener("message", (e) => { sub.close(); r(e.lastEventId); }));
    await new Promise((r) => sub.addEventListener("open", r));
  }, [url, options]);
}

// ----- 1. the persisted cursor ------------------------------------------------

test("persist: the cursor of handled messages survives a reload (hashed key, never the URL), the reload resumes from it, reset removes it", { timeout: T }, async () => {
  const t = tag("p");
  const page = await h.blankPage(browser, server.url);
  const url = `/sse?t=${t}&token=s3cret`;
  const options = { transports: ["fetch-sse"], persist: "session" };
  await h.subscribe(page, "a", url, options);
  await h.waitEvents(page, "a", (l) => l.some((e) => e.type === "open"));
  const one = await server.publish(`${t} 1`);
  const two = await server.publish(`${t} 2`);
  const log = await messages(page, "a", 2);
  const last = log.filter((e) => e.type === "message").at(-1).lastEventId;
  assert.equal(last, String(two.id ?? last));
  // Written after the batch, under a hash: neither the URL nor its token.
  await h.sleep(50);
  const saved = await stored(page);
  assert.deepEqual(Object.values(saved), [last]);
  const [key] = Object.keys(saved);
  assert.match(key, /^tidings:cursor:[0-9a-f]{16}$/);

  // Published while the page reloads: delivered once after it, from the cursor.
  await page.reload();
  await h.loadPackage(page);
  await server.publish(`${t} 3`);
  await h.clearLog(server);
  await h.subscribe(page, "b", url, options);
  const after = await messages(page, "b", 1);
  assert.deepEqual(after.filter((e) => e.type === "message").map((e) => e.data), [`${t} 3`]);
  const [first] = (await h.requests(server, "/sse")).filter((e) => e.query?.includes(t));
  assert.equal(first.headers["last-event-id"], last, h.logBrief(first));
  assert.ok(one.id === undefined || Number(one.id) < Number(last));

  // `reset` (the server lost its history): the stored cursor goes.
  await h.sleep(50);
  assert.equal(Object.keys(await stored(page)).length, 1);
  await h.restart(server, { ms: 100, lose_state: true });
  await h.waitEvents(page, "b", (l) => l.some((e) => e.type === "reset"), 10_000, "reset");
  await h.sleep(50);
  assert.deepEqual(await stored(page), {});
  await page.closeAll();
});

/**
 * A `persist: "local"` fetch-sse subscription of `/sse?t=<t>` opened through
 * the package entry (index.js, which adds the async iterator) as
 * `window.it`, nothing pulled; resolves at its first `until` event.
 */
function openIterator(page, t, until) {
  return page.evaluate(async ([t, until]) => {
    const m = await import("/pkg/index.js");
    await m.default();
    const sub = m.subscribe(`/sse?t=${t}`, { transports: ["fetch-sse"], persist: "local", persistKey: t });
    window.it = sub[Symbol.asyncIterator]();
    await new Promise((r) => sub.addEventListener(until, r));
  }, [t, until]);
}

test("persist: with an async iterator the cursor is written when the consumer pulls the next message, not before", { timeout: T }, async () => {
  const t = tag("i");
  const page = await h.blankPage(browser, server.url);
  await openIterator(page, t, "open");
  await server.publish(`${t} 1`);
  const first = await page.evaluate(async () => (await window.it.next()).value.lastEventId);
  await h.sleep(100);
  // Handed out, not yet handled: nothing stored.
  assert.deepEqual(await stored(page, "localStorage"), {});
  const pending = page.evaluate(async () => (await window.it.next()).value.data);
  await h.sleep(100);
  assert.deepEqual(await stored(page, "localStorage"), { [`tidings:cursor:${t}`]: first });
  await server.publish(`${t} 2`);
  assert.equal(await pending, `${t} 2`);
  await page.evaluate((t) => localStorage.removeItem(`tidings:cursor:${t}`), t);
  await page.closeAll();
});

test("persist: leaving a for await loop (break or throw) does not count the message it left on: the cursor before it is stored, so a reload gets it again (at least once)", { timeout: T }, async () => {
  const t = tag("b");
  const page = await h.blankPage(browser, server.url);
  await openIterator(page, t, "open");
  for (const k of [1, 2, 3]) await server.publish(`${t} ${k}`);
  const got = await page.evaluate(async () => {
    const sub = { [Symbol.asyncIterator]: () => window.it };
    const ids = [];
    for await (const m of sub) if (ids.push(m.lastEventId) === 3) return { ids, data: m.data };
  });
  assert.equal(got.data, `${t} 3`);
  const key = `tidings:cursor:${t}`;
  for (let i = 0; i < 40 && !(await stored(page, "localStorage"))[key]; i++) await h.sleep(25);
  // return() cannot tell a break after the body handled the message from a
  // throw in the middle of handling it: the message counts as not handled,
  // so the cursor stored is the one of the message before it.
  assert.deepEqual(await stored(page, "localStorage"), { [key]: got.ids[1] });
  await page.evaluate((k) => localStorage.removeItem(k), key);
  await page.closeAll();
});

test("persist: with an async iterator, messages queued before a reset and pulled after it do not write their old cursor back", { timeout: T }, async () => {
  const t = tag("r");
  // One response: two messages, the server's reset, one more (then it hangs).
  const data = "id: a1\ndata: one\n\nid: a2\ndata: two\n\nevent: reset\ndata: {}\n\nid: b1\ndata: three\n\n";
  await h.faults(server, { path: "/sse", fault: { kind: "script", status: 200, content_type: "text/event-stream", writes: [{ data }], then: "hang" } });
  const page = await h.blankPage(browser, server.url);
  // Nothing pulled yet: a1 and a2 wait in the iterator's queue.
  await openIterator(page, t, "reset");
  await h.clearFaults(server);
  const ids = await page.evaluate(async () => [(await it.next()).value.id, (await it.next()).value.id, (await it.next()).value.id]);
  assert.deepEqual(ids, ["a1", "a2", "b1"]);
  await h.sleep(100);
  // Pulling a2 and b1 said a1 and a2 were handled: both from before the gap.
  assert.deepEqual(await stored(page, "localStorage"), {});
  page.evaluate(() => { it.next(); });
  const key = `tidings:cursor:${t}`;
  for (let i = 0; i < 100 && !(await stored(page, "localStorage"))[key]; i++) await h.sleep(50);
  assert.deepEqual(await stored(page, "localStorage"), { [key]: "b1" });
  await page.evaluate((k) => localStorage.removeItem(k), key);
  await page.closeAll();
});

test("persist: a storage that refuses (quota) costs one debug line, and the subscription goes on", { timeout: T }, async () => {
  const t = tag("q");
  const page = await h.blankPage(browser, server.url, {
    init: () => { Storage.prototype.setItem = () => { throw new DOMException("full", "QuotaExceededError"); }; },
  });
  const lines = [];
  page.on("console", (m) => { if (m.type() === "debug" && m.text().includes("persist")) lines.push(m.text()); });
  await h.subscribe(page, "a", `/sse?t=${t}`, { transports: ["fetch-sse"], persist: "session", debug: true });
  await h.waitEvents(page, "a", (l) => l.some((e) => e.type === "open"));
  for (let i = 1; i <= 3; i++) {
    await server.publish(`${t} ${i}`);
    await messages(page, "a", i);
  }
  await h.sleep(100);
  assert.equal(lines.length, 1, lines.join("\n"));
  assert.match(lines[0], /sessionStorage unavailable/);
  assert.deepEqual(await stored(page), {});
  assert.deepEqual(page.errors, []);
  await page.closeAll();
});

test("persist: with crossTab, the leader tab writes localStorage and the follower tab does not write it twice", { timeout: T }, async () => {
  const t = tag("x");
  const { context, leader, follower, options } = await crossTabPair(t);
  await h.subscribe(follower, "a", `/sse?t=${t}`, options);
  await h.waitEvents(follower, "a", (l) => l.some((e) => e.type === "open"));
  for (let i = 1; i <= 3; i++) {
    await server.publish(`${t} ${i}`);
    await messages(leader, "a", i);
    await messages(follower, "a", i);
  }
  await h.sleep(100);
  const last = (await h.events(follower, "a", "message")).at(-1).lastEventId;
  assert.deepEqual(Object.values(await stored(follower, "localStorage")), [last]);
  assert.equal(await follower.evaluate(() => window.writes), 0);
  assert.ok(await leader.evaluate(() => window.writes) >= 1);
  // One connection for both tabs.
  assert.equal((await h.requests(server, "/sse")).filter((e) => e.query?.includes(t)).length, 1);
  await leader.evaluate(() => localStorage.clear());
  await context.close();
});

// ----- 2. reconnect() -----------------------------------------------------------

test("reconnect(): ends a 20 s backoff wait at once; never shortens a Retry-After; revives a subscription that gave up", { timeout: T }, async () => {
  const page = await h.blankPage(browser, server.url);
  // A backoff wait of at least 20 s, ended by the user.
  const t = tag("r");
  await h.faults(server, { path: "/sse", fault: { kind: "status", status: 500 } });
  await h.subscribe(page, "a", `/sse?t=${t}`, { transports: ["fetch-sse"], backoff: { floorMs: 20_000 } });
  let log = await h.waitEvents(page, "a", (l) => l.some((e) => e.state === "waiting"), 10_000, "waiting");
  assert.ok(log.find((e) => e.state === "waiting").delayMs >= 20_000);
  await page.evaluate(() => window.subs.a.sub.reconnect());
  log = await h.waitEvents(page, "a", (l) => l.some((e) => e.type === "open"), 10_000, "open after reconnect()");
  const states = log.filter((e) => e.type === "statechange").map((e) => `${e.state}:${e.reason}`);
  assert.deepEqual(states, ["connecting:start", "waiting:backoff", "connecting:reconnect", "open:reconnect"]);
  const opened = log.find((e) => e.type === "open").t - log.find((e) => e.state === "waiting").t;
  assert.ok(opened < 15_000, `${opened} ms`);
  await h.closeSub(page, "a");

  // A server-requested wait (Retry-After: 30) stays as asked.
  const u = tag("r");
  await h.faults(server, { path: "/sse", fault: { kind: "status", status: 503, retry_after: 30 } });
  await h.subscribe(page, "b", `/sse?t=${u}`, { transports: ["fetch-sse"] });
  await h.waitEvents(page, "b", (l) => l.some((e) => e.state === "waiting"), 10_000, "waiting");
  await page.evaluate(() => window.subs.b.sub.reconnect());
  await h.sleep(1500);
  log = await h.events(page, "b", "statechange");
  assert.deepEqual(log.map((e) => `${e.state}:${e.reason}`), ["connecting:start", "waiting:retry-after"]);
  assert.equal((await h.requests(server, "/sse")).filter((e) => e.query?.includes(u)).length, 1);
  await h.closeSub(page, "b");

  // Gave up (maxAttempts 1): state closed, reason gave-up; the package entry
  // (index.js) keeps it (a permanent error still closes it) and
  // reconnect() revives it; its iterator ended with the error all the same.
  const v = tag("r");
  await h.faults(server, { path: "/sse", fault: { kind: "status", status: 500 } });
  const gaveUp = await page.evaluate(async (v) => {
    const m = await import("/pkg/index.js");
    await m.default();
    const sub = (window.revived = m.subscribe(`/sse?t=${v}`, { transports: ["fetch-sse"], backoff: { maxAttempts: 1 } }));
    const log = (window.revivedLog = []);
    for (const type of ["statechange", "error", "message"]) {
      sub.addEventListener(type, (e) => log.push(`${type}:${e.state ?? e.code ?? e.data}:${e.reason ?? e.fatal ?? ""}`));
    }
    const ended = sub[Symbol.asyncIterator]().next().then(() => "done", (e) => e.code);
    await new Promise((r) => sub.addEventListener("statechange", (e) => e.state === "closed" && r()));
    await new Promise((r) => setTimeout(r, 100));
    const out = [sub.state, await ended];
    sub.reconnect();
    await new Promise((r) => sub.addEventListener("open", r));
    return out;
  }, v);
  assert.deepEqual(gaveUp, ["closed", "gave-up"]);
  await server.publish(`${v} back`);
  await page.waitForFunction(() => window.revivedLog.some((l) => l.startsWith("message:")), null, { timeout: 10_000 });
  assert.deepEqual(await page.evaluate(() => window.revivedLog), ["statechange:connecting:start", "error:gave-up:true",
    "statechange:closed:gave-up", "statechange:connecting:reconnect", "statechange:open:reconnect", `message:${v} back:`]);
  await page.evaluate(() => window.revived.close());
  await page.closeAll();
});

test("reconnect(): a revived connection is shared again: a later subscribe with equal options joins it (one request, both hear the message)", { timeout: T }, async () => {
  const page = await h.blankPage(browser, server.url);
  const v = tag("s");
  await h.faults(server, { path: "/sse", fault: { kind: "status", status: 500 } });
  const options = { transports: ["fetch-sse"], backoff: { maxAttempts: 1 } };
  await h.subscribe(page, "a", `/sse?t=${v}`, options);
  await h.waitEvents(page, "a", (l) => l.some((e) => e.state === "closed"), 10_000, "gave up");
  // A subscribe while it is stopped (another URL) must not unregister it.
  await h.subscribe(page, "other", `/sse?o=${v}`, { transports: ["fetch-sse"] });
  await page.evaluate(() => window.subs.a.sub.reconnect());
  await h.waitEvents(page, "a", (l) => l.some((e) => e.type === "open"), 10_000, "open after reconnect()");
  await h.subscribe(page, "b", `/sse?t=${v}`, options);
  await h.sleep(300);
  await server.publish(`${v} shared`);
  for (const name of ["a", "b"]) {
    await h.waitEvents(page, name, (l) => l.some((e) => e.data === `${v} shared`), 10_000, `${name} heard it`);
  }
  // The failed attempt and the revived one; none for `b`.
  const mine = (await h.requests(server, "/sse")).filter((e) => e.query?.includes(`t=${v}`));
  assert.equal(mine.length, 2);
  assert.deepEqual(await page.evaluate(() => [window.subs.a.sub.state, window.subs.b.sub.state]), ["open", "open"]);
  for (const name of ["a", "b", "other"]) await h.closeSub(page, name);
  await page.closeAll();
});

test("reconnect(): a 13 s server restart opens the breaker; reconnect() at 14 s sends its probe at once (exactly one request before open) and says why; during Retry-After it waits and says so", { timeout: T }, async () => {
  const t = tag("b");
  const page = await h.blankPage(browser, server.url);
  const logs = [];
  h.recordDebugLog(page, logs);
  // A backoff capped at 2 s: five failures well inside the 13 s.
  const options = { transports: ["fetch-sse"], seed: 3, debug: true, backoff: { maxMs: 2000 } };
  await h.subscribe(page, "a", `/sse?t=${t}`, options);
  await h.waitEvents(page, "a", (l) => l.some((e) => e.type === "open"), 10_000, "open");
  const downAt = Date.now();
  await h.restart(server, { ms: 13_000 });
  await h.waitEvents(page, "a", (l) => l.some((e) => e.reason === "breaker-open"), 15_000, "the breaker open");
  const mine = async () => (await h.requests(server, "/sse")).filter((e) => e.query?.includes(`t=${t}`)).length;
  // The button, pressed at 14 s (the server is back since 13 s).
  await h.sleep(downAt + 14_000 - Date.now());
  const before = await mine();
  const from = (await h.events(page, "a")).length;
  const answer = await page.evaluate(() => window.subs.a.sub.reconnect());
  assert.equal(answer, "breaker-probe");
  const log = await h.waitEvents(page, "a", (l) => l.slice(from).some((e) => e.type === "open"), 5_000, "open after reconnect()");
  assert.equal(await mine(), before + 1, "exactly one request between the click and open");
  assert.deepEqual(log.slice(from).filter((e) => e.type === "statechange").map((e) => `${e.state}:${e.reason}`),
    ["connecting:breaker-probe", "open:breaker-probe"]);
  assert.equal(await page.evaluate(() => window.subs.a.sub.reconnect()), "already-open");
  // The debug lines are read from the console asynchronously: wait for both.
  const notes = () => logs.filter((l) => l.what === "note" && l.note?.startsWith("reconnect")).map((l) => l.note);
  for (const end = Date.now() + 5000; notes().length < 2 && Date.now() < end;) await h.sleep(25);
  assert.deepEqual(notes(), ["reconnect: breaker-probe", "reconnect: already-open"]);
  await h.closeSub(page, "a");

  // A server-requested wait: reconnect() leaves it and says so.
  const u = tag("b");
  await h.faults(server, { path: "/sse", fault: { kind: "status", status: 503, retry_after: 30 } });
  await h.subscribe(page, "b", `/sse?t=${u}`, { transports: ["fetch-sse"] });
  await h.waitEvents(page, "b", (l) => l.some((e) => e.state === "waiting"), 10_000, "waiting");
  assert.equal(await page.evaluate(() => window.subs.b.sub.reconnect()), "retry-after");
  await h.closeSub(page, "b");
  assert.equal(await page.evaluate(() => window.subs.b.sub.reconnect()), "closed");
  await h.clearFaults(server);
  await page.closeAll();
});

// ----- 3. the calm status ---------------------------------------------------------

test("status: restarts of the reference server (1 s refuse window) show no statuschange; a 9 s outage shows reconnecting after lostAfterMs, then connected", { timeout: T }, async () => {
  const t = tag("s");
  const page = await h.blankPage(browser, server.url);
  await h.subscribe(page, "a", `/sse?t=${t}`, { seed: 7 }, ["statuschange"]);
  let log = await h.waitEvents(page, "a", (l) => l.some((e) => e.type === "statuschange"), 10_000, "connected");
  assert.deepEqual(log.filter((e) => e.type === "statuschange").map((e) => e.status), ["connected"]);

  // The blips (default restart: every connection dropped, 1000 ms refused).
  const blips = [];
  for (let i = 0; i < 5; i++) {
    await server.publish(`${t} ${i}`);
    await messages(page, "a", i + 1);
    const before = (await h.events(page, "a", "statechange")).length;
    await h.restart(server, {});
    log = await h.waitEvents(page, "a", (l) => {
      const s = l.filter((e) => e.type === "statechange").slice(before);
      return s.length > 1 && s.at(-1).state === "open";
    }, 15_000, "back open");
    const s = log.filter((e) => e.type === "statechange").slice(before);
    blips.push(Math.round(s.at(-1).t - s[0].t));
  }
  console.log(`# restart blips (ms, state left open → open again): ${blips.join(", ")}`);
  assert.deepEqual(log.filter((e) => e.type === "statuschange").map((e) => e.status), ["connected"]);
  assert.equal(await page.evaluate(() => window.subs.a.sub.status), "connected");

  // A real outage: lost after lostAfterMs (default 5000) down, then back.
  const before = log.length;
  await h.restart(server, { ms: 9000 });
  log = await h.waitEvents(page, "a", (l) => l.slice(before).some((e) => e.status === "connected"), 30_000, "lost and back");
  const calm = log.slice(before).filter((e) => e.type === "statuschange");
  assert.deepEqual(calm.map((e) => e.status), ["reconnecting", "connected"]);
  const down = log.slice(before).find((e) => e.type === "statechange");
  const lostAfter = calm[0].t - down.t;
  assert.ok(lostAfter >= 4990 && lostAfter < 8000, `${lostAfter} ms`);
  assert.ok(typeof calm[0].reason === "string" && calm[0].reason.length > 0);
  await page.closeAll();
});

test("persist: a listener that closes the subscription on a message still gets that message's cursor stored (close mid-batch)", { timeout: T }, async () => {
  const t = tag("c");
  const page = await h.blankPage(browser, server.url);
  await closeOnFirstMessage(page, `/sse?t=${t}`, { transports: ["fetch-sse"], persist: "local", persistKey: t });
  await server.publish(`${t} 1`);
  const cursor = await page.evaluate(() => window.got);
  assert.ok(cursor);
  await h.sleep(100);
  assert.deepEqual(await stored(page, "localStorage"), { [`tidings:cursor:${t}`]: cursor });
  await page.evaluate((t) => localStorage.removeItem(`tidings:cursor:${t}`), t);
  await page.closeAll();
});

test("persist: a crossTab follower whose listener closes the subscription on a message does not write localStorage", { timeout: T }, async () => {
  const t = tag("y");
  const { context, leader, follower, options } = await crossTabPair(t);
  await closeOnFirstMessage(follower, `/sse?t=${t}`, options);
  await server.publish(`${t} 1`);
  assert.ok(await follower.evaluate(() => window.got));
  await messages(leader, "a", 1);
  await h.sleep(100);
  assert.equal(await follower.evaluate(() => window.writes), 0);
  await leader.evaluate(() => localStorage.clear());
  await context.close();
});
