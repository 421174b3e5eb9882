#!/usr/bin/env bash
# make fuzz: every cargo-fuzz target of fuzz/ for FUZZ_S seconds (default
# 120), printing executions and crashes per target; exit 1 on any crash.
# FUZZ_TARGETS picks targets (default: all). FUZZ_SEED fixes libFuzzer's
# seed (default: a new one each run); `make test`'s smoke fixes it, so the
# mutations it tries are the same on every run and a finding reproduces. Seeds come from fuzz/corpus/<t>
# (committed, small); what the fuzzer adds goes to target/fuzz-corpus/<t>
# (not committed). A crash's input is saved under fuzz/artifacts/<t>/: copy
# it to fuzz/regressions/<t>/ so `cargo test -p tidings-core --test
# fuzz_regressions` replays it for good.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_S=${FUZZ_S:-120}
TARGETS=${FUZZ_TARGETS:-sse http_hints validators json_envelope crosstab_wire engine}
command -v cargo-fuzz >/dev/null || scripts/bootstrap.sh fuzz
build_start=$(date +%s)
(cd fuzz && cargo +nightly fuzz build -O 2>&1 | grep -v '^ *Compiling' || true)
echo "fuzz: build $(( $(date +%s) - build_start )) s"
fail=0
for t in $TARGETS; do
  mkdir -p "target/fuzz-corpus/$t" "fuzz/corpus/$t" "fuzz/artifacts/$t"
  before=$(ls "fuzz/artifacts/$t" | wc -l)
  log="target/fuzz-corpus/$t.log"
  # -rss_limit_mb: a leak or a runaway buffer is a crash too.
  (cd fuzz && cargo +nightly fuzz run -O "$t" "../target/fuzz-corpus/$t" "corpus/$t" -- \
    -max_total_time="$FUZZ_S" ${FUZZ_SEED:+-seed="$FUZZ_SEED"} -print_final_stats=1 -rss_limit_mb=1024 -max_len=4096 \
    >"../$log" 2>&1) || true
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  crashes=$(( $(ls "fuzz/artifacts/$t" | wc -l) - before ))
  echo "fuzz: $t executions=${execs:-0} crashes=$crashes seconds=$FUZZ_S"
  if [ "$crashes" -gt 0 ] || [ -z "$execs" ]; then
    fail=1
    grep -m3 -E 'panicked|ERROR|SUMMARY' "$log" | sed "s/^/fuzz: $t: /" || true
    ls -t "fuzz/artifacts/$t" | head -3 | sed "s|^|fuzz: $t: input fuzz/artifacts/$t/|"
  fi
done
exit $fail
