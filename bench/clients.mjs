// The clients under test, as the benchmark page runs them (bundled by
// bench/run.mjs with esbuild; /pkg/index.js stays external: it is the built
// tidings package served as is). Each client is opened the way an app would
// use it, and hands every message's JSON-decoded data to `onData`.
import { fetchEventSource } from "@microsoft/fetch-event-source";
import init, { subscribe } from "/pkg/index.js";
import { pollLoop } from "./poll-loop.mjs";

/** The wall clock in ms, sub-millisecond (same machine clock as the server's). */
export const now = () => performance.timeOrigin + performance.now();

let wasm;
/** Load the wasm once; resolves to the wasm exports (with `memory`). */
export async function ready() {
  wasm ??= await init();
  return wasm;
}
/** Bytes of the wasm module's linear memory. */
export const wasmBytes = () => wasm.memory.buffer.byteLength;

/**
 * Open client `kind` on `url`; returns { close() }.
 * kinds: "tidings:<transport>", "eventsource", "fetch-event-source", "fetch-poll".
 * opts.tidings: extra subscribe options; opts.intervalMs: the poll loop's interval.
 */
export function open(kind, url, onData, opts = {}) {
  if (kind.startsWith("tidings:")) {
    const sub = subscribe(url, { transports: [kind.slice(8)], parse: "json", ...opts.tidings });
    sub.addEventListener("message", (e) => onData(e.data));
    return { close: () => sub.close(), sub };
  }
  if (kind === "eventsource") {
    const es = new EventSource(url);
    es.onmessage = (e) => onData(JSON.parse(e.data));
    return { close: () => es.close() };
  }
  if (kind === "fetch-event-source") {
    const ac = new AbortController();
    fetchEventSource(url, {
      signal: ac.signal,
      // Comments end with a blank line too, which this library dispatches as
      // an empty message.
      onmessage: (e) => { if (e.data) onData(JSON.parse(e.data)); },
    }).catch(() => {});
    return { close: () => ac.abort() };
  }
  if (kind === "fetch-poll") return pollLoop(url, onData, opts.intervalMs ?? 1000);
  throw new Error(`unknown client ${kind}`);
}
