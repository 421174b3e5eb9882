// The React hook's test app (tests/e2e/react-hook.test.mjs): one component under <StrictMode>
// showing what useSubscription returns, and `window.app` for the test to drive it. Given the
// entry's init/subscribe/useSubscription, so main.js ("tidings") and receive.js
// ("tidings/receive") share it.
import { StrictMode, createElement as h } from "react";
import { flushSync } from "react-dom";
import { createRoot } from "react-dom/client";

export async function start({ init, subscribe, useSubscription, wasmUrl }) {
  await init(new URL(wasmUrl, import.meta.url));
  // Every subscription made on this page (the hook's included): entry's subscribe adds a
  // `statechange` listener to each, so the prototype's addEventListener sees them all.
  const probe = subscribe("/never", { signal: AbortSignal.abort() });
  const P = Object.getPrototypeOf(probe), add = P.addEventListener, subs = new Set();
  P.addEventListener = function (...args) {
    if (this !== probe) subs.add(this);
    return add.apply(this, args);
  };

  // `tally`: a reducer counting messages and keeping the last one's data; else the latest data.
  const options = (tally) => tally
    ? { parse: "json", reducer: (s, m) => ({ count: s.count + 1, last: m.data }), initial: { count: 0, last: null } }
    : { parse: "json" };
  function View({ url, tally }) {
    const { data, status, error } = useSubscription(url, options(tally));
    return h("output", { id: "view", "data-status": status, "data-error": error?.code ?? "" }, JSON.stringify(data ?? null));
  }

  const root = createRoot(document.getElementById("root"));
  const render = (el) => flushSync(() => root.render(el));
  const tick = () => new Promise((r) => setTimeout(r, 0));
  window.app = {
    subs,
    /** Mount the view under strict mode (React's development build: effects run twice). */
    mount: (url, tally = false) => render(h(StrictMode, null, h(View, { url, tally }))),
    unmount: () => render(null),
    /** `n` × (mount, a task, unmount, a task): the subscription starts before each unmount. */
    async cycle(url, n) {
      for (let i = 0; i < n; i++) {
        window.app.mount(url);
        await tick();
        window.app.unmount();
        await tick();
      }
    },
    /** How many subscriptions are not closed. */
    live: () => [...subs].filter((s) => s.state !== "closed").length,
  };
  document.body.dataset.state = "ready";
}
