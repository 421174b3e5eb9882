#!/usr/bin/env bash
# A names-kept copy of the package's wasm (pkg-names/), for the per-crate
# breakdown of `make size`. Same code and optimizer passes, plus the name section.
set -euo pipefail
cd "$(dirname "$0")/.."
route=$(cat pkg/.build-route)
WASM="target/wasm-$route/wasm32-unknown-unknown/wasm-release/tidings.wasm"
rm -rf pkg-names && mkdir -p pkg-names
wasm-bindgen "$WASM" --target web --out-dir pkg-names --out-name tidings --keep-debug
node_modules/.bin/wasm-opt -Oz -g \
  --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-reference-types --enable-multivalue --enable-mutable-globals \
  pkg-names/tidings_bg.wasm -o pkg-names/tidings_bg.wasm
