// URLs and headers carry secrets (a token in the query, an `Authorization`
// header), and Web Storage and BroadcastChannel are readable by every script
// of the origin, long after the page is gone. So nothing tidings keeps or
// tells other tabs holds a URL or a header value: the remembered downgrade
// (sessionStorage), the persisted cursor (sessionStorage / localStorage),
// the Web Lock and BroadcastChannel names of `crossTab` and every post on
// the channel are keyed by hashes of the parsed options
// (`tidings_core::keys`, `tidings_core::persist`).
//
// Here one subscription does all of it at once: a token in its URL's query
// (and in its long-poll endpoint's), downgraded from `fetch-sse` to
// `long-poll` by a buffering proxy (the server's `buffer` fault), `persist:
// "local"`, `crossTab: true` across two pages of one context (the second
// with its options in another key order); a second one sends a header
// (with `crossTab` it is shared by the hash of its value: a lock and a
// channel of its own).
// Every storage entry (key and value) of both pages, every channel name,
// every post (as JSON of its structured clone) and every lock name are then
// searched for the secrets.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import * as h from "./tidings-page.mjs";

const TOKEN = "SECRET-123";
const HEADER = "SECRET-HDR-456";
const URL_PATH = `/sse?case=no-secret&token=${TOKEN}`;
const OPTIONS = {
  seed: 7, crossTab: true, persist: "local", transports: ["fetch-sse", "long-poll", "poll"],
  urls: { "long-poll": `/long-poll?hold_ms=300&token=${TOKEN}`, poll: `/poll?token=${TOKEN}` },
  backoff: { floorMs: 100, baseMs: 100 }, watchdog: { firstEventTimeoutMs: 400, idleTimeoutMs: 5000 },
  fallback: { afterFailures: 2, rememberMs: 60_000 },
};

/** Runs in every page before its scripts: records what tidings names and posts. */
function spy() {
  window.seen = { channels: [], posts: [], locks: [] };
  const BC = window.BroadcastChannel;
  window.BroadcastChannel = class extends BC {
    constructor(name) { super(name); window.seen.channels.push(String(name)); }
  };
  const post = BC.prototype.postMessage;
  BC.prototype.postMessage = function (m) {
    window.seen.posts.push([this.name, JSON.stringify(structuredClone(m))]);
    return post.call(this, m);
  };
  const request = LockManager.prototype.request;
  LockManager.prototype.request = function (name, ...rest) {
    window.seen.locks.push(String(name));
    return request.call(this, name, ...rest);
  };
}

/** Everything a page's origin keeps or was told by tidings, as [where, text] pairs. */
async function kept(page) {
  return page.evaluate(async () => {
    const out = [];
    for (const s of ["sessionStorage", "localStorage"]) {
      for (const k of Object.keys(globalThis[s])) out.push([s, k], [s, globalThis[s].getItem(k)]);
    }
    for (const n of window.seen.channels) out.push(["channel", n]);
    for (const [n, m] of window.seen.posts) out.push(["post", n], ["post", m]);
    for (const n of window.seen.locks) out.push(["lock", n]);
    const q = await navigator.locks.query();
    for (const l of [...q.held, ...q.pending]) out.push(["lock held", l.name]);
    return out;
  });
}

let browser, server;
before(async () => {
  browser = await launchBrowser();
  server = await startServer(["--quiet", "--retry-ms", "100"]);
});
after(async () => { await browser?.close(); await server?.stop(); });

test("a token in the URL and a header value are in no storage entry, channel name, channel post or lock name (downgraded, persisted, crossTab)", async () => {
  const context = await browser.newContext();
  try {
    const a = await h.blankPage(browser, server.url, { init: spy, context });
    await h.faults(server, { path: "/sse", times: 2, fault: { kind: "buffer" } });
    // A cursor to resume from: a long-poll without one hears only what comes
    // during its hold.
    const { id: start } = await server.publish("start");
    const options = { ...OPTIONS, lastEventId: start };
    await h.subscribe(a, "s", URL_PATH, options);
    const switched = (e) => e.type === "transportchange" && e.previous !== null;
    await h.waitEvents(a, "s", (l) => l.some(switched), 8000, "the downgrade");
    const down = (await h.events(a, "s")).find(switched);
    assert.deepEqual([down.previous, down.transport], ["fetch-sse", "long-poll"]);
    // A header: its cursor persisted all the same.
    await h.subscribe(a, "hd", `/long-poll?hold_ms=300&case=no-secret-h`,
      { transports: ["long-poll"], persist: "session", crossTab: true, lastEventId: start, headers: { "X-Token": HEADER } });

    // The second tab, its options in another key order: it follows tab A.
    const b = await h.blankPage(browser, server.url, { init: spy, context });
    const reordered = Object.fromEntries(Object.entries(options).reverse());
    await h.subscribe(b, "s", URL_PATH, reordered);
    await h.waitEvents(b, "s", (l) => l.some((e) => e.type === "open"), 8000, "tab B open");
    const { id } = await server.publish("to both tabs");
    for (const [p, name] of [[a, "s"], [b, "s"], [a, "hd"]]) {
      await h.waitEvents(p, name, (l) => l.some((e) => e.id === id), 8000, `${name}: the message`);
    }
    const cursorKept = () => a.evaluate((id) => Object.keys(localStorage).some((k) => k.startsWith("tidings:cursor:") && localStorage.getItem(k) === id)
      && Object.keys(sessionStorage).some((k) => k.startsWith("tidings:cursor:") && sessionStorage.getItem(k) === id), id);
    for (let i = 0; i < 50 && !(await cursorKept()); i++) await h.sleep(100);
    assert.ok(await cursorKept(), "both cursors persisted");

    const [inA, inB] = [await kept(a), await kept(b)];
    // What was captured is what the test means: the downgrade remembered in
    // tab A, one channel and one lock name shared by both tabs, posts made.
    const downgrade = inA.findIndex(([w, t]) => w === "sessionStorage" && t.startsWith("tidings:downgrade:"));
    assert.ok(downgrade >= 0, "a remembered downgrade");
    assert.match(inA[downgrade + 1][1], /^long-poll \d+$/);
    const names = (list, w) => [...new Set(list.filter(([x]) => x === w).map(([, t]) => t))];
    // Tab A: the shared connection's channel and lock, and the header
    // subscription's own (its key holds the hash of its header); tab B: the
    // shared one.
    assert.equal(names(inA, "channel").length, 2);
    assert.deepEqual(names(inB, "channel").length, 1);
    assert.ok(names(inA, "channel").includes(names(inB, "channel")[0]));
    assert.equal(names(inA, "lock").length, 2);
    assert.deepEqual(names(inB, "lock"), names(inB, "channel"));
    assert.ok(inA.some(([w]) => w === "post"), "tab A posted on the channel");
    for (const [w, text] of [...inA, ...inB]) {
      for (const secret of [TOKEN, HEADER]) {
        assert.ok(!String(text).includes(secret), `${w} holds ${secret}: ${text}`);
      }
    }
    for (const p of [a, b]) assert.deepEqual(p.errors, []);
  } finally { await context.close(); }
});

// Four tabs with a `headers` function share one connection (the hash of what
// it returns is in the share key, never the value); a fifth with another
// token gets its own. The token is in no storage entry, channel name, post or
// lock name of any tab.
// The function returns a plain object, then a `Headers` (which has no own
// properties: read as an object it would send no header and hash as `{}`,
// so the fifth tab would share the first four's connection).
for (const kind of ["object", "Headers"]) test(`four tabs with a headers function (${kind}) share one connection; a fifth with another token has its own; no token stored or posted`, async () => {
  const context = await browser.newContext();
  const SECRET = "tok7-SHARED-SECRET";
  const OTHER = "tok8-OTHER-SECRET";
  try {
    const pages = [];
    for (let i = 0; i < 5; i++) pages.push(await h.blankPage(browser, server.url, { init: spy, context }));
    for (const [i, p] of pages.entries()) {
      await p.evaluate(([token, kind]) => {
        window.got = [];
        const given = { Authorization: `Bearer ${token}` };
        window.sub = window.tidings.subscribe(`/sse?case=shared-auth-${kind}`, {
          transports: ["fetch-sse"], crossTab: true, seed: 3,
          headers: () => (kind === "Headers" ? new Headers(given) : given),
        });
        window.sub.addEventListener("message", (e) => window.got.push(e.data));
      }, [i < 4 ? SECRET : OTHER, kind]);
      await h.waitPage(p, () => window.sub.state === "open", undefined, 8000, `tab ${i} open`);
    }
    await server.publish("to every tab");
    for (const p of pages) await h.waitPage(p, () => window.got.includes("to every tab"), undefined, 8000, "the message");
    const asked = (await h.requests(server, "/sse")).filter((e) => (e.query ?? "").includes(`shared-auth-${kind}`));
    const brief = asked.map((e) => `${h.logBrief(e)} ${e.headers.authorization}`).join("\n");
    assert.deepEqual(asked.map((e) => e.headers.authorization).sort(), [`Bearer ${SECRET}`, `Bearer ${OTHER}`], brief);
    const all = [];
    for (const p of pages) all.push(...(await kept(p)));
    assert.ok(all.some(([w]) => w === "post"), "the leader relayed on the channel");
    for (const [w, text] of all) {
      for (const secret of [SECRET, OTHER, "SECRET"]) assert.ok(!String(text).includes(secret), `${w} holds ${secret}: ${text}`);
    }
  } finally { await context.close(); }
});

test("a static Headers is sent as given; an array of pairs is refused at subscribe (invalid-option headers)", async () => {
  const page = await h.blankPage(browser, server.url);
  try {
    const refused = await page.evaluate(() => {
      window.got = [];
      window.sub = window.tidings.subscribe("/sse?case=static-headers", {
        transports: ["fetch-sse"], headers: new Headers({ Authorization: "Bearer static-1" }),
      });
      window.sub.addEventListener("message", (e) => window.got.push(e.data));
      try {
        window.tidings.subscribe("/sse?case=array-headers", { headers: [["X-Token", "a"]] });
        return "not refused";
      } catch (e) { return `${e.code}: ${e.message}`; }
    });
    assert.match(refused, /^invalid-option: .*headers/);
    await h.waitPage(page, () => window.sub.state === "open", undefined, 8000, "open");
    const asked = (await h.requests(server, "/sse")).filter((e) => (e.query ?? "").includes("static-headers"));
    assert.deepEqual(asked.map((e) => e.headers.authorization), ["Bearer static-1"]);
    assert.equal((await h.requests(server, "/sse")).filter((e) => (e.query ?? "").includes("array-headers")).length, 0);
  } finally { await page.closeAll(); }
});
