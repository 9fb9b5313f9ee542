#!/usr/bin/env bash
# Copies the binaries the GPU check needs, without debug info, into .carry/ (git-ignored), so they
# fit the device tool's 64 MiB carry limit: pass `carry: [".carry"]` and run
#   scripts/gpu-check.sh .carry
set -euo pipefail
B=${1:-build}
rm -rf .carry && mkdir -p .carry/bin .carry/tests/gpu
for f in kevo kevo-runner; do objcopy --strip-debug "$B/bin/$f" ".carry/bin/$f"; done
objcopy --strip-debug "$B/tests/gpu/gpu_eval_test" .carry/tests/gpu/gpu_eval_test
du -sh .carry
