// The hook over "tidings/receive" (tidings/receive/react), the receive-only wasm.
import init, { subscribe } from "tidings/receive";
import { useSubscription } from "tidings/receive/react";
import wasmUrl from "tidings/receive/tidings_bg.wasm";
import { start } from "./view.js";

start({ init, subscribe, useSubscription, wasmUrl });
