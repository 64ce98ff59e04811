#!/usr/bin/env bash
# The GPU figures of docs/performance.md in one run, on one device:
#   1. the CUDA tests (CUDA equals the CPU and transformers; the chi-square
#      and greedy == ar tests of every engine, verifying on the device);
#   2. ToT-BFS on 3 puzzles with ar, ar-batch and seed-batch (the same
#      answers and tokens, and the speedups);
#   3. decode and k-token verification of the zoo target, and of a
#      Llama-3.2-1B-shaped model in bfloat16 after 16, 2,048 and 8,192
#      cached tokens;
#   4. the engines side by side (bench spec);
#   5. the 1B shape again gathering keys instead of reading the paged cache
#      in place, and a Qwen3-0.6B-shaped model after 16 and 8,192;
#   6. where mpirun is installed (or the dependency kit's), the search of
#      step 2 under mpirun -n 2 with --device cuda: rank 0 the target, rank
#      1 the drafts, each on its node's GPU in turn (one GPU: both on it).
# The most wanted figures come first, so that a run cut short by a time
# limit has them. Every command's output goes to OUT/log.txt as it runs,
# JSON figures beside it.
#
#   scripts/gpu_figures.sh [DEVICE] [OUT]   default: cuda:0 results/gpu-figures
#
# Needs a configured build folder (scripts/setup.sh --cuda, with --deps
# FILE from scripts/dependency_kit.sh where the machine has no apt-get),
# where it builds the four binaries it runs, and about
# 11 GB of free disk for the 1B and 0.6B shapes; WITH_8B=1 adds the
# Llama-3.1-8B shape (40 GB of disk).
set -euo pipefail
cd "$(dirname "$0")/.."

device=${1:-cuda:0}
out=${2:-results/gpu-figures}
seed=build/launch/seed
mkdir -p "$out"
log=$out/log.txt
: >"$log"
echo "== building the binaries these figures run" | tee -a "$log"
cmake --build build -j "$(nproc)" --target seed make_tiny_model models_test spec_test >>"$log" 2>&1 ||
  { tail -30 "$log" >&2; exit 1; }

# Runs a command, its output into the log; a failure is reported at the
# end and does not stop the figures after it.
failed=()
step() {
  echo "== $*" | tee -a "$log"
  "$@" 2>&1 | tee -a "$log" || failed+=("$*")
}

# A model folder of a bench/configs shape in bfloat16, written once.
shape() {
  local name=$1 folder=$out/$1
  if [[ ! -f $folder/config.json ]]; then
    build/tests/make_tiny_model --config "bench/configs/$name.json" --out "$folder-f32" >>"$log"
    "$seed" convert --model "$folder-f32" --out "$folder" --dtype bfloat16 >>"$log"
    rm -r "$folder-f32"
  fi
  echo "$folder"
}

if [[ $device == cuda* ]] && command -v nvidia-smi >/dev/null; then
  step nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
fi

step build/tests/models_test --gtest_filter='*Cuda*:*Golden*:*Qwen3*:*qwen3*:PaddedBatch*:ForwardGraphs*:CapturedShapes*'
step build/tests/spec/spec_test --gtest_filter='*Cuda*:*Summar*:LogitSummary*'

for engine in ar ar-batch seed-batch; do
  step "$seed" run --task tasks/game24 --search bfs --engine "$engine" --device "$device" --limit 3 \
    --out "$out/bfs-$engine"
done
step "$seed" bench forward --model models/zoo/tiny-target --device "$device" --json "$out/forward-zoo.json"
l1b=$(shape llama-3.2-1b)
step "$seed" bench forward --model "$l1b" --device "$device" --context-tokens 16 2048 8192 --json "$out/forward-1b.json"
if [[ ${WITH_8B:-0} == 1 ]]; then
  l8b=$(shape llama-3.1-8b)
  step "$seed" bench forward --model "$l8b" --device "$device" --context-tokens 16 2048 --json "$out/forward-8b.json"
fi

step "$seed" bench spec --device "$device" --n 1 3 --temperatures 0 1.0 --engines ar ar-batch sd seed-batch --repeats 3 \
  --json "$out/spec.json"

step "$seed" bench forward --model "$l1b" --device "$device" --context-tokens 16 2048 8192 --gather-attention \
  --json "$out/forward-1b-gathered.json"
q06=$(shape qwen3-0.6b)
step "$seed" bench forward --model "$q06" --device "$device" --context-tokens 16 8192 --json "$out/forward-qwen3-0.6b.json"

# The dependency kit's mpirun where the machine has none of its own.
kit_mpi=build-deps/seed-deps/mpi-env.sh
if ! command -v mpirun >/dev/null && [[ -f $kit_mpi ]]; then
  source "$kit_mpi"
fi
if [[ $device == cuda* ]] && command -v mpirun >/dev/null; then
  step launch/mpirun.sh -n 2 -- "$seed" run --task tasks/game24 --search bfs --engine seed --device cuda --limit 3 \
    --out "$out/bfs-seed-ranks"
fi

if ((${#failed[@]})); then
  printf 'failed: %s\n' "${failed[@]}" | tee -a "$log" >&2
  exit 1
fi
