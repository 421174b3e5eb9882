#!/usr/bin/env bash
# What a Rust app pays for tidings (docs/size.md, docs/rust.md): the example app
# (examples/rust-app, tidings with `rust` and `send` only) built as an app builds
# it (stable toolchain, wasm-bindgen --target web), with tidings minus the same
# app without it (`--no-default-features`: the page, no subscription), gzip -9
# of the wasm and of the JS glue. Two rows: the plain `release` profile with no
# wasm-opt (printed only), and the profile docs/rust.md recommends
# (`opt-level = "z"`, `lto = true`, then `wasm-opt -Oz`), checked against
# RUST_APP_CEILING (its first argument; exit status 1 above it).
set -euo pipefail
cd "$(dirname "$0")/.."
CEILING=${1:-}

gz() { gzip -9c "$1" | wc -c; }
# pay LABEL WITH WITHOUT: print the difference per file; its total in PAID.
pay() {
  echo "$1, gzip -9:"
  PAID=0
  local f w wo d
  for f in app_bg.wasm app.js; do
    w=$(gz "$2/$f"); wo=$(gz "$3/$f"); d=$(( w - wo )); PAID=$(( PAID + d ))
    printf '  %-12s with tidings %8d  without %8d  difference %8d bytes\n' "$f" "$w" "$wo" "$d"
  done
  echo "  a Rust app pays $PAID bytes gzip for tidings (wasm + JS glue)"
}

STABLE="stable $(rustc --version | cut -d' ' -f2)"
WITH=target/example-app/size-with
WITHOUT=target/example-app/size-without
OUT=$WITH scripts/build-example.sh
OUT=$WITHOUT FEATURES=--no-default-features scripts/build-example.sh
pay "Rust app (examples/rust-app; $STABLE, release profile, wasm-bindgen, no wasm-opt)" "$WITH" "$WITHOUT"

# The recommended profile, in its own target dir (the plain build stays warm
# for the e2e test's example).
export CARGO_PROFILE_RELEASE_OPT_LEVEL=z CARGO_PROFILE_RELEASE_LTO=true
export TDIR=target/example-app/cargo-small
OPT=(node_modules/.bin/wasm-opt -Oz --enable-bulk-memory --enable-sign-ext --enable-mutable-globals
  --enable-nontrapping-float-to-int --enable-multivalue --enable-reference-types)
for d in with without; do
  out=target/example-app/size-small-$d
  features=""
  [ "$d" = without ] && features=--no-default-features
  OUT=$out FEATURES=$features scripts/build-example.sh
  "${OPT[@]}" "$out/app_bg.wasm" -o "$out/app_bg.wasm"
done
pay "Rust app, recommended profile ($STABLE, opt-level z, lto, wasm-opt -Oz)" \
  target/example-app/size-small-with target/example-app/size-small-without
if [ -n "$CEILING" ]; then
  echo "  gzip ceiling $CEILING"
  if [ "$PAID" -gt "$CEILING" ]; then
    echo "FAIL: Rust app (recommended profile): $PAID gzip bytes > ceiling $CEILING"
    exit 1
  fi
fi
