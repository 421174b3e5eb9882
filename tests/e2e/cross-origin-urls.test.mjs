// `urls` can put one transport on another origin than the page while the
// others stay on the page's own: whether the cursor travels as the
// `Last-Event-ID` header or in the query is decided per endpoint. The page is
// on server A; `fetch-sse` streams from server B (cross-origin: the cursor in
// the query, so no preflight), `long-poll` from A (same-origin: the header).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser } from "./harness.mjs";
import * as h from "./tidings-page.mjs";

let browser, a, b, page;
before(async () => {
  browser = await launchBrowser();
  a = await startServer(["--quiet"]);
  b = await startServer(["--quiet"]);
  page = await h.blankPage(browser, a.url);
});
after(async () => {
  await page?.closeAll();
  await browser?.close();
  await a?.stop();
  await b?.stop();
});

async function allRequests(server, path) {
  const q = `?path=${encodeURIComponent(path)}`;
  return (await (await fetch(`${server.url}/_log${q}`)).json()).entries;
}

test("cross-origin fetch-sse endpoint: cursor in the query, no preflight; same-origin long-poll endpoint: Last-Event-ID header", async () => {
  await h.subscribe(page, "x", "/long-poll", {
    transports: ["fetch-sse"], lastEventId: "5", urls: { "fetch-sse": `${b.url}/sse` },
  });
  const [req] = await h.waitRequests(b, "/sse", (l) => l.length >= 1, 5000, "the stream on B");
  assert.equal(req.query, "lastEventId=5");
  assert.equal(req.headers["last-event-id"], undefined);
  assert.ok(req.headers.origin, "a cross-origin request");
  assert.deepEqual((await allRequests(b, "/sse")).filter((e) => e.method === "OPTIONS"), []);
  await h.closeSub(page, "x");

  await h.subscribe(page, "y", `${b.url}/sse`, {
    transports: ["long-poll"], lastEventId: "5", urls: { "long-poll": "/long-poll" },
  });
  const [lp] = await h.waitRequests(a, "/long-poll", (l) => l.length >= 1, 5000, "the long poll on A");
  assert.equal(lp.query, null);
  assert.equal(lp.headers["last-event-id"], "5");
  await h.closeSub(page, "y");
});
