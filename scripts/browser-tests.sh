#!/usr/bin/env bash
# Browser tests against a reference server on a free loopback port:
#  1. wasm-bindgen tests in headless Chromium (`wasm-pack test`), cross-origin
#     (the test page is served by the test runner);
#  2. Playwright (playwright-core + /usr/bin/chromium) on pages the reference
#     server serves, same-origin; these start their own servers.
set -euo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
target/release/tidings-server --port 0 --www www --pkg pkg >"$log" 2>&1 &
pid=$!
trap 'kill -INT $pid 2>/dev/null; wait $pid 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 100); do
  url=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$log" | head -1)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "${url:-}" ] || { echo "reference server did not start:"; cat "$log"; exit 1; }
echo "browser-tests: reference server at $url"

# `--features rust`: the Rust API's tests (tests/browser_rust_api.rs) too.
TIDINGS_TEST_SERVER="$url" wasm-pack --log-level warn test --headless --chrome --features rust
# The spec reporter prints every test with its duration; e2e-durations.mjs adds
# the 10 slowest files at the end. A test still running after 4 minutes (the
# slowest passes in about 35 s) fails, and a file whose test left a loop
# running exits when its tests end, so a hang costs minutes, not the CI run.
node --test --test-timeout=240000 --test-force-exit --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=./scripts/e2e-durations.mjs --test-reporter-destination=stdout tests/e2e/
