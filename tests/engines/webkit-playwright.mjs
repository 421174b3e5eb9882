// The subset of Playwright's browser / context / page API the e2e suite uses
// (tests/e2e), mapped onto WebKitGTK's WebKitWebDriver (WebDriver classic),
// so `TIDINGS_E2E_ENGINE=webkit` runs the Chromium suite on WebKit
// (`node tests/engines/e2e.mjs webkit`). The mapping:
// - the browser is one Xvfb display; each context is one WebKitWebDriver
//   process with one session (WebDriver classic allows one session per driver
//   process, and a session is one profile: storage, Web Locks and
//   BroadcastChannel are shared within a context and not across, as in
//   Playwright); each page is one window of that session;
// - `evaluate(fn, arg)` and `waitForFunction` run through `execute/async`:
//   the page keeps the evaluate's promise and commands of at most 40 ms wait
//   for it, so a long one does not hold the session (WebDriver classic runs
//   one command at a time, each in the current window: a page switches to its
//   own first);
// - init scripts, `pageerror` and `console` are emulated: after every
//   navigation (goto, reload, goBack) the page is instrumented and the init
//   scripts run, so they run after the document's own scripts (the pages the
//   suite opens are blank JSON documents, where that is the same), and what
//   the page logged or threw reaches the listeners with the answer of the
//   next command, not at once; a console argument is a copy of its own
//   enumerable properties;
// - what WebDriver classic cannot do throws, naming the missing feature:
//   request interception (`route`) and `response` events, network emulation
//   (`setOffline`), CDP sessions, screenshots of an element.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { WEBKIT_DRIVER, MINIBROWSER, freePort, startXvfb, wd, waitReady } from "./drivers.mjs";

// How long one `evaluate` may run (the session's script timeout).
const SCRIPT_TIMEOUT_MS = 120_000;

const lacks = (what) => () => {
  throw new Error(`WebKitGTK over WebDriver classic: ${what}`);
};

/** Installs the error and console recorders once per document (run before each init script). */
function instrument() {
  if (window.__wk) return;
  const wk = (window.__wk = { e: [], c: [] });
  window.__wkFind = ([css, text]) => {
    const all = [...document.querySelectorAll(css ?? "body *")];
    const hits = all.filter((e) => text === null || e.textContent.includes(text));
    if (css !== null) return hits[0] ?? null;
    return hits.find((e) => ![...e.children].some((c) => c.textContent.includes(text))) ?? null;
  };
  window.__wkSet = (e, value) => {
    e.value = value;
    e.dispatchEvent(new Event("input", { bubbles: true }));
    e.dispatchEvent(new Event("change", { bubbles: true }));
  };
  addEventListener("error", (ev) => wk.e.push(ev.error?.message ?? String(ev.message)));
  addEventListener("unhandledrejection", (ev) => wk.e.push(ev.reason?.message ?? String(ev.reason)));
  const copy = (a) => {
    if (!a || typeof a !== "object") return a === undefined ? null : a;
    try { return JSON.parse(JSON.stringify({ ...a })); } catch { return String(a); }
  };
  const text = (a) => (typeof a === "string" ? a : a && typeof a === "object" ? (() => {
    try { return JSON.stringify(a); } catch { return String(a); }
  })() : String(a));
  for (const [m, type] of [["log", "log"], ["debug", "debug"], ["info", "info"], ["warn", "warning"], ["error", "error"]]) {
    const orig = console[m].bind(console);
    console[m] = (...args) => {
      try { wk.c.push({ type, text: args.map(text).join(" "), args: args.map(copy) }); } catch { /* never break the page */ }
      orig(...args);
    };
  }
}

// An evaluate is a promise the page keeps (`window.__wkp[id]`): `START`
// begins it, `AWAIT` waits for it at most `wait` ms and answers its value
// (`u`: it was undefined), its error, `pending` or `gone` (the document
// changed), with what the page logged meanwhile. So one page's long evaluate
// does not hold the session: WebDriver classic runs one command at a time,
// and other pages' (or this page's) commands run between the waits.
const AWAIT = `const drain = () => window.__wk ? { e: window.__wk.e.splice(0), c: window.__wk.c.splice(0) } : { e: [], c: [] };
const p = window.__wkp && window.__wkp[id];
if (!p) done({ gone: true, d: drain() });
else {
  let fired = false;
  const t = setTimeout(() => { fired = true; done({ pending: true, d: drain() }); }, wait);
  p.then((r) => {
    if (fired) return;
    clearTimeout(t);
    delete window.__wkp[id];
    done(Object.assign(r, { d: drain() }));
  });
}`;
const START = `const done = arguments[arguments.length - 1];
const [arg, id, wait] = [arguments[0], arguments[1], arguments[2]];
const fn = FN;
const keep = (v) => JSON.parse(JSON.stringify(v, (k, x) => (x === undefined ? "\\u0000undefined" : x)) ?? "null");
(window.__wkp ||= {})[id] = Promise.resolve().then(() => fn(arg)).then(
  (v) => ({ ok: keep(v), u: v === undefined }),
  (e) => ({ err: String(e && e.message !== undefined ? e.message : e) }));
${AWAIT}`;
const POLL = `const done = arguments[arguments.length - 1];
const [id, wait] = [arguments[0], arguments[1]];
${AWAIT}`;
// How long one command waits for an evaluate before it lets others run, ms.
const WAIT_MS = 40;
let nextId = 0;

/**
 * A value as Playwright hands it over: `undefined` inside objects and arrays
 * kept (WebDriver's JSON would make it null; the page marks it).
 */
function restore(v) {
  if (v === "\u0000undefined") return undefined;
  if (v && typeof v === "object") for (const k of Object.keys(v)) v[k] = restore(v[k]);
  return v;
}

/** An evaluate's function source (a string is an expression, as in Playwright's evaluate). */
const source = (fn) => (typeof fn === "string" ? `() => (${fn})` : fn.toString());
/** An init script's function source (a string is a script's text, as in addInitScript). */
const initSource = (fn) => (typeof fn === "string" ? `() => { ${fn} }` : fn.toString());

/** Launch: one Xvfb display; contexts start their own driver on it. */
export async function launchWebKitBrowser() {
  const xvfb = await startXvfb();
  const contexts = new Set();
  let version = "";
  const browser = {
    async newContext() {
      const c = await newContext(xvfb.display, () => contexts.delete(c));
      contexts.add(c);
      version ||= c.version;
      return c;
    },
    /** A page in a context of its own, closed with it (Playwright's browser.newPage). */
    async newPage() {
      const c = await browser.newContext();
      const p = await c.newPage();
      p.ownsContext = true;
      return p;
    },
    version: () => version,
    contexts: () => [...contexts],
    async close() {
      for (const c of [...contexts]) await c.close();
      if (xvfb.child.exitCode === null && xvfb.child.signalCode === null) {
        xvfb.child.kill("SIGTERM");
        await once(xvfb.child, "exit");
      }
    },
  };
  return browser;
}

/** Start a driver and its session on `display`: the context. */
async function newContext(display, forget) {
  const port = await freePort();
  const driver = spawn(WEBKIT_DRIVER, [`--port=${port}`], {
    stdio: ["ignore", "ignore", "ignore"],
    env: { ...process.env, DISPLAY: display },
  });
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (driver.exitCode === null && driver.signalCode === null) { driver.kill("SIGTERM"); await once(driver, "exit"); }
  };
  let session;
  try {
    await waitReady(base, driver);
    session = await wd(base, "POST", "/session", {
      capabilities: { alwaysMatch: { "webkitgtk:browserOptions": { binary: MINIBROWSER, args: ["--automation"] } } },
    });
  } catch (e) {
    await stop();
    throw e;
  }
  const s = `/session/${session.sessionId}`;
  await wd(base, "POST", `${s}/timeouts`, { script: SCRIPT_TIMEOUT_MS });
  let spare = await wd(base, "GET", `${s}/window`);
  let current = spare;
  let queue = Promise.resolve();
  let closed = false;
  const serial = (f) => {
    const run = queue.then(() => {
      if (closed) throw new Error("the context is closed");
      return f();
    });
    queue = run.catch(() => {});
    return run;
  };
  const call = (method, path, body) => wd(base, method, `${s}${path}`, body);
  const inits = [];
  const pages = new Set();
  const context = {
    version: session.capabilities.browserVersion,
    async newPage() {
      const handle = await serial(async () => {
        if (spare) { const h = spare; spare = null; return h; }
        return (await call("POST", "/window/new", { type: "window" })).handle;
      });
      const p = webkitPage({ context, serial, call, handle, inits, on: (h) => { current = h; }, current: () => current, release });
      pages.add(p);
      return p;
    },
    pages: () => [...pages],
    async addInitScript(fn, arg) { inits.push([initSource(fn), arg]); },
    /** Cookies for the current document's host (WebDriver classic sets them through a page of it). */
    async addCookies(cookies) {
      await serial(async () => {
        for (const { name, value, domain, path = "/" } of cookies) await call("POST", "/cookie", { cookie: { name, value, domain, path } });
      });
    },
    setOffline: lacks("no network emulation (setOffline)"),
    newCDPSession: lacks("no Chrome DevTools Protocol session"),
    route: lacks("no request interception (route)"),
    async close() {
      if (closed) return;
      await queue;
      closed = true;
      forget();
      await wd(base, "DELETE", s).catch(() => {});
      await stop();
    },
  };
  // The last window is kept (blank) for the next page: closing it would end the session.
  async function release(p, handle) {
    pages.delete(p);
    const left = await call("GET", "/window/handles");
    if (left.length > 1) {
      if (current !== handle) await call("POST", "/window", { handle });
      await call("DELETE", "/window");
      current = null;
    } else {
      if (current !== handle) await call("POST", "/window", { handle });
      current = handle;
      await call("POST", "/url", { url: "about:blank" });
      spare = handle;
    }
  }
  return context;
}

/** One window of a context as a Playwright page. */
function webkitPage({ context, serial, call, handle, inits, on, current, release }) {
  const listeners = { pageerror: new Set(), console: new Set() };
  const own = [];
  let closed = false;
  const focus = async () => {
    if (current() !== handle) { await call("POST", "/window", { handle }); on(handle); }
  };
  const deliver = (d) => {
    for (const message of d?.e ?? []) for (const f of listeners.pageerror) f(Object.assign(new Error(message), { message }));
    for (const c of d?.c ?? []) {
      const m = {
        type: () => c.type, text: () => c.text,
        args: () => c.args.map((v) => ({ evaluate: async (f) => f(v), jsonValue: async () => v })),
      };
      for (const f of listeners.console) f(m);
    }
  };
  // `fn`: a function, or the source of an expression or of a function
  // (`src`). Each command switches to this page's window first; the waits
  // are separate commands, so other pages run between them.
  let busy = 0;
  const run = async (fn, arg, src = source(fn)) => {
    busy++;
    try {
      return await runOnce(src, arg);
    } finally {
      busy--;
    }
  };
  // While the test listens for console lines or page errors, an idle page is
  // asked for them every 100 ms (they come only with a command's answer).
  let pump = null;
  const listen = () => {
    pump ??= setInterval(() => {
      if (!closed && busy === 0) run(null, null, "() => null").catch(() => {});
    }, 100);
    pump.unref();
  };
  const runOnce = async (src, arg) => {
    const id = `e${++nextId}`;
    const script = START.replace("FN", () => src);
    let r = await serial(async () => {
      await focus();
      return call("POST", "/execute/async", { script, args: [arg ?? null, id, WAIT_MS] });
    });
    for (;;) {
      deliver(r?.d);
      if (!r?.pending) break;
      r = await serial(async () => {
        await focus();
        return call("POST", "/execute/async", { script: POLL, args: [id, WAIT_MS] });
      });
    }
    if (r?.gone) throw new Error("page.evaluate: the page navigated while it ran");
    if (r && "err" in r) throw new Error(`page.evaluate: ${r.err}`);
    return r?.u ? undefined : restore(r?.ok);
  };
  // After a navigation: the recorders, then the context's and the page's init scripts.
  const prepare = async () => {
    await run(instrument);
    // An init script that throws is the page's uncaught error, as in a browser.
    for (const [src, arg] of [...inits, ...own]) {
      await run(null, arg, src).catch((e) => deliver({ e: [e.message.replace(/^page\.evaluate: /, "")] }));
    }
  };
  const navigate = async (f) => {
    await serial(async () => { await focus(); await f(); });
    await prepare();
  };
  const page = {
    context: () => context,
    isClosed: () => closed,
    on(type, f) {
      if (!listeners[type]) lacks(`no '${type}' events`)();
      listeners[type].add(f);
      listen();
      return page;
    },
    off(type, f) { listeners[type]?.delete(f); return page; },
    async addInitScript(fn, arg) { own.push([initSource(fn), arg]); },
    goto: (url) => navigate(() => call("POST", "/url", { url })),
    reload: () => navigate(() => call("POST", "/refresh", {})),
    goBack: () => navigate(() => call("POST", "/back", {})),
    evaluate: (fn, arg) => run(fn, arg),
    async waitForFunction(fn, arg, { timeout = 30_000, polling } = {}) {
      const until = Date.now() + timeout;
      const every = typeof polling === "number" ? polling : 50;
      for (;;) {
        const v = await page.evaluate(fn, arg);
        if (v) return { jsonValue: async () => v, dispose: async () => {} };
        if (Date.now() > until) throw new Error(`page.waitForFunction: Timeout ${timeout}ms exceeded.`);
        await new Promise((r) => setTimeout(r, every));
      }
    },
    async waitForSelector(selector, { timeout = 30_000 } = {}) {
      await page.waitForFunction((q) => window.__wkFind(q) !== null, hasText(selector), { timeout });
    },
    $eval: (sel, fn, arg) => run(null, [sel, arg], `(a) => (${source(fn)})(document.querySelector(a[0]), a[1])`),
    $$eval: (sel, fn, arg) => run(null, [sel, arg], `(a) => (${source(fn)})([...document.querySelectorAll(a[0])], a[1])`),
    textContent: (sel) => page.evaluate((q) => window.__wkFind(q)?.textContent ?? null, hasText(sel)),
    fill: (sel, value) => page.evaluate(([q, value]) => window.__wkSet(window.__wkFind(q), value), [hasText(sel), value]),
    selectOption: (sel, value) => page.evaluate(([q, value]) => {
      window.__wkSet(window.__wkFind(q), value);
      return [value];
    }, [hasText(sel), value]),
    click: (sel) => page.evaluate((q) => window.__wkFind(q).click(), hasText(sel)),
    locator: lacks("no element screenshots (locator)"),
    route: lacks("no request interception (route)"),
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(pump);
      if (page.ownsContext) return context.close();
      await serial(() => release(page, handle));
    },
  };
  return page;
}

/**
 * Playwright's selectors as the suite writes them: `css:has-text("t")` →
 * [css, t]; `text=t` → [null, t] (the innermost element holding t); a plain
 * selector → [selector, null]. `__wkFind` (instrument) reads the pair.
 */
function hasText(selector) {
  const text = selector.match(/^text=(.*)$/);
  if (text) return [null, text[1]];
  const m = selector.match(/^(.*):has-text\("(.*)"\)$/);
  return m ? [m[1], m[2]] : [selector, null];
}
