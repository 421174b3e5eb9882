// The receive-only entry with esbuild's file loader: "tidings/receive" and
// its own wasm, "tidings/receive/tidings_bg.wasm".
import init, { subscribe, ErrorCode } from "tidings/receive";
import wasmUrl from "tidings/receive/tidings_bg.wasm";
import { run } from "./app.ts";

await init(new URL(wasmUrl, import.meta.url));
run({ subscribe, ErrorCode });
