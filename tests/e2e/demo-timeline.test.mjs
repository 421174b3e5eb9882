// The `debug` option given a function, and the demo's timeline drawn from it.
// First the API: the function gets the entries `debug: true` writes to the
// console (two connections side by side, one each way, compared entry by
// entry), and one that throws is reported while delivery goes on. Then the
// demo page (www/timeline.js): a server restart and a hidden period must
// show up as bars, gaps with their reasons and a shaded period, read from
// the page's DOM; a screenshot is saved to target/e2e-artifacts/timeline.png.
// Headless Chromium cannot hide a page: `document.visibilityState` is
// overridden and `visibilitychange` dispatched, as the engine reads it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { startServer, launchBrowser } from "./harness.mjs";
import * as h from "./tidings-page.mjs";

let server, browser;
before(async () => { server = await startServer(["--quiet"]); browser = await launchBrowser(); });
after(async () => { await browser?.close(); await server?.stop(); });

async function publish(data) {
  const r = await fetch(`${server.url}/publish`, { method: "POST", body: data });
  assert.ok(r.ok);
}

/** Poll `read()` in the page until `fn` holds; returns the value. */
async function until(page, read, fn, what, timeoutMs = 8000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await page.evaluate(read);
    if (fn(v)) return v;
    assert.ok(Date.now() < end, `timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await h.sleep(50);
  }
}

/** One entry as both sides must show it (timer delays and URLs vary). */
function shape([what, d]) {
  const keys = Object.keys(d ?? {}).sort().join(",");
  const pick = ["attempt", "transport", "state", "reason", "event", "status", "code", "previous"]
    .map((k) => d?.[k]);
  return JSON.stringify([what, keys, ...pick]);
}

test("a debug function gets the entries debug: true logs to the console, in the same order", async () => {
  const page = await h.blankPage(browser, server.url);
  await page.evaluate(() => {
    window.fromConsole = [];
    window.fromFn = [];
    const original = console.debug;
    console.debug = (tag, what, d) => { window.fromConsole.push([what, d]); original.call(console, tag, what, d); };
    const opts = { transports: ["fetch-sse"], seed: 7 };
    window.a = window.tidings.subscribe("/sse", { ...opts, debug: true });
    window.b = window.tidings.subscribe("/sse", { ...opts, debug: (what, d) => window.fromFn.push([what, d]) });
    window.got = { a: 0, b: 0 };
    window.a.addEventListener("message", () => window.got.a++);
    window.b.addEventListener("message", () => window.got.b++);
  });
  await until(page, () => [window.a.state, window.b.state], (s) => s.every((x) => x === "open"), "both open");
  await publish("one");
  await publish("two");
  await until(page, () => window.got, (g) => g.a === 2 && g.b === 2, "two messages each");
  await page.evaluate(() => { window.a.close(); window.b.close(); });
  const { fromConsole, fromFn, objects } = await page.evaluate(() => ({
    fromConsole: window.fromConsole.map(([w, d]) => [w, { ...d }]),
    fromFn: window.fromFn.map(([w, d]) => [w, { ...d }]),
    objects: window.fromFn.every(([w, d]) => typeof w === "string" && d !== null && typeof d === "object"),
  }));
  assert.ok(objects, "every entry is (a string, an object)");
  const whats = fromFn.map(([w]) => w);
  for (const w of ["open", "head", "deliver", "statechange", "transportchange", "abort"]) {
    assert.ok(whats.includes(w), `${w} in ${whats}`);
  }
  assert.equal(whats.filter((w) => w === "deliver").length, 2);
  assert.deepEqual(fromFn.map(shape), fromConsole.map(shape));
  assert.deepEqual(page.errors, []);
  await page.closeAll();
});

test("a debug function that throws is reported (reportError) and delivery goes on", async () => {
  const page = await h.blankPage(browser, server.url);
  await page.evaluate(() => {
    window.reported = 0;
    window.addEventListener("error", (e) => { if (e.error?.message === "debug boom") { window.reported++; e.preventDefault(); } });
    window.calls = 0;
    window.s = window.tidings.subscribe("/sse", {
      transports: ["fetch-sse"], debug: () => { window.calls++; throw new Error("debug boom"); },
    });
    window.data = [];
    window.s.addEventListener("message", (e) => window.data.push(e.data));
  });
  await until(page, () => window.s.state, (s) => s === "open", "open");
  await publish("first");
  await publish("second");
  const data = await until(page, () => window.data, (d) => d.length === 2, "both messages");
  assert.deepEqual(data, ["first", "second"]);
  const { calls, reported } = await page.evaluate(() => ({ calls: window.calls, reported: window.reported }));
  assert.ok(calls >= 4, `debug called ${calls} times`);
  assert.equal(reported, calls, "every throw reported");
  await page.evaluate(() => window.s.close());
  await page.closeAll();
});

/** Visibility override (see the header). */
function overrideVisibility() {
  let hidden = false;
  Object.defineProperty(document, "visibilityState", { configurable: true, get: () => (hidden ? "hidden" : "visible") });
  Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
  window.setHidden = (v) => { hidden = v; document.dispatchEvent(new Event("visibilitychange")); };
}

/** The timeline as the page draws it: bars, gaps, shades, switches. */
function readTimeline() {
  const all = (sel) => [...document.querySelectorAll(`#timeline ${sel}`)];
  return {
    bars: all(".tl-req").map((g) => ({ outcome: g.dataset.outcome, label: g.querySelector("text").textContent,
      row: Math.round(Number(g.querySelector("rect").getAttribute("y"))), width: Number(g.querySelector("rect").getAttribute("width")) })),
    gaps: all(".tl-gap").map((g) => ({ reason: g.dataset.reason, label: g.querySelector("text").textContent })),
    shades: all(".tl-shade").map((r) => ({ kind: r.dataset.kind, width: Number(r.getAttribute("width")) })),
    switches: all(".tl-switch").map((g) => g.querySelector("title").textContent),
  };
}

test("the demo's timeline draws a server restart and a hidden period: bars, gaps with reasons, a shaded period", async () => {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.addInitScript(overrideVisibility);
  await page.goto(server.url + "/");
  await page.waitForFunction(() => document.getElementById("p-state").textContent === "open", null, { timeout: 5000 });
  await page.selectOption("#transport", "fetch-sse");
  await page.waitForFunction(() => document.getElementById("p-state").textContent === "open"
    && document.getElementById("p-transport").textContent === "fetch-sse", null, { timeout: 5000 });
  await publish("before the restart");
  await until(page, readTimeline, (t) => t.bars.some((b) => b.label === "200 · 1 msg"), "a bar with its status and one message");

  // The restart: the stream is cut, 2 s of refused connections, backoff.
  await page.click("#restart");
  let tl = await until(page, readTimeline, (t) => t.gaps.some((g) => g.reason === "backoff")
    && t.bars.some((b) => b.outcome === "error"), "a backoff gap and an error bar");
  await until(page, readTimeline, (t) => t.bars.at(-1).outcome === "open" && t.bars.at(-1).label.startsWith("200"),
    "a request in flight again after the restart", 10000);

  // A hidden period: the request is released, the page shaded, and one
  // request at once when visible again.
  await page.evaluate(() => window.setHidden(true));
  await until(page, readTimeline, (t) => t.gaps.some((g) => g.reason === "hidden"), "a hidden gap");
  await h.sleep(600);
  await page.evaluate(() => window.setHidden(false));
  tl = await until(page, readTimeline, (t) => t.shades.some((s) => s.kind === "hidden")
    && t.bars.at(-1).outcome === "open" && t.bars.at(-1).label.startsWith("200"), "a hidden shade, then a request");

  const backoff = tl.gaps.find((g) => g.reason === "backoff");
  assert.match(backoff.label, /^backoff #1 \d/, backoff.label);
  assert.equal(tl.gaps.find((g) => g.reason === "hidden").label, "hidden");
  const shade = tl.shades.find((s) => s.kind === "hidden");
  assert.ok(shade.width > 2, `hidden shade ${shade.width} px wide`);
  const outcomes = new Set(tl.bars.map((b) => b.outcome));
  for (const o of ["error", "aborted", "open"]) assert.ok(outcomes.has(o), `a ${o} bar in ${[...outcomes]}`);
  assert.ok(tl.switches.some((s) => /→ fetch-sse/.test(s)), `a switch to fetch-sse in ${tl.switches}`);
  // Every bar of this connection is in the fetch-sse row.
  const rows = new Set(tl.bars.slice(-3).map((b) => b.row));
  assert.equal(rows.size, 1, JSON.stringify(tl.bars.slice(-3)));

  mkdirSync("target/e2e-artifacts", { recursive: true });
  await page.locator("#timeline").screenshot({ path: "target/e2e-artifacts/timeline.png" });
  assert.deepEqual(errors, []);
  await page.close();
});
