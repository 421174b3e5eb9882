#!/usr/bin/env bash
# Build the npm package into pkg/: release wasm → wasm-bindgen (--target web)
# → wasm-opt (scripts/wasm-flags.sh) → the hand-written entry (js/: index.js over the glue, the
# curated index.d.ts) → package.json from pkg.json.template (its `files` say
# what `npm pack` ships: wasm-bindgen's own .d.ts files stay out).
#
# Size route (see docs/size.md): the release wasm is built with the nightly
# toolchain, `-Zbuild-std` and `-Cpanic=immediate-abort`, so no panic path links
# core::fmt's machinery. When no nightly toolchain is installed the same code
# builds on stable (bigger: std's panic formatting comes back) and says so; the
# `make size` ceiling is only checked against the nightly build. Both routes
# take the target CPU, wasm-bindgen and wasm-opt flags of scripts/wasm-flags.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/wasm-flags.sh

OUT=${OUT:-pkg}
# FEATURES=js: a build without `send` (the default features are js + send),
# to measure what a subscribe-only Rust app gets (docs/size.md). The package
# entry js/index.js imports `send`, so only the default build is a package.
FEATURE_ARGS=()
if [ -n "${FEATURES:-}" ]; then FEATURE_ARGS=(--no-default-features --features "$FEATURES"); fi
PROFILE=wasm-release
TARGET=wasm32-unknown-unknown

if rustup run nightly rustc --version >/dev/null 2>&1 \
  && rustup +nightly component list --installed 2>/dev/null | grep -q '^rust-src'; then
  echo "build-pkg: nightly $(rustup run nightly rustc --version | cut -d' ' -f2-) with build-std + panic=immediate-abort"
  TDIR=target/wasm-nightly
  # location-detail=none: no file/line strings for panic locations (a panic
  # traps, nobody reads them); fmt-debug=none: `{:?}` compiles to nothing.
  # Together −1.4 KB raw, −0.5 KB gzip (make size, 2026-11-29).
  RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort -Zlocation-detail=none -Zfmt-debug=none $WASM_RUSTFLAGS" \
    cargo +nightly build --lib --profile "$PROFILE" --target "$TARGET" --target-dir "$TDIR" \
    -Zbuild-std=std,panic_abort -q ${FEATURE_ARGS[@]+"${FEATURE_ARGS[@]}"}
  echo nightly > "$TDIR/route"
else
  echo "build-pkg: WARNING no nightly toolchain with rust-src; building on stable (larger wasm)"
  TDIR=target/wasm-stable
  RUSTFLAGS="$WASM_RUSTFLAGS" cargo build --lib --profile "$PROFILE" --target "$TARGET" --target-dir "$TDIR" -q ${FEATURE_ARGS[@]+"${FEATURE_ARGS[@]}"}
  echo stable > "$TDIR/route"
fi
WASM="$TDIR/$TARGET/$PROFILE/tidings.wasm"

rm -rf "$OUT" && mkdir -p "$OUT"
wasm-bindgen "$WASM" --target web --out-dir "$OUT" --out-name tidings "${WASM_BINDGEN_ARGS[@]}"
node_modules/.bin/wasm-opt "${WASM_OPT_ARGS[@]}" "$OUT/tidings_bg.wasm" -o "$OUT/tidings_bg.wasm"
# Short names for the glue's imports and the wasm's exports, in both files
# (wasm-bindgen's carry 16 hex digits of hash each: −5.4 KB gzip).
python3 scripts/short-imports.py "$OUT/tidings_bg.wasm" "$OUT/tidings.js"

cp js/index.js js/index.d.ts js/wasm-url.d.ts "$OUT/"
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
REPOSITORY=$(sed -n 's/^repository = "\(.*\)"/\1/p' Cargo.toml | head -1)
sed -e "s/@VERSION@/$VERSION/" -e "s|@REPOSITORY@|$REPOSITORY|" pkg.json.template > "$OUT/package.json"
# The package README (install, loading, the API example, a link here): the
# repo README's make commands and docs/ links mean nothing on npm.
sed "s|@REPOSITORY@|$REPOSITORY|" js/npm-README.md > "$OUT/README.md"
cp LICENSE-MIT LICENSE-APACHE "$OUT/"
cp "$TDIR/route" "$OUT/.build-route"
echo "build-pkg: $OUT/ ($(wc -c < "$OUT/tidings_bg.wasm") bytes wasm, $(wc -c < "$OUT/tidings.js") bytes JS glue, $(wc -c < "$OUT/index.js") bytes entry)"
