#!/usr/bin/env bash
# Trains the shipped model pair from scratch on this machine (CPU, 2 threads)
# and copies the results into models/zoo/. Deterministic for a fixed machine:
# the corpus, tokenizer, initialisation and data order all derive from seeds.
#   bash scripts/train_zoo.sh            # corpus + target (two stages) + draft
#   bash scripts/train_zoo.sh draft      # only the draft (needs build/zoo/corpus.jsonl)
# Both models use the committed tokenizer (models/zoo/tokenizer), so they
# always share it. The target trains in two stages: 850 steps from a random
# initialisation, then 900 more from those weights at a lower peak learning
# rate (how the shipped target was made, session by session).
# Measured times and losses: models/zoo/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
seed=build/launch/seed
export OMP_WAIT_POLICY=passive  # idle OpenMP threads sleep instead of spinning

if [ "${1:-all}" = all ]; then
  mkdir -p build/zoo
  # Game of 24 (the 100 test puzzles never appear) and Blocksworld, from seed 7.
  $seed corpus --out build/zoo/corpus.jsonl --seed 7 \
    --game24-propose 20000 --game24-value 30000 --game24-cot 8000 \
    --blocksworld-next-action 600 --blocksworld-evaluate-action 600 --blocksworld-plan 400
  rm -rf build/zoo/tiny-target-base build/zoo/tiny-target
  $seed train --config models/zoo/tiny-target.train.json     # stage 1 -> build/zoo/tiny-target-base
  $seed train --config models/zoo/tiny-target.continue.json  # stage 2 -> build/zoo/tiny-target
fi
rm -rf build/zoo/tiny-draft
$seed train --config models/zoo/tiny-draft.train.json

for model in tiny-target tiny-draft; do
  mkdir -p models/zoo/$model
  cp build/zoo/$model/{config.json,model.safetensors,tokenizer.model,training_log.json} models/zoo/$model/
done
$seed eval game24 --model models/zoo/tiny-target --draft models/zoo/tiny-draft --json build/zoo/eval.json
