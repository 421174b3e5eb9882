/// <reference lib="es2018.asynciterable" />
/// <reference lib="esnext.disposable" />
/**
 * tidings: realtime server updates for the browser. One call, `subscribe(url, options)`,
 * gives a stream of server messages over native `EventSource`, SSE over streaming `fetch`,
 * long polling or polling, kept healthy by one engine (backoff with jitter, `Retry-After`,
 * resume from the last event id, quiet while the page is hidden).
 *
 * ```ts
 * import init, { subscribe } from "tidings";
 * await init();
 * type Price = { symbol: string; value: number };
 * const sub = subscribe<{ price: Price }>("/updates", { parse: "json", events: ["price"] });
 * sub.addEventListener("price", (e) => console.log(e.id, e.data.value));
 * for await (const msg of sub) if (msg.event === "price") console.log(msg.data.symbol);
 * sub.close();
 * ```
 * @packageDocumentation
 */

/** What `init()` loads the wasm from (see {@link init}). */
export type InitInput = RequestInfo | URL | Response | BufferSource | WebAssembly.Module;

/**
 * Load and instantiate the wasm; call (and await) once before {@link subscribe}. Idempotent:
 * later calls return the first call's promise.
 *
 * - No argument: fetches `tidings_bg.wasm` next to the package's `tidings.js`
 *   (`new URL("tidings_bg.wasm", import.meta.url)`). Works with no bundler
 *   (`<script type=module>`), with Vite, and with any bundler that rewrites `new URL(…, import.meta.url)`.
 * - A URL or string, `Request`, `Response`, bytes, a compiled `WebAssembly.Module`, a promise of
 *   one of those, or wasm-bindgen's own `{ module_or_path }` object.
 *
 * esbuild leaves `new URL("tidings_bg.wasm", import.meta.url)` as it is (relative to the bundle),
 * so either copy `node_modules/tidings/tidings_bg.wasm` next to the ESM bundle and call
 * `init()`, or let esbuild copy it and pass its URL:
 * ```ts
 * // esbuild app.ts --bundle --format=esm --outdir=dist --loader:.wasm=file
 * import wasmUrl from "tidings/tidings_bg.wasm";
 * await init(new URL(wasmUrl, import.meta.url));
 * ```
 */
export default function init(
  input?: InitInput | Promise<InitInput> | { module_or_path: InitInput | Promise<InitInput> },
): Promise<unknown>;

/** A transport: native `EventSource`, SSE over streaming `fetch`, long polling, or polling. */
export type Transport = "eventsource" | "fetch-sse" | "long-poll" | "poll";

/** Subscription states. `waiting`: a delay is scheduled; `paused`: hidden, offline or frozen. */
export type State = "connecting" | "open" | "waiting" | "paused" | "closed";

/** Why a state or transport changed (one vocabulary for both). */
export type Reason =
  | "start" | "capability" | "backoff" | "retry-after" | "rate-limit" | "server-hint"
  | "breaker-open" | "breaker-probe" | "buffered-stream" | "stalled" | "open-failed"
  | "failback-probe" | "hidden" | "visible" | "offline" | "online" | "frozen" | "resumed"
  | "permanent-error" | "closed-by-user" | "aborted" | "resume-ignored" | "stream-closed"
  | "headers-failed" | "gave-up" | "reconnect" | "resume-by-header" | "up-to-date";

/**
 * The calm connection status, for a "connection lost" banner (`status`, `statuschange`): `connecting`
 * until first established; `connected` as soon as a transport opens or a request is answered;
 * `reconnecting` (or `offline` when the browser is offline) only once it has been down for
 * `lostAfterMs` without interruption, so short blips show nothing; `closed` when it stopped. A
 * hidden or frozen page holds the status.
 */
export type Status = "connecting" | "connected" | "reconnecting" | "offline" | "closed";

/**
 * What `reconnect()` did, and why: `"now"` (the next attempt started), `"breaker-probe"` (the
 * open circuit breaker's one probe started), `"too-soon"` (within `backoff.floorMs` of the last
 * honoured call: the next attempt goes at the floor's end), `"retry-after"` / `"rate-limit"` (the
 * server's requested wait stays), `"already-open"`, `"connecting"`, `"hidden"` (paused for a hidden
 * or frozen page), `"offline"` (`navigator.onLine` says offline), `"closed"` (stopped for good, or
 * the subscription closed), `"leader"` (a `crossTab` follower asked the leader tab).
 */
export type ReconnectAnswer = "now" | "breaker-probe" | "too-soon" | "retry-after" | "rate-limit"
  | "already-open" | "connecting" | "hidden" | "offline" | "closed" | "leader";

/** The error codes, as a frozen object: `if (e.code === ErrorCode.Auth) …`. */
export declare const ErrorCode: Readonly<{
  /**
   * The URL, or a `urls` entry, does not parse as a URL against the page, is not `http:`/`https:`,
   * or has no host (thrown by `subscribe`).
   */
  InvalidUrl: "invalid-url";
  /**
   * An option that cannot be honoured (thrown by `subscribe`, before anything starts): a getter that
   * threw (`cause`), a `signal` that is not an `AbortSignal`, `headers` that are neither an object
   * nor a function or hold an invalid header, `events` that are not an array of non-empty strings
   * or name one of the subscription's own event types, a `heartbeatEvent` equal to `"message"`, to
   * one of those or to a name in `events`, a `urls` entry that is not a string, a value of the wrong
   * type, a mode or transport name that does not exist, a negative or non-finite duration or count,
   * a `lastEventId` holding U+0000, CR or LF. `message`: `invalid option: <name>: expected <what>,
   * got <value> (<type>)` (`got "500" (string)`). `undefined`
   * and `null` mean the default; unknown keys are ignored.
   */
  InvalidOption: "invalid-option";
  /** A status the transport cannot use (fatal for permanent 4xx), or a 5xx (retried). */
  HttpStatus: "http-status";
  /** An event stream answered 204 No Content: the server said stop (fatal). */
  NoContent: "no-content";
  /** The response's `Content-Type` does not fit the transport (fatal). */
  BadContentType: "bad-content-type";
  /** `fetch` failed while online: the network, or CORS (retried). */
  NetworkOrCors: "network-or-cors";
  /** A held request or a silent stream timed out (retried). */
  Timeout: "timeout";
  /** A message or response exceeded the size limit. */
  TooLarge: "too-large";
  /** `parse: "json"` and a message's data is not JSON (the message is dropped). */
  Parse: "parse";
  /**
   * 401 or 403 (fatal): at once without a `headers` or `url` function; with one, after it was asked
   * again once and the retried request was refused too.
   */
  Auth: "auth";
  /** `backoff.maxAttempts` reached, or no usable transport (fatal). */
  GaveUp: "gave-up";
  /**
   * The server ignored the cursor in the `lastEventIdParam` query and replayed events already
   * delivered (it resumes only from the `Last-Event-ID` header). Never fatal, once per
   * subscription. With `retryInMs`, the subscription moves to a transport that sends the header
   * (`fetch-sse` same-origin; a `transportchange` with reason `resume-ignored`); without, none is
   * usable and it stays (replays are dropped as duplicates).
   */
  ResumeIgnored: "resume-ignored";
  /**
   * The `headers` function threw or its promise rejected, or it returned an invalid header name or
   * value; or the `url` function threw, rejected, or returned what is not an http(s) URL (`cause`:
   * what was thrown, or the `invalid-url` error). Nothing was sent; retried with backoff (counted toward
   * `backoff.maxAttempts`), and not counted against the transport (no fallback, no circuit breaker).
   * The `statechange` to `waiting` after it has reason `headers-failed`.
   */
  Headers: "headers";
  /** `subscribe` was called before the promise of {@link init} resolved (thrown by `subscribe`). */
  NotInitialized: "not-initialized";
  /** {@link appender}: 403, another producer holds a newer epoch (`epoch`: the server's). Final unless `autoClaim`. */
  StaleEpoch: "stale-epoch";
  /** {@link appender}: 409 with `Producer-Expected-Seq` (`expectedSeq`): the server lost or skipped this producer's state. Final. */
  SequenceGap: "sequence-gap";
  /** {@link appender} and {@link send}: 409 with `Stream-Closed: true` (an appender: or an append after `close()`). Final. */
  StreamClosed: "stream-closed";
  /** {@link appender}: another 409 (the content type does not match the stream's); {@link send}: a 409 without `Retry-After`. Final. */
  Conflict: "conflict";
}>;
/** One of the {@link ErrorCode} values. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** A server message: `message`, or a named event listed in `options.events`. */
export interface Message<T = string, E extends string = string> {
  /** The event type: `"message"` or the SSE `event:` name. */
  readonly type: E;
  /** The event's own id, or `""` when its block set none. */
  readonly id: string;
  /** The cursor after this message (what a reconnect resumes from). */
  readonly lastEventId: string;
  /** Same as `type`. */
  readonly event: E;
  /**
   * The data: the string as sent, or with `parse: "json"` the parsed value. With
   * `protocol: "durable-streams"`, a stream whose content type is neither `application/json` nor
   * `text/*` delivers a `Uint8Array` whatever `parse` says.
   */
  readonly data: T;
  /** The transport that delivered it. */
  readonly transport: Transport;
}

/** `open`: a transport is open (a stream opened, or a request transport's first answer). */
export interface OpenEvent {
  readonly type: "open";
  readonly transport: Transport;
}

/** `error`: an `Error` with a stable `code`. With `fatal: false` the subscription retries by itself. */
export interface TidingsError extends Error {
  readonly type: "error";
  readonly code: ErrorCode;
  /** The HTTP status, when a response caused it. */
  readonly status?: number;
  /** When the next attempt starts, in milliseconds (retried errors only). */
  readonly retryInMs?: number;
  /** `true` when the subscription stopped (its state is then `closed`). */
  readonly fatal: boolean;
  /** With code `headers`: what the `headers` or `url` function threw or rejected with. */
  readonly cause?: unknown;
  /** With codes `parse` and `too-large`: the dropped message's own id (`""` when it had none). */
  readonly id?: string;
  /** With code `parse`: the dropped message's event type. */
  readonly event?: string;
  /** With code `parse`: the cursor after the dropped message. */
  readonly lastEventId?: string;
}

/** `statechange`. */
export interface StateChangeEvent {
  readonly type: "statechange";
  readonly state: State;
  readonly reason: Reason;
  /** With `state: "waiting"`: the delay before the next attempt, in milliseconds. */
  readonly delayMs?: number;
}

/** `statuschange`: the calm status changed, with the reason of the state behind it. */
export interface StatusChangeEvent {
  readonly type: "statuschange";
  readonly status: Status;
  readonly reason: Reason;
}

/** `transportchange`: the engine switched transports (fallback, failback probe, capability). */
export interface TransportChangeEvent {
  readonly type: "transportchange";
  readonly transport: Transport;
  /** `null` for the first transport. */
  readonly previous: Transport | null;
  readonly reason: Reason;
}

/**
 * `reset`: the server cannot fill the gap since the cursor (`"server"`: it sent an event of type
 * `reset`), a stream without ids is reconnecting and messages may be lost (`"unresumable"`), or
 * the server answered `409 Conflict` to a request that resumed from a cursor (`"cursor-invalid"`,
 * Electric's "must-refetch"): the cursor, the duplicate memory and the validators were forgotten
 * and one request without a cursor follows at once. With `protocol: "durable-streams"`, `"gone"`:
 * the server answered `410 Gone` (offset before its retention, or the stream soft-deleted); the
 * subscription starts over once from the configured start (`"now"` if `offset` was `"now"`, else
 * `"-1"`), and a second 410 before any answer is a fatal `http-status` error. `"gap"`: a resume
 * was not honoured: the server numbers its events with consecutive integer ids and the first new
 * id after the cursor skipped some (it went on from "now"); raised after that event, nothing is
 * forgotten. The app should refetch its state.
 */
export interface ResetEvent {
  readonly type: "reset";
  readonly reason: "server" | "unresumable" | "cursor-invalid" | "gone" | "gap";
}

/**
 * `uptodate` (`protocol: "durable-streams"`): the subscription has caught up with everything the
 * server had (`Stream-Up-To-Date: true` after an answer without it). Not the end of the stream:
 * that is `statechange` to `closed` with reason `stream-closed`.
 */
export interface UpToDateEvent {
  readonly type: "uptodate";
  /** The offset reached. */
  readonly lastEventId: string;
}

/** The events that are not messages. Their names cannot be used as message event names. */
export interface LifecycleEventMap {
  open: OpenEvent;
  error: TidingsError;
  statechange: StateChangeEvent;
  transportchange: TransportChangeEvent;
  reset: ResetEvent;
  uptodate: UpToDateEvent;
  statuschange: StatusChangeEvent;
}

/**
 * One entry of the `debug` log, as `[what, details]` (the arguments of a `debug` function, and of
 * the `console.debug` line after its `"[tidings]"` tag). `attempt` numbers the requests of one
 * connection from 1. A request ends at its `end`, its `abort`, or an `error` with `retryInMs` or
 * `fatal`; its outcome: a `head` status of 304, `deliver` entries (delivered), none (an empty
 * hold or poll), `error` or `abort`.
 */
export type DebugEntry =
  /** A request, as the engine asked for it (before the app's own `headers` are added). */
  | ["open", { attempt: number; transport: Transport; url: string; headers: Record<string, string> }]
  /** A fetch response's status, as its head arrives. */
  | ["head", { attempt: number; status: number }]
  /** A fetch response's body is all in (a stream ended; a body read whole logs it before its `deliver`s). */
  | ["end", { attempt: number }]
  /** The engine cancelled the request. */
  | ["abort", { attempt: number }]
  /** A message handed to the listeners (no data). */
  | ["deliver", { id: string; event: string; lastEventId: string }]
  /** A server event dropped: named like a lifecycle event, or (`reason`) of a type not in `events`. */
  | ["ignore", { id: string; event: string; reason?: "not-in-events" }]
  /** The one timer armed: the next decision in `delayMs` milliseconds. */
  | ["wait", { delayMs: number }]
  /** A decision with no event of its own: `silent-stream-kept`, `cursor-in-query-only`, `reconnect: <answer>`. */
  | ["note", { note: string }]
  /** A listener added for a type this subscription never dispatches. */
  | ["warn", { event: string; message: string }]
  /** A storage that is missing, full or refused (`persist`): what its `console` line says. */
  | ["persist", string]
  | ["statechange", StateChangeEvent]
  | ["statuschange", StatusChangeEvent]
  | ["transportchange", TransportChangeEvent]
  | ["error", TidingsError]
  | ["reset", ResetEvent]
  | ["uptodate", UpToDateEvent];

/** The `debug` option as a function: each {@link DebugEntry} as `(what, details)`. */
export type DebugFn = (...entry: DebugEntry) => void;

/** Counters from `stats()`. */
export interface Stats {
  /** Requests started (every transport). */
  requests: number;
  /** Response body bytes seen. */
  bytes: number;
  /** Requests after the first one. */
  reconnects: number;
  /** Conditional requests answered "nothing new" (304, or 200 with the same `ETag`). */
  notModified: number;
  /**
   * Messages dropped as repeats: an id among the last 256 delivered, with the same event type and
   * data (an id reissued with new data, e.g. after a server restart, is a new message). Also counts
   * repeats of events never delivered (left out by `events`, reserved names, the heartbeat).
   */
  duplicatesDropped: number;
  /** The delay before the next attempt as last scheduled, in milliseconds (0: none). */
  currentDelayMs: number;
  /** The current poll interval, in milliseconds. */
  currentIntervalMs: number;
}

/**
 * The constraint on the app's event map `M`: message event name → data type, e.g.
 * `{ price: Price }` (a type literal or an interface). `message` may be listed to type unnamed
 * messages; lifecycle names (`open`, `error`, …) may not. `T`: what data may be (`string` when
 * not parsing JSON).
 */
export type EventMap<M, T = unknown> = {
  [K in keyof M]: K extends keyof LifecycleEventMap ? never : K extends string ? T : never;
};

/** Named events allowed in `options.events`: the map's keys, or any string when no map is given. */
export type EventName<M> = [Exclude<keyof M, "message">] extends [never]
  ? string
  : Exclude<keyof M & string, "message">;

type DataOf<M, D, K> = K extends keyof M ? M[K] : D;
/** The message a listener for `K` receives (`D`: data type of events not in the map). */
export type MessageOf<M, D, K extends string> = Message<DataOf<M, D, K>, K>;
/** Every message the subscription delivers (what the async iterator yields). */
export type AnyMessage<M, D> =
  | MessageOf<M, D, "message">
  | { [K in EventName<M>]: MessageOf<M, D, K> }[EventName<M>];

/**
 * `headers` as a function: runs before every request. `status: 401` (or 403) when the previous
 * request was refused (refresh the token); the request is then retried once, at once. With
 * `crossTab` it is also asked once at `subscribe` with `{ attempt: 0, url }` and no other field, to
 * compare credentials between tabs: answer it as for a first request.
 */
export interface HeadersContext {
  /** The transport the request is for. */
  transport: Transport;
  /** The request URL (absolute; what the `url` function returned, with one). */
  url: string;
  /** 401 or 403 on the one retry after a refusal; absent otherwise. */
  status?: number;
}

/**
 * `url` as a function: runs before every attempt, on every transport (native `EventSource`
 * included, which can carry a token only in its URL). With `crossTab` it is also asked once at
 * `subscribe` with `{ attempt: 0, url }` and no other field, to compare credentials between tabs:
 * answer it as for the first attempt.
 */
export interface UrlContext {
  /** The attempt number: 1, 2, … */
  attempt: number;
  /**
   * The status of the previous attempt's answer, `null` when it had none (the first attempt, a
   * network error, a native stream). 401 or 403: the token was refused; this is the one retry
   * asked at once, and a second refusal in a row is a fatal `auth` error.
   */
  status: number | null;
  /** The cursor (last event id), `null` when there is none. */
  cursor: string | null;
  /** The transport the attempt is for. */
  transport: Transport;
  /**
   * The URL the attempt would request (absolute, the cursor query parameter already in it): add
   * the token to it and keep its origin and path.
   */
  url: string;
}

/**
 * Header values as `fetch`'s `Headers` takes them: an object of values, converted with
 * `String(value)` (a Symbol, or an invalid name or value, is an error), or a `Headers`. An array
 * of pairs is refused (`invalid-option` for a static `headers`, a `headers` error from a function).
 */
export type HeaderValues = Record<string, string | number | boolean> | Headers;

/**
 * A listener: a function, or an object with a `handleEvent` method (called with `this` the
 * object), as on `EventTarget`.
 */
export type Listener<E> = ((event: E) => void) | { handleEvent(event: E): void };

/** `addEventListener` options: `once` removes the listener before its first call. */
export type ListenerOptions = boolean | { once?: boolean };

/** `subscribe` options. Every duration is in milliseconds and says so in its name. */
export interface Options<M = {}> {
  /**
   * A different endpoint per transport (servers such as nchan serve each on its own location),
   * each checked like the subscribe URL (`invalid-url`). Default: each is the subscribe URL.
   */
  urls?: { eventsource?: string; "fetch-sse"?: string; "long-poll"?: string; poll?: string };
  /**
   * Transport preference order, filtered by what the browser can do; `eventsource` is skipped
   * when `headers` is set. Default `["eventsource", "fetch-sse", "long-poll", "poll"]`.
   */
  transports?: readonly Transport[];
  /**
   * Named event types delivered besides `message`; the same filter on every transport. Names of
   * the subscription's own events (`open`, `error`, `statechange`, `transportchange`, `reset`,
   * `uptodate`, `statuschange`) throw
   * `invalid-option`; `"message"` is always delivered. A server event of one of those names is never
   * a message nor a lifecycle event: `reset` asks the app to refetch (a `reset` event), the others
   * are dropped (logged as `ignore` with `debug`) and the stream stays open. A server event of a
   * type not listed is dropped too (with `debug`, the first of each type is logged as `ignore`,
   * `reason: "not-in-events"`), and a listener for such a type gets one `console.warn` per
   * subscription and type. Default `[]`.
   */
  events?: readonly NoInfer<EventName<M>>[];
  /**
   * `"text"`: data as sent; `"json"`: `JSON.parse`d by the browser (a failure is an `error`
   * event with code `parse`, not a crash). Default `"text"`.
   */
  parse?: "text" | "json";
  /**
   * Request headers, fetch transports only (e.g. `Authorization`; forces a CORS preflight
   * cross-origin). A function runs before every request; on 401 or 403 it is called once more
   * with `{ status }` and the request retried once, at once (a second refusal: fatal `auth`). A function that throws or rejects is an `error`
   * event with code `headers`, retried with backoff; an object with an invalid header throws
   * `invalid-option`. Default: none.
   */
  headers?: HeaderValues | ((ctx: HeadersContext) => HeaderValues | Promise<HeaderValues>);
  /**
   * The URL of every attempt, on every transport: a rotating query token. Called with
   * {@link UrlContext}; what it returns (or resolves to) is requested instead of the subscribe
   * URL, checked as that one is. On 401 or 403 it is called once more with `status` and the
   * request retried at once; a second refusal in a row is a fatal `auth`. A function that throws
   * or rejects, or a value that is not an http(s) URL, is an `error` with code `headers` (`cause`),
   * retried with backoff. Shared only with `crossTab` and the same credentials. Default: the
   * subscribe URL.
   */
  url?: (ctx: UrlContext) => string | URL | Promise<string | URL>;
  /**
   * The request method that starts the stream (an LLM answer after a POST), as `fetch` takes it.
   * With `method`, `body` or `resume` the stream goes over `fetch-sse` or `long-poll` only (the
   * others are skipped; a `transports` list with neither throws `invalid-option`, as does a method
   * `fetch` refuses such as `CONNECT`), and the connection is never shared. Default `"GET"`.
   * Not in "tidings/receive".
   */
  method?: string;
  /**
   * The request body, as `fetch` takes it, sent once with every attempt (so a value `fetch` can
   * send again: a string, `Blob`, `FormData`, `URLSearchParams`, `ArrayBuffer`; not a stream).
   * With `GET` or `HEAD` it throws `invalid-option`. Default: none.
   */
  body?: BodyInit;
  /**
   * How a stream the app's request started resumes once it has a cursor: `"replay"` sends the
   * same request again with `Last-Event-ID` (the query's `lastEventIdParam` cross-origin), for
   * servers that replay after it; a function gets the cursor and returns the request to send
   * instead (the "resumable stream" pattern: `(id) => ({ url: `/answer/${chat}`, method: "GET" })`),
   * which carries the cursor as well. What it throws is an `error` with code `headers`, retried
   * with backoff. Default `"replay"`.
   */
  resume?: "replay" | ((lastEventId: string) => { url: string; method?: string; body?: BodyInit });
  /**
   * An in-band end: the first event of this type and (or) with exactly this data is not delivered;
   * the request is aborted and the subscription closes (`statechange` to `closed` with reason
   * `stream-closed`, no error, no further request; a `for await` loop ends). Example:
   * `{ data: "[DONE]" }`. Default: none.
   */
  end?: { event?: string; data?: string };
  /** Send cookies / credentials cross-origin. Default `false`. */
  withCredentials?: boolean;
  /**
   * Log every decision of the engine with its reason: `true` on the console, as
   * `console.debug("[tidings]", what, details)`; a function `(what, details) => void` gets the
   * same entries (the same objects, see {@link DebugEntry}) instead of the console, to draw a
   * timeline of every request and wait in the app's own dev tools (the demo page's
   * `www/timeline.js` does). The function is called synchronously, with no engine state in use (it
   * may close the subscription); what it throws is reported with `reportError` (where the browser
   * has it) and the connection goes on. A subscription with a `debug` function has a connection of its own (never shared with
   * another subscription, as with `headers`). Message data is never logged. Default `false`. Not in "tidings/receive" (`true` or a
   * function there throws `invalid-option`).
   */
  debug?: boolean | DebugFn;
  /** Aborting it closes the subscription; anything else throws `invalid-option`. Default: none. */
  signal?: AbortSignal;
  /**
   * Keep the cursor across reloads in `sessionStorage` (`"session"`: this tab) or `localStorage`
   * (`"local"`: every tab of the origin): restored at `subscribe` (unless `lastEventId` / `offset`
   * is given; `offset: "-1"`, the default, does not count), written once per delivered batch
   * after the listeners ran (with an async iterator: when it pulls the next message; leaving the loop by `break` or a throw does not count the message it left on, so it comes again after a reload), removed on
   * `reset`. A `crossTab` follower does not write `localStorage`. A storage that is missing, full or refused: one `debug` log line, and the
   * subscription goes on without it. Default: off. Not in "tidings/receive": there it throws
   * `invalid-option`.
   */
  persist?: "session" | "local";
  /**
   * The storage key's name (`tidings:cursor:<persistKey>`), for a URL that changes between page
   * loads (a rotating token in the query). Default: a hash of the URL and `events` (never the URL
   * itself). A non-empty string, only with `persist`; else `invalid-option`.
   */
  persistKey?: string;
  /**
   * How long the connection must be down before `status` says `reconnecting` / `offline`, in
   * milliseconds. Default `5000` (a restart of the reference server is back within about 1.6 s).
   */
  lostAfterMs?: number;
  /**
   * Initial cursor (resume from a stored id). One holding U+0000, CR or LF (never a stream's id)
   * throws `invalid-option`. Default `""`. With `protocol: "durable-streams"` it is the offset
   * (same as `offset`).
   */
  lastEventId?: string;
  /**
   * The server family: `"default"` (SSE ids, `Last-Event-ID`, JSON/raw long-poll and poll bodies,
   * validators) or `"durable-streams"` (the Durable Streams protocol: catch-up then live reads as
   * `live` says, the cursor is the offset; `long-poll`, or `fetch-sse` with `live: "sse"`, is then
   * the only transport, whatever `transports` says;
   * https://github.com/durable-streams/durable-streams). Default
   * `"default"`. `"durable-streams"` (and `offset`) are not in "tidings/receive": there they
   * throw `invalid-option`.
   */
  protocol?: "default" | "durable-streams";
  /**
   * With `protocol: "durable-streams"`: where to start, `"-1"` (the stream's start), `"now"` (its
   * tail) or an offset stored from `lastEventId` / a message's `lastEventId`. An offset longer
   * than 256 bytes, or holding a space, a control character or one of `, & = ? /`, and `offset`
   * without that protocol, throw `invalid-option`. Default `"-1"`.
   */
  offset?: string;
  /**
   * With `protocol: "durable-streams"`: how to read once caught up. `"long-poll"` (the default):
   * `live=long-poll` requests on the `long-poll` transport. `"sse"`: one `live=sse` event stream
   * over `fetch` (the `fetch-sse` transport, which then makes the catch-up reads too; never the
   * native `EventSource`, which cannot read the `stream-sse-data-encoding` header or the status):
   * its `data` events are delivered at the `control` event that gives their offset, a binary
   * stream's base64 is decoded to a `Uint8Array`, the server's periodic close (about every 60 s)
   * reconnects at once with no backoff, and `streamClosed` ends the subscription (state `closed`,
   * reason `stream-closed`). A malformed control event is a `parse` error, retried from the last
   * offset with backoff; other event types are skipped. `false`: read to the tail and stop (no
   * live request): after the catch-up answer that is up to date, `uptodate`, then state `closed`
   * with reason `up-to-date` (`stream-closed` if the stream is closed). Without that protocol
   * `invalid-option` (not read at all in "tidings/receive", which has no Durable Streams).
   */
  live?: "long-poll" | "sse" | false;
  /**
   * The largest message, in bytes: an event-stream line, the data of one event (UTF-8), a JSON or
   * raw-resource message, a native `EventSource` message. A bigger one is skipped (its id still
   * moves the cursor) with a non-fatal `too-large` error carrying its `id`. `0`: the default.
   * Default `1048576` (1 MiB).
   */
  maxMessageBytes?: number;
  /**
   * Query parameter carrying the cursor where a header is impossible or would force a CORS
   * preflight (nchan: `"last_event_id"`). Default `"lastEventId"`. A resume on `eventsource`
   * moves to a transport that sends the `Last-Event-ID` header (`fetch-sse` same-origin,
   * `transportchange` reason `"resume-by-header"`), which sends the query parameter too. Where no
   * transport can send the header (cross-origin, or only `eventsource` allowed), the server must
   * read this parameter: one that ignores it and replays from its start is recognised once (error
   * `resume-ignored`); one that goes on from "now" with consecutive integer ids, by a `reset`
   * with reason `"gap"`.
   */
  lastEventIdParam?: string;
  /** Reconnect delay = floor + jitter(min(maxMs, baseMs · 2^attempts)). */
  backoff?: {
    /** Jitter shape on top of the floor. Default `"full-jitter"`. */
    strategy?: "full-jitter" | "equal-jitter" | "decorrelated" | "none";
    /** Exponential step, milliseconds. Default `500`. */
    baseMs?: number;
    /** Cap of the exponential part, milliseconds. Default `60000`. */
    maxMs?: number;
    /**
     * Least delay before any reconnect, milliseconds; the server's `retry:` raises it, never
     * lowers it below this (not on `eventsource`: the browser hides `retry:`). At least `10`.
     * Default `1000`.
     */
    floorMs?: number;
    /**
     * A stream open this long (milliseconds) with at least one byte, or any successful response
     * of a request transport, resets the attempt count. So does a stream of any length that
     * ended cleanly after new events with ids (a server that ends every stream after a few
     * events reconnects after the floor, never a growing backoff). Default `10000`.
     */
    healthyAfterMs?: number;
    /** Consecutive failed attempts before giving up (error `gave-up`; state `closed`, reason `gave-up`, revived by `reconnect()`). Default `Infinity`. */
    maxAttempts?: number;
  };
  /**
   * Cap on any server-requested wait (`Retry-After`, rate-limit reset), milliseconds; longer
   * requests are clamped. The wait is honoured as asked: `max(clamped wait, backoff.floorMs)`
   * plus a herd spread `U[0, min(10 %, 1000 ms)]` (none with strategy `"none"`), not plus the
   * exponential backoff term, and it does not open the circuit breaker. Default `300000` (5 min).
   */
  maxRetryAfterMs?: number;
  /** Circuit breaker. */
  breaker?: {
    /** Consecutive failures that open it. Default `5`. */
    failureThreshold?: number;
    /**
     * Cool-down before one probe, milliseconds; jittered, never shorter than the current backoff.
     * Default `30000`.
     */
    cooldownMs?: number;
  };
  /**
   * Poll interval (the `poll` transport). Every server hint is clamped into [minMs, maxMs]. The
   * adaptive modes stretch on slow networks (RTT < 50 ms ×1, < 200 ms ×3, < 1 s ×6, worse or
   * `saveData` → maxMs); the RTT is `navigator.connection.rtt`, lowered by the smallest of the
   * last 4 measured `poll` request times (request to response head), so Chromium's `rtt` of 100
   * on a fast path does not stretch the interval ×3.
   */
  interval?: {
    /**
     * `"exponential"` (×2 per unchanged answer, ÷2 on change), `"aimd"` (+1 s unchanged, halve on
     * change), `"rate-window"` (from the change rate of the last 10 answers), `"fixed"`.
     * Default `"exponential"`.
     */
    mode?: "exponential" | "aimd" | "rate-window" | "fixed";
    /** First interval, milliseconds. Default `5000`. */
    initialMs?: number;
    /** Shortest interval, milliseconds; at least `10`. Default `1000`. */
    minMs?: number;
    /** Longest interval, milliseconds; at least `10`. Default `300000` (5 min). */
    maxMs?: number;
  };
  /**
   * Event type a server sends as a heartbeat (native EventSource cannot see comments); on
   * `eventsource` the watchdog runs only once such an event or a message has arrived. `""`
   * disables it; `"message"`, the subscription's own event types and names in `events` throw
   * `invalid-option`. Default `"heartbeat"`.
   */
  heartbeatEvent?: string;
  /** Dead-stream detection. */
  watchdog?: {
    /**
     * A stream silent this long (milliseconds) is dead (any byte counts on fetch transports, any
     * event on `eventsource`). Default `45000`.
     */
    idleTimeoutMs?: number;
    /**
     * A stream that delivered nothing this long after it opened, or after its request while it
     * has not (milliseconds; `fetch-sse`: no byte, comments count; `eventsource`: no message or
     * `heartbeatEvent` event), is evidence of a buffering proxy (Firefox opens a held stream
     * only at its first byte, so the verdict cannot wait for the open). Default `45000`: three 15 s pings (axum `KeepAlive`, sse-starlette), so a
     * quiet healthy server is never taken for a proxy. On `eventsource` with no other usable
     * transport (by `transports` and capability), it is no evidence: the stream is kept open
     * (debug `note` `silent-stream-kept`).
     */
    firstEventTimeoutMs?: number;
  };
  /** Long polling. */
  longPoll?: {
    /**
     * Client-side abort of a held request, milliseconds; two consecutive such aborts with no
     * response head are `timeout` failures. Default `35000`.
     */
    timeoutMs?: number;
  };
  /** Downgrade from streaming transports. */
  fallback?: {
    /**
     * Consecutive opens that fail, or open and deliver no byte before
     * `watchdog.firstEventTimeoutMs`, before every streaming transport is skipped. Default `2`.
     */
    afterFailures?: number;
    /**
     * How long a downgrade is remembered (per URL), milliseconds, before the preferred transport
     * is probed again. Default `600000` (10 min).
     */
    rememberMs?: number;
  };
  /** Seeds the jitter PRNG, for reproducible tests. Default: random. */
  seed?: number;
  /**
   * Release the connection while the page is hidden (`{ afterMs }`: after that grace period,
   * milliseconds). Default `true` (`afterMs: 0`). Visible again: one request at once, with the
   * cursor (`U[0, 250)` ms later only when the device just woke from sleep; after `online` too).
   */
  pauseWhenHidden?: boolean | { afterMs?: number };
  /**
   * Share one connection among every tab of the browser profile that subscribes to the same URL
   * with the same options: one tab (elected with Web Locks) runs the request and relays every
   * event to the others over a `BroadcastChannel`; when it closes, another tab resumes from the
   * last event id seen (no gap, no duplicate); a visible tab takes over from a hidden one.
   * With `headers` or a `url` function: shared only by tabs whose credentials are the same at
   * `subscribe` (the functions are asked once then, with `{ attempt: 0, url }`, and what they return
   * is compared by a hash; a promise or a throw: not shared); the leader's functions serve the
   * shared connection. The lock and the
   * channel are named by a hash of the options (key order does not count): no URL or header value
   * is in a name, a post or storage. Without Web Locks or `BroadcastChannel`: one connection per
   * tab. In a follower tab `stats()` counts no requests. Default `false`. `true` is not in
   * "tidings/receive": there it throws `invalid-option`.
   */
  crossTab?: boolean;
  /**
   * Delivery ACKs: the id of every message dispatched to this
   * subscription's listeners (an async iterator is one: a message it buffered counts) is posted
   * to `url` as `{"ids": ["<id>", …]}`, in batches: `batchMs` (default `1000`) after the first id
   * of a batch, or at once at `maxBatch` ids (default `100`), on `close()`, and at `pagehide`
   * (then as one `keepalive` request, its answer not read). Each other batch is one
   * {@link send} (its own idempotency key, the send's retries); its failure is not reported (the
   * server re-sends, the dedupe hides the repeat). Every batch goes with this subscription's
   * `headers` (a function is called as a send's, with `{ url, attempt }`) and `withCredentials`,
   * as `Content-Type: application/json` unless those headers say otherwise. Messages without an id are not acknowledged.
   * With `crossTab`, only the tab that holds the connection acknowledges. `url` missing or not a
   * URL: `invalid-option` / `invalid-url`. With `protocol: "durable-streams"` (no message has an
   * id): `invalid-option` (`ack`). Not in "tidings/receive": there it throws `invalid-option`.
   */
  ack?: { url: string | URL; batchMs?: number; maxBatch?: number };
}

/**
 * A live subscription. `M`: the app's event map (see {@link subscribe}); `D`: the data type of
 * messages the map does not name (`string`, or `unknown` with `parse: "json"`).
 */
export interface Subscription<M = {}, D = string> extends AsyncIterable<AnyMessage<M, D>> {
  /**
   * Lifecycle events: `open`, `error`, `statechange`, `transportchange`, `reset`, `uptodate`, `statuschange`. As on
   * `EventTarget`: a listener added twice for one type runs once, a listener removed during a
   * dispatch is not called, `null` is ignored, and a listener that throws is reported with
   * `reportError` (the page's `error` event) without stopping the others.
   */
  addEventListener<K extends keyof LifecycleEventMap>(
    type: K,
    listener: Listener<LifecycleEventMap[K]> | null,
    options?: ListenerOptions,
  ): void;
  /** Messages: `message` and each name in `options.events`. Adding a listener twice adds it once. */
  addEventListener<K extends "message" | EventName<M>>(
    type: K,
    listener: Listener<MessageOf<M, D, K>> | null,
    options?: ListenerOptions,
  ): void;
  removeEventListener<K extends keyof LifecycleEventMap>(
    type: K,
    listener: Listener<LifecycleEventMap[K]> | null,
    options?: ListenerOptions,
  ): void;
  removeEventListener<K extends "message" | EventName<M>>(
    type: K,
    listener: Listener<MessageOf<M, D, K>> | null,
    options?: ListenerOptions,
  ): void;
  /**
   * Messages (`message` and each name in `options.events`), buffered from this call on. Ends
   * when the subscription closes; a fatal error rejects the read after the buffered messages;
   * `return()` (a `break` out of `for await`) closes the subscription.
   */
  [Symbol.asyncIterator](): AsyncIterableIterator<AnyMessage<M, D>>;
  /**
   * Close: no listener is called again, iterators end; the shared connection closes when this
   * was its last subscription. Idempotent.
   */
  close(): void;
  /** Same as `close()` (`using sub = subscribe(…)`). */
  [Symbol.dispose](): void;
  /** The state. */
  readonly state: State;
  /** The calm status (see {@link Status}; `statuschange` when it changes). */
  readonly status: Status;
  /**
   * "Try now": ends a client-side backoff wait at once (state `connecting`,
   * reason `reconnect`); during an open circuit breaker's cool-down sends the breaker's one probe
   * at once (reason `breaker-probe`; if it fails the breaker opens again); resumes a subscription
   * paused offline only when `navigator.onLine` says online; revives one that gave up
   * (`gave-up`, which then stays open for this until `close()`), with the attempt count reset.
   * Does nothing while open or connecting, during a server-requested wait (`Retry-After`,
   * rate-limit reset), while the page is hidden or frozen (answers `"hidden"`; the connection
   * resumes by itself once the page is visible), after a permanent error or `close()`. In a
   * `crossTab` follower tab it asks the leader tab, whose connection follows these rules (after
   * `gave-up` with the leader's tab gone, this tab takes over and runs). At most one attempt per
   * `backoff.floorMs` (raised by the server's `retry:`), however often it is called.
   * Returns why (see {@link ReconnectAnswer}); `debug: true` logs the same as a `note`.
   */
  reconnect(): ReconnectAnswer;
  /**
   * The transport in use, or about to be tried. `""` until the engine chose one (a microtask
   * after `subscribe`), and for good when it stopped before choosing (no usable transport).
   */
  readonly transport: Transport | "";
  /** The cursor: the last event id seen (or the initial `lastEventId`). */
  readonly lastEventId: string;
  /** Counters; once closed, the last ones, the same object each call. */
  stats(): Stats;
}

/**
 * Subscribe to `url` (a string, or a `URL` object taken as its `href`): relative (resolved against
 * the page with the browser's `URL` parser) or absolute `http:`/`https:` with a host. Every option is read and checked first; anything else
 * throws an `Error` with `code: "invalid-url"` or `"invalid-option"` before anything starts. Call
 * {@link init} first.
 *
 * Give the app's event map to type named events: with `parse: "json"` any data type;
 * without, data is a string.
 * ```ts
 * const sub = subscribe<{ price: Price }>("/updates", { events: ["price"], parse: "json" });
 * sub.addEventListener("price", (e) => e.data); // Price
 * ```
 */
export function subscribe<M extends EventMap<M> = {}>(
  url: string | URL,
  options: Options<M> & { parse: "json" },
): Subscription<M, unknown>;
export function subscribe<M extends EventMap<M, string> = {}>(
  url: string | URL,
  options?: Options<M> & { parse?: "text" },
): Subscription<M, string>;
/** Options whose `parse` is not known statically (a variable typed `Options`): data is `unknown`. */
export function subscribe(url: string | URL, options?: Options): Subscription<{}, unknown>;

/** `headers` of {@link send} as a function: runs before every attempt. */
export interface SendHeadersContext {
  /** The request URL (absolute). */
  url: string;
  /** The attempt the headers are for: 1, 2, … */
  attempt: number;
}

/**
 * What {@link send} takes as the body. Sent unchanged on every attempt: an `ArrayBuffer`, a view
 * and `URLSearchParams` are copied at the call. A `ReadableStream` cannot be sent twice and is
 * refused (`invalid-option`), as are a detached buffer and a plain object (`JSON.stringify` it); `FormData` is sent as it is (do not change it while the send is pending) and, its size
 * being unknown, is never re-sent at `pagehide`.
 */
export type SendBody = string | Blob | ArrayBuffer | ArrayBufferView | URLSearchParams | FormData | null;

/** {@link send} options. Every duration is in milliseconds and says so in its name. */
export interface SendOptions {
  /** The request method. Default `"POST"`. `GET`/`HEAD` with a body, `CONNECT`, `TRACE`, `TRACK` and non-token names are `invalid-option`. */
  method?: string;
  /**
   * Extra request headers: an object, or a function called before every attempt (may return a
   * promise) that returns an object, a `Headers`, or nothing. If it throws or rejects, returns an
   * invalid header, or returns anything else (an array, a string: a `TypeError`), the send rejects
   * at once with code `headers` (`cause`: what it threw); nothing is sent. The idempotency header
   * is set after these and cannot be replaced by them.
   */
  headers?:
    | HeaderValues
    | ((ctx: SendHeadersContext) => HeaderValues | Headers | undefined | Promise<HeaderValues | Headers | undefined>);
  /** `true`: cookies and credentials cross-origin (`credentials: "include"`), as `withCredentials`. Default `false`. */
  credentials?: boolean;
  /**
   * The idempotency key: non-empty printable ASCII (U+0020–U+007E), at most 255 characters (the
   * bound servers such as Stripe's API enforce), else `invalid-option`. Default:
   * generated once for this send (`crypto.randomUUID()` in a secure context, else a version 4 UUID
   * from `crypto.getRandomValues`) and reused on every attempt. Sent as an RFC 8941 sf-string:
   * `Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"`.
   */
  idempotencyKey?: string;
  /**
   * The key's header name (an HTTP token, not one `fetch` drops: `Cookie`, `Sec-…`, `Proxy-…` and
   * the other forbidden request-headers are `invalid-option`). Default `"Idempotency-Key"`; some
   * servers use `"X-Idempotency-Key"`.
   */
  idempotencyHeader?: string;
  /** Attempts before rejecting with `gave-up`, counting the first (≥ 1; `Infinity`: no limit). Default `5`. */
  maxAttempts?: number;
  /**
   * An attempt without a whole answer this long is aborted and retried (as a network error: when
   * `maxAttempts` run out the send rejects `gave-up`, not `timeout`); `0`: none. Default `30000`.
   */
  timeoutMs?: number;
  /**
   * Overall, from the call (an `ordered` send's wait for its turn included): when it passes (or a
   * retry could only start after it) the send rejects with `timeout`. `0` rejects at once, nothing
   * sent (unlike `timeoutMs: 0`, which means none). Default none.
   */
  deadlineMs?: number;
  /** Aborting rejects the send with the signal's `reason` (an `AbortError` `DOMException`) and sends nothing more. */
  signal?: AbortSignal;
  /**
   * `true`: one at a time per URL, in call order (the next starts when the previous one settled,
   * whatever its outcome). Default `false`.
   */
  ordered?: boolean;
  /** Retry delays, as for {@link subscribe}: full jitter, `baseMs` 500, `maxMs` 60000, `floorMs` 1000. */
  backoff?: {
    strategy?: "full-jitter" | "equal-jitter" | "decorrelated" | "none";
    baseMs?: number;
    maxMs?: number;
    floorMs?: number;
  };
  /** Cap on a server-requested wait (`Retry-After`, rate-limit reset). Default `300000`. */
  maxRetryAfterMs?: number;
}

/** What {@link send} resolves with: the server's answer (2xx or 3xx). */
export interface SendResult {
  /** The HTTP status. */
  readonly status: number;
  /** The response headers (cross-origin: only those the server exposes). */
  readonly headers: Headers;
  /** The response body as text. */
  readonly body: string;
  /** Attempts made, this one included. */
  readonly attempts: number;
  /** The server answered with its stored answer to this key (`Idempotent-Replayed: true`). */
  readonly replayed: boolean;
}

/** Why {@link send} rejected (an abort rejects with the signal's reason instead). */
export interface SendError extends Error {
  /**
   * `http-status` (a permanent answer: 4xx other than 401/403/408/409/425/429, e.g. 422 "key
   * reused with another body"), `auth` (401/403), `stream-closed` (a 409 with `Stream-Closed:
   * true`: the Durable Stream appended to is closed), `conflict` (another 409 without
   * `Retry-After`; one with it is "the key's first request is still in flight", retried), `gave-up` (`maxAttempts` transient failures),
   * `timeout` (`deadlineMs`), `headers` (the `headers` function failed), `too-large` (a success
   * whose answer body is over 1 MiB: the request took effect, its answer was not read past the cap;
   * not retried), `invalid-url`, `invalid-option`, `not-initialized`.
   */
  readonly code: ErrorCode;
  /**
   * The status of the last answer, when an answer caused it; a failing one (≥ 300) is in `message`
   * too, before the URL: `send failed: http-status 422 (https://example.com/orders)`.
   */
  readonly status?: number;
  /** Attempts made (absent for `invalid-*` and `not-initialized`: nothing was sent). */
  readonly attempts?: number;
  /** With code `headers`: what the `headers` function threw or rejected with. */
  readonly cause?: unknown;
}

/**
 * Send `body` to `url` so that it takes effect once: every attempt carries the same idempotency
 * key; network errors, timeouts, 5xx, 408, 409 (the first request with this key is still in
 * flight), 425 and 429 are retried after full-jitter backoff or the server's `Retry-After`;
 * other 4xx reject at once; while offline nothing is sent until `online`. Never throws: a bad
 * URL, body or option rejects (`invalid-url`, `invalid-option`) before anything is sent. Call
 * {@link init} first. Sends still pending at `pagehide` are re-sent with `keepalive` when they
 * fit the 64 KiB budget (shared with pending reports and append requests, oldest first).
 */
export function send(url: string | URL, body?: SendBody, options?: SendOptions): Promise<SendResult>;

/** {@link appender} options: the stream's content type, the producer, batching, and the retry options of {@link send}. */
export interface AppenderOptions {
  /** The stream's content type, sent on every append. Default `"application/json"` (JSON mode: each value is one message). */
  contentType?: string;
  /** `Producer-Id` (non-empty, at most 256 characters). Default: a fresh UUID per appender. */
  producerId?: string;
  /** `Producer-Epoch` to start with (an integer ≤ 2^53 − 1). Default `0`. */
  epoch?: number;
  /** On 403 (stale epoch) claim the producer id at the server's epoch + 1 and resend the batch (3 times in a row at most). Default `false`. */
  autoClaim?: boolean;
  /** Values per request (≥ 1). Default `1000`. */
  maxBatch?: number;
  /** Body bytes per request (one larger value goes alone). Default `1048576`. */
  maxBatchBytes?: number;
  /** As for {@link send}; called before every request. */
  headers?: HeaderValues | ((ctx: SendHeadersContext) => HeaderValues | Promise<HeaderValues>);
  /** As for {@link send}. */
  credentials?: boolean;
  /** Aborting fails the appender: pending appends reject with the signal's `reason`. */
  signal?: AbortSignal;
  /**
   * Attempts per batch, the close's too, before failing with `gave-up` (`Infinity`: no limit).
   * Default: no limit for appends, `5` for the close (a close that cannot get through says so).
   */
  maxAttempts?: number;
  /** Per request, as for {@link send}. Default `30000`. */
  timeoutMs?: number;
  /** Per batch, as for {@link send}. Default none. */
  deadlineMs?: number;
  /** As for {@link send}. */
  backoff?: SendOptions["backoff"];
  /** As for {@link send}. Default `300000`. */
  maxRetryAfterMs?: number;
}

/** Why an appender failed: `stale-epoch` (`epoch`), `sequence-gap` (`expectedSeq`, `seq`), `stream-closed`, `conflict`, `headers` (`cause`), or the send's `http-status` (`status`), `auth`, `gave-up`, `timeout`. */
export interface AppendError extends Error {
  readonly code: ErrorCode;
  readonly status?: number;
  readonly epoch?: number;
  readonly expectedSeq?: number;
  readonly seq?: number;
  readonly cause?: unknown;
}

/** An idempotent producer appending to one Durable Streams stream. */
export interface Appender {
  /**
   * Append one value: JSON streams take any JSON value (an array too: it is stored as ONE
   * message), other streams a string (UTF-8) or bytes. Resolves once the server holds it; rejects
   * with an {@link AppendError} (the appender stops at the first failure: every later append
   * rejects with the same error).
   */
  append(value: unknown): Promise<void>;
  /**
   * Close the stream (`Stream-Closed: true`, with the producer headers) after every pending
   * append, with `last` (optional, a value as for `append`) as the final message in the same
   * request: the message and the close are one atomic append. Later appends reject with
   * `stream-closed`; a second `close()` settles as the first (its `last` is not sent). A close by
   * another producer of a stream already closed rejects with `stream-closed`.
   */
  close(last?: unknown): Promise<void>;
  /** The `Producer-Id` sent. */
  readonly producerId: string;
  /** The current `Producer-Epoch` (moves on an auto-claim). */
  readonly epoch: number;
  free(): void;
}

/**
 * Append to the Durable Streams stream at `url` (it must exist) as an idempotent producer
 * (the Durable Streams protocol, §5.2.1: https://github.com/durable-streams/durable-streams):
 * values appended while a request is in flight go out together as the next
 * batch, each batch carries `Producer-Id`, `Producer-Epoch`, `Producer-Seq`, and is retried as
 * {@link send} retries, so the stream holds each value exactly once, in order. Throws
 * `invalid-url` / `invalid-option` / `not-initialized`.
 */
export function appender(url: string | URL, options?: AppenderOptions): Appender;

// stream-handles: begin (dropped from a package built without them)
/** The options of {@link stream}: {@link send}'s retry options, given once for every operation. */
export type StreamOptions = Pick<
  SendOptions,
  "headers" | "credentials" | "signal" | "maxAttempts" | "timeoutMs" | "deadlineMs" | "backoff" | "maxRetryAfterMs"
>;

/** What {@link StreamHandle.create} asks for (the Durable Streams protocol's create: a `PUT`). */
export interface StreamCreateOptions {
  /** The stream's `Content-Type`, printable ASCII. Default `"application/json"` (the appender's). */
  contentType?: string;
  /** `Stream-TTL`: idle seconds before the stream expires, an integer from 0 to 2^53 − 1. Not with `expiresAt`. */
  ttlSeconds?: number;
  /** `Stream-Expires-At`: an RFC 3339 date-time (`"2030-01-02T03:04:05Z"`; its shape is checked, its ranges are the server's). Not with `ttlSeconds`. */
  expiresAt?: string;
  /** `Stream-Closed: true`: created closed, `body` its whole content. Default `false`. */
  closed?: boolean;
  /** The stream's first content, as {@link send} takes a body. Default none. */
  body?: SendBody;
}

/** What a stream operation resolves with (`delete()`: nothing). */
export interface StreamInfo {
  /** 201 (created) or 200 (there, same configuration) for `create`; 200 for `head`; 204 for `close`. */
  readonly status: number;
  /** `Stream-Next-Offset`: the tail offset, `null` when the server sent none (or, cross-origin, does not expose it). */
  readonly offset: string | null;
  /** `Stream-Closed: true`: the stream is closed. */
  readonly closed: boolean;
  /** The stream's `Content-Type`, `null` when absent (a `close()` answer has none). */
  readonly contentType: string | null;
}

/**
 * Why a stream operation rejected (an abort rejects with the signal's reason instead): {@link
 * SendError}'s codes, and `not-found` (404), `gone` (410: soft-deleted), `stream-closed` (409 with
 * `Stream-Closed: true`), `conflict` (another 409: a create whose content type, expiry or closed
 * state differs from the stream's). `message`: `<operation> failed: <code> <status> (<url>)`
 * (`head failed: not-found 404 (https://example.com/v1/stream/a)`).
 */
export interface StreamError extends Omit<SendError, "code"> {
  readonly code: ErrorCode | "not-found" | "gone";
}

/** The operations on one stream (the Durable Streams protocol's create, `HEAD`, close and delete), each one request retried as {@link send} retries (no idempotency key: each is idempotent by itself). */
export interface StreamHandle {
  /** `PUT`: create the stream, or confirm it exists with this configuration (200). Rejects `conflict` when it differs. */
  create(options?: StreamCreateOptions): Promise<StreamInfo>;
  /** `HEAD`: the tail offset, whether it is closed, its content type. Rejects `not-found`, `gone`. */
  head(): Promise<StreamInfo>;
  /** `DELETE` the stream and its data. Rejects `not-found` (also when an earlier attempt's answer was lost and the retry finds the stream gone), `gone`. */
  delete(): Promise<void>;
  /** `POST` with `Stream-Closed: true`, no body: close the stream (again: 204 as well). Rejects `not-found`. */
  close(): Promise<StreamInfo>;
}

/**
 * The Durable Streams stream at `url` (https://github.com/durable-streams/durable-streams): create,
 * `HEAD`, delete, close. Never throws: each method returns a promise that rejects with a
 * {@link StreamError} (a bad URL or option: `invalid-url` / `invalid-option`, before anything is
 * sent; `not-initialized` before {@link init}). Pending operations at `pagehide` go out with
 * `keepalive` as sends do. Read with {@link subscribe} (`protocol: "durable-streams"`), append with
 * {@link appender}.
 */
export function stream(url: string | URL, options?: StreamOptions): StreamHandle;
// stream-handles: end

/** What a {@link report} task gives: a body as {@link send} takes it, or nothing to report this time. */
export type ReportBody = Exclude<SendBody, null> | null | undefined;

/**
 * {@link report} options: the keys of {@link SendOptions} that apply to every report (`headers`,
 * `credentials`, `method`, `idempotencyHeader`, `timeoutMs` per attempt, `deadlineMs` per report,
 * `maxAttempts` per report (default `Infinity`: a report ends when delivered, superseded or
 * stopped), `backoff`, `maxRetryAfterMs`, `signal`: aborting stops the reporter), plus the
 * reporter's own. `idempotencyKey` and `ordered` do not apply (`invalid-option`). A `headers`
 * function that fails is reported with `reportError` and that attempt counts as a network failure
 * (retried at the reporter's pace). Every duration is in milliseconds and says so in its name.
 */
export interface ReportOptions extends Omit<SendOptions, "idempotencyKey" | "ordered"> {
  /**
   * The report interval, as the `poll` transport's: every server hint (`X-Poll-Interval`, JSON
   * `_polling.next_interval_ms`) is clamped into [minMs, maxMs]; each interval is ±10 %. The
   * adaptive modes take "nothing to report" as an unchanged answer (slower).
   */
  interval?: {
    /** Default `"fixed"`. */
    mode?: "exponential" | "aimd" | "rate-window" | "fixed";
    /** Default `10000`. */
    initialMs?: number;
    /** Default `1000`; also the least time between two requests (a `flush()` included). */
    minMs?: number;
    /** Default `300000` (5 min). */
    maxMs?: number;
  };
  /**
   * The first report goes `U[0, 2 × startupJitterMs]` after the call, so pages that load
   * together do not report together. Default half of `interval.initialMs` (the first reports
   * of a fleet spread over one whole interval); `0`: at once.
   */
  startupJitterMs?: number;
  /**
   * While the page is hidden: `"stop"` (default: no report; the missed one goes within 250 ms of
   * `visible`), `"continue"`, or `{ intervalMs }` (report at most this often while hidden).
   */
  whenHidden?: "stop" | "continue" | { intervalMs: number };
  /**
   * `false` (default): a newer report replaces one waiting for its retry (the fresh value wins;
   * a recovering fleet sends the healthy rate, not the healthy rate plus its backlog). `true`:
   * every report is queued and delivered in order, one at a time, for data that must all arrive.
   */
  keepAll?: boolean;
  /** With `keepAll`, reports waiting beyond this many drop the oldest (≥ 1). Default `100`. */
  maxQueued?: number;
  /**
   * Circuit breaker, as a subscription's: after `failureThreshold` failed attempts in a row (not
   * counting answers with `Retry-After` or a rate-limit reset) no request, report or retry, for a
   * cool-down of `U[0.5 × cooldownMs, 1.5 × cooldownMs]` (never shorter than the wait already chosen;
   * state `waiting`, reason `breaker-open`), then one probe (`breaker-probe`): delivered closes
   * it, failed opens it again.
   */
  breaker?: {
    /** Default `5`; `Infinity`: never opens. */
    failureThreshold?: number;
    /** Default `30000`. */
    cooldownMs?: number;
  };
}

/** {@link Reporter.stats}. */
export interface ReportStats {
  /** Bodies the task gave. */
  readonly reports: number;
  /** Collections with nothing to report (or a task that threw). */
  readonly skipped: number;
  /** Requests issued, retries included. */
  readonly requests: number;
  /** Of those, retries. */
  readonly retries: number;
  readonly delivered: number;
  /** Reports replaced by a newer one while they waited for a retry. */
  readonly superseded: number;
  /** Reports that failed for good or were dropped (`maxQueued`). */
  readonly failed: number;
  /** Attempts that failed transiently. */
  readonly transientFailures: number;
  /** The current interval, in milliseconds. */
  readonly intervalMs: number;
}

/** `statechange` and `error` of a {@link Reporter}: the shapes of a subscription's. */
export interface ReporterEventMap {
  statechange: StateChangeEvent;
  error: TidingsError;
}

/** What {@link report} returns. It keeps reporting when nobody holds it; `stop()` ends it. */
export interface Reporter {
  /**
   * `waiting` before the first report and after a failure (`delayMs`: until the next request),
   * `connecting` while a report is on its way before one was delivered (or after a failure),
   * `open` once the last report was delivered, `paused` while hidden (`whenHidden: "stop"`) or
   * offline, `closed` after `stop()` or a permanent answer. The first `statechange` comes a
   * microtask after {@link report}, so listeners added right away see it.
   */
  readonly state: State;
  /** Stop: the request in flight is aborted, nothing follows, state `closed`. Idempotent. */
  stop(): void;
  /**
   * Report now, within the pacing rules: not before a failure's wait, not within
   * `interval.minMs` of the last request, not while hidden (`whenHidden: "stop"`) or offline,
   * and after a report in flight answers.
   */
  flush(): void;
  stats(): ReportStats;
  /** As on `EventTarget` (see {@link Subscription.addEventListener}). */
  addEventListener<K extends keyof ReporterEventMap>(
    type: K,
    listener: Listener<ReporterEventMap[K]> | null,
    options?: ListenerOptions,
  ): void;
  removeEventListener<K extends keyof ReporterEventMap>(
    type: K,
    listener: Listener<ReporterEventMap[K]> | null,
    options?: ListenerOptions,
  ): void;
}

/**
 * Report to `url` every interval (default 10 s): `task()` (sync or async) gives the body,
 * sent as one {@link send} with a fresh idempotency key that only that report's retries reuse.
 * The first report goes after a startup jitter; a failing reporter never reports faster than a
 * healthy one; a `Retry-After` is honoured; nothing is sent while offline, nor while hidden by
 * default. A task that throws or rejects is reported (`reportError`) and skips that report; a
 * permanent answer (a 4xx other than 408/409/425/429) stops the reporter with a fatal `error`.
 * Throws `invalid-url` / `invalid-option` (a `task` that is not a function, a bad option)
 * before anything starts, and `not-initialized` before {@link init}.
 */
export function report(
  url: string | URL,
  task: () => ReportBody | Promise<ReportBody>,
  options?: ReportOptions,
): Reporter;
