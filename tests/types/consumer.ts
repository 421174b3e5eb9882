// A TypeScript consumer of the package's types: options, listeners, the event map.
// Compiled with `tsc --noEmit --strict`; every @ts-expect-error line must fail.
import init, { subscribe, type Options, type Subscription, type Message, type Stats, type State, type Transport } from "tidings";
import wasmUrl from "tidings/tidings_bg.wasm";

type Price = { symbol: string; value: number };
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const assert = <T extends true>(_: T) => {};

export async function main(signal: AbortSignal) {
  // init: nothing, a URL, a string, a Response, bytes, wasm-bindgen's object form.
  await init();
  await init(new URL(wasmUrl, import.meta.url));
  await init("/pkg/tidings_bg.wasm");
  await init(fetch("/pkg/tidings_bg.wasm"));
  await init(new Uint8Array(8));
  await init({ module_or_path: "/pkg/tidings_bg.wasm" });

  // The app's event map types named events; parse: "json" allows any data type.
  const sub = subscribe<{ price: Price }>("/updates", { events: ["price"], parse: "json", signal });
  sub.addEventListener("price", (e) => {
    assert<Equal<typeof e.data, Price>>(true);
    assert<Equal<typeof e.event, "price">>(true);
    const v: number = e.data.value;
    const id: string = e.id + e.lastEventId;
    const t: Transport = e.transport;
    void v, id, t;
  });
  // Unnamed messages with parse: "json" and no `message` entry: unknown data.
  sub.addEventListener("message", (e) => assert<Equal<typeof e.data, unknown>>(true));
  // @ts-expect-error: "prize" is not in the event map
  sub.addEventListener("prize", () => {});
  // @ts-expect-error: "prize" is not in the event map
  subscribe<{ price: Price }>("/updates", { events: ["prize"], parse: "json" });
  // @ts-expect-error: the data of "price" is a Price, not a string
  sub.addEventListener("price", (e: Message<string, "price">) => e.data.length);
  // @ts-expect-error: without parse: "json" the data is a string, so the map cannot say Price
  subscribe<{ price: Price }>("/updates", { events: ["price"] });
  // @ts-expect-error: lifecycle event names cannot be message names
  subscribe<{ open: string }>("/updates", { events: ["open"] });

  // An interface works as the event map too, and `message` can be typed.
  interface Feed { message: { n: number }; news: string[] }
  const feed = subscribe<Feed>("/feed", { parse: "json", events: ["news"] });
  feed.addEventListener("message", (e) => assert<Equal<typeof e.data, { n: number }>>(true));
  feed.addEventListener("news", (e) => assert<Equal<typeof e.data, string[]>>(true));

  // No map: any event name, string data (text) or unknown (json).
  const plain = subscribe("/sse", { events: ["price", "news"] });
  plain.addEventListener("price", (e) => assert<Equal<typeof e.data, string>>(true));
  plain.addEventListener("message", (e) => assert<Equal<typeof e.data, string>>(true));
  const json = subscribe("/sse", { parse: "json" });
  json.addEventListener("anything", (e) => assert<Equal<typeof e.data, unknown>>(true));
  // A text subscription with a map of strings.
  const text = subscribe<{ news: string }>("/sse", { events: ["news"] });
  text.addEventListener("news", (e) => assert<Equal<typeof e.data, string>>(true));
  const bare = subscribe("/sse");
  // Options typed as a whole (parse not known statically): unknown data.
  const opts: Options = { parse: "json" };
  const dyn = subscribe("/sse", opts);
  dyn.addEventListener("message", (e) => assert<Equal<typeof e.data, unknown>>(true));
  void bare, text;

  // Lifecycle events.
  sub.addEventListener("open", (e) => { const t: Transport = e.transport; void t; });
  sub.addEventListener("error", (e) => {
    assert<Equal<typeof e.fatal, boolean>>(true);
    const s: number | undefined = e.status;
    const r: number | undefined = e.retryInMs;
    const m: string = e.message;
    if (e.code === "http-status" || e.code === "gave-up") void 0;
    // @ts-expect-error: not an error code
    if (e.code === "http-error") void 0;
    void s, r, m;
  });
  sub.addEventListener("statechange", (e) => {
    const st: State = e.state;
    const d: number | undefined = e.delayMs;
    // @ts-expect-error: not a reason
    if (e.reason === "because") void 0;
    void st, d;
  });
  sub.addEventListener("transportchange", (e) => {
    const p: Transport | null = e.previous;
    void p;
  });
  sub.addEventListener("reset", (e) => {
    if (e.reason === "server" || e.reason === "unresumable" || e.reason === "cursor-invalid" || e.reason === "gap") void 0;
    // @ts-expect-error: not a reset reason
    if (e.reason === "must-refetch") void 0;
  });
  // Durable Streams: `uptodate`, reset reason `gone`, state reason `stream-closed`.
  const ds = subscribe("/v1/stream/s", { protocol: "durable-streams", offset: "now" });
  ds.addEventListener("uptodate", (e) => { const o: string = e.lastEventId; void o; });
  ds.addEventListener("reset", (e) => { if (e.reason === "gone") void 0; });
  ds.addEventListener("statechange", (e) => { if (e.reason === "stream-closed") void 0; });
  // @ts-expect-error: not a protocol
  subscribe("/sse", { protocol: "sse" });
  // @ts-expect-error: `uptodate` is the subscription's own event, not a message name
  subscribe<{ uptodate: string }>("/sse", { events: ["uptodate"] });
  // @ts-expect-error: an open event has no data
  sub.addEventListener("open", (e) => e.data);
  const onPrice = (e: Message<Price, "price">) => void e.data.symbol;
  sub.addEventListener("price", onPrice);
  sub.removeEventListener("price", onPrice);
  // EventTarget-style listeners: handleEvent objects, `once`, `null`.
  sub.addEventListener("price", { handleEvent(e) { assert<Equal<typeof e.data, Price>>(true); } }, { once: true });
  sub.addEventListener("error", { handleEvent: (e) => void e.code }, true);
  sub.addEventListener("message", null);
  sub.removeEventListener("price", onPrice, { once: true });
  // @ts-expect-error: a handleEvent object needs the method
  sub.addEventListener("open", { handle() {} });
  // Header values: anything `String()` turns into a header value.
  subscribe("/sse", { headers: { "X-N": 1, "X-B": true } });
  subscribe("/sse", { headers: () => new Headers({ Authorization: "Bearer x" }) });
  // @ts-expect-error: an array of pairs is refused
  subscribe("/sse", { headers: [["Authorization", "Bearer x"]] });
  subscribe(new URL("/sse", "https://example.com/"));
  // @ts-expect-error: a URL is a string or a URL object
  subscribe(5);
  subscribe("/sse", { headers: ({ transport, url }) => ({ "X-T": transport, "X-U": url }) });

  // Read-only state and stats.
  const s: State = sub.state;
  const tr: Transport | "" = sub.transport;
  const last: string = sub.lastEventId;
  const stats: Stats = sub.stats();
  const n: number = stats.requests + stats.bytes + stats.reconnects + stats.notModified
    + stats.duplicatesDropped + stats.currentDelayMs + stats.currentIntervalMs;
  // @ts-expect-error: read-only
  sub.state = "open";
  void s, tr, last, n;
  sub.close();
  sub[Symbol.dispose]();
  const typed: Subscription<{ price: Price }, unknown> = sub;
  void typed;
}

// Every option of the contract, with its type.
export const everything: Options = {
  urls: { eventsource: "/sse", "fetch-sse": "/sse", "long-poll": "/long-poll", poll: "/poll" },
  transports: ["eventsource", "fetch-sse", "long-poll", "poll"],
  events: ["price"],
  parse: "json",
  headers: async ({ status }) => ({ Authorization: status === 401 ? "Bearer new" : "Bearer old" }),
  withCredentials: true,
  signal: new AbortController().signal,
  lastEventId: "42",
  lastEventIdParam: "last_event_id",
  maxMessageBytes: 4_194_304,
  backoff: { strategy: "decorrelated", baseMs: 500, maxMs: 60_000, floorMs: 1000, healthyAfterMs: 10_000, maxAttempts: Infinity },
  maxRetryAfterMs: 300_000,
  breaker: { failureThreshold: 5, cooldownMs: 30_000 },
  interval: { mode: "aimd", initialMs: 5000, minMs: 1000, maxMs: 300_000 },
  heartbeatEvent: "heartbeat",
  watchdog: { idleTimeoutMs: 45_000, firstEventTimeoutMs: 15_000 },
  longPoll: { timeoutMs: 35_000 },
  fallback: { afterFailures: 2, rememberMs: 600_000 },
  seed: 7,
  pauseWhenHidden: { afterMs: 5000 },
  debug: true,
};
export const headersObject: Options = { headers: { Authorization: "Bearer x" }, pauseWhenHidden: false };
// @ts-expect-error: not a transport
export const badTransport: Options = { transports: ["websocket"] };
// @ts-expect-error: durations are numbers of milliseconds
export const badDuration: Options = { backoff: { baseMs: "500ms" } };
// @ts-expect-error: not a jitter strategy
export const badStrategy: Options = { backoff: { strategy: "random" } };
// @ts-expect-error: not an interval mode
export const badMode: Options = { interval: { mode: "linear" } };
// @ts-expect-error: maxMessageBytes is a number of bytes
export const badMax: Options = { maxMessageBytes: "4MB" };
// @ts-expect-error: parse is "text" or "json"
export const badParse: Options = { parse: "xml" };
// A URL object is taken as its href.
subscribe(new URL("https://example.com/sse"));
// @ts-expect-error: unknown option
subscribe("/sse", { reconnect: true });
