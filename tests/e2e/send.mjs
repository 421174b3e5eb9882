// send() helpers shared by send.test.mjs (Chromium) and tests/engines/cases.mjs
// (Chromium, Firefox, WebKitGTK). A `page` is anything with `evaluate(fn, arg)`:
// a Playwright page or a tests/engines driver.
import assert from "node:assert/strict";
import { waitPage } from "./tidings-page.mjs";

/**
 * Page setup (run with page.evaluate once `window.t` is the package entry):
 * `window.track(name, promise)` records a send's outcome in
 * `window.sends[name]` as `{ settled: n, value | error }` (settled counts calls
 * of either callback: it must end at exactly 1).
 */
export function trackSends() {
  window.sends = {};
  window.track = (name, promise) => {
    const s = (window.sends[name] = { settled: 0 });
    promise.then(
      (r) => { s.settled++; s.value = { status: r.status, body: r.body, attempts: r.attempts, replayed: r.replayed, replayedHeader: r.headers.get("idempotent-replayed") }; },
      (e) => { s.settled++; s.error = { name: e.name, code: e.code, status: e.status, attempts: e.attempts, message: e.message, cause: String(e.cause) }; },
    );
  };
}

/** Until the send `name` settled; resolves to its `window.sends` record. */
export async function settled(page, name, timeoutMs = 10_000) {
  await waitPage(page, (n) => window.sends[n]?.settled >= 1, name, timeoutMs, `send ${name} settled`);
  return page.evaluate((n) => window.sends[n], name);
}

/**
 * Every request of `reqs` (/_log entries) carried the same Idempotency-Key,
 * a generated one: a v4 UUID as a structured-field string. Returns it.
 */
export function assertOneKey(reqs) {
  const keys = new Set(reqs.map((r) => r.headers["idempotency-key"]));
  assert.equal(keys.size, 1, `one key on every attempt: ${JSON.stringify([...keys])}`);
  const [key] = keys;
  assert.match(key, /^"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"$/);
  return key;
}
