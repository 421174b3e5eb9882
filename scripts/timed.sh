#!/usr/bin/env bash
# Runs one phase of `make test` and says when it started, how long it took and
# the run's total so far, so a slow CI log shows where the time went:
#   scripts/timed.sh lint cargo fmt --all -- --check
#   [make test 14:52:03] lint: start
#   [make test 14:53:27] lint: 84 s (total 312 s)
# The total counts from TIMED_T0 (epoch seconds; the `test` target sets it once),
# else from this phase's start. The phase's exit status is passed on.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: scripts/timed.sh <phase> <command> [args...]" >&2; exit 2; }
phase=$1
shift
start=$(date +%s)
t0=${TIMED_T0:-$start}
echo "[make test $(date -u +%H:%M:%S)] $phase: start"
"$@"
rc=$?
end=$(date +%s)
status="$((end - start)) s"
[ "$rc" -eq 0 ] || status="FAILED (exit $rc) after $status"
echo "[make test $(date -u +%H:%M:%S)] $phase: $status (total $((end - t0)) s)"
exit "$rc"
