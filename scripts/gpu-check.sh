#!/usr/bin/env bash
# The whole GPU check in one call, run on the GPU machine from the repo root with the build folder
# carried (built on the CPU machine: cmake -B build && ninja -C build). Logs go to $OUT.
#   scripts/gpu-check.sh [build-dir]
set -uo pipefail
B=$(realpath "${1:-build}")
OUT=${OUT:-/tmp/kevo-gpu-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
export KEVO_HOME=$(pwd) KEVO_BUILD=$B KEVO_CACHE_DIR=${KEVO_CACHE_DIR:-/tmp/kevo-cache}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
"$B/bin/kevo" doctor 2>&1 | tee "$OUT/doctor.txt"

# The GPU test label, sharded over 3 processes (the GPU is shared; correctness does not care, and
# every timing reported here is a same-run ratio).
pids=()
for i in 0 1 2; do
  GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i "$B/tests/gpu/gpu_eval_test" --gtest_color=no \
    > "$OUT/gpu-shard$i.txt" 2>&1 &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
cat "$OUT"/gpu-shard*.txt > "$OUT/gpu-tests.txt"
# The evolution engine end to end (scripted model, real GPU), alone on the GPU.
"$B/tests/gpu/evolve_e2e_test" --gtest_color=no > "$OUT/evolve-e2e.txt" 2>&1 || rc=1
grep -hE "^E2E|^\[  (FAILED|PASSED) " "$OUT/evolve-e2e.txt"
grep -hE "^(BASELINE|VERDICT|SPEEDUP|SANITIZE)" "$OUT"/gpu-shard*.txt | sort | tee "$OUT/summary.txt"
grep -hE "^\[  (FAILED|PASSED|SKIPPED) " "$OUT"/gpu-shard*.txt | sort | uniq -c | tee -a "$OUT/summary.txt"
if [ "${KEVO_BENCH:-0}" = 1 ] && [ -x bench/run.sh ]; then
  bench/run.sh "$B" 2>&1 | tee "$OUT/bench.txt"
fi
exit $rc
