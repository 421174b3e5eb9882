// The demo page, same-origin: load `/`, publish through its form, see the
// message on the page; switch transports; queue a fault and see the client's
// decision in the "what is happening" panel. Runs on the built package in
// pkg/ (the drop-in <script type=module> path, no bundler).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";

let server, browser;
before(async () => { server = await startServer(); browser = await launchBrowser(); });
after(async () => { await browser?.close(); await server?.stop(); });

async function openDemo() {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(server.url + "/");
  await page.waitForFunction(() => document.getElementById("p-state").textContent === "open", null, { timeout: 5000 });
  return { page, errors };
}

test("a message published from the demo page appears on it within a second", async () => {
  const { page, errors } = await openDemo();
  assert.equal(await page.textContent("#p-transport"), "eventsource");
  const text = `hello from playwright ${Date.now()}`;
  await page.fill("#text", text);
  const started = Date.now();
  await page.click("#publish button");
  await page.waitForSelector(`#messages li:has-text("${text}")`, { timeout: 1000 });
  const item = await page.textContent("#messages li");
  assert.match(item, new RegExp(`^#\\d+${text}$`));
  console.log(`# published → on page in ${Date.now() - started} ms`);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a named event published by another client reaches the page with its name", async () => {
  const { page } = await openDemo();
  const { id } = await server.publish("42.5", "price");
  await page.waitForSelector(`#messages li:has-text("42.5")`, { timeout: 2000 });
  assert.equal(await page.textContent("#messages li .id"), `#${id} price`);
  await page.close();
});

test("switching the page to long-poll delivers over long-poll and says so", async () => {
  const { page } = await openDemo();
  await page.selectOption("#transport", "long-poll");
  await page.waitForFunction(() => document.getElementById("p-transport").textContent === "long-poll");
  const text = `over long-poll ${Date.now()}`;
  await server.publish(text);
  await page.waitForSelector(`#messages li:has-text("${text}")`, { timeout: 3000 });
  assert.ok(Number(await page.textContent("#p-requests")) >= 1);
  await page.close();
});

test("a 503 with Retry-After queued from the page shows the client's decision", async () => {
  const { page } = await openDemo();
  await page.selectOption("#transport", "fetch-sse");
  await page.waitForFunction(() => document.getElementById("p-transport").textContent === "fetch-sse"
    && document.getElementById("p-state").textContent === "open");
  await page.click("text=503 + Retry-After: 3");
  await page.waitForSelector('#decisions li:has-text("error http-status 503")', { timeout: 5000 });
  const line = await page.textContent('#decisions li:has-text("error http-status 503")');
  const retry = Number(line.match(/retry in (\d+) ms/)[1]);
  // The server's wait as asked plus the herd spread (core/src/engine/retry.rs):
  // max(3000, floor 1000) + U[0, 300], no backoff term.
  assert.ok(retry >= 3000 && retry <= 3300, `retry in ${retry} ms`);
  await page.click("#clear");
  await page.close();
});
