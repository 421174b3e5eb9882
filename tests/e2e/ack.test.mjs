// Delivery ACKs (docs/upstream.md): `subscribe(url, { ack })` in headless Chromium
// against tidings-server, whose `/publish?resendAfterMs=` re-sends an event
// (same id) to live streams until `POST /ack` names it. The re-sends happen,
// the app sees each message once, and they stop once the ACK arrived; with
// crossTab only the leading tab acknowledges.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import { blankPage, sleep } from "./tidings-page.mjs";

let web;
let browser;

before(async () => {
  web = await startServer();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await web?.stop();
});

const acks = async () => (await fetch(`${web.url}/_ack`)).json();
const clearAcks = () => fetch(`${web.url}/_ack/clear`, { method: "POST" });
const publishResent = async (data, query) =>
  (await fetch(`${web.url}/publish?${query}`, { method: "POST", body: data })).json();

/** Subscribe in the page as `window.seen[name]` (ids of the messages it got). */
function subscribe(page, name, options) {
  return page.evaluate(({ name, options }) => {
    window.seen ??= {};
    window.seen[name] = [];
    const sub = window.tidings.subscribe("/sse", options);
    sub.addEventListener("message", (e) => window.seen[name].push(e.lastEventId));
    return new Promise((resolve) => sub.addEventListener("open", resolve, { once: true }));
  }, { name, options });
}

async function until(fn, what, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

test("re-sends happen until the batched ACK arrives, the app sees each message once, and they stop after it", async () => {
  await clearAcks();
  const page = await blankPage(browser, web.url);
  try {
    // batchMs 900 against a re-send every 150 ms: several re-sends reach the
    // page before its ACK goes out.
    await subscribe(page, "a", { transports: ["fetch-sse"], ack: { url: "/ack", batchMs: 900 } });
    const ids = [];
    for (const d of ["one", "two", "three"]) ids.push((await publishResent(d, "resendAfterMs=150&maxResends=100")).id);
    const state = await until(async () => {
      const a = await acks();
      return ids.every((id) => a.acked.includes(id)) && a;
    }, "the ACK of all three");
    for (const id of ids) assert.ok(state.resent[id] >= 2, `re-sent before the ACK: ${JSON.stringify(state)}`);
    // Re-sends stop: over 8 re-send periods at most one more (one may have
    // been on its way when the ACK arrived).
    await sleep(1200);
    const later = await acks();
    for (const id of ids) assert.ok(later.resent[id] - state.resent[id] <= 1, `${JSON.stringify(state)} → ${JSON.stringify(later)}`);
    assert.deepEqual(await page.evaluate(() => window.seen.a), ids, "each message once, in order");
    assert.equal(later.batches, 1, "the three ids went in one batch");
    assert.deepEqual(page.errors, []);
  } finally {
    await page.closeAll();
  }
});

test("control: without ack the server re-sends up to maxResends, and the app still sees the message once", async () => {
  await clearAcks();
  const page = await blankPage(browser, web.url);
  try {
    await subscribe(page, "b", { transports: ["fetch-sse"] });
    const { id } = await publishResent("lonely", "resendAfterMs=100&maxResends=4");
    await until(async () => (await acks()).resent[id] === 4, "4 re-sends");
    await sleep(300);
    assert.deepEqual(await page.evaluate(() => window.seen.b), [id]);
    assert.deepEqual((await acks()).acked, []);
  } finally {
    await page.closeAll();
  }
});

test("crossTab: only the leading tab acknowledges; both tabs see the message once", async () => {
  await clearAcks();
  const context = await browser.newContext();
  const first = await blankPage(browser, web.url, { context });
  const second = await blankPage(browser, web.url, { context });
  try {
    const options = { crossTab: true, transports: ["fetch-sse"], ack: { url: "/ack", batchMs: 200 } };
    await subscribe(first, "c", options);
    await subscribe(second, "c", options);
    const { id } = await publishResent("shared", "resendAfterMs=150&maxResends=20");
    await until(async () => (await acks()).acked.includes(id), "the ACK");
    await until(async () => (await second.evaluate(() => window.seen.c)).length > 0, "the follower's message");
    // Both tabs' batchMs passed three times over: a follower's batch would be here.
    await sleep(600);
    assert.equal((await acks()).batches, 1, "one ACK request: the leader's");
    assert.deepEqual(await first.evaluate(() => window.seen.c), [id]);
    assert.deepEqual(await second.evaluate(() => window.seen.c), [id]);
  } finally {
    await context.close();
  }
});

test("pagehide: the ids still waiting for their batch are acknowledged as the page goes (keepalive), not left for the server to re-send to the next page", async () => {
  await clearAcks();
  const page = await blankPage(browser, web.url);
  try {
    // batchMs 60 s: the batch would never go out on its own within the test.
    await subscribe(page, "p", { transports: ["fetch-sse"], ack: { url: "/ack", batchMs: 60_000 } });
    const { id } = await publishResent("bye", "resendAfterMs=60000&maxResends=1");
    await until(() => page.evaluate((id) => window.seen.p.includes(id), id), "the message");
    assert.deepEqual((await acks()).acked, [], "nothing acknowledged before the page goes");
    await page.goto(`${web.url}/_faults?left=1`);
    await until(async () => (await acks()).acked.includes(id), "the ACK sent at pagehide");
    assert.equal((await acks()).batches, 1);
  } finally {
    await page.closeAll();
  }
});

test("ack with protocol durable-streams is refused at subscribe() (invalid-option `ack`): its messages carry no id, so nothing could ever be acknowledged", async () => {
  const page = await blankPage(browser, web.url);
  try {
    const got = await page.evaluate(() => {
      const tries = [
        { protocol: "durable-streams", ack: { url: "/ack" } },
        { protocol: "durable-streams", ack: null },
        { ack: { url: "/ack" } },
      ];
      return tries.map((o) => {
        try {
          window.tidings.subscribe("/sse", o).close();
          return "accepted";
        } catch (e) {
          return `${e.code}: ${e.message}`;
        }
      });
    });
    assert.deepEqual(got, ['invalid-option: invalid option: ack: expected none with protocol "durable-streams", got [object Object] (object)', "accepted", "accepted"]);
  } finally {
    await page.closeAll();
  }
});

test("a listener that closes the subscription on a message still acknowledges that message (it was dispatched)", async () => {
  await clearAcks();
  const page = await blankPage(browser, web.url);
  try {
    await page.evaluate(() => {
      window.got = [];
      const sub = window.tidings.subscribe("/sse", { transports: ["fetch-sse"], ack: { url: "/ack", batchMs: 900 } });
      sub.addEventListener("message", (e) => { window.got.push(e.lastEventId); sub.close(); });
      return new Promise((resolve) => sub.addEventListener("open", resolve, { once: true }));
    });
    const { id } = await publishResent("closing", "resendAfterMs=150&maxResends=20");
    await until(async () => (await page.evaluate(() => window.got)).length, "the message");
    await until(async () => (await acks()).acked.includes(id), `the ACK of ${id}`, 5_000);
    assert.deepEqual(await page.evaluate(() => window.got), [id]);
    assert.deepEqual(page.errors, []);
  } finally {
    await page.closeAll();
  }
});

const setFaults = (server, rules) =>
  fetch(`${server.url}/_faults`, { method: "POST", body: JSON.stringify(rules) });
const clearFaults = (server) => fetch(`${server.url}/_faults`, { method: "DELETE" });
const ackLog = async (server) =>
  (await (await fetch(`${server.url}/_log?path=/ack`)).json()).entries.filter((e) => e.method === "POST");

test("ACK requests carry the subscription's headers (an object, and a function's promise) and stay JSON: a server that authenticates its stream takes the ACK", async () => {
  await clearAcks();
  await fetch(`${web.url}/_log/clear`, { method: "POST" });
  // Every /ack without `Authorization: Bearer abc` is refused with 401.
  await setFaults(web, { path: "/ack", times: null, fault: { kind: "auth", token: "abc" } });
  const page = await blankPage(browser, web.url);
  try {
    await page.evaluate(() => {
      window.asked = [];
      window.makeHeaders = (ctx) => {
        window.asked.push(ctx.url);
        return Promise.resolve({ Authorization: "Bearer abc" });
      };
    });
    const kinds = [
      ["object", { Authorization: "Bearer abc" }],
      ["function", "fn"],
    ];
    for (const [name, headers] of kinds) {
      await page.evaluate(({ name, headers }) => {
        window.seen ??= {};
        window.seen[name] = [];
        const h = headers === "fn" ? window.makeHeaders : headers;
        const sub = window.tidings.subscribe("/sse", { transports: ["fetch-sse"], headers: h, ack: { url: "/ack", batchMs: 100 } });
        window.subs[name] = sub;
        sub.addEventListener("message", (e) => window.seen[name].push(e.lastEventId));
        return new Promise((resolve) => sub.addEventListener("open", resolve, { once: true }));
      }, { name, headers });
      const { id } = await publishResent(name, "resendAfterMs=200&maxResends=50");
      await until(async () => (await acks()).acked.includes(id), `the ACK of the ${name} subscription`);
      await page.evaluate((name) => window.subs[name].close(), name);
    }
    const log = await ackLog(web);
    const passed = log.filter((e) => e.fault?.result === "passed");
    assert.ok(passed.length >= 2, JSON.stringify(log));
    for (const e of passed) {
      assert.equal(e.headers.authorization, "Bearer abc");
      assert.equal(e.headers["content-type"], "application/json");
      assert.ok(e.headers["idempotency-key"], "each batch is an idempotent send");
    }
    assert.ok((await page.evaluate(() => window.asked)).some((u) => u.endsWith("/ack")), "the function was asked for the ACK's URL");
    assert.deepEqual(page.errors, []);
  } finally {
    await clearFaults(web);
    await page.closeAll();
  }
});

test("pagehide: the keepalive ACK carries the subscription's headers too", async () => {
  await clearAcks();
  await setFaults(web, { path: "/ack", times: null, fault: { kind: "auth", token: "abc" } });
  const page = await blankPage(browser, web.url);
  try {
    await page.evaluate(() => {
      window.seen = { k: [] };
      const sub = window.tidings.subscribe("/sse", {
        transports: ["fetch-sse"],
        headers: () => ({ Authorization: "Bearer abc" }),
        ack: { url: "/ack", batchMs: 60_000 },
      });
      sub.addEventListener("message", (e) => window.seen.k.push(e.lastEventId));
      return new Promise((resolve) => sub.addEventListener("open", resolve, { once: true }));
    });
    const { id } = await publishResent("bye", "resendAfterMs=60000&maxResends=1");
    await until(() => page.evaluate((id) => window.seen.k.includes(id), id), "the message");
    await page.goto(`${web.url}/_faults?left=1`);
    await until(async () => (await acks()).acked.includes(id), "the keepalive ACK, authenticated");
  } finally {
    await clearFaults(web);
    await page.closeAll();
  }
});

test("withCredentials: a cross-origin ACK goes with credentials \"include\" (the subscription's cookies reach the ACK endpoint)", async () => {
  const other = await startServer(["--quiet"]);
  const page = await blankPage(browser, web.url);
  try {
    const host = new URL(other.url).hostname;
    await page.context().addCookies([{ name: "session", value: "s1", domain: host, path: "/" }]);
    await page.evaluate((ackUrl) => {
      window.seen = { c: [] };
      const sub = window.tidings.subscribe("/sse", { transports: ["fetch-sse"], withCredentials: true, ack: { url: ackUrl, batchMs: 100 } });
      sub.addEventListener("message", (e) => window.seen.c.push(e.lastEventId));
      return new Promise((resolve) => sub.addEventListener("open", resolve, { once: true }));
    }, `${other.url}/ack`);
    const { id } = await publishResent("cookie", "resendAfterMs=60000&maxResends=1");
    await until(() => page.evaluate((id) => window.seen.c.includes(id), id), "the message");
    const [post] = await until(async () => {
      const l = await ackLog(other);
      return l.length > 0 && l;
    }, "the cross-origin ACK");
    assert.ok(post.headers.origin, "cross-origin");
    assert.equal(post.headers.cookie, "session=s1");
  } finally {
    await page.closeAll();
    await other.stop();
  }
});
