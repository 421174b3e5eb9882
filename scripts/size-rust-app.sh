#!/usr/bin/env bash
# What a Rust app pays for tidings (docs/size.md, docs/rust.md): the example app
# (examples/rust-app) built as an app builds it (stable toolchain, `release`
# profile, wasm-bindgen --target web, no wasm-opt), with tidings minus the
# same app without it (`--no-default-features`: the page, no subscription),
# gzip -9 of the wasm and of the JS glue. Printed by `make size`; not a test.
set -euo pipefail
cd "$(dirname "$0")/.."

WITH=target/example-app/size-with
WITHOUT=target/example-app/size-without
OUT=$WITH scripts/build-example.sh
OUT=$WITHOUT FEATURES=--no-default-features scripts/build-example.sh

gz() { gzip -9c "$1" | wc -c; }
echo "Rust app (examples/rust-app; stable $(rustc --version | cut -d' ' -f2), release profile, wasm-bindgen, no wasm-opt), gzip -9:"
total=0
for f in app_bg.wasm app.js; do
  w=$(gz "$WITH/$f"); wo=$(gz "$WITHOUT/$f"); d=$(( w - wo )); total=$(( total + d ))
  printf '  %-12s with tidings %8d  without %8d  difference %8d bytes\n' "$f" "$w" "$wo" "$d"
done
echo "  a Rust app pays $total bytes gzip for tidings (wasm + JS glue)"
