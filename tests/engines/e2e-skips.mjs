// The e2e tests (tests/e2e) that cannot run on an engine other than
// Chromium, by exact test title, each with the reason `make test-engines`
// prints (per engine: firefox, webkit). Only driver limits and features the engine does not have belong
// here; a test that fails for a difference tidings can work around is a bug
// to fix, not a skip. A test inside a `describe` is not left out by its
// title (node runs a matching suite whole): such a test reads its reason
// here itself (`{ skip: SKIPS[ENGINE]?.[title] }`).
const CDP = "reads the page through a Chrome DevTools Protocol session (Playwright has CDP for Chromium only)";
const GC = "needs a forced garbage collection (Chromium's --js-flags=--expose-gc); Firefox frees this memory only when its own GC runs";
const BFCACHE = "Firefox never keeps a page with an open connection in the back-forward cache (docs/engines.md): there is no restore to test";
const CONSOLE = "reads console lines through Playwright over WebDriver BiDi: their argument objects read as undefined and lines of one test arrive in the next";
const LOCKS = "patches Web Locks in an init script, and over WebDriver BiDi that script runs where Firefox has no `LockManager` (ReferenceError)";
const RTT = "sets or reads navigator.connection, which only Chromium has";

// WebKitGTK through WebKitWebDriver (WebDriver classic, webkit-playwright.mjs).
const WD_CDP = "reads the page through a Chrome DevTools Protocol session, which WebKitGTK's WebDriver classic does not have";
const WD_GC = "needs a forced garbage collection (Chromium's --js-flags=--expose-gc), which WebKitGTK's driver cannot ask for";
const WD_OFFLINE = "takes the browser offline (Playwright's setOffline): WebDriver classic has no network emulation";
const WD_RESPONSES = "reads the page's responses (Playwright's `response` events): WebDriver classic shows none, and WebKit has no `responseStatus` in resource timing";
const WD_SCREENSHOT = "takes an element screenshot through a Playwright locator, which the WebDriver classic mapping does not provide";
const WD_RTT = "sets or reads navigator.connection, which only Chromium has";
const PACKAGE_APPS = [
  "esbuild app, wasm loaded with --loader:.wasm=file",
  "esbuild app, wasm copied next to the bundle, init() with no argument",
  "receive-only entry: esbuild app gets the receive wasm, not the full one",
  "receive-only entry: Vite build, init() with no argument",
  "receive-only entry as a drop-in <script type=module>: subscribe works, ack and the parts it lacks are refused, no upstream calls",
  "Vite build (vite build): init() with no argument",
  "Vite dev server, cross-origin to the reference server",
];
const REACT = [
  "strict mode's double mount makes one subscription and one connection; a published message renders",
  "strict mode mount/unmount ×100 leaves no open connection, no live subscription, no window/document listener",
  "a re-render with a new options literal keeps the subscription; a new URL re-subscribes and closes the old one",
  "tidings/receive/react: a reducer's state renders; a bad URL is the error, status closed",
];

export const SKIPS = {
  firefox: {
    "a headers promise that never settles: close() leaves nothing of it behind (the promise is collected), nothing sent": CDP,
    "headers function whose promise never settles: each attempt that timed out is abandoned, so the send rejects gave-up after maxAttempts and then holds nothing of the app's (the function is collected), nothing sent": CDP,
    "strict mode mount/unmount ×100 leaves no open connection, no live subscription, no window/document listener": CDP,
    "a subscription the app does not hold keeps delivering after garbage collection": GC,
    "close() frees the connection at once: wasm memory flat over 3,000 subscribe/close rounds; getters still read": GC,
    "BC-20 back-forward cache (real): the leader page leaving hands over at once (pagehide) with the cursor; restored, it follows again (no request) and hears `reset` for what it missed": BFCACHE,
    "back-forward cache (real): the page stays eligible, pageshow.persisted, exactly one reconnect with the cursor": BFCACHE,
    "pagehide with persisted (back-forward cache): the keepalive copy is applied; back on the page the send goes on and settles with the server's replay": BFCACHE,
    "debug: true logs each decision with its reason: open, 503 error with retryInMs, waiting (retry-after), wait, open again, deliver": CONSOLE,
    "without debug nothing is logged": CONSOLE,
    "a parse error (parse: \"json\", data not JSON) carries the dropped message's id, event and lastEventId, and debug logs it": CONSOLE,
    "a listener for a type not in events: one console.warn per subscription and type saying how to fix it, one warn line with debug; the server's events of that type: one ignore line per type": CONSOLE,
    "1,000 appends while responses are dropped after applying and the server restarts: each exactly once, in order":
      "asserts an empty console, and Firefox writes \"CORS request did not succeed\" there for every response the server drops",
    "BC-20 navigator.locks.request throws (a sandboxed frame, an opaque origin): crossTab runs an ordinary per-tab connection": LOCKS,
    "BC-20 navigator.locks.request rejects (a sandboxed frame, an opaque origin): crossTab runs an ordinary per-tab connection": LOCKS,
    "a token in the URL and a header value are in no storage entry, channel name, channel post or lock name (downgraded, persisted, crossTab)": LOCKS,
    "same-origin: the interval follows the measured request times, not the browser's rtt 100 on loopback (×1, was ×3)": RTT,
    "same-origin, rtt 100 (the ×3 tier): a fixed interval and a server's X-Poll-Interval are not stretched": RTT,
    "rule 1: a quiet server whose first ping comes 16 s after the head is one stream (no buffered-stream, no error)":
      "waits for `open` at the head, and Firefox's streaming fetch gives the page no fact before the first body byte (docs/engines.md)",
  },
  webkit: {
    "a headers promise that never settles: close() leaves nothing of it behind (the promise is collected), nothing sent": WD_CDP,
    "headers function whose promise never settles: each attempt that timed out is abandoned, so the send rejects gave-up after maxAttempts and then holds nothing of the app's (the function is collected), nothing sent": WD_CDP,
    "a subscription the app does not hold keeps delivering after garbage collection": WD_GC,
    "offline (real, context.setOffline) → no attempts; online → one prompt attempt": WD_OFFLINE,
    "offline: no attempt until online, then one": WD_OFFLINE,
    "offline for longer than deadlineMs: rejects timeout with attempts 0 at the deadline, nothing sent": WD_OFFLINE,
    "503 with an HTTP-date Retry-After and no Date: measured against the client clock": WD_RESPONSES,
    ...Object.fromEntries([...PACKAGE_APPS, ...REACT].map((t) => [t, WD_RESPONSES])),
    "close(), [Symbol.dispose] and an aborted signal end a pending next() with done":
      "calls s[Symbol.dispose](), and WebKitGTK 2.50 has no Symbol.dispose (explicit resource management): tidings puts close() under Symbol.for(\"Symbol.dispose\") there, as polyfills do",
    "the demo's timeline draws a server restart and a hidden period: bars, gaps with reasons, a shaded period": WD_SCREENSHOT,
    "same-origin: the interval follows the measured request times, not the browser's rtt 100 on loopback (×1, was ×3)": WD_RTT,
    "same-origin, rtt 100 (the ×3 tier): a fixed interval and a server's X-Poll-Interval are not stretched": WD_RTT,
  },
};
