// Types of "tidings/receive": the subscribe half of "tidings" (index.d.ts),
// the same names and shapes. Refused with `invalid-option` here (this build
// lacks them; the message names "tidings"): `ack` (no upstream calls),
// `crossTab: true`, `protocol: "durable-streams"`, `offset`, `persist`,
// `debug: true`.
export { default, subscribe, ErrorCode } from "./index.js";
export type * from "./index.js";
