// What detecting a buffering proxy costs with the default first-event deadline
// (docs/transports.md, "Servers people run"), measured in headless Chromium against the reference
// server's `buffer` fault (holds every body byte until the body ends):
// - "first": only the first /sse stream is held; default options, fetch-sse.
// - "every": every /sse stream is held; transports fetch-sse then long-poll.
// - "default": every /sse stream is held; the default transport list with a
//   long-poll endpoint of its own, so the news probe (3 s after the first
//   request, a long-poll with the cursor) finds the proxy.
// An event is published every second; the figure is the time from
// subscribe() to the first message. Not a test (no assertion): run it with
// `node bench/buffered-cost.mjs` after scripts/build-pkg.sh and a release
// build of tidings-server. Takes about 100 s.
import { startServer, launchBrowser } from "../tests/e2e/harness.mjs";
import * as h from "../tests/e2e/tidings-page.mjs";

const cases = [
  { name: "first", times: 1, options: { transports: ["fetch-sse"] } },
  { name: "every", times: null, options: { transports: ["fetch-sse", "long-poll"], urls: { "long-poll": "/long-poll" } } },
  { name: "default", times: null, options: { urls: { "long-poll": "/long-poll", poll: "/poll" } } },
];

const browser = await launchBrowser();
const runs = await Promise.all(cases.map(async (c) => {
  const srv = await startServer(["--quiet"]);
  const page = await h.blankPage(browser, srv.url);
  await h.faults(srv, { path: "/sse", times: c.times, fault: { kind: "buffer" } });
  const timer = setInterval(() => { srv.publish("tick").catch(() => {}); }, 1000);
  const t0 = Date.now();
  await h.subscribe(page, c.name, "/sse", { seed: 24, ...c.options });
  const log = await h.waitEvents(page, c.name, (l) => l.some((e) => e.type === "message"), 300_000, "a message");
  const ms = Date.now() - t0;
  clearInterval(timer);
  const requests = (await h.requests(srv)).filter((e) => e.path === "/sse" || e.path === "/long-poll").length;
  const first = log.find((e) => e.type === "message");
  await page.closeAll();
  await srv.stop();
  return { case: c.name, ms, via: first.transport, requests };
}));
await browser.close();
for (const r of runs) console.log(`${r.case}: first message after ${r.ms} ms via ${r.via} (${r.requests} requests)`);
