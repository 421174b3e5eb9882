// tidings/receive/react — `useSubscription` (react.d.ts) over
// "tidings/receive"'s subscribe, for an app that loads the receive-only wasm.
import { subscribe } from "./receive.js";
import { hook } from "./react-hook.js";

export const useSubscription = /* @__PURE__ */ hook(subscribe);
