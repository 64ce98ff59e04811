#!/usr/bin/env bash
# Configures a sanitizer build of seed with clang++-14 in build-<LIST>, e.g.
# build-address-undefined for LIST=address,undefined, and prints the folder.
# With address in LIST the folder also holds the libFuzzer targets (the
# libraries get coverage instrumentation, so one build serves
# scripts/fuzz.sh and scripts/test.sh --sanitize address,undefined).
set -euo pipefail
cd "$(dirname "$0")/.."
list=$1
dir=build-${list//,/-}
fuzzers=OFF
[[ ,$list, == *,address,* ]] && fuzzers=ON
# -O1 with line tables: readable sanitizer stacks, asserts kept, quick to compile.
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_CXX_COMPILER=clang++-14 -DSEED_SANITIZE="$list" -DSEED_FUZZERS=$fuzzers >&2
echo "$dir"
