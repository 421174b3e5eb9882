// The `long-poll` transport in headless Chromium against the reference
// server, same-origin and cross-origin (the page on a second server): order
// and ids, a server restart, the hold that ends with 204, Retry-After, the
// resume cases BC-07/BC-08 (cursor as `Last-Event-ID` same-origin, as the
// `lastEventId` query parameter cross-origin; validators as If-None-Match /
// If-Modified-Since), JSON bodies and the reset of a cursor too old.
import { test, before, after, beforeEach } from "node:test";
import {
  assert, setup, openPage, subscribe, events, stats, close, waitForEvents, waitForLog, sleep,
  fault, reset, restart, gets, preflights, cursorOf, gapAfter, assertDelay, lateness, brief, fetchStarts,
  bc07Rules, bc07NulFirstRules, bc08Rules, BC07_MESSAGES, BC07_REQUESTS, BC08_MESSAGES, BC08_CURSORS,
  BC08_IF_NONE_MATCH,
} from "./polling.mjs";

let env;
before(async () => { env = await setup(["--hold-ms", "1000"]); });
after(async () => { await env?.close(); });
beforeEach(async () => { await env.closePages(); await reset(env.api); });

const ORIGINS = ["same-origin", "cross-origin"];
const origin = (name) => env.origins.find((o) => o.name === name);

/** Long-poll only, small backoff numbers, exact (unjittered) backoff. */
const OPTS = {
  transports: ["long-poll"],
  seed: 5,
  backoff: { strategy: "none", floorMs: 100, baseMs: 100 },
  longPoll: { timeoutMs: 5000 },
};

/** The request is pending at the server (its answer not sent yet). */
const pending = (e) => e.status === null;

for (const name of ORIGINS) {
  test(`${name}: published messages arrive in order with their ids; each request carries the cursor and validators of the last answer`, async () => {
    const o = origin(name);
    const { api } = env;
    const page = await openPage(env, o.page);
    await subscribe(page, "lp", o.base + "/sse", { ...OPTS, urls: { "long-poll": o.base + "/long-poll" } });
    await waitForLog(api, "/long-poll", (es) => es.some(pending));
    const ids = [];
    for (let i = 1; i <= 6; i++) ids.push((await api.publish(`m${i}`)).id);
    const msgs = await waitForEvents(page, "lp", "message", 6);
    assert.deepEqual(
      msgs.map((m) => [m.id, m.lastEventId, m.event, m.data, m.transport]),
      ids.map((id, i) => [id, id, "message", `m${i + 1}`, "long-poll"]),
    );
    const reqs = await waitForLog(api, "/long-poll", (es) => pending(es.at(-1)) && cursorOf(es.at(-1), o.cross) === ids[5]);
    // The first request knows nothing; every later one resumes from the last
    // id answered, and same-origin sends the answer's ETag (`"<last id>"`)
    // back. Cross-origin the cursor (query) alone says where to resume: no
    // validators, so no preflight (and a server with only
    // `Access-Control-Allow-Origin: *` serves every request).
    assert.equal(cursorOf(reqs[0], o.cross), undefined);
    assert.equal(reqs[0].headers["if-none-match"], undefined);
    let prev = 0;
    for (const r of reqs.slice(1)) {
      const c = cursorOf(r, o.cross);
      assert.ok(ids.includes(c) && Number(c) > prev, `cursor ${c} after ${prev}: ${JSON.stringify(brief(r))}`);
      prev = Number(c);
      if (o.cross) {
        assert.deepEqual([r.headers["if-none-match"], r.headers["if-modified-since"]], [undefined, undefined]);
      } else {
        assert.equal(r.headers["if-none-match"], `"${c}"`);
        assert.match(r.headers["if-modified-since"], /^\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT$/);
      }
    }
    assert.deepEqual(reqs.filter((r) => !pending(r)).map((r) => r.status).filter((s) => s !== 200), []);
    // Every request is a simple request, cross-origin too.
    const pre = await preflights(api, "/long-poll");
    assert.equal(pre.length, 0);
    const s = await stats(page, "lp");
    assert.equal(s.requests, reqs.length);
    assert.equal(s.notModified, 0);
    assert.deepEqual(await events(page, "lp", "error"), []);
    assert.deepEqual((await events(page, "lp", "transportchange")).map((e) => [e.transport, e.previous, e.reason]),
      [["long-poll", null, "start"]]);
    assert.deepEqual(page.errors, []);
    await page.done();
  });

  test(`${name}: a numbered sequence survives a server restart, none lost and none twice`, async () => {
    const o = origin(name);
    const { api } = env;
    const page = await openPage(env, o.page);
    await subscribe(page, "lp", o.base + "/long-poll", OPTS);
    await waitForLog(api, "/long-poll", (es) => es.some(pending));
    const ids = [];
    for (let i = 1; i <= 5; i++) ids.push((await api.publish(`n${i}`)).id);
    await waitForEvents(page, "lp", "message", 5);
    await waitForLog(api, "/long-poll", (es) => pending(es.at(-1)) && cursorOf(es.at(-1), o.cross) === ids[4]);
    const { now_ms: restartAt } = await api.log();
    const r = await restart(api, { ms: 400, mode: "refuse" });
    assert.ok(r.dropped >= 1, JSON.stringify(r));
    await sleep(450);
    for (let i = 6; i <= 10; i++) ids.push((await api.publish(`n${i}`)).id);
    const msgs = await waitForEvents(page, "lp", "message", 10, 8000);
    await sleep(200);
    const all = await events(page, "lp", "message");
    assert.deepEqual(all.map((m) => m.data), ["n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9", "n10"]);
    assert.deepEqual(all.map((m) => m.id), ids);
    assert.deepEqual(msgs.map((m) => Number(m.id) - Number(ids[0])), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // The held request was dropped (status 0); every request from the
    // restart until the one that got n6 resumed from n5's id.
    const reqs = await gets(api, "/long-poll");
    const held = reqs.filter((e) => e.t_ms < restartAt).at(-1);
    assert.equal(held.status, 0, JSON.stringify(brief(held)));
    const got6 = reqs.find((e) => e.t_ms > restartAt && e.status === 200);
    const between = reqs.filter((e) => e.t_ms > restartAt && e.req <= got6.req);
    assert.ok(between.length >= 1);
    for (const e of between) assert.equal(cursorOf(e, o.cross), ids[4], JSON.stringify(brief(e)));
    const errs = await events(page, "lp", "error");
    assert.ok(errs.length >= 1 && errs.every((e) => e.code === "network-or-cors" && !e.fatal), JSON.stringify(errs));
    assert.equal((await stats(page, "lp")).duplicatesDropped, 0);
    await page.done();
  });

  test(`${name}: a hold that ends with 204 is followed by the next request at once (jitter ≤ 100 ms), no backoff growth`, async () => {
    const o = origin(name);
    const { api } = env;
    const page = await openPage(env, o.page);
    // A backoff step of 1 s would show at once if a held 204 counted as a failure.
    await subscribe(page, "lp", o.base + "/long-poll", {
      ...OPTS, urls: { "long-poll": o.base + "/long-poll?hold_ms=300" },
      backoff: { strategy: "none", floorMs: 100, baseMs: 1000 },
    });
    const reqs = await waitForLog(api, "/long-poll", (es) => es.filter((e) => e.status === 204).length >= 4 && es.at(-1).status !== 204, 6000);
    const held = reqs.filter((e) => e.status === 204).slice(0, 4);
    const slack = await lateness(page, "lp");
    for (const [i, r] of held.entries()) {
      assert.ok(r.end_ms - r.t_ms >= 300, `hold ${i}: ${r.end_ms - r.t_ms} ms`);
      const gap = gapAfter(r, reqs[reqs.indexOf(r) + 1]);
      assert.ok(gap >= 0 && gap <= 100 + 60 + slack,
        `after hold ${i}: next request ${gap} ms later (want U[0, 100] + 60 ms + ${slack} ms page timer lateness)`);
    }
    const s = await stats(page, "lp");
    assert.ok(s.currentDelayMs <= 100, JSON.stringify(s));
    assert.equal(s.notModified, 0);
    const rec = await events(page, "lp");
    assert.deepEqual(rec.filter((e) => e.type === "error" || e.state === "waiting"), []);
    assert.deepEqual(rec.filter((e) => e.type === "statechange").map((e) => [e.state, e.reason]), [["connecting", "start"], ["open", "start"]]);
    await close(page, "lp");

    // Contrast: a server that answers 204 at once does not hold; its "no
    // news" is paced by the request START: one request per floor (250 here)
    // plus U[0, 100], a fixed pace: "no news" is no failure, so it never
    // grows with the backoff (350, 450, 650 ms, …).
    await reset(api);
    await subscribe(page, "fast", o.base + "/long-poll", {
      ...OPTS, urls: { "long-poll": o.base + "/long-poll?hold_ms=0" }, seed: 6,
      backoff: { strategy: "none", floorMs: 250, baseMs: 100 },
    });
    const fast = await waitForLog(api, "/long-poll", (es) => es.length >= 6, 6000);
    assert.deepEqual(fast.slice(0, 5).map((e) => e.status), [204, 204, 204, 204, 204]);
    await close(page, "fast");
    const fastSlack = await lateness(page, "fast");
    const starts = await fetchStarts(page, "/long-poll?hold_ms=0");
    for (let k = 0; k < 5; k++) {
      const gap = Math.round(starts[k + 1] - starts[k]);
      assert.ok(gap >= 250 - 2 && gap <= 250 + 100 + 60 + fastSlack,
        `unheld 204 #${k}: start to start ${gap} ms (want 250 + U[0, 100], + 60 ms + ${fastSlack} ms lateness)`);
    }
    await page.done();
  });

  test(`${name}: a server that answers an empty 200 at once (no hold): no message, no error, one request per floor, and news published meanwhile arrives within about one floor`, async () => {
    const o = origin(name);
    const { api } = env;
    const { id: before } = await api.publish("before");
    const page = await openPage(env, o.page);
    const FLOOR = 300;
    const types = ["", "&empty_type=application/json", "&empty_type=text/event-stream", "&empty_type=text/plain"];
    for (const [i, t] of types.entries()) {
      const name = `e${i}`;
      const part = `/long-poll?hold_ms=0&empty=200${t}&sub=${name}`;
      await subscribe(page, name, o.base + "/long-poll", {
        ...OPTS, urls: { "long-poll": o.base + part }, lastEventId: before,
        backoff: { strategy: "none", floorMs: FLOOR, baseMs: 100 },
      });
    }
    // A window of 8 floors for every subscription at once.
    const t0 = await page.evaluate(() => performance.now());
    await sleep(8 * FLOOR);
    // The news can be answered (and re-polled at once) before publish()
    // returns: the pacing window ends when the publication STARTS.
    const publishing = await page.evaluate(() => performance.now());
    const { id } = await api.publish("news");
    const published = await page.evaluate(() => performance.now());
    for (const [i, t] of types.entries()) {
      const name = `e${i}`;
      const [msg] = await waitForEvents(page, name, "message", 1, 4000);
      assert.deepEqual([msg.id, msg.data], [id, "news"], name);
      const slack = await lateness(page, name);
      // At most one floor + jitter after the publication (+ page and loopback slack).
      assert.ok(msg.t - published <= FLOOR + 100 + 150 + slack,
        `${name} (${t || "no content type"}): news arrived ${Math.round(msg.t - published)} ms after publication (+ ${slack} ms lateness)`);
      await close(page, name);
      const starts = (await fetchStarts(page, `&sub=${name}`)).filter((s) => s >= t0 && s < publishing);
      const gaps = starts.slice(1).map((s, k) => Math.round(s - starts[k]));
      // Never faster than one per floor (a loop would send hundreds), never
      // growing like a backoff (which would reach 650, 1050, 1850 ms). The
      // starts are stamped by the page's fetch wrapper, after the engine
      // stamped its own: a late stamp shortens the next gap (a loaded box
      // showed 295 against 298), so 25 ms of slack below the floor.
      assert.ok(gaps.length >= 5 && gaps.every((g) => g >= FLOOR - 25 && g <= FLOOR + 100 + 60 + slack),
        `${name}: start-to-start gaps ${JSON.stringify(gaps)} (want ${FLOOR} + U[0, 100], + 60 ms + ${slack} ms lateness)`);
      assert.ok(starts.length <= Math.ceil((publishing - t0) / FLOOR) + 1,
        `${name}: ${starts.length} requests in ${Math.round(publishing - t0)} ms`);
      const recorded = await events(page, name);
      assert.deepEqual(recorded.filter((e) => e.type === "error" || e.type === "reset" || e.state === "waiting"), [], name);
      assert.deepEqual(recorded.filter((e) => e.type === "message").map((e) => e.data), ["news"], name);
    }
    await page.done();
  });

  test(`${name}: the client gives up a hold after longPoll.timeoutMs: once is no news, twice in a row is a timeout failure`, async () => {
    const o = origin(name);
    const { api } = env;
    const page = await openPage(env, o.page);
    // The server would hold 3 s; the client gives up after 250 ms.
    await subscribe(page, "lp", o.base + "/long-poll?hold_ms=3000", { ...OPTS, longPoll: { timeoutMs: 250 } });
    await waitForEvents(page, "lp", "error", 2, 4000);
    await waitForLog(api, "/long-poll", (es) => es.length >= 4);
    await close(page, "lp");
    const errs = await events(page, "lp", "error");
    // 1st abort: no news, the next request at once. 2nd and 3rd in a row:
    // `timeout`, backoff floor 100 + base 100 · 2^k (k = 0, 1).
    assert.deepEqual(errs.slice(0, 2).map((e) => [e.code, e.retryInMs, e.fatal]), [["timeout", 200, false], ["timeout", 300, false]]);
    // Start to start on the page clock (there is no answer to measure from,
    // and the server sees a request late by however long its connection took).
    const starts = await fetchStarts(page, "/long-poll");
    const slack = await lateness(page, "lp");
    const gap = (i) => Math.round(starts[i + 1] - starts[i]);
    assert.ok(gap(0) >= 250 && gap(0) <= 250 + 100 + 60 + slack, `after the 1st abort: ${gap(0)} ms (+ ${slack} ms lateness)`);
    assertDelay(gap(1), 250 + 200, "after the 2nd abort", { slack });
    assertDelay(gap(2), 250 + 300, "after the 3rd abort", { slack });
    const reqs = await gets(api, "/long-poll");
    assert.ok(reqs.slice(0, 3).every((r) => r.status === null || r.status === 0), JSON.stringify(reqs.map(brief)));
  });

  test(`${name}: 503 with Retry-After on a long-poll waits Retry-After as asked (no backoff term), then resumes with the cursor`, async () => {
    const o = origin(name);
    const { api } = env;
    const { id } = await api.publish("before");
    const page = await openPage(env, o.page);
    await fault(api, { path: "/long-poll", fault: { kind: "status", status: 503, retry_after: 1 } });
    await subscribe(page, "lp", o.base + "/long-poll", { ...OPTS, lastEventId: String(Number(id) - 1) });
    const [msg] = await waitForEvents(page, "lp", "message", 1, 4000);
    assert.deepEqual([msg.id, msg.data], [id, "before"]);
    const [err] = await events(page, "lp", "error");
    // 1000 ms as asked: max(1000, floor 100), no backoff term, and no
    // spread with strategy "none" (adding the backoff on top would make it
    // 1200, past the server's request).
    assert.deepEqual([err.code, err.status, err.retryInMs, err.fatal], ["http-status", 503, 1000, false]);
    const states = await events(page, "lp", "statechange");
    const waiting = states.filter((e) => e.state === "waiting");
    assert.deepEqual(waiting.map((e) => [e.reason, e.delayMs]), [["retry-after", 1000]]);
    // The wait as the page timed it (503 read → next request started) ...
    const next = states.find((e) => e.state === "connecting" && e.t > waiting[0].t);
    assertDelay(next.t - waiting[0].t, 1000, "Retry-After: 1 (page clock)", { below: 20, slack: await lateness(page, "lp") });
    // ... and never earlier than asked as the server saw it.
    const reqs = await gets(api, "/long-poll");
    assert.equal(reqs[0].status, 503);
    assert.ok(gapAfter(reqs[0], reqs[1]) >= 1000 - 2, `server saw the retry ${gapAfter(reqs[0], reqs[1])} ms after the 503`);
    assert.equal(cursorOf(reqs[1], o.cross), String(Number(id) - 1));
    await page.done();
  });

  test(`${name}: a 409 to a resume (Electric's must-refetch) is a reset (cursor-invalid), then everything from the start without a cursor`, async () => {
    const o = origin(name);
    const { api } = env;
    const { id } = await api.publish("r1");
    const page = await openPage(env, o.page);
    await fault(api, { path: "/long-poll", when: "cursor", fault: { kind: "status", status: 409 } });
    await subscribe(page, "lp", o.base + "/long-poll?from_start=1", { ...OPTS, lastEventId: id });
    // From the start: every buffered event from id 1 to the one published
    // above (the `events` filter drops other tests' named events).
    await page.waitForFunction((id) => window.subs.lp.rec.some((e) => e.id === id), id, { timeout: 5000, polling: 20 });
    const msgs = await events(page, "lp", "message");
    assert.equal(msgs[0].id, "1");
    assert.ok(msgs.every((m, i) => i === 0 || Number(m.id) > Number(msgs[i - 1].id)), JSON.stringify(msgs.map((m) => m.id)));
    assert.deepEqual([msgs.at(-1).id, msgs.at(-1).data], [id, "r1"]);
    const n = msgs.length;
    const rec = await events(page, "lp");
    const resets = rec.filter((e) => e.type === "reset");
    assert.deepEqual(resets.map((e) => e.reason), ["cursor-invalid"]);
    assert.ok(rec.indexOf(resets[0]) < rec.indexOf(rec.find((e) => e.type === "message")));
    assert.deepEqual(rec.filter((e) => e.type === "error"), []);
    // Resumes normally from the replay's last id.
    const next = await api.publish("r2");
    const after = await waitForEvents(page, "lp", "message", n + 1, 5000);
    assert.deepEqual([after.at(-1).id, after.at(-1).data], [next.id, "r2"]);
    const reqs = await gets(api, "/long-poll");
    assert.deepEqual(reqs.slice(0, 3).map((r) => [r.status, cursorOf(r, o.cross)]),
      [[409, id], [200, undefined], [200, id]]);
    await page.done();
  });

  test(`${name}: BC-07 on long-poll: NUL ids ignored, ids persist, an id-only block moves the cursor; validators go back`, async () => {
    const o = origin(name);
    const { api } = env;
    await fault(api, bc07Rules("/long-poll"));
    const page = await openPage(env, o.page);
    await subscribe(page, "lp", o.base + "/long-poll", OPTS);
    const msgs = await waitForEvents(page, "lp", "message", 4);
    assert.deepEqual(msgs.map((m) => [m.data, m.id, m.lastEventId]), BC07_MESSAGES);
    const reqs = await waitForLog(api, "/long-poll", (es) => es.length >= 3);
    // Cross-origin, a request with a cursor carries no validators.
    assert.deepEqual(reqs.slice(0, 3).map((r) => [cursorOf(r, o.cross), r.headers["if-none-match"], r.headers["if-modified-since"]]),
      o.cross ? BC07_REQUESTS.map(([c, inm, ims]) => (c ? [c, undefined, undefined] : [c, inm, ims])) : BC07_REQUESTS);
    await page.done();

    // Separate run: an id with a NUL as the very first block sets nothing.
    await reset(api);
    await fault(api, bc07NulFirstRules("/long-poll"));
    const page2 = await openPage(env, o.page);
    await subscribe(page2, "lp", o.base + "/long-poll", OPTS);
    const [hello] = await waitForEvents(page2, "lp", "message", 1);
    assert.deepEqual([hello.data, hello.id, hello.lastEventId], ["hello", "", ""]);
    const reqs2 = await waitForLog(api, "/long-poll", (es) => es.length >= 2);
    assert.equal(cursorOf(reqs2[1], o.cross), undefined);
    assert.equal(reqs2[1].query, null);
    await page2.done();
  });

  test(`${name}: BC-08 on long-poll: seeded, latest, cleared and non-ASCII cursors on every request`, async () => {
    const o = origin(name);
    const { api } = env;
    await fault(api, bc08Rules("/long-poll"));
    const page = await openPage(env, o.page);
    await subscribe(page, "lp", o.base + "/long-poll", { ...OPTS, lastEventId: "s0" });
    const msgs = await waitForEvents(page, "lp", "message", 6);
    assert.deepEqual(msgs.map((m) => [m.data, m.id, m.lastEventId]), BC08_MESSAGES);
    const reqs = await waitForLog(api, "/long-poll", (es) => es.length >= 7);
    assert.deepEqual(reqs.slice(0, 7).map((r) => cursorOf(r, o.cross)), BC08_CURSORS);
    if (o.cross) {
      // Percent-encoded UTF-8 in the query.
      assert.equal(reqs[5].query, "lastEventId=%E2%80%A6");
    }
    // The ETag of the second answer goes back from the third request on,
    // except where the cursor travels in the query (cross-origin, and U+2026
    // same-origin): the cursor alone.
    const inQuery = (c) => c !== undefined && (o.cross || !/^[!-~]*$/.test(c));
    assert.deepEqual(reqs.slice(0, 7).map((r) => r.headers["if-none-match"] ?? null),
      BC08_IF_NONE_MATCH.map((v, i) => (inQuery(BC08_CURSORS[i]) ? null : v)));
    // The first answer ("retry: 200", no event, not held) is "no news",
    // paced by the request start: floor max(100, retry 200) + U[0, 100]
    // after the first request started.
    const starts = await fetchStarts(page, "/long-poll");
    const slack = await lateness(page, "lp");
    const gap = Math.round(starts[1] - starts[0]);
    assert.ok(gap >= 200 - 2 && gap <= 200 + 100 + 60 + slack,
      `after the empty first answer: start to start ${gap} ms (want 200 + U[0, 100], + 60 ms + ${slack} ms lateness)`);
    await page.done();
  });

  test(`${name}: JSON bodies (array and envelope) deliver in order; a cursor too old gets a reset and then the news`, async () => {
    const o = origin(name);
    const { api } = env;
    const page = await openPage(env, o.page);
    await subscribe(page, "arr", o.base + "/long-poll?format=json", OPTS);
    await subscribe(page, "env", o.base + "/long-poll?format=json&envelope=1", { ...OPTS, seed: 9 });
    await waitForLog(api, "/long-poll", (es) => es.filter(pending).length >= 2);
    const ids = [];
    for (let i = 1; i <= 3; i++) ids.push((await api.publish(`{"n":${i}}`, i === 2 ? "price" : undefined)).id);
    for (const sub of ["arr", "env"]) {
      const msgs = await waitForEvents(page, sub, "message", 2);
      await sleep(100);
      // `price` is not in `events`: filtered, but its id still moved the cursor.
      assert.deepEqual((await events(page, sub, "message")).map((m) => [m.id, m.lastEventId, m.data]),
        [[ids[0], ids[0], "{\"n\":1}"], [ids[2], ids[2], "{\"n\":3}"]], sub);
      assert.equal(msgs[0].transport, "long-poll");
    }
    await close(page, "arr");
    await close(page, "env");

    // A cursor newer than anything the server has is a gap it cannot fill.
    await subscribe(page, "old", o.base + "/long-poll?format=json", { ...OPTS, lastEventId: "999999" });
    await waitForEvents(page, "old", "reset", 1);
    await waitForLog(api, "/long-poll", (es) => pending(es.at(-1)) && cursorOf(es.at(-1), o.cross) === ids[2]);
    const { id } = await api.publish("after reset");
    const [m] = await waitForEvents(page, "old", "message", 1);
    assert.deepEqual([m.id, m.data], [id, "after reset"]);
    const rec = await events(page, "old");
    assert.deepEqual(rec.filter((e) => e.type === "reset").map((e) => e.reason), ["server"]);
    await page.done();
  });
}

test("cross-origin against a server with only `Access-Control-Allow-Origin: *` (no preflight support): every request is simple, every message arrives", async () => {
  const { api } = env;
  const http = await import("node:http");
  const seen = [];
  const proxy = http.createServer((req, res) => {
    seen.push({ method: req.method, url: req.url, inm: req.headers["if-none-match"], ims: req.headers["if-modified-since"] });
    if (req.method === "OPTIONS") { res.writeHead(405); res.end(); return; }
    const up = http.request(api.url + req.url, { method: req.method, headers: { ...req.headers, host: new URL(api.url).host, origin: "" } }, (r) => {
      const h = { ...r.headers };
      for (const k of Object.keys(h)) if (k.startsWith("access-control")) delete h[k];
      h["access-control-allow-origin"] = "*";
      h["access-control-expose-headers"] = "ETag, Last-Modified, Retry-After";
      res.writeHead(r.statusCode, h);
      r.pipe(res);
    });
    up.on("error", () => res.destroy());
    req.pipe(up);
  });
  await new Promise((r) => proxy.listen(0, "127.0.0.1", r));
  try {
    const base = `http://localhost:${proxy.address().port}`;
    const page = await openPage(env, api.url);
    await subscribe(page, "lp", `${base}/long-poll`, OPTS);
    await waitForLog(api, "/long-poll", (es) => es.some(pending));
    const ids = [];
    for (let i = 1; i <= 3; i++) {
      ids.push((await api.publish(`m${i}`)).id);
      await waitForEvents(page, "lp", "message", i);
    }
    await waitForLog(api, "/long-poll", (es) => pending(es.at(-1)) && cursorOf(es.at(-1), true) === ids[2]);
    const msgs = await events(page, "lp", "message");
    assert.deepEqual(msgs.map((m) => [m.id, m.data]), ids.map((id, i) => [id, `m${i + 1}`]));
    assert.deepEqual(await events(page, "lp", "error"), []);
    assert.deepEqual(seen.filter((r) => r.method === "OPTIONS"), []);
    assert.ok(seen.length >= 4, JSON.stringify(seen));
    for (const r of seen.slice(1)) assert.deepEqual([r.inm, r.ims], [undefined, undefined], JSON.stringify(r));
    await page.done();
  } finally {
    proxy.closeAllConnections?.();
    await new Promise((r) => proxy.close(r));
  }
});

test("long-poll and poll: `open` comes before the first answer's messages, and a message listener sees state `open`", async () => {
  const { api } = env;
  const first = (await api.publish("a")).id;
  await api.publish("b");
  const page = await openPage(env, api.url);
  const cases = [
    ["lp-sse", "/long-poll", { ...OPTS, lastEventId: first }],
    ["lp-json", "/long-poll?format=json", { ...OPTS, lastEventId: first }],
    ["poll", "/poll", { transports: ["poll"], seed: 5, lastEventId: first, interval: { initialMs: 5000 } }],
  ];
  await page.evaluate((cases) => {
    window.order = {};
    for (const [name, url, options] of cases) {
      const sub = window.tidings.subscribe(url, options);
      const seen = (window.order[name] = { sub, log: [] });
      for (const t of ["open", "message", "statechange"]) {
        sub.addEventListener(t, (e) => seen.log.push(
          t === "message" ? `message ${e.data} (${sub.state})` : t === "statechange" ? `statechange ${e.state}` : "open"));
      }
    }
  }, cases);
  await page.waitForFunction(() => Object.values(window.order).every((s) => s.log.filter((l) => l.startsWith("message")).length >= 1),
    null, { timeout: 5000, polling: 20 });
  const logs = await page.evaluate(() => {
    const out = {};
    for (const [k, s] of Object.entries(window.order)) { out[k] = s.log.slice(); s.sub.close(); }
    return out;
  });
  for (const [name] of cases) {
    assert.deepEqual(logs[name].slice(0, 4), ["statechange connecting", "open", "statechange open", "message b (open)"], `${name}: ${JSON.stringify(logs[name])}`);
  }
  await page.done();
});
