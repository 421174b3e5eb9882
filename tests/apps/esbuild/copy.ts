// esbuild without a loader: esbuild keeps the glue's
// `new URL("tidings_bg.wasm", import.meta.url)`, which in an ESM bundle points
// next to the bundle; the build copies node_modules/tidings/tidings_bg.wasm there.
import init, { subscribe, ErrorCode } from "tidings";
import { run } from "./app.ts";

await init();
run({ subscribe, ErrorCode });
