// The hook over "tidings" (tidings/react), the wasm through esbuild's file loader.
import init, { subscribe } from "tidings";
import { useSubscription } from "tidings/react";
import wasmUrl from "tidings/tidings_bg.wasm";
import { start } from "./view.js";

start({ init, subscribe, useSubscription, wasmUrl });
