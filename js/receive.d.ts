// Types of "tidings/receive": the subscribe half of "tidings" (index.d.ts),
// the same names and shapes. `ack` is refused with `invalid-option` here
// (this build has no upstream calls).
export { default, subscribe, ErrorCode } from "./index.js";
export type * from "./index.js";
