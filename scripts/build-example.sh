#!/usr/bin/env bash
# Build the example Rust app (examples/rust-app: a page on the tidings Rust
# API) as an app would build it: the stable toolchain, the `release` profile,
# wasm-bindgen `--target web`; no wasm-opt. Output: target/example-app/www
# (index.html, app.js, app_bg.wasm), which the reference server serves with
# `--www` (tests/e2e/rust-example.test.mjs opens it).
#
# FEATURES=--no-default-features OUT=…: the same app without tidings, for the
# marginal size `make size` prints (scripts/size-rust-app.sh), which also
# builds it with the recommended profile into its own TDIR=….
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-target/example-app/www}
TARGET=wasm32-unknown-unknown
# Its own target dir: the app's feature set must not disturb the warm
# builds of the package (features unify within one build).
TDIR=${TDIR:-target/example-app/cargo}
cargo build -q --release -p tidings-example-app --target "$TARGET" --target-dir "$TDIR" ${FEATURES:-}
mkdir -p "$OUT"
wasm-bindgen "$TDIR/$TARGET/release/tidings_example_app.wasm" --target web --out-dir "$OUT" --out-name app
cp examples/rust-app/index.html "$OUT/"
