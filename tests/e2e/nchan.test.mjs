// Interop with a real pub/sub server: nginx + nchan (Debian's nginx-light and
// libnginx-mod-nchan), started by scripts/nchan.sh on free loopback ports in a
// temporary run directory; two of them share one redis-server. The page is
// served by our reference server, so every nchan URL is cross-origin (nchan's
// CORS answers come from tests/nchan/nginx.conf.template). Observed nchan
// behaviour is in tests/nchan/FACTS.md; what tidings does with it is in
// docs/nchan.md.
//
// Instances: M (memory store; EventSource pings every second with a data
// line), S (memory store; long-poll holds end after 1 s with 408; restarted at
// the end), A + B (Redis store, one redis-server; B is stopped and started).
// Avoided on purpose: two subscribers resuming with an old cursor on one empty
// channel, which crashes nchan 1.3.6 workers (FACTS.md); the last test checks
// that no worker crashed.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, launchBrowser } from "./harness.mjs";
import { pinFastNetwork } from "./polling.mjs";

const run = promisify(execFile);
const ROOT = new URL("../../", import.meta.url).pathname;
const NCHAN = `${ROOT}scripts/nchan.sh`;
const RUN_ROOT = mkdtempSync(join(tmpdir(), "tidings-nchan-"));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let server, browser;
const nchan = {}; // name → { base, port, redisPort? }

async function nchanCmd(args) {
  const { stdout } = await run(NCHAN, args, { env: { ...process.env, NCHAN_RUN_ROOT: RUN_ROOT }, timeout: 30_000 });
  return stdout;
}

async function startNchan(name, args) {
  const out = await nchanCmd(["start", "--name", name, ...args]);
  const base = out.match(/listening on (http:\/\/\S+)/)[1];
  const redis = out.match(/redis on 127\.0\.0\.1:(\d+)/);
  nchan[name] = { base, port: Number(base.split(":").pop()), redisPort: redis ? Number(redis[1]) : undefined, args };
  return nchan[name];
}

/** Access-log lines of instance `name` for `path` (prefix match on the URI). */
function accessLog(name, path) {
  const file = join(RUN_ROOT, name, "logs", "access.log");
  if (!existsSync(file)) return [];
  const re = /^(\d+\.\d+) (\d+\.\d+) (\d+) (\d+) (\S+) "([^"]*)" "([^"]*)" "([^"]*)" "([^"]*)"$/;
  return readFileSync(file, "utf8").split("\n").map((l) => l.match(re)).filter(Boolean)
    .map(([, msec, rt, status, bytes, method, uri, inm, ims, leid]) => ({
      end: Math.round(Number(msec) * 1000), start: Math.round((Number(msec) - Number(rt)) * 1000),
      status: Number(status), bytes: Number(bytes), method, uri, inm, ims, leid,
    }))
    .filter((r) => r.uri === path || r.uri.startsWith(path + "?"));
}

/** Poll the access log until `pred(lines)` holds (nginx logs a request when it ends). */
async function waitLog(name, path, pred, timeout = 3000) {
  const until = Date.now() + timeout;
  for (;;) {
    const lines = accessLog(name, path);
    if (pred(lines) || Date.now() > until) return lines;
    await sleep(50);
  }
}

const enc = (id) => id.replace(":", "%3A");

/** POST one message; resolves to nchan's id for it ("T:TAG"). */
async function publish(inst, ch, body) {
  const res = await fetch(`${inst.base}/pub/${ch}`, {
    method: "POST", body, headers: { "Content-Type": "text/plain" },
  });
  const text = await res.text();
  assert.ok(res.status === 201 || res.status === 202, `publish ${res.status}: ${text}`);
  return text.match(/last message id: (\S+)/)[1];
}

async function publishAll(inst, ch, bodies) {
  const ids = [];
  for (const b of bodies) ids.push(await publish(inst, ch, b));
  return ids;
}

const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => String(from + i));

/** The per-transport locations of channel `ch` on `inst`, as `urls`. */
function urlsOf(inst, ch) {
  return {
    eventsource: `${inst.base}/sub/es/${ch}`,
    "fetch-sse": `${inst.base}/sub/es/${ch}`,
    "long-poll": `${inst.base}/sub/lp/${ch}`,
    poll: `${inst.base}/sub/poll/${ch}`,
  };
}

/** The tidings options for nchan (what docs/nchan.md recommends) + test knobs. */
function nchanOptions(inst, ch, transport, extra = {}) {
  return {
    transports: [transport],
    urls: urlsOf(inst, ch),
    lastEventIdParam: "last_event_id",
    seed: 9,
    pauseWhenHidden: false,
    backoff: { floorMs: 100, baseMs: 200, maxMs: 1000 },
    interval: { initialMs: 50, minMs: 5, maxMs: 400 },
    ...extra,
  };
}

/**
 * A page on the reference server's origin with the package loaded. The
 * document is the server's `GET /_faults` JSON: it must come from the real
 * server, since Chromium's Local Network Access treats a document fulfilled by
 * Playwright's router as public and blocks its requests to loopback nchan.
 */
async function newPage() {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.errors = errors;
  // Headless Chromium reports navigator.connection.rtt = 100 on loopback (an
  // estimate), which would put poll intervals in the engine's ×3 network
  // tier. Pin a fast network the way DevTools throttling does (rtt 0), so the
  // configured intervals apply as configured.
  // (Firefox has no navigator.connection, nor CDP: nothing to pin.)
  await pinFastNetwork(page);
  await page.goto(`${server.url}/_faults`);
  await page.evaluate(async () => {
    if (navigator.connection && navigator.connection.rtt !== 0) throw new Error("network info not pinned");
    const m = await import("/pkg/tidings.js");
    await m.default();
    window.tidings = m;
    window.subs = {};
    window.record = (name, url, options) => {
      const sub = m.subscribe(url, options);
      const log = [];
      for (const type of ["message", "open", "error", "statechange", "transportchange", "reset"]) {
        sub.addEventListener(type, (e) => {
          const o = { type, t: Math.round(performance.now()), wall: Date.now() };
          for (const k of ["id", "lastEventId", "data", "state", "reason", "delayMs", "code", "status", "fatal"]) {
            if (e[k] !== undefined) o[k] = e[k];
          }
          log.push(o);
        });
      }
      window.subs[name] = { sub, log };
    };
  });
  page.closeAll = () => context.close();
  return page;
}

const subscribe = (page, name, url, options) =>
  page.evaluate(({ name, url, options }) => window.record(name, url, options), { name, url, options });
const logOf = (page, name) => page.evaluate((name) => window.subs[name].log, name);
const messagesOf = async (page, name) => (await logOf(page, name)).filter((e) => e.type === "message");
const statsOf = (page, name) => page.evaluate((name) => window.subs[name].sub.stats(), name);
const closeSub = (page, name) => page.evaluate((name) => window.subs[name].sub.close(), name);
/**
 * `state/reason` of every statechange. The first one, `connecting/start`, is
 * dispatched inside subscribe() by some builds (before any listener exists)
 * and after it returns by others: it is put back when missing.
 */
function statesOf(log) {
  const states = log.filter((e) => e.type === "statechange").map((e) => `${e.state}/${e.reason}`);
  return states[0] === "connecting/start" ? states : ["connecting/start", ...states];
}
const waitMessages = (page, name, n, timeout = 15_000) =>
  page.waitForFunction(({ name, n }) => window.subs[name].log.filter((e) => e.type === "message").length >= n,
    { name, n }, { timeout });

before(async () => {
  await nchanCmd(["ensure-packages"]);
  server = await startServer();
  browser = await launchBrowser();
  await Promise.all([
    startNchan("M", ["--timeout", "30", "--buffer", "200", "--ping", "1", "--ping-event", "heartbeat",
      "--ping-data", '{"hb":1}']),
    startNchan("S", ["--timeout", "1", "--buffer", "200"]),
    startNchan("A", ["--redis", "--timeout", "30", "--buffer", "200"]),
  ]);
  await startNchan("B", ["--redis-port", String(nchan.A.redisPort), "--timeout", "30", "--buffer", "200"]);
});

after(async () => {
  await browser?.close();
  await server?.stop();
  // (A started the shared redis-server and stops it too.)
  await Promise.all(["A", "B", "M", "S"].map((n) => nchanCmd(["stop", "--name", n]).catch(() => {})));
  rmSync(RUN_ROOT, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------
// 100 numbered messages, in order, exactly once, with nchan's own ids; then
// close, publish 5 more, resubscribe with the last id: only those 5.

for (const transport of ["eventsource", "fetch-sse", "long-poll", "poll"]) {
  test(`${transport}: 100 messages in order exactly once with nchan's ids; resubscribe with the last id gets only what came after`, async () => {
    const page = await newPage();
    const ch = `order-${transport}`;
    const urls = urlsOf(nchan.M, ch);
    // Half buffered before the subscription (nchan_subscriber_first_message
    // oldest replays them), half live.
    const ids = await publishAll(nchan.M, ch, range(1, 50));
    await subscribe(page, "a", urls[transport], nchanOptions(nchan.M, ch, transport));
    await waitMessages(page, "a", 1);
    ids.push(...await publishAll(nchan.M, ch, range(51, 100)));
    await waitMessages(page, "a", 100);
    await sleep(300);
    let got = await messagesOf(page, "a");
    assert.deepEqual(got.map((m) => m.data), range(1, 100));
    assert.deepEqual(got.map((m) => m.id), ids, "the ids are nchan's <seconds>:<tag>");
    assert.match(ids[0], /^\d{10}:\d+$/);
    const last = got[99].id;
    assert.equal(await page.evaluate(() => window.subs.a.sub.lastEventId), last);
    await closeSub(page, "a");

    const after = await publishAll(nchan.M, ch, range(101, 105));
    const resubscribedAt = Date.now();
    await subscribe(page, "b", urls[transport], nchanOptions(nchan.M, ch, transport, { lastEventId: last }));
    await waitMessages(page, "b", 5);
    await sleep(transport === "poll" ? 600 : 300);
    got = await messagesOf(page, "b");
    assert.deepEqual(got.map((m) => m.data), range(101, 105));
    assert.deepEqual(got.map((m) => m.id), after);
    const errors = (await logOf(page, "b")).filter((e) => e.type === "error");
    assert.deepEqual(errors, []);
    assert.deepEqual(page.errors, []);
    await closeSub(page, "b");

    // What went over the wire (nginx logs a request when it ends).
    const path = new URL(urls[transport]).pathname;
    const gets = (lines) => lines.filter((r) => r.method === "GET" && r.start >= resubscribedAt - 5);
    if (transport === "eventsource" || transport === "fetch-sse") {
      // One stream, naming the last id (499: nginx's status for a response
      // the client closed).
      const lines = gets(await waitLog("M", path, (l) => gets(l).length >= 1));
      assert.deepEqual(lines.map((r) => [r.status, r.uri]), [[499, `${path}?last_event_id=${enc(last)}`]]);
      assert.ok(lines[0].bytes > 0, "and nchan answered it");
    } else {
      // One request per message, each naming the previous message's id in
      // last_event_id (the resumed one: the stored id), never the validators:
      // CORS-simple requests, so not one preflight.
      const lines = gets(await waitLog("M", path, (l) => gets(l).length >= 5));
      const expectUris = [last, ...after.slice(0, 4)].map((id) => `${path}?last_event_id=${enc(id)}`);
      assert.deepEqual(lines.slice(0, 5).map((r) => [r.status, r.uri, r.inm, r.ims]),
        expectUris.map((uri) => [200, uri, "-", "-"]));
      assert.equal(accessLog("M", path).filter((r) => r.method === "OPTIONS").length, 0, "no preflight");
    }
    await page.closeAll();
  });
}

// ---------------------------------------------------------------------------
// nchan_subscriber_timeout 1 s: every idle hold ends with 408. tidings takes
// it as "no news": the next request goes within its U[0, 100] ms jitter, no
// backoff, no error, the breaker (threshold 2 here) never opens.

test("long-poll: idle holds end in 408 every second; no backoff, no error, no breaker", async () => {
  const page = await newPage();
  const ch = "idle-lp";
  const [id1] = await publishAll(nchan.S, ch, ["only"]);
  await subscribe(page, "lp", urlsOf(nchan.S, ch)["long-poll"], nchanOptions(nchan.S, ch, "long-poll", {
    backoff: { floorMs: 500, baseMs: 500, maxMs: 4000 },
    breaker: { failureThreshold: 2, cooldownMs: 30_000 },
  }));
  await waitMessages(page, "lp", 1);
  await sleep(3600);
  const gets = accessLog("S", `/sub/lp/${ch}`).filter((r) => r.method === "GET");
  assert.deepEqual(gets[0].status, 200);
  const holds = gets.slice(1);
  assert.ok(holds.length >= 3, `${holds.length} holds`);
  for (const h of holds) {
    assert.equal(h.status, 408);
    assert.ok(h.end - h.start >= 990 && h.end - h.start <= 1200, `held ${h.end - h.start} ms`);
    // The cursor stays the message's id (the 408 carries no Last-Modified).
    assert.equal(h.uri, `/sub/lp/${ch}?last_event_id=${enc(id1)}`);
  }
  // Chromium silently resends a request answered 408 on a reused keep-alive
  // connection (it takes the 408 for a server closing an idle socket), so
  // every other 408 never reaches JS: the resend goes out within a few ms.
  // The requests tidings made go after its U[0, 100] ms long-poll jitter:
  // exactly so in the client's states and stats below. On the wire their
  // median gap stays below the 500 ms backoff floor (a loaded 2-core machine
  // stalls the renderer by a few hundred ms now and then).
  let resends = 0;
  const gaps = [];
  for (let i = 1; i < gets.length; i++) {
    const gap = gets[i].start - gets[i - 1].end;
    assert.ok(gap >= 0, `request ${i} started before the previous answer`);
    if (gap <= 15 && gets[i - 1].status === 408) resends++;
    else gaps.push(gap);
  }
  gaps.sort((a, b) => a - b);
  const median = gaps[Math.floor((gaps.length - 1) / 2)];
  assert.ok(median < 500, `gaps ${gaps} ms after the previous answer`);
  // (How many depends on Chromium reusing the socket; a loaded run saw none.)
  assert.ok(resends <= holds.length / 2 + 1, `${resends} browser resends`);
  const log = await logOf(page, "lp");
  assert.deepEqual(log.filter((e) => e.type === "error"), []);
  assert.deepEqual(statesOf(log), ["connecting/start", "open/start"]);
  const stats = await statsOf(page, "lp");
  assert.ok(stats.currentDelayMs <= 100, `currentDelayMs ${stats.currentDelayMs}`);
  // tidings' own requests: the logged ones minus the browser's resends, plus
  // the one held now (unless the held one is itself a resend).
  // (A resend is told from the gap alone, ≤ 15 ms; on a loaded run one can
  // take longer and count as tidings' own: one either way.)
  const own = gets.length - resends;
  assert.ok(Math.abs(stats.requests - own) <= 1, `${stats.requests} requests, ${own} logged`);
  assert.equal((await messagesOf(page, "lp")).length, 1);
  await page.closeAll();
});

// ---------------------------------------------------------------------------
// Interval poll of an unchanged channel: one 200 (the message), then only
// 304s, each after an interval twice the previous one (exponential, from
// 100 ms to the 800 ms maximum).

test("poll: an unchanged channel costs only 304s and the interval doubles up to maxMs", async () => {
  const page = await newPage();
  const ch = "idle-poll";
  await publishAll(nchan.S, ch, ["only"]);
  await subscribe(page, "p", urlsOf(nchan.S, ch).poll, nchanOptions(nchan.S, ch, "poll", {
    interval: { mode: "exponential", initialMs: 200, minMs: 100, maxMs: 800 },
  }));
  await waitMessages(page, "p", 1);
  await sleep(3300);
  const gets = accessLog("S", `/sub/poll/${ch}`).filter((r) => r.method === "GET");
  assert.deepEqual(gets.map((r) => r.status), [200, ...Array(gets.length - 1).fill(304)]);
  assert.ok(gets.length >= 6, `${gets.length} polls`);
  // After the 200 the interval halves (200 → 100), then doubles per 304.
  // Never earlier than the engine says (the interval does grow: a loop or a
  // reset interval breaks that bound); late by at most 10 % + 750 ms (browser
  // timers on a loaded 2-core machine ran up to 284 ms late in CI).
  const expected = [100, 200, 400, 800, 800, 800, 800];
  for (let i = 1; i < gets.length; i++) {
    const wait = gets[i].start - gets[i - 1].end;
    const want = expected[i - 1];
    assert.ok(wait >= want - 5 && wait <= want * 1.1 + 750, `poll ${i}: waited ${wait} ms, engine says ${want}`);
  }
  // The stats are read after the log: one more 304 may have arrived since.
  const stats = await statsOf(page, "p");
  assert.ok(stats.notModified === gets.length - 1 || stats.notModified === gets.length,
    `notModified ${stats.notModified}, ${gets.length - 1} logged`);
  assert.equal(stats.currentIntervalMs, 800);
  const log = await logOf(page, "p");
  assert.deepEqual(log.filter((e) => e.type === "error"), []);
  assert.equal((await messagesOf(page, "p")).length, 1);
  await page.closeAll();
});

// ---------------------------------------------------------------------------
// Heartbeats: nchan_eventsource_ping_interval 1 s with event `heartbeat` and a
// data line (an event without data never reaches a native EventSource
// listener). watchdog.idleTimeoutMs 2500: a native stream that sees the pings
// stays; one whose heartbeatEvent names something else is recycled as stalled
// (the control); fetch-sse counts every byte, pings included.

test("heartbeats: nchan's ping event keeps idle native streams from the 2.5 s watchdog", async () => {
  const page = await newPage();
  const watchdog = { idleTimeoutMs: 2500, firstEventTimeoutMs: 2500 };
  const cases = [["es", "eventsource", "heartbeat"], ["sse", "fetch-sse", "heartbeat"], ["ctl", "eventsource", "not-nchan"]];
  for (const [name, transport, heartbeatEvent] of cases) {
    const ch = `hb-${name}`;
    await subscribe(page, name, urlsOf(nchan.M, ch)[transport],
      nchanOptions(nchan.M, ch, transport, { heartbeatEvent, watchdog }));
  }
  await page.waitForFunction(() => ["es", "sse", "ctl"].every((n) => window.subs[n].sub.state === "open"));
  // One message arms the native watchdog (it runs once an event arrived).
  for (const [name] of cases) await publish(nchan.M, `hb-${name}`, "armed");
  await Promise.all(cases.map(([name]) => waitMessages(page, name, 1)));
  await sleep(4000); // 1.6 × the idle timeout
  for (const name of ["es", "sse"]) {
    const stats = await statsOf(page, name);
    assert.equal(stats.requests, 1, `${name}: one stream the whole time`);
    const log = await logOf(page, name);
    assert.deepEqual(statesOf(log), ["connecting/start", "open/start"], name);
    assert.deepEqual((await messagesOf(page, name)).map((m) => m.data), ["armed"], `${name}: pings are not messages`);
  }
  const ctl = await logOf(page, "ctl");
  const stalled = ctl.find((e) => e.type === "statechange" && e.state === "waiting" && e.reason === "stalled");
  assert.ok(stalled, "the control stream was recycled by the watchdog");
  const armed = ctl.find((e) => e.type === "message");
  const after = stalled.t - armed.t;
  assert.ok(after >= 2500 && after <= 2500 * 1.1 + 100, `stalled ${after} ms after the message`);
  assert.equal(ctl.filter((e) => e.type === "statechange" && e.state === "waiting").length, 1,
    "the reconnected control stream sees no event, so its watchdog does not run again");
  assert.ok(ctl.some((e) => e.type === "error" && e.code === "timeout" && e.fatal === false));
  await page.closeAll();
});

// ---------------------------------------------------------------------------
// Two instances on one Redis: what is published on A reaches subscribers on
// B, every transport. Then B is stopped (nchan answers 410 to the held
// long-poll and ":410: 410 Gone" + end to the streams), 2 messages are
// published on A while B is down, and B is started again: every client
// reconnects under backoff and resumes from its cursor: exactly the missed
// two, no duplicates, no reset.

test("Redis: published on A, received on B; B restarted: reconnect under backoff, resume from the cursor", async () => {
  const transports = ["eventsource", "fetch-sse", "long-poll", "poll"];
  const pages = {};
  const ids = {};
  for (const t of transports) {
    const ch = `redis-${t}`;
    pages[t] = await newPage();
    await subscribe(pages[t], "s", urlsOf(nchan.B, ch)[t], nchanOptions(nchan.B, ch, t, {
      breaker: { failureThreshold: 20, cooldownMs: 1000 },
      interval: { initialMs: 100, minMs: 100, maxMs: 200 },
    }));
  }
  await Promise.all(transports.filter((t) => t !== "long-poll" && t !== "poll")
    .map((t) => pages[t].waitForFunction(() => window.subs.s.sub.state === "open")));
  await sleep(300); // the long-poll is held, the poller has had its first 304
  for (const t of transports) ids[t] = await publishAll(nchan.A, `redis-${t}`, range(1, 3));
  await Promise.all(transports.map((t) => waitMessages(pages[t], "s", 3, 5000)));
  for (const t of transports) {
    assert.deepEqual((await messagesOf(pages[t], "s")).map((m) => m.id), ids[t], `${t} on B got A's messages`);
  }

  const stopAt = Date.now();
  await nchanCmd(["stop", "--name", "B"]);
  const downAt = Date.now();
  for (const t of transports) ids[t].push(...await publishAll(nchan.A, `redis-${t}`, range(4, 5)));
  await nchanCmd(["start", "--name", "B", "--port", String(nchan.B.port), ...nchan.B.args]);
  const upAt = Date.now();
  await Promise.all(transports.map((t) => waitMessages(pages[t], "s", 5, 8000)));
  await sleep(500);

  for (const t of transports) {
    const page = pages[t];
    const got = await messagesOf(page, "s");
    assert.deepEqual(got.map((m) => m.data), range(1, 5), t);
    assert.deepEqual(got.map((m) => m.id), ids[t], t);
    const log = await logOf(page, "s");
    assert.deepEqual(log.filter((e) => e.type === "reset"), [], t);
    const errors = log.filter((e) => e.type === "error");
    assert.ok(errors.length >= 1 && errors.every((e) => e.fatal === false), `${t}: ${JSON.stringify(errors)}`);
    const waits = log.filter((e) => e.type === "statechange" && e.state === "waiting");
    assert.ok(waits.length >= 1, `${t} waited`);
    for (const w of waits) {
      assert.ok(["backoff", "stalled"].includes(w.reason), `${t}: ${w.reason}`);
      assert.ok(w.delayMs >= 100 && w.delayMs <= 1000 + 1000, `${t}: waited ${w.delayMs} ms`);
    }
    if (t === "long-poll") {
      assert.ok(errors.some((e) => e.code === "http-status" && e.status === 410),
        "the held long-poll got nchan's 410 and kept going");
    }
    // Reconnected soon after B was back: within the 1 s backoff cap + slack.
    const back = got[3].wall - upAt;
    assert.ok(back <= 1000 + 600, `${t}: resumed ${back} ms after B was up (stopped ${upAt - stopAt} ms)`);
  }
  for (const t of transports) await pages[t].closeAll();
  // How each resumed after B came back: with message 3's id in nchan's
  // last_event_id parameter, answered (the streams show 499: closed by us).
  for (const t of transports) {
    const path = new URL(urlsOf(nchan.B, `redis-${t}`)[t]).pathname;
    const id3 = ids[t][2];
    const resumed = (r) => r.method === "GET" && r.start >= downAt && r.uri === `${path}?last_event_id=${enc(id3)}`;
    const lines = (await waitLog("B", path, (l) => l.some(resumed))).filter(resumed);
    // Before nchan's Redis link is up, a fresh instance answers 503: those
    // requests were retried under backoff from the same cursor.
    const seen = JSON.stringify(lines.map((r) => [r.status, r.bytes]));
    assert.ok(lines.slice(0, -1).every((r) => r.status === 503), `${t}: resumed from ${id3}: ${seen}`);
    assert.equal(lines.at(-1).status, t === "eventsource" || t === "fetch-sse" ? 499 : 200, `${t}: ${seen}`);
    assert.ok(lines.at(-1).bytes > 0, t);
  }
});

// ---------------------------------------------------------------------------
// Memory store: a restart forgets every message. A native EventSource resumes
// with a cursor nchan no longer knows: nchan answers 200 and `: hi` as if no
// cursor had been sent, then delivers what is published after the restart
// (ids from the new clock). Nothing on the wire says a gap may exist, so
// tidings reports no `reset` (docs/nchan.md).

test("memory store restart: an unknown cursor is answered like no cursor; no reset is detectable", async () => {
  const page = await newPage();
  const ch = "mem-restart";
  const url = urlsOf(nchan.S, ch).eventsource;
  const before = await publishAll(nchan.S, ch, range(1, 3));
  await subscribe(page, "es", url, nchanOptions(nchan.S, ch, "eventsource", {
    breaker: { failureThreshold: 20, cooldownMs: 1000 },
  }));
  await waitMessages(page, "es", 3);
  await nchanCmd(["restart", "--name", "S"]);
  await page.waitForFunction(() => window.subs.es.log.filter((e) => e.type === "statechange"
    && e.state === "open").length >= 2, null, { timeout: 5000 }).catch(async (e) => {
    console.log(JSON.stringify(await logOf(page, "es")), JSON.stringify(accessLog("S", `/sub/es/${ch}`)));
    throw e;
  });
  const afterIds = await publishAll(nchan.S, ch, ["n1", "n2"]);
  await waitMessages(page, "es", 5);
  await sleep(300);
  const got = await messagesOf(page, "es");
  assert.deepEqual(got.map((m) => m.data), ["1", "2", "3", "n1", "n2"]);
  assert.deepEqual(got.map((m) => m.id), [...before, ...afterIds]);
  const log = await logOf(page, "es");
  assert.deepEqual(log.filter((e) => e.type === "reset"), []);
  const waits = log.filter((e) => e.type === "statechange" && e.state === "waiting");
  assert.ok(waits.length >= 1 && waits.every((w) => w.reason === "backoff" && w.delayMs >= 100), JSON.stringify(waits));
  await closeSub(page, "es");
  // The reconnect named the forgotten cursor; nchan answered it with a stream.
  const withCursor = (l) => l.filter((r) => r.uri === `/sub/es/${ch}?last_event_id=${enc(before[2])}`);
  const resumed = withCursor(await waitLog("S", `/sub/es/${ch}`, (l) => withCursor(l).length >= 1));
  assert.deepEqual(resumed.map((r) => r.status), [499], "one stream resumed with the forgotten cursor (closed by us)");
  assert.ok(resumed[0].bytes > 0, "and nchan answered it");
  await page.closeAll();
});

test("no nchan worker crashed during the suite", () => {
  for (const name of ["M", "S", "A", "B"]) {
    const file = join(RUN_ROOT, name, "logs", "error.log");
    const text = existsSync(file) ? readFileSync(file, "utf8") : "";
    assert.equal((text.match(/exited on signal/g) ?? []).length, 0, `${name}: ${text.split("\n").slice(-5).join("\n")}`);
  }
});
