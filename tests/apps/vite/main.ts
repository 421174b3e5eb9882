// Vite: `init()` with no argument; Vite turns the glue's
// `new URL("tidings_bg.wasm", import.meta.url)` into an emitted asset.
import init, { subscribe, ErrorCode } from "tidings";
import { run } from "./app.ts";

await init();
run({ subscribe, ErrorCode });
