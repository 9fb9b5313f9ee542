#!/usr/bin/env bash
# The main job: set up, build, and evolve a faster kernel for a bundled task.
#   scripts/run.sh [TASK] [kevo evolve options...]     e.g. scripts/run.sh softmax --model anthropic:claude-sonnet-4-5
# With no --model (and no [llm] config) kevo evolve tunes the constants the baseline marks tunable
# and says how to configure a model. Without a GPU it can only compile: it checks the task's
# baseline and a known-good candidate with `kevo eval --compile-only`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh >/dev/null
TASK=${1:-softmax}
shift || true
./build/bin/kevo doctor || true
if nvidia-smi -L >/dev/null 2>&1; then
  exec ./build/bin/kevo evolve "$TASK" "$@"
else
  echo "No GPU here: kevo evolve needs one to check and time candidates. Compile and static checks only:"
  ./build/bin/kevo eval "$TASK" --baseline --compile-only
  exec ./build/bin/kevo eval softmax tests/gpu/kernels/good/softmax_online.cu --compile-only
fi
