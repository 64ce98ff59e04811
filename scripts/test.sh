#!/usr/bin/env bash
# Builds seed and runs the whole test suite (ctest prints the summary).
# --sanitize thread: ThreadSanitizer over the threaded suites instead, in
# build-thread (scripts/sanitizers/thread.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --sanitize ]; then
  [ "${2:-}" = thread ] || { echo "test.sh: --sanitize takes thread, got '${2:-}'" >&2; exit 2; }
  exec bash scripts/sanitizers/thread.sh
fi
bash scripts/setup.sh --test
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 900
