// The React hook of "tidings/react" and "tidings/receive/react" (react.d.ts),
// over the `subscribe` of the entry each imports, so an app's `init()` and the
// hook share one module and one wasm. Not in either entry's bytes.
//
// One subscription per mounted component, held in a ref: the effect's cleanup
// closes it a microtask later unless the effect runs again with the same key
// first. React's strict mode runs mount → cleanup → mount synchronously, so
// its double mount keeps the one subscription (one connection).
import { useEffect, useRef, useState } from "react";

/** The key a subscription is held under: the URL and the options' JSON (functions leave it out). */
const keyOf = (url, { reducer, initial, ...rest }) =>
  url == null ? null : `${url}\n${JSON.stringify(rest)}`;

/** The hook's view of a subscription that never started (no URL) or failed to start. */
const still = (options, error) => ({ data: options.initial, status: "closed", error, subscription: undefined });

/**
 * Start `url` for the component whose latest options `opts` holds; `h.show` is the
 * component's state setter. Every event replaces `h.view` and shows it.
 */
function start(subscribe, url, opts, h) {
  const { reducer, initial, ...options } = opts.current;
  let data = initial;
  const set = (change) => h.show((h.view = { ...h.view, ...change }));
  try {
    h.sub = subscribe(url, options);
  } catch (error) {
    h.view = still(opts.current, error);
    return;
  }
  const sub = h.sub;
  h.view = { data, status: sub.status, error: undefined, subscription: sub };
  const take = (m) => {
    const r = opts.current.reducer;
    data = r ? r(data, m) : m.data;
    set({ data, error: undefined });
  };
  ["message", ...(options.events || [])].forEach((t) => sub.addEventListener(t, take));
  sub.addEventListener("statuschange", (e) => set({ status: e.status }));
  sub.addEventListener("open", () => set({ error: undefined }));
  sub.addEventListener("error", (error) => set({ error, status: sub.status }));
}

/** `useSubscription` over `subscribe` (react.d.ts documents it). */
export function hook(subscribe) {
  return function useSubscription(url, options = {}) {
    const opts = useRef(options);
    opts.current = options;
    const held = useRef(null);
    const key = keyOf(url, options);
    const [view, show] = useState(() => still(options));
    useEffect(() => {
      if (key == null) return show(still(opts.current));
      let h = held.current;
      if (h?.key === key) h.closing = false; // strict mode's second mount: keep it
      else start(subscribe, url, opts, (held.current = h = { key, show, closing: false }));
      show(h.view);
      return () => {
        h.closing = true;
        queueMicrotask(() => {
          if (!h.closing) return;
          h.sub?.close();
          if (held.current === h) held.current = null;
        });
      };
    }, [key]);
    return key == null ? still(options) : view;
  };
}
