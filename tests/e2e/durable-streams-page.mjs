// `protocol: "durable-streams"` in a page, shared by durable-streams.test.mjs
// (Chromium) and tests/engines/cases.mjs (Chromium, Firefox, WebKitGTK). A
// `page` is anything with `evaluate(fn, arg)` (a Playwright page or a
// tests/engines driver) whose document has the package loaded
// (tidings-page.mjs loadPackage); `ds` is a server from durable-streams.mjs.
import assert from "node:assert/strict";
import { sleep } from "./tidings-page.mjs";

/**
 * Subscribe in the page as `window.subs[name]`, recording every event; a
 * `Uint8Array` datum is recorded as `{ bytes: [...] }`. Each message's
 * `lastEventId` is stored in `localStorage[name]` (what an app does to resume).
 */
export async function subscribe(page, name, url, options = {}) {
  await page.evaluate(({ name, url, options }) => {
    const sub = window.tidings.subscribe(url, { protocol: "durable-streams", ...options });
    const rec = { sub, log: [] };
    for (const type of ["message", "open", "error", "statechange", "reset", "uptodate"]) {
      sub.addEventListener(type, (e) => {
        const o = { type, t: Date.now() };
        for (const k of ["lastEventId", "data", "state", "reason", "code", "status", "fatal"]) {
          if (e[k] !== undefined) o[k] = e[k] instanceof Uint8Array ? { bytes: [...e[k]] } : e[k];
        }
        if (type === "message") localStorage.setItem(name, e.lastEventId);
        rec.log.push(o);
      });
    }
    window.subs[name] = rec;
  }, { name, url, options });
}

export const log = (page, name) => page.evaluate((name) => window.subs[name].log, name);
export const brief = (e) => [e.type, e.state ?? e.code ?? "", e.reason ?? "", typeof e.data === "object" ? JSON.stringify(e.data) : e.data ?? ""].join(" ");
export const msgs = (l) => l.filter((e) => e.type === "message");
export const json = (body) => JSON.stringify(body);

/** Until `fn` accepts the log of `name`; resolves to it. */
export async function waitLog(page, name, fn, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const l = await log(page, name);
    if (fn(l)) return l;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}: ${l.slice(-12).map(brief).join(" | ")}`);
    await sleep(25);
  }
}

/** Until `fn` accepts the GET requests of `path` that `ds` received; resolves to them. */
export async function waitRequests(ds, path, fn, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = ds.requests(path);
    if (fn(r)) return r;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}: ${JSON.stringify(r.slice(-5))}`);
    await sleep(25);
  }
}

/**
 * The Durable Streams read: a catch-up of 110 JSON messages in three chunks
 * (50, 50, 10: `ds` started with `maxChunkMessages: 50`), then `uptodate`,
 * then live long-poll with the server's cursor echoed; a JSON batch is one
 * message per element; each message once, in order. `path`: a new stream's.
 */
export async function catchUpThenLive(page, ds, path) {
  await ds.create(path, "application/json");
  // One append per message: the file-backed store keeps an append (even a
  // batch) as one record, and the chunk cap counts records.
  for (let i = 0; i < 110; i++) await ds.append(path, json({ n: i }), "application/json");
  await subscribe(page, "s", ds.url + path, { parse: "json" });
  await waitLog(page, "s", (l) => l.some((e) => e.type === "uptodate"), 10_000, "uptodate");
  // Live: a held long-poll, then three appends (one a batch of two).
  await waitRequests(ds, path, (r) => r.some((q) => q.query.live), 5_000, "a live request");
  await ds.append(path, json({ n: 110 }), "application/json");
  await ds.append(path, json([{ n: 111 }, { n: 112 }]), "application/json");
  const l = await waitLog(page, "s", (l) => msgs(l).length >= 113, 10_000, "113 messages");
  assert.deepEqual(msgs(l).map((m) => m.data.n), Array.from({ length: 113 }, (_, i) => i));
  // uptodate once, after message 109 and before 110, with the offset reached.
  const types = l.filter((e) => e.type === "message" || e.type === "uptodate");
  const at = types.findIndex((e) => e.type === "uptodate");
  assert.equal(at, 110, "uptodate after the 110 caught-up messages");
  assert.equal(types[at].lastEventId, msgs(l)[109].lastEventId);
  assert.equal(l.filter((e) => e.type === "uptodate").length, 1);
  assert.deepEqual(l.filter((e) => e.type === "error"), []);
  const reqs = ds.requests(path);
  // Three catch-up reads: from -1, then from each chunk's Stream-Next-Offset.
  assert.equal(reqs[0].search, "?offset=-1");
  const catchUp = reqs.filter((r) => !r.query.live);
  assert.equal(catchUp.length, 3, JSON.stringify(reqs.map((r) => r.search)));
  assert.equal(catchUp[1].query.offset, msgs(l)[49].lastEventId);
  assert.equal(catchUp[2].query.offset, msgs(l)[99].lastEventId);
  // Then live; keys in lexicographic order; from the second live request
  // on, the server's Stream-Cursor is echoed as `cursor`.
  const live = reqs.filter((r) => r.query.live);
  assert.ok(live.length >= 2);
  assert.match(live[0].search, /^\?live=long-poll&offset=[0-9_]+$/);
  for (const r of live.slice(1)) assert.match(r.search, /^\?cursor=\d+&live=long-poll&offset=[0-9_]+$/);
  assert.equal(await page.evaluate(() => window.subs.s.sub.lastEventId), msgs(l)[112].lastEventId);
}
