#!/usr/bin/env bash
# A names-kept copy of the package's wasm (pkg-names/), for the per-crate
# breakdown of `make size`. Same code and optimizer passes, plus the name section.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/wasm-flags.sh
route=$(cat pkg/.build-route)
WASM="target/wasm-$route/wasm32-unknown-unknown/wasm-release/tidings.wasm"
rm -rf pkg-names && mkdir -p pkg-names
wasm-bindgen "$WASM" --target web --out-dir pkg-names --out-name tidings --keep-debug "${WASM_BINDGEN_ARGS[@]}"
node_modules/.bin/wasm-opt "${WASM_OPT_ARGS[@]}" -g pkg-names/tidings_bg.wasm -o pkg-names/tidings_bg.wasm
