#!/usr/bin/env bash
# The main job on the shipped default: builds seed, then runs Tree-of-Thoughts
# BFS on the first Game-of-24 test puzzles with the zoo pair (models/zoo),
# once with plain autoregressive decoding (ar) and once with SEED's scheduled
# speculative decoding (seed-batch, seed run's default engine). Each run prints
# its accuracy and tokens/s; the seed-batch run compares itself with the ar
# run: the speedup, and how many answers agree (all of them: greedy
# speculation is lossless).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

puzzles=8  # about a minute for both runs on 2 cores
out=results/main-job
rm -rf "$out/ar" "$out/seed-batch"
for engine in ar seed-batch; do
  baseline=()
  [ "$engine" = seed-batch ] && baseline=(--baseline "$out/ar")
  echo
  echo "== ToT-BFS on $puzzles Game-of-24 puzzles, engine $engine"
  build/launch/seed run --task tasks/game24 --search bfs --engine "$engine" --limit "$puzzles" \
    --out "$out/$engine" "${baseline[@]}"
done
