// The demo page, same-origin: load `/`, publish through its form, see the
// message on the page. Runs on the built package in pkg/ (the drop-in
// <script type=module> path, no bundler).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";

let server, browser;
before(async () => { server = await startServer(); browser = await launchBrowser(); });
after(async () => { await browser?.close(); await server?.stop(); });

test("a message published from the demo page appears on it within a second", async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(server.url + "/");
  await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("open"), null, { timeout: 5000 });
  assert.equal(await page.textContent("#status"), "open over eventsource");

  const text = `hello from playwright ${Date.now()}`;
  await page.fill("#text", text);
  const started = Date.now();
  await page.click("button");
  await page.waitForSelector(`#messages li:has-text("${text}")`, { timeout: 1000 });
  const item = await page.textContent("#messages li");
  assert.match(item, new RegExp(`^#\\d+${text}$`));
  console.log(`# published → on page in ${Date.now() - started} ms`);
  assert.deepEqual(errors, []);
});

test("a named event published by another client reaches the page with its name", async () => {
  const page = await browser.newPage();
  await page.goto(server.url + "/");
  await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("open"));
  const { id } = await server.publish("42.5", "price");
  await page.waitForSelector(`#messages li:has-text("42.5")`, { timeout: 2000 });
  assert.equal(await page.textContent("#messages li .id"), `#${id} price`);
});
