#!/usr/bin/env bash
# Builds seed and runs the whole test suite (ctest prints the summary).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 900
