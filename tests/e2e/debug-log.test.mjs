// `debug: true`: every decision of the engine reaches the console with its
// reason (console.debug("[tidings]", what, details)), read here from
// Chromium's console through Playwright. A 503 with Retry-After is the
// decision to log: the request, the error with its wait, the waiting state
// with reason `retry-after`, the timer, the second request, the delivery.
// Without `debug` nothing is logged.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import * as h from "./tidings-page.mjs";

let browser, srv, page;
const logs = [];
before(async () => {
  browser = await launchBrowser();
  srv = await startServer(["--quiet"]);
  page = await h.blankPage(browser, srv.url);
  h.recordDebugLog(page, logs);
});
after(async () => {
  await page?.closeAll();
  await browser?.close();
  await srv?.stop();
});

/** Wait until every logged line is read and `pred(logs)` holds. */
async function logsWhen(pred, what) {
  for (let i = 0; !(logs.every((l) => l.what) && pred(logs)); i++) {
    assert.ok(i < 200, `timed out waiting for ${what}: ${JSON.stringify(logs)}`);
    await h.sleep(25);
  }
}

async function publish(data) {
  const r = await fetch(`${srv.url}/publish`, { method: "POST", body: data });
  assert.ok(r.ok);
}

test("debug: true logs each decision with its reason: open, 503 error with retryInMs, waiting (retry-after), wait, open again, deliver", async () => {
  await h.faults(srv, { path: "/sse", fault: { kind: "status", status: 503, retry_after: 1 } });
  await h.subscribe(page, "d", "/sse", { transports: ["fetch-sse"], debug: true, seed: 7 });
  await h.waitEvents(page, "d", (l) => l.some((e) => e.type === "open"), 5000, "open after the 503");
  await publish("hello");
  await h.waitEvents(page, "d", (l) => l.some((e) => e.type === "message"), 5000, "the message");
  await logsWhen((l) => l.some((x) => x.what === "deliver"), "the deliver line");
  const what = logs.map((l) => l.what);
  const first = (w, from = 0) => what.indexOf(w, from);

  const open1 = logs[first("open")];
  assert.equal(open1.transport, "fetch-sse");
  assert.match(open1.url, /\/sse$/);
  assert.equal(open1.attempt, 1);
  const err = logs[first("error")];
  assert.deepEqual([err.code, err.status, err.fatal], ["http-status", 503, false]);
  assert.ok(err.retryInMs >= 1000, `retryInMs ${err.retryInMs}`);
  const waiting = logs.find((l) => l.what === "statechange" && l.state === "waiting");
  assert.equal(waiting.reason, "retry-after");
  assert.equal(waiting.delayMs, err.retryInMs);
  const wait = logs[first("wait", first("error"))];
  assert.ok(Math.abs(wait.delayMs - err.retryInMs) <= 50, `timer ${wait.delayMs} vs ${err.retryInMs}`);
  const open2 = logs[first("open", first("error"))];
  assert.equal(open2.attempt, 2);
  const deliver = logs[first("deliver")];
  assert.equal(deliver.event, "message");
  assert.ok(deliver.id.length > 0);
  assert.equal(deliver.data, undefined); // data is never logged
  assert.ok(first("error") < what.indexOf("statechange", first("error")));
  assert.ok(first("open") < first("error") && first("error") < first("open", first("error")) && first("open", first("error")) < first("deliver"));
  const before = logs.length;
  await h.closeSub(page, "d");
  await logsWhen((l) => l.length >= before + 2, "the close lines");
  assert.deepEqual(logs.slice(before).map((l) => [l.what, l.attempt ?? l.reason]),
    [["abort", 2], ["statechange", "closed-by-user"]]);
});

test("without debug nothing is logged", async () => {
  logs.length = 0;
  await h.subscribe(page, "q", "/sse", { transports: ["fetch-sse"] });
  await h.waitEvents(page, "q", (l) => l.some((e) => e.type === "open"), 5000, "open");
  await publish("quiet");
  await h.waitEvents(page, "q", (l) => l.some((e) => e.type === "message"), 5000, "the message");
  await h.sleep(100);
  assert.deepEqual(logs, []);
  await h.closeSub(page, "q");
});

test("a parse error (parse: \"json\", data not JSON) carries the dropped message's id, event and lastEventId, and debug logs it", async () => {
  logs.length = 0;
  await h.subscribe(page, "j", "/sse", { transports: ["fetch-sse"], parse: "json", events: ["price"], debug: true }, ["price"]);
  await h.waitEvents(page, "j", (l) => l.some((e) => e.type === "open"), 5000, "open");
  const r = await fetch(`${srv.url}/publish?event=price`, { method: "POST", body: "{bad" });
  const { id } = await r.json();
  await publish("[1]");
  await h.waitEvents(page, "j", (l) => l.some((e) => e.type === "message"), 5000, "the message after the bad one");
  await h.sleep(100);
  const errors = (await h.events(page, "j")).filter((e) => e.type === "error");
  const message = await page.evaluate(() => {
    const sub = window.subs.j.sub;
    return new Promise((resolve) => {
      sub.addEventListener("error", (e) => resolve(e.message), { once: true });
      fetch("/publish", { method: "POST", body: "nope" });
    });
  });
  await logsWhen((l) => l.filter((x) => x.what === "error").length >= 2, "both parse errors logged");
  await h.closeSub(page, "j");
  assert.deepEqual(errors.map((e) => [e.code, e.id, e.event, e.lastEventId, e.fatal]), [["parse", id, "price", id, false]]);
  assert.equal(message, "message data is not JSON");
  const logged = logs.filter((l) => l.what === "error");
  assert.deepEqual(logged.map((l) => [l.code, l.event]), [["parse", "price"], ["parse", "message"]]);
  assert.equal(logged[0].id, id);
});

test("a listener for a type not in events: one console.warn per subscription and type saying how to fix it, one warn line with debug; the server's events of that type: one ignore line per type", async () => {
  logs.length = 0;
  const warnings = [];
  const onConsole = (m) => { if (m.type() === "warning" && m.text().startsWith("[tidings]")) warnings.push(m.text()); };
  page.on("console", onConsole);
  await h.subscribe(page, "w", "/sse", { transports: ["fetch-sse"], events: ["price"], debug: true }, ["price"]);
  await page.evaluate(() => {
    const { sub } = window.subs.w;
    const f = () => {}, g = () => {};
    // Twice the same type (two listeners, and one removed and added again),
    // another unlisted type, and types it does dispatch: message, a listed
    // one, its own events.
    sub.addEventListener("chat", f);
    sub.addEventListener("chat", g);
    sub.removeEventListener("chat", f);
    sub.addEventListener("chat", f);
    sub.addEventListener("typing", f);
    for (const t of ["message", "price", "open", "error", "statechange", "transportchange", "reset", "uptodate", "statuschange"]) {
      sub.addEventListener(t, f);
    }
    // Another subscription, without debug: its own warning, no debug line.
    window.other = window.tidings.subscribe("/sse", { transports: ["fetch-sse"] });
    window.other.addEventListener("chat", f);
    window.other.addEventListener("chat", g);
  });
  await h.waitEvents(page, "w", (l) => l.some((e) => e.type === "open"), 5000, "open");
  for (const event of ["chat", "typing", "chat", "price"]) {
    const r = await fetch(`${srv.url}/publish?event=${event}`, { method: "POST", body: "x" });
    assert.ok(r.ok);
  }
  await h.waitEvents(page, "w", (l) => l.some((e) => e.type === "price"), 5000, "the price message");
  await logsWhen((l) => l.filter((x) => x.what === "ignore").length >= 2, "the ignore lines");
  await h.sleep(200);
  page.off("console", onConsole);
  await page.evaluate(() => window.other.close());
  await h.closeSub(page, "w");
  const says = (t) => `[tidings] "${t}" is not in the events option: its listeners will never run (events: ["${t}"])`;
  assert.deepEqual(warnings, [says("chat"), says("typing"), says("chat")]);
  assert.deepEqual(logs.filter((l) => l.what === "warn").map((l) => [l.event, l.message]),
    [["chat", says("chat").slice(10)], ["typing", says("typing").slice(10)]]);
  const ignored = logs.filter((l) => l.what === "ignore");
  assert.deepEqual(ignored.map((l) => [l.event, l.reason]), [["chat", "not-in-events"], ["typing", "not-in-events"]]);
  assert.ok(ignored.every((l) => l.id.length > 0), JSON.stringify(ignored));
});
