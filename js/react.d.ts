// Types of "tidings/react" and "tidings/receive/react": the React hook over the subscribe of
// "tidings" (react.js) or of "tidings/receive" (receive-react.js). Same types either way.
import type { AnyMessage, ErrorCode, EventMap, Options, Status, Subscription, TidingsError } from "./index.js";

/** What `subscribe` threw: a bad URL or option, or a call before `init()` resolved. */
export interface StartError extends Error {
  readonly code: ErrorCode;
}

/**
 * What {@link useSubscription} returns; a new object whenever one of its fields changes.
 * `T`: the data (the latest message's, or the reducer's state).
 */
export interface SubscriptionView<T, M = {}, D = string> {
  /**
   * The latest message's `data` (`initial` until the first one); with `reducer`, the state
   * the reducer returned for the last message (`initial` before it).
   */
  readonly data: T;
  /**
   * The calm status (`connecting`, `connected`, `reconnecting`, `offline`, `closed`), as the
   * subscription's `statuschange` reports it. `closed` without a URL, when `subscribe` threw,
   * and after a fatal error.
   */
  readonly status: Status;
  /**
   * The last `error` event (`fatal: false`: it retries by itself), or what `subscribe` threw
   * (`invalid-url`, `invalid-option`, `not-initialized`). `undefined` again at the next
   * message or `open`.
   */
  readonly error: TidingsError | StartError | undefined;
  /** The subscription (for `reconnect()`, `stats()`), `undefined` while there is none. */
  readonly subscription: Subscription<M, D> | undefined;
}

/** `useSubscription` options with a reducer: `data` is `reducer`'s state, from `initial` on. */
export interface ReducerOptions<S, Msg> {
  /** A pure function of the state and one message (every `message` and `events` name). */
  reducer: (state: S, message: Msg) => S;
  /** The state before the first message (and after a re-subscribe). */
  initial: S;
}

type Url = string | URL | null | undefined;

/**
 * Subscribe while the component is mounted: `subscribe(url, options)` from "tidings" (or from
 * "tidings/receive" through "tidings/receive/react"), so call that entry's `init()` (and await
 * it) before the first render that passes a URL; before that `error` is `not-initialized`.
 *
 * - Mount: one subscription; unmount: `close()` (a microtask later, so React's strict mode,
 *   which mounts, unmounts and mounts again at once, keeps the one connection).
 * - `url` `null` or `undefined`: no subscription (`status` `closed`, `data` `initial`).
 * - Re-subscribes (closing the old one, `data` back to `initial`) when `url` changes or the JSON
 *   of the options other than `reducer` and `initial` does: an options literal written anew on
 *   every render is fine. Functions (`reducer`, a `headers` function, `signal`'s identity) are
 *   not in that JSON: `reducer` is read from the latest render, the others from the render
 *   that subscribed.
 * - Every other option is `subscribe`'s, checked the same way (a bad one is `error`).
 *
 * ```tsx
 * const { data, status, error } = useSubscription<{ price: Price }, Price[]>("/updates", {
 *   events: ["price"], parse: "json",
 *   reducer: (prices, m) => (m.event === "price" ? [...prices, m.data].slice(-50) : prices),
 *   initial: [],
 * });
 * ```
 */
export function useSubscription<M extends EventMap<M> = {}, S = unknown>(
  url: Url,
  options: Options<M> & { parse: "json" } & ReducerOptions<S, AnyMessage<M, unknown>>,
): SubscriptionView<S, M, unknown>;
export function useSubscription<M extends EventMap<M, string> = {}, S = unknown>(
  url: Url,
  options: Options<M> & { parse?: "text" } & ReducerOptions<S, AnyMessage<M, string>>,
): SubscriptionView<S, M, string>;
export function useSubscription<M extends EventMap<M> = {}>(
  url: Url,
  options: Options<M> & { parse: "json"; initial?: AnyMessage<M, unknown>["data"] },
): SubscriptionView<AnyMessage<M, unknown>["data"] | undefined, M, unknown>;
export function useSubscription<M extends EventMap<M, string> = {}>(
  url: Url,
  options?: Options<M> & { parse?: "text"; initial?: string },
): SubscriptionView<string | undefined, M, string>;
