#!/usr/bin/env bash
# The main job on the shipped default: builds seed, then streams a completion.
# Until the model zoo lands (issue 3) the model is a random-weight tiny Llama
# written by the test tool, so the text is gibberish; the path is the real one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
model=build/tiny-model
[ -f "$model/model.safetensors" ] || build/tests/make_tiny_model --out "$model"
build/launch/seed --threads 1 generate --model "$model" \
  --prompt "4 9 10 13. Steps: 13 - 9 = 4 (left: 4 4 10)" --max-new-tokens 48 --temperature 0.8 --seed 1
