// tidings/react — `useSubscription` (react.d.ts) over "tidings"'s subscribe:
// the app's `init()` from "tidings" is the one this hook's subscribe needs.
import { subscribe } from "./index.js";
import { hook } from "./react-hook.js";

export const useSubscription = /* @__PURE__ */ hook(subscribe);
