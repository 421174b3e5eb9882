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
# The "tidings" entry's stream handles (`stream()`: cargo feature stream-handles
# and the marked blocks of js/index.js and js/index.d.ts; docs/durable-streams.md
# "Stream handles"): 1 builds them in, 0 leaves them out.
STREAM_HANDLES=${STREAM_HANDLES:-1}
PROFILE=wasm-release
TARGET=wasm32-unknown-unknown
if rustup run nightly rustc --version >/dev/null 2>&1 \
  && rustup +nightly component list --installed 2>/dev/null | grep -q '^rust-src'; then
  echo "build-pkg: nightly $(rustup run nightly rustc --version | cut -d' ' -f2-) with build-std + panic=immediate-abort"
  ROUTE=nightly
else
  echo "build-pkg: WARNING no nightly toolchain with rust-src; building on stable (larger wasm)"
  ROUTE=stable
fi
TDIR=target/wasm-$ROUTE

# wasm_flavour FEATURES DIR [EXTRA]: the crate built with cargo FEATURES ("" =
# the default features, plus EXTRA) → DIR/tidings.js + DIR/tidings_bg.wasm (+ snippets/).
wasm_flavour() {
  local args=()
  if [ -n "$1" ]; then args=(--no-default-features --features "$1"); fi
  if [ -n "${3:-}" ]; then args=(--features "$3"); fi
  if [ "$ROUTE" = nightly ]; then
    # location-detail=none: no file/line strings for panic locations (a panic
    # traps, nobody reads them); fmt-debug=none: `{:?}` compiles to nothing.
    # Together −1.4 KB raw, −0.5 KB gzip (make size, 2026-11-29).
    # optimize_for_size: the standard library's own smaller implementations
    # (same results; −180, −50, −79 gzip on the three rows, docs/size.md).
    RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort -Zlocation-detail=none -Zfmt-debug=none $WASM_RUSTFLAGS" \
      cargo +nightly build --lib --profile "$PROFILE" --target "$TARGET" --target-dir "$TDIR" \
      -Zbuild-std=std,panic_abort -Zbuild-std-features=optimize_for_size -q ${args[@]+"${args[@]}"}
  else
    RUSTFLAGS="$WASM_RUSTFLAGS" cargo build --lib --profile "$PROFILE" --target "$TARGET" --target-dir "$TDIR" -q ${args[@]+"${args[@]}"}
  fi
  mkdir -p "$2"
  wasm-bindgen "$TDIR/$TARGET/$PROFILE/tidings.wasm" --target web --out-dir "$2" --out-name tidings "${WASM_BINDGEN_ARGS[@]}"
  node_modules/.bin/wasm-opt "${WASM_OPT_ARGS[@]}" "$2/tidings_bg.wasm" -o "$2/tidings_bg.wasm"
  # Short names for the glue's imports and the wasm's exports, in both files
  # (wasm-bindgen's carry 16 hex digits of hash each: −5.4 KB gzip).
  python3 scripts/short-imports.py "$2/tidings_bg.wasm" "$2/tidings.js"
}

rm -rf "$OUT" && mkdir -p "$OUT"
echo "$ROUTE" > "$OUT/.build-route"
# FEATURES=…: only that flavour into $OUT, to measure a feature set (e.g.
# FEATURES=js,talc,send; docs/size.md); not a package.
if [ -n "${FEATURES:-}" ]; then
  wasm_flavour "$FEATURES" "$OUT"
  echo "build-pkg: $OUT/ ($(wc -c < "$OUT/tidings_bg.wasm") bytes wasm, features $FEATURES; not a package)"
  exit 0
fi
# The package: every call ("tidings": index.js over tidings.js) and the
# receive-only flavour ("tidings/receive": receive.js over receive/), built
# without send, append, report, cross-tab, durable-streams, persist,
# post-streams and debug (README "Pay only for what you import").
# The full flavour last: scripts/names-build.sh reads the build it leaves.
wasm_flavour "js,talc" "$OUT/receive"
# A size row with no entry of its own (scripts/size.py measures it with
# receive.js): receive-only plus crossTab and the Durable Streams profile.
# In rows/, outside the package's `files`.
wasm_flavour "js,talc,cross-tab,durable-streams" "$OUT/rows/receive-tabs-durable"
handles=""
[ "$STREAM_HANDLES" = 1 ] && handles=stream-handles
wasm_flavour "" "$OUT" "$handles"

# The React hook (tidings/react, tidings/receive/react): files of their own, in no entry's bytes.
cp js/index.js js/index.d.ts js/subscription.js js/receive.js js/receive.d.ts js/wasm-url.d.ts \
  js/react.js js/react-hook.js js/react.d.ts js/receive-react.js js/receive-react.d.ts js/timeline.png "$OUT/"
if [ "$STREAM_HANDLES" != 1 ]; then
  sed -i '/stream-handles: begin/,/stream-handles: end/d' "$OUT/index.js" "$OUT/index.d.ts"
fi
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
sed -e "s/@VERSION@/$VERSION/" pkg.json.template > "$OUT/package.json"
# The package README (install, loading, the API example, a link here): the
# repo README's make commands and docs/ links mean nothing on npm.
cp js/npm-README.md "$OUT/README.md"
cp LICENSE-MIT LICENSE-APACHE "$OUT/"
for d in "$OUT" "$OUT/receive" "$OUT/rows/receive-tabs-durable"; do
  echo "build-pkg: $d/ ($(wc -c < "$d/tidings_bg.wasm") bytes wasm, $(wc -c < "$d/tidings.js") bytes JS glue)"
done
