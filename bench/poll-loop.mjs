// A plain fixed-interval fetch poll loop, the way TanStack Query
// (`refetchInterval`) and SWR (`refreshInterval`) poll: fetch, decode, wait
// the interval after the answer (SWR's chain; TanStack's setInterval skips a
// tick while a fetch is in flight), again; no ETag of its own (the browser's
// HTTP cache may still revalidate a repeated URL), no backoff, no pause while
// hidden (TanStack and SWR pause by default while hidden; this loop is their
// `refetchIntervalInBackground: true` / `refreshWhenHidden: true` setting).
// On an event log (a JSON array of {id, data}) it asks for what follows its
// cursor with `?after=<id>`.
export function pollLoop(url, onData, intervalMs) {
  let cursor = "", timer, stopped = false;
  const tick = async () => {
    try {
      const u = new URL(url, location.href);
      if (cursor) u.searchParams.set("after", cursor);
      const res = await fetch(u);
      if (res.ok) {
        const body = await res.json();
        if (Array.isArray(body)) for (const e of body) onData(JSON.parse(e.data)), (cursor = e.id);
        else onData(body);
      }
    } catch {
      // A failed poll waits for the next tick like any other.
    }
    if (!stopped) timer = setTimeout(tick, intervalMs);
  };
  tick();
  return { close() { stopped = true; clearTimeout(timer); } };
}
