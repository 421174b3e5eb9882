// What every throwaway app does once the wasm is loaded: subscribe, show the
// state, read messages with `for await`, stop after two (the `break` closes
// the subscription). The test reads `window.app`. `t` is the entry the app
// imported ("tidings" or "tidings/receive": the same subscribe).
import type { Message } from "tidings";
type Entry = Pick<typeof import("tidings"), "subscribe" | "ErrorCode">;

export type Price = { symbol: string; value: number };
type Seen = { event: string; id: string; data: unknown; transport: string };
declare global {
  interface Window { app: { out: Seen[]; done: boolean; state: () => string; codes: string[] } }
}

export function run({ subscribe, ErrorCode }: Entry): void {
  const server = new URLSearchParams(location.search).get("server") ?? "";
  const sub = subscribe<{ price: Price }>(`${server}/sse`, { events: ["price"], parse: "json" });
  const app: Window["app"] = { out: [], done: false, state: () => sub.state, codes: Object.values(ErrorCode) };
  window.app = app;
  sub.addEventListener("open", (e) => { document.body.dataset.state = `open ${e.transport}`; });
  sub.addEventListener("error", (e) => { document.body.dataset.error = e.code; });
  const onPrice = (e: Message<Price, "price">) => { document.body.dataset.price = e.data.value.toFixed(2); };
  sub.addEventListener("price", onPrice);
  void (async () => {
    for await (const msg of sub) {
      app.out.push({ event: msg.event, id: msg.id, data: msg.data, transport: msg.transport });
      if (app.out.length === 2) break;
    }
    app.done = true;
  })();
}
