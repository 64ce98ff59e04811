#!/usr/bin/env bash
# Trains the shipped model pair from scratch on this machine (CPU, 2 threads)
# and copies the results into models/zoo/. Deterministic for a fixed machine:
# the corpus, tokenizer, initialisation and data order all derive from seeds.
#   bash scripts/train_zoo.sh            # corpus, target, draft, EDD draft
#   bash scripts/train_zoo.sh target     # corpus and target only
#   bash scripts/train_zoo.sh draft      # draft only (needs build/zoo/corpus.jsonl)
#   bash scripts/train_zoo.sh edd        # EDD draft of models/zoo/tiny-target only (needs the corpus)
#   bash scripts/train_zoo.sh prm        # the process reward model only (its own corpus)
# Both models use the committed tokenizer (models/zoo/tokenizer), so they
# always share it. The target multiplies in bfloat16 (mixed precision:
# "precision" in its config), about twice as fast as float32 on CPUs with
# AVX512_BF16; `seed train` warns where the CPU lacks it.
# Measured times and losses: models/zoo/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
which="${1:-all}"
case "$which" in all | target | draft | edd | prm) ;; *) echo "usage: $0 [all|target|draft|edd|prm]" >&2; exit 2 ;; esac
bash scripts/setup.sh
seed=build/launch/seed
export OMP_WAIT_POLICY=passive  # idle OpenMP threads sleep instead of spinning

ship() {  # copies build/zoo/$1 into models/zoo/$1
  mkdir -p "models/zoo/$1"
  cp "build/zoo/$1"/{config.json,model.safetensors,tokenizer.model,training_log.json} "models/zoo/$1/"
}

if [ "$which" = all ] || [ "$which" = target ]; then
  mkdir -p build/zoo
  # Game of 24 (the 100 test puzzles never appear) and Blocksworld, from seed 7.
  $seed corpus --out build/zoo/corpus.jsonl --seed 7 \
    --game24-propose 22000 --game24-value 20000 --game24-cot 8000 \
    --blocksworld-next-action 600 --blocksworld-evaluate-action 600 --blocksworld-plan 400
  rm -rf build/zoo/tiny-target
  $seed train --config models/zoo/tiny-target.train.json
  ship tiny-target
fi
if [ "$which" = all ] || [ "$which" = draft ]; then
  rm -rf build/zoo/tiny-draft
  $seed train --config models/zoo/tiny-draft.train.json
  ship tiny-draft
fi
if [ "$which" = all ] || [ "$which" = edd ]; then
  # One decoder layer reading tiny-target's hidden states (1 thread,
  # bfloat16 products); shipped with bfloat16 matrices like the others.
  rm -rf build/zoo/tiny-edd build/zoo/tiny-edd.bf16
  $seed train --config models/zoo/tiny-edd.train.json
  $seed convert --model build/zoo/tiny-edd --out build/zoo/tiny-edd.bf16 --dtype bfloat16
  rm -rf models/zoo/tiny-edd
  mkdir -p models/zoo/tiny-edd
  cp build/zoo/tiny-edd.bf16/{config.json,model.safetensors,tokenizer.model,training_log.json} models/zoo/tiny-edd/
  [ "$which" = edd ] && exit 0
fi
if [ "$which" = all ] || [ "$which" = prm ]; then
  # Step rewards labelled by the exact solver (the test puzzles never appear):
  # every state one and two steps from the training puzzles, and random paths;
  # it starts from models/zoo/tiny-target's weights (tiny-prm.train.json's
  # "init"); prm.json (its step tag and labels) is committed beside them.
  mkdir -p build/zoo
  $seed corpus --out build/zoo/prm-corpus.jsonl --seed 11 --game24-propose 0 --game24-value 0 --game24-cot 0 \
    --game24-prm 20000 --game24-prm-states --blocksworld-next-action 0 --blocksworld-evaluate-action 0 --blocksworld-plan 0
  rm -rf build/zoo/tiny-prm build/zoo/tiny-prm.bf16
  $seed train --config models/zoo/tiny-prm.train.json
  $seed convert --model build/zoo/tiny-prm --out build/zoo/tiny-prm.bf16 --dtype bfloat16
  cp build/zoo/tiny-prm.bf16/{config.json,model.safetensors,tokenizer.model} build/zoo/tiny-prm/training_log.json \
    models/zoo/tiny-prm/
  [ "$which" = prm ] && exit 0
fi
$seed eval game24 --model models/zoo/tiny-target --draft models/zoo/tiny-draft --json build/zoo/eval.json
