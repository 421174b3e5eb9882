/**
 * `import wasmUrl from "tidings/tidings_bg.wasm"` with a bundler that imports files as URLs
 * (esbuild `--loader:.wasm=file`): the URL of the copied wasm, for `init()`. In an ESM bundle pass
 * `new URL(wasmUrl, import.meta.url)` (esbuild writes it relative to the bundle), or set
 * esbuild's `--public-path`.
 */
declare const wasmUrl: string;
export default wasmUrl;
