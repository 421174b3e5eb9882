#!/usr/bin/env bash
# make bench: tidings side by side with the browser clients people use instead
# (native EventSource, @microsoft/fetch-event-source, a fixed-interval fetch
# poll loop), in headless Chromium on loopback. Prints one table (and writes
# it to target/bench/latest.md). Figures, not a test; about 6–10 minutes.
# BENCH_ONLY=ingest,latency,idle,hidden,leak,bundle runs a part (bench/run.mjs).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh build                       # toolchain + npm dev dependencies
[ -x /usr/bin/chromium ] || scripts/bootstrap.sh # the browser, when missing
scripts/build-pkg.sh                             # pkg/: what is measured (and make size's files)
mkdir -p target/bench
BENCH_OUT=${BENCH_OUT:-target/bench/latest.md} BENCH_JSON=${BENCH_JSON:-target/bench/latest.json} \
  node bench/run.mjs
