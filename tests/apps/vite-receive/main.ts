// Vite with the receive-only entry: `init()` with no argument; Vite rewrites
// the receive glue's `new URL("tidings_bg.wasm", import.meta.url)` into an
// asset (the receive wasm, not the full one).
import init, { subscribe, ErrorCode } from "tidings/receive";
import { run } from "./app.ts";

await init();
run({ subscribe, ErrorCode });
