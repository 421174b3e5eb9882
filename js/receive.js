// tidings/receive — the entry for an app that only subscribes: the same
// `init`, `subscribe` and `ErrorCode` as "tidings", over a wasm built without
// the upstream calls (send, report, appender, `ack`), `crossTab`, the Durable
// Streams profile, `persist` and `debug` (their options throw
// `invalid-option`): receive/tidings.js and receive/tidings_bg.wasm, `make
// size`'s receive-only row.
import load, { subscribe as open, Subscription } from "./receive/tidings.js";
import { entry } from "./subscription.js";

export { ErrorCode } from "./subscription.js";
const [init, subscribe] = entry(load, open, Subscription);
export { init as default, subscribe };
