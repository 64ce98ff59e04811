#!/usr/bin/env bash
# Configures a sanitizer build of seed and prints its folder.
#   configure_sanitized.sh LIST   g++ with -fsanitize=LIST (e.g. address,undefined)
#                                 in build-<LIST>, commas made dashes: the
#                                 compiler, libstdc++ and OpenMP runtime
#                                 (libgomp, libtorch's own) of the release build
#   configure_sanitized.sh fuzz   clang++-14 with ASan + UBSan and the libFuzzer
#                                 targets of tests/fuzz, in build-fuzz
# Both use -O1 with line tables: readable sanitizer stacks, asserts kept,
# quick to compile.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$1" = fuzz ]; then
  dir=build-fuzz
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DCMAKE_CXX_COMPILER=clang++-14 -DSEED_SANITIZE=address,undefined -DSEED_FUZZERS=ON >&2
else
  dir=build-${1//,/-}
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DCMAKE_CXX_COMPILER=g++ -DSEED_SANITIZE="$1" >&2
fi
echo "$dir"
