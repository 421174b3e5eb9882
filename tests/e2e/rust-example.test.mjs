// The example Rust app (examples/rust-app, built by scripts/build-example.sh
// into target/example-app/www): a page whose wasm is a Rust crate on the
// tidings Rust API, served same-origin by the reference server. Published
// JSON appears decoded in its DOM, named events under their name, and the
// page's state follows the subscription.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { ENGINE, startServer, launchBrowser } from "./harness.mjs";
import { faults, logBrief, requests } from "./tidings-page.mjs";

const WWW = new URL("../../target/example-app/www/", import.meta.url).pathname;

let server, browser;
before(async () => {
  assert.ok(existsSync(`${WWW}app_bg.wasm`), "build it first: scripts/build-example.sh");
  server = await startServer(["--www", WWW]);
  browser = await launchBrowser();
});
after(async () => { await browser?.close(); await server?.stop(); });

async function openApp() {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(server.url + "/");
  await page.waitForFunction(() => document.getElementById("state").textContent === "open", null, { timeout: 15000 });
  return { page, errors };
}

test("the Rust app shows published JSON decoded into its type, newest first", async () => {
  const { page, errors } = await openApp();
  assert.equal(await page.textContent("#app"), "rust");
  assert.equal(await page.textContent("#transport"), "eventsource");
  const tag = `t${Date.now()}`;
  const a = await server.publish(JSON.stringify({ name: `${tag}-a`, value: 1.5 }));
  const b = await server.publish(JSON.stringify({ name: `${tag}-b`, value: 2 }));
  await page.waitForSelector(`#messages li:has-text("${tag}-b")`, { timeout: 10000 });
  const items = await page.$$eval("#messages li", (lis) => lis.map((li) => li.textContent));
  assert.deepEqual(items.slice(0, 2), [
    `#${b.id} message ${tag}-b = 2`,
    `#${a.id} message ${tag}-a = 1.5`,
  ]);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a named event listed in the app's options arrives under its name; text that is not its type stays text", async () => {
  const { page } = await openApp();
  const tag = `n${Date.now()}`;
  const { id } = await server.publish(`${tag} not json`, "price");
  await page.waitForSelector(`#messages li:has-text("${tag}")`, { timeout: 10000 });
  assert.equal(await page.textContent("#messages li"), `#${id} price ${tag} not json`);
  await page.close();
});

// `tidings::send` from the Rust app: the server's idempotency store
// (`GET /_send`) holds exactly the body and key the app sent, once.
async function sendFromApp(page, text) {
  await page.fill("#text", text);
  await page.click("#send");
  await page.waitForFunction(() => document.getElementById("sent").textContent !== "", null, { timeout: 15000 });
  return page.textContent("#sent");
}
const appliedFor = async (key) =>
  (await (await fetch(`${server.url}/_send`)).json()).applied.filter((a) => a.key === key);

test("the Rust app's send: the server applied exactly the body and key it sent, once", async () => {
  const { page, errors } = await openApp();
  const text = `s${Date.now()}`;
  assert.equal(await sendFromApp(page, text), "201 attempts=1 replayed=false");
  const applied = await appliedFor(`rust-${text}`);
  assert.deepEqual(applied.map((a) => a.body), [JSON.stringify({ text })]);
  assert.deepEqual(errors, []);
  await page.close();
});

test("the Rust app's send retries an answer lost after the apply with the same key: applied once, the answer replayed", async () => {
  const { page } = await openApp();
  const text = `r${Date.now()}`;
  // A fresh connection per request (`close=1`). A browser re-sends a POST by
  // itself when the connection closes before any byte of the answer:
  // Chromium only on a reused keep-alive connection (the page's own loads
  // may have left one), Firefox on a fresh one too, not every time
  // (docs/engines.md). That re-send is the server's second request, at once
  // (tidings' own retry waits the send backoff's floor, 1 s), and the app's
  // one attempt then gets the replayed answer. On every engine the server
  // sees two requests with the app's key and applies the body once.
  await page.evaluate(() => document.getElementById("send").setAttribute("data-url", "/send?close=1"));
  await faults(server, { path: "/send", times: 1, fault: { kind: "drop-response" } });
  const got = await sendFromApp(page, text);
  const all = await requests(server);
  const sent = all.filter((e) => e.path === "/send" && e.headers?.["idempotency-key"] === `"rust-${text}"`);
  assert.equal(sent.length, 2, all.map(logBrief).join("\n"));
  const reused = all.some((e) => e.req < sent[0].req && e.conn === sent[0].conn);
  const resent = sent[1].t_ms - sent[0].end_ms < 500;
  if (ENGINE !== "firefox") assert.equal(resent, reused, `re-sent by the browser ${sent[1].t_ms - sent[0].end_ms} ms after the drop`);
  assert.equal(got, `201 attempts=${resent ? 1 : 2} replayed=true`, `dropped on ${reused ? "a reused" : "a fresh"} connection`);
  const applied = await appliedFor(`rust-${text}`);
  assert.deepEqual(applied.map((a) => a.body), [JSON.stringify({ text })]);
  await page.close();
});
