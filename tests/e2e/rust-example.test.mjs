// The example Rust app (examples/rust-app, built by scripts/build-example.sh
// into target/example-app/www): a page whose wasm is a Rust crate on the
// tidings Rust API, served same-origin by the reference server. Published
// JSON appears decoded in its DOM, named events under their name, and the
// page's state follows the subscription.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { startServer, launchBrowser } from "./harness.mjs";

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
