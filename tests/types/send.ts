// send(): options, result and error types.
import { send, ErrorCode, type SendError, type SendOptions, type SendResult } from "tidings";

export async function post(signal: AbortSignal): Promise<string> {
  const r: SendResult = await send("/send", JSON.stringify({ a: 1 }), {
    headers: async ({ attempt }) => ({ "Content-Type": "application/json", "X-Attempt": attempt }),
    idempotencyHeader: "X-Idempotency-Key",
    maxAttempts: Infinity,
    timeoutMs: 10_000,
    deadlineMs: 60_000,
    signal,
    ordered: true,
    backoff: { floorMs: 200 },
  });
  const replayed: boolean = r.replayed;
  const n: number = r.attempts + r.status;
  void replayed, n, r.headers.get("etag");
  return r.body;
}
export const bodies = [send("/s", new Blob(["x"])), send(new URL("https://x/s"), new Uint8Array(2)), send("/s")];
export const o: SendOptions = { credentials: true, idempotencyKey: "k-1" };
// @ts-expect-error: credentials is a boolean, as withCredentials
export const bad1: SendOptions = { credentials: "include" };
// @ts-expect-error: a stream cannot be sent twice
send("/s", new ReadableStream());
export function failed(e: SendError) {
  if (e.code === ErrorCode.HttpStatus && e.status === 422) return e.attempts;
  return e.cause;
}
// headers may give a Headers, or nothing; an array of pairs is refused.
export const fromHeaders = send("/s", "x", { headers: () => new Headers({ Authorization: "Bearer t" }) });
export const noHeaders = send("/s", "x", { headers: async () => undefined });
// @ts-expect-error: an array of pairs is not an object of header values
send("/s", "x", { headers: () => [["Authorization", "Bearer t"]] });
