#!/usr/bin/env bash
# The main job: set up, build, and evaluate a candidate kernel on a bundled task (this becomes
# `kevo evolve` once the evolution engine lands; the command stays the same).
#   scripts/run.sh [TASK] [CANDIDATE.cu]
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh >/dev/null
TASK=${1:-softmax}
CAND=${2:-tests/gpu/kernels/good/softmax_online.cu}
./build/bin/kevo doctor || true
if nvidia-smi -L >/dev/null 2>&1; then
  exec ./build/bin/kevo eval "$TASK" "$CAND"
else
  echo "No GPU here: compile and static checks only (correctness and timing need a GPU)."
  exec ./build/bin/kevo eval "$TASK" "$CAND" --compile-only
fi
