// crossTab helpers and the hand-over scenario, shared by cross-tab.test.mjs
// (Chromium) and tests/engines/cases.mjs (Chromium, Firefox, WebKitGTK). A
// `page` is anything with `goto(url)` and `evaluate(fn, arg)`: a Playwright
// page or a tests/engines page; the pages of one scenario share a profile
// (BroadcastChannel and Web Locks). The server is the reference server
// started with `--www tests/e2e/pages`; each scenario's requests carry its
// tag (`/sse?t=<tag>`).
import assert from "node:assert/strict";
import { sleep, waitPage } from "./tidings-page.mjs";

export const tag = () => `x${Date.now()}${Math.floor(Math.random() * 1e6)}`;

/** Requests for /sse made under the tag `t`. */
export async function streams(server, t) {
  const { entries } = await server.log();
  return entries.filter((e) => e.method === "GET" && e.path === "/sse" && (e.query ?? "").includes(`t=${t}`));
}

/** The most requests of `entries` open at once (a request without `end_ms` is still open). */
export function maxConcurrent(entries, until = Infinity) {
  const points = [];
  for (const e of entries) {
    if (e.t_ms > until) continue;
    points.push([e.t_ms, 1], [e.end_ms ?? Infinity, -1]);
  }
  points.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0, max = 0;
  for (const [, d] of points) { open += d; max = Math.max(max, open); }
  return max;
}

/** The cursor a request carried (query or header). */
export function cursorOf(e) {
  return e.headers?.["last-event-id"] ?? new URLSearchParams(e.query ?? "").get("lastEventId") ?? "";
}

/** Publish `${t} 1`, `${t} 2`, … every `ms` until stopped; `ids[n]` is the server id of message n. */
export function publisher(server, t, ms) {
  const p = { n: 0, ids: [], running: true };
  p.done = (async () => {
    while (p.running) {
      const n = ++p.n;
      const { id } = await server.publish(`${t} ${n}`);
      p.ids[n] = id;
      await sleep(ms);
    }
  })();
  p.stop = async () => { p.running = false; await p.done; return p.n; };
  return p;
}

/**
 * Open `/blank.html` of `origin` in `page`, load the package entry and make
 * `names` subscriptions to `url`: `window.subs[name]`, its messages in
 * `window.got[name]` as `{ id, lei, data }`, its other events in `window.events`.
 */
export async function subscribeTab(page, origin, url, options, names = ["a", "b"]) {
  await page.goto(`${origin}/blank.html`);
  await page.evaluate(async ({ url, options, names }) => {
    const m = await import("/pkg/index.js");
    await m.default();
    window.got = {};
    window.subs = {};
    for (const name of names) {
      const sub = m.subscribe(url, options);
      window.got[name] = [];
      sub.addEventListener("message", (e) => window.got[name].push({ id: e.id, lei: e.lastEventId, data: e.data }));
      window.events ??= [];
      for (const type of ["open", "error", "statechange", "transportchange", "reset"]) {
        sub.addEventListener(type, (e) => window.events.push([name, type, e.state ?? e.transport ?? e.code ?? e.reason]));
      }
      window.subs[name] = sub;
    }
  }, { url, options, names });
}

/** Message numbers (`${t} n`) each subscription of `page` received. */
export async function numbers(page, t) {
  const got = await page.evaluate(() => window.got);
  const out = {};
  for (const [name, list] of Object.entries(got)) {
    out[name] = list.filter((m) => m.data.startsWith(`${t} `)).map((m) => Number(m.data.slice(t.length + 1)));
  }
  return out;
}

/** Every N from the first received to `last`, exactly once and in order. */
export function assertContiguous(seq, last, what) {
  assert.ok(seq.length > 0, `${what}: received nothing`);
  const first = seq[0];
  const want = Array.from({ length: last - first + 1 }, (_, i) => first + i);
  assert.deepEqual(seq, want, `${what}: every message from ${first} to ${last}, once each, in order`);
}

/** Until every subscription of every page of `pages` received message `last`. */
export async function waitAll(pages, t, last, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let ok = true;
    for (const p of pages) {
      const got = await numbers(p, t);
      if (Object.values(got).some((s) => s.at(-1) !== last)) ok = false;
    }
    if (ok) return;
    if (Date.now() > deadline) {
      const all = await Promise.all(pages.map((p) => numbers(p, t)));
      assert.fail(`${what}: not every subscription reached ${last} in ${timeoutMs} ms: ${JSON.stringify(all.map((g) => Object.fromEntries(Object.entries(g).map(([k, v]) => [k, v.slice(-5)]))))}`);
    }
    await sleep(50);
  }
}

/** Which of `pages` runs the request (its engine made requests), by index. */
export async function leaders(pages) {
  const out = [];
  for (let i = 0; i < pages.length; i++) {
    const r = await pages[i].evaluate(() => window.subs.a.stats().requests);
    if (r > 0) out.push(i);
  }
  return out;
}

/**
 * After the leader went (`closedAt`, the server's clock), the first request
 * of the tag `t` comes within 5 s and carries a cursor. Resolves to that request.
 */
export async function assertHandOver(server, t, closedAt) {
  let next;
  const deadline = Date.now() + 5000;
  while (!next && Date.now() < deadline) {
    next = (await streams(server, t)).find((e) => e.t_ms > closedAt);
    if (!next) await sleep(25);
  }
  assert.ok(next, "another tab reconnected within 5 s of the leader going");
  assert.ok(next.t_ms - closedAt <= 5000, `reconnected ${next.t_ms - closedAt} ms after the leader went`);
  assert.ok(cursorOf(next) !== "", `the new request carries the last seen id: ${JSON.stringify(next)}`);
  return next;
}

/**
 * The hand-over's cursor is the newest id the tabs had seen when the leader
 * went (`lastSeen`), or newer (a message that reached them in between),
 * never older: compared by publication order (`ids` of a stopped publisher),
 * not by the ids' form.
 */
export function assertNotOlder(ids, cursor, lastSeen) {
  const at = ids.indexOf(lastSeen);
  assert.ok(at > 0 && ids.indexOf(cursor) >= at, `cursor ${cursor} vs last seen ${lastSeen} (published: ${ids.slice(1)})`);
}

/**
 * Two tabs, one stream: tab `a` subscribes (`a`), then tab `b` (`a`, `b`);
 * `a` leads, `b` follows. `leave(a)` ends the leader (closes the tab, or
 * its subscription); `b` takes over with the cursor; every subscription of
 * `b` gets every message once, in order; one stream is open at the end.
 */
export async function handOver(server, a, b, leave, { transport = "fetch-sse" } = {}) {
  const t = tag();
  const url = `/sse?t=${t}`;
  const options = { crossTab: true, transports: [transport] };
  const pub = publisher(server, t, 250);
  try {
    await subscribeTab(a, server.url, url, options, ["a"]);
    await waitPage(a, () => window.subs.a.state === "open", undefined, 5000, "tab a open");
    await subscribeTab(b, server.url, url, options, ["a", "b"]);
    await waitPage(b, () => window.subs.a.state === "open", undefined, 5000, "tab b open");
    await sleep(800);
    assert.deepEqual(await leaders([a, b]), [0], "the first tab leads");
    const lastSeen = await b.evaluate(() => window.subs.a.lastEventId);
    const { now_ms: closedAt } = await server.log();
    await leave(a);
    const next = await assertHandOver(server, t, closedAt);
    await sleep(800);
    const last = await pub.stop();
    assertNotOlder(pub.ids, cursorOf(next), lastSeen);
    await waitAll([b], t, last, 5000, "the new leader");
    const got = await numbers(b, t);
    assertContiguous(got.a, last, "sub a");
    assert.deepEqual(got.a, got.b);
    const open = (await streams(server, t)).filter((e) => e.end_ms == null);
    assert.equal(open.length, 1, "one stream open");
  } finally {
    if (pub.running) await pub.stop();
  }
}
