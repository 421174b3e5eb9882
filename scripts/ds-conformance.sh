#!/usr/bin/env bash
# The Durable Streams client conformance suite (durable-streams/durable-streams,
# packages/client-conformance-tests) against tidings in headless Chromium
# (scripts/ds-conformance/adapter.mjs), and against the protocol's own
# TypeScript client for comparison.
#
#   scripts/ds-conformance.sh <suite checkout> [ours|theirs|both] [runner options…]
#
# <suite checkout>: a clone of durable-streams/durable-streams. Its
# conformance package is copied to target/ds-conformance/suite (never into
# this repository) and its result checks made strict there (strict.mjs); the
# runner's dependencies go to target/ds-conformance/node_modules (not our
# package.json). Needs pkg/ (scripts/build-pkg.sh) and /usr/bin/chromium.
# Each run's output: target/ds-conformance/<who>-<suite>.log (ours-fixtures-… with DS_FIXTURES); the summary
# (pass / fail / skip per suite) is printed at the end.
# DS_SUITES: the suites to run (default "consumer lifecycle producer").
# DS_UNSKIP=1: also the cases the suite skips for every client (below).
# DS_FIXTURES=http: the adapter answers create/connect/head/delete with plain
# HTTP from Node instead of "not supported" (see adapter.mjs).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

checkout=${1:?usage: scripts/ds-conformance.sh <durable-streams checkout> [ours|theirs|both] [runner options]}
who=${2:-both}
shift $(( $# >= 2 ? 2 : 1 ))
extra=("$@")
pkg_src="$checkout/packages/client-conformance-tests"
[ -f "$pkg_src/src/cli.ts" ] || { echo "ds-conformance: $pkg_src/src/cli.ts not found" >&2; exit 1; }
[ "$who" = theirs ] || [ -f pkg/tidings.js ] || { echo "ds-conformance: pkg/ not built (scripts/build-pkg.sh)" >&2; exit 1; }

scratch="$root/target/ds-conformance"
mkdir -p "$scratch"
if [ ! -x "$scratch/node_modules/.bin/tsx" ] || [ ! -d "$scratch/node_modules/@durable-streams/client" ]; then
  npm install --prefix "$scratch" --no-audit --no-fund --no-save \
    tsx@4.23 yaml@2.9 fast-check@4.11 @durable-streams/client@0.2.7 @durable-streams/server@0.3.7
fi
rm -rf "$scratch/suite"
cp -r "$pkg_src" "$scratch/suite"
rm -rf "$scratch/suite/node_modules"
node scripts/ds-conformance/strict.mjs "$scratch/suite/src/runner.ts"
# DS_UNSKIP=1: run the cases the suite marks `skip:` for every client too
# (two SSE base64 cases, "Swift implementation broken"), to see how tidings fares.
if [ -n "${DS_UNSKIP:-}" ]; then
  find "$scratch/suite/test-cases" -name '*.yaml' -exec sed -i -E '/^ +skip: /d' {} +
fi
commit=$(git -C "$checkout" rev-parse --short=8 HEAD 2>/dev/null || echo unknown)
echo "ds-conformance: suite at $commit, strict checks; logs in $scratch"

export PATH="$scratch/node_modules/.bin:$PATH"
run() { # <who> <suite> <adapter>
  local name=$1
  [ "$1" = ours ] && [ -n "${DS_FIXTURES:-}" ] && name="ours-fixtures"
  local log="$scratch/$name-$2.log"
  (cd "$scratch/suite" && tsx src/cli.ts --run "$3" --suite "$2" ${extra[@]+"${extra[@]}"}) >"$log" 2>&1 || true
  printf '%-14s %-10s %s\n' "$name" "$2" "$(grep -E '^(Passed|Failed|Skipped|Total):' "$log" | tr '\n' ' ')"
}
for suite in ${DS_SUITES:-consumer lifecycle producer}; do
  if [ "$who" = ours ] || [ "$who" = both ]; then run ours "$suite" "$root/scripts/ds-conformance/adapter.mjs"; fi
  if [ "$who" = theirs ] || [ "$who" = both ]; then run theirs "$suite" ts; fi
done
