#!/usr/bin/env bash
# Builds seed's libFuzzer targets (clang++-14, ASan + UBSan, in
# build-fuzz) and runs TARGET, or every target, for SECONDS
# each (default 60), starting from tests/fuzz/corpus/TARGET. Prints each
# target's executions and coverage; exits non-zero if any target crashed,
# leaked, timed out or ran out of memory (the input is kept as
# build-fuzz/fuzz/TARGET/crash-*, and reproduces with
# `build-fuzz/tests/fuzz/TARGET_fuzz FILE`).
#
#   scripts/fuzz.sh                   every target, 60 s each
#   scripts/fuzz.sh wire 600          one target
#   FUZZ_RUNS=10000000 scripts/fuzz.sh wire   stop after that many executions
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-all}
seconds=${2:-60}
root=$PWD
dir=$(bash scripts/configure_sanitized.sh fuzz)
cmake --build "$dir" --target seed_fuzzers -j "${JOBS:-$(nproc)}"
source scripts/sanitizers/options.sh
# Targets whose parser reads files write each input to a scratch file: in
# memory where /dev/shm allows.
[ -w /dev/shm ] && export TMPDIR=${TMPDIR:-/dev/shm}

targets=()
for binary in "$dir"/tests/fuzz/*_fuzz; do
  name=$(basename "$binary" _fuzz)
  [ "$target" = all ] || [ "$target" = "$name" ] && targets+=("$name")
done
((${#targets[@]})) || { echo "fuzz: no target '$target' (see tests/fuzz/)" >&2; exit 2; }

failed=()
for name in "${targets[@]}"; do
  work=$dir/fuzz/$name
  mkdir -p "$work/corpus"
  dict=()
  case $name in
    chat_template) dict=(-dict="$root/tests/fuzz/jinja.dict") ;;
    model_config | generation_config | tokenizer_config | hf_tokenizer | task | train_config | sweep_config)
      dict=(-dict="$root/tests/fuzz/json.dict") ;;
  esac
  # -timeout: no input should take 30 s, even under ASan on a busy machine;
  # -rss_limit_mb / -malloc_limit_mb: a parser must refuse an input that
  # asks for gigabytes rather than try to allocate them.
  status=0
  (cd "$work" && "$root/$dir/tests/fuzz/${name}_fuzz" -max_total_time="$seconds" -runs="${FUZZ_RUNS:--1}" \
    -timeout=30 -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$PWD/" \
    "${dict[@]}" corpus "$root/tests/fuzz/corpus/$name") >"$work/log" 2>&1 || status=$?
  runs=$(grep -o '^stat::number_of_executed_units: *[0-9]*' "$work/log" | grep -o '[0-9]*$' || echo 0)
  took=$(grep -o '^stat::average_exec_per_sec: *[0-9]*' "$work/log" | grep -o '[0-9]*$' || echo 0)
  coverage=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$work/log" | tail -1 || true)
  printf '%-18s %12s execs %8s/s  %s  %s\n' "$name" "$runs" "$took" "${coverage:-cov: ? ft: ?}" \
    "$([ $status = 0 ] && echo ok || echo "FAILED (exit $status, $work/log)")"
  if [ $status != 0 ]; then
    failed+=("$name")
    grep -E '^==[0-9]+==ERROR|^SUMMARY|runtime error|uncaught exception|Test unit written' "$work/log" | head -5 >&2 || true
  fi
done
((${#failed[@]} == 0)) || { echo "fuzz: ${failed[*]} failed" >&2; exit 1; }
