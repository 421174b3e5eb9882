// Types of "tidings/receive/react": the same hook as "tidings/react" (react.d.ts), over the
// subscribe of "tidings/receive".
export * from "./react.js";
