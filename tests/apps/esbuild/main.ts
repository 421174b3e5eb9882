// esbuild with `--loader:.wasm=file`: esbuild copies the wasm into the output
// and the import is its path relative to the bundle.
import init, { subscribe, ErrorCode } from "tidings";
import wasmUrl from "tidings/tidings_bg.wasm";
import { run } from "./app.ts";

await init(new URL(wasmUrl, import.meta.url));
run({ subscribe, ErrorCode });
