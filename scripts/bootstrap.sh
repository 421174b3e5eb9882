#!/usr/bin/env bash
# Install what the build and the tests need, only what is missing (idempotent).
# Everything comes from the package registries: rustup components, crates.io,
# Debian and npm. `bootstrap.sh build` skips the browsers (enough for `make demo`);
# `bootstrap.sh engines` adds only the browsers (what `make test-engines` needs beyond that).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
say() { echo "bootstrap: $*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"; rustup target add wasm32-unknown-unknown
fi
# The size route builds the release wasm on nightly (see scripts/build-pkg.sh);
# nightly itself cannot be fetched here, so only its parts are added when present.
if rustup toolchain list | grep -q '^nightly'; then
  rustup +nightly target list --installed | grep -qx wasm32-unknown-unknown \
    || { say "adding wasm32 to nightly"; rustup +nightly target add wasm32-unknown-unknown; }
  rustup +nightly component list --installed | grep -q '^rust-src' \
    || { say "adding rust-src to nightly"; rustup component add rust-src --toolchain nightly; }
fi

# The CLI must match the wasm-bindgen crate the build links: Cargo.lock's
# version (Cargo.toml has a caret requirement, so an app on a later 0.2 resolves).
WB=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ "$(wasm-bindgen --version 2>/dev/null | cut -d' ' -f2)" != "$WB" ]; then
  # Without --locked: the registry mirror lacks one locked dependency.
  say "installing wasm-bindgen-cli $WB (about 5 minutes)"; cargo install -q wasm-bindgen-cli --version "$WB"
fi

# A symlinked node_modules belongs to another checkout (a git worktree sharing
# it): `npm ci` through the link would empty that checkout's copy, so leave it.
if [ -L node_modules ]; then
  say "node_modules is a symlink: not reinstalled (run npm ci where it points)"
elif [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm dev dependencies"; npm ci --no-audit --no-fund --loglevel=error
fi

[ "$what" = build ] && exit 0

# `make fuzz` / the fuzz smoke: cargo-fuzz from crates.io, run on nightly.
if [ "$what" = fuzz ]; then
  if ! command -v cargo-fuzz >/dev/null; then
    say "installing cargo-fuzz (about 2 minutes of CPU)"; cargo install -q cargo-fuzz
  fi
  exit 0
fi

# The browsers, from Debian, with one `apt-get update` for whatever is missing:
# Chromium (+ chromedriver for `wasm-pack test`), and for the cross-engine suite
# (`make test`'s cross-engine phase, `make test-engines`) Firefox ESR, driven over
# WebDriver BiDi by playwright-core, and WebKitGTK, whose WebKitWebDriver (WebDriver
# classic) needs an X display: Xvfb. MiniBrowser comes with libwebkit2gtk-4.1-0.
browsers() {
  local missing=()
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  [ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
  [ -x /usr/bin/firefox-esr ] || missing+=(firefox-esr)
  command -v WebKitWebDriver >/dev/null || missing+=(webkit2gtk-driver)
  command -v Xvfb >/dev/null || missing+=(xvfb)
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing Debian ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

if [ "$what" = engines ]; then
  browsers
  say "engines ready"
  exit 0
fi

if ! command -v wasm-pack >/dev/null; then
  say "installing wasm-pack (about 3 minutes)"; cargo install -q wasm-pack
fi
browsers
scripts/nchan.sh ensure-packages
say "ready"
