#!/usr/bin/env bash
# Builds seed and runs the whole test suite (ctest prints the summary).
#
#   scripts/test.sh                          the Release build in build/
#   scripts/test.sh --sanitize LIST [CTEST_ARGS...]
#       a g++ build with -fsanitize=LIST in build-<LIST> (e.g.
#       address,undefined or thread; scripts/configure_sanitized.sh), every
#       finding fatal (scripts/sanitizers/options.sh). CTEST_ARGS (-R, -E,
#       -L) pick tests; TARGETS="a b" builds only those targets instead of
#       everything.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != --sanitize ]; then
  bash scripts/setup.sh --test
  ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 900
  exit
fi
[ $# -ge 2 ] || { echo "usage: scripts/test.sh --sanitize LIST [CTEST_ARGS...]" >&2; exit 2; }
list=$2
shift 2
# ThreadSanitizer runs the threaded suites its own way (scripts/sanitizers/thread.sh).
[ "$list" = thread ] && exec bash scripts/sanitizers/thread.sh
bash scripts/setup.sh --test --no-build
dir=$(bash scripts/configure_sanitized.sh "$list")
targets=()
for target in ${TARGETS:-}; do targets+=(--target "$target"); done
cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
source scripts/sanitizers/options.sh
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" --timeout 900 "$@"
