// Page lifecycle scenarios (docs/lifecycle.md), written once for every engine:
// lifecycle.test.mjs runs them in Chromium, tests/engines/cases.mjs on Chromium,
// Firefox and WebKitGTK. A `page` is anything with `goto(url)` and
// `evaluate(fn, arg)`: a Playwright page or a tests/engines driver. Requests
// are counted at the reference server (/_log), each scenario's by its own tag.
//
// Hidden and visible are simulated: a headless browser (and WebKitGTK's
// MiniBrowser on Xvfb) has no way to hide a page that a driver can reach
// (bringToFront, minimising and CDP do not change it), so the page's
// `document.visibilityState` / `document.hidden` are overridden and
// `visibilitychange` dispatched. Offline and online are real: the driver's own
// network emulation (Playwright's `context.setOffline`), which fires the
// browser's events.
import assert from "node:assert/strict";
import { sleep, waitPage } from "./tidings-page.mjs";

export const tag = () => `t${Date.now()}${Math.floor(Math.random() * 1e6)}`;

/** Requests for `path` made under the tag `t` (its `t=` query), in arrival order. */
export async function tagged(server, path, t) {
  const { entries } = await server.log();
  return entries.filter((e) => e.method === "GET" && e.path === path && (e.query ?? "").includes(`t=${t}`));
}

/** The cursor a request carried: Last-Event-ID, else `lastEventId` in the query. */
const cursorOf = (e) => e.headers["last-event-id"] ?? new URLSearchParams(e.query ?? "").get("lastEventId");

/**
 * Open `/blank.html` of `origin` (a server started with `--www tests/e2e/pages`)
 * with the visibility override (`window.setHidden(bool)`), subscribe to `url`
 * as `window.sub`; message data go to `window.got`, state changes to
 * `window.states` as `state:reason`. Resolves once the state is `open`.
 */
export async function subscribed(page, origin, url, options) {
  await page.goto(origin + "/blank.html");
  await page.evaluate(async ({ url, options }) => {
    let hidden = false;
    Object.defineProperty(document, "visibilityState", { configurable: true, get: () => (hidden ? "hidden" : "visible") });
    Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
    window.setHidden = (h) => { hidden = h; document.dispatchEvent(new Event("visibilitychange")); };
    const m = await import("/pkg/tidings.js");
    await m.default();
    window.got = [];
    window.states = [];
    const sub = m.subscribe(url, options);
    sub.addEventListener("message", (e) => window.got.push(e.data));
    sub.addEventListener("statechange", (e) => window.states.push(`${e.state}:${e.reason}`));
    window.sub = sub;
  }, { url, options });
  await waitPage(page, () => window.sub.state === "open", undefined, 5000, "open");
}

/**
 * Hidden → the stream is released and zero requests go out while hidden,
 * also during an outage (every request would fail and be retried); visible
 * → exactly one request, with the cursor, and the messages missed meanwhile
 * once each. `transport`: "eventsource" or "fetch-sse".
 */
export async function hiddenThenVisible(page, server, transport) {
  const t = tag();
  await subscribed(page, server.url, `/sse?t=${t}`, { transports: [transport], backoff: { floorMs: 100, baseMs: 100 }, seed: 3 });
  await server.publish(`${t} 1`);
  await waitPage(page, (n) => window.got.length === n, 1, 5000, "message 1");

  await page.evaluate(() => window.setHidden(true));
  await waitPage(page, () => window.sub.state === "paused", undefined, 5000, "paused");
  await sleep(300); // the server notices the dropped stream when it next writes
  await fetch(`${server.url}/_faults`, { method: "POST", body: JSON.stringify({ path: "/sse", times: null, fault: { kind: "status", status: 503 } }) });
  const before = (await tagged(server, "/sse", t)).length;
  await server.publish(`${t} 2`);
  await server.publish(`${t} 3`);
  await sleep(1500);
  assert.equal((await tagged(server, "/sse", t)).length, before, "requests while hidden");
  await fetch(`${server.url}/_faults`, { method: "DELETE" });

  await page.evaluate(() => window.setHidden(false));
  await waitPage(page, (n) => window.got.length === n, 3, 5000, "the missed messages");
  const { got, states } = await page.evaluate(() => { window.sub.close(); return { got: window.got, states: window.states }; });
  assert.deepEqual(got, [`${t} 1`, `${t} 2`, `${t} 3`]);
  const after = await tagged(server, "/sse", t);
  assert.equal(after.length, before + 1, "exactly one request on return");
  assert.ok(cursorOf(after.at(-1)), "the resume request carries the cursor");
  assert.ok(states.includes("paused:hidden"), JSON.stringify(states));
}

/**
 * Offline (real: `setOffline(true)`, the driver's network emulation) → the
 * stream pauses and no attempt goes out; online → one prompt attempt, which
 * brings the message published meanwhile.
 */
export async function offlineThenOnline(page, server, setOffline) {
  const t = tag();
  await subscribed(page, server.url, `/sse?t=${t}`, { transports: ["fetch-sse"], backoff: { floorMs: 100, baseMs: 100 }, seed: 9 });
  await server.publish(`${t} before`);
  await waitPage(page, () => window.got.length === 1, undefined, 5000, "the first message");
  const before = (await tagged(server, "/sse", t)).length;
  try {
    await setOffline(true);
    await waitPage(page, () => window.sub.state === "paused", undefined, 3000, "paused while offline");
    await sleep(1500);
    assert.equal((await tagged(server, "/sse", t)).length, before, "attempts while offline");
    await server.publish(`${t} while offline`);
  } finally {
    await setOffline(false);
  }
  await waitPage(page, () => window.got.length === 2, undefined, 5000, "the message published while offline").catch(async (e) => {
    const why = await page.evaluate(() => ({ states: window.states, got: window.got, state: window.sub.state }));
    throw new Error(`${e.message} ${JSON.stringify(why)} ${JSON.stringify(await tagged(server, "/sse", t))}`);
  });
  const { got, states } = await page.evaluate(() => { window.sub.close(); return { got: window.got, states: window.states }; });
  assert.deepEqual(got, [`${t} before`, `${t} while offline`]);
  assert.equal((await tagged(server, "/sse", t)).length, before + 1, "one attempt on online");
  assert.ok(states.includes("paused:offline"), JSON.stringify(states));
}
