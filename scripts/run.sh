#!/usr/bin/env bash
# The main job on the shipped default: builds seed, then streams the zoo
# target's proposals for a Game-of-24 puzzle (models/zoo/README.md says how
# competent the pair is).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build/launch/seed --threads 1 generate --model models/zoo/tiny-target \
  --prompt $'Input: 4 9 10 13\nPossible next steps:\n' --max-new-tokens 256 --temperature 0.7 --seed 1
