#!/usr/bin/env bash
# kevo eval benchmarks, run on the GPU machine (scripts/gpu-check.sh calls this):
#  1. end-to-end `kevo eval` latency per candidate, cold (empty compile cache) and cached, next to
#     a PyTorch load_inline compile of the same kernel on the same machine;
#  2. the coefficient of variation of the reported median over 5 repeated evals of a ~1 ms kernel.
set -uo pipefail
B=$(realpath "${1:-build}")
K="$B/bin/kevo"
export PATH=/usr/local/cuda/bin:$PATH
CAND=tests/gpu/kernels/good/softmax_online.cu
now() { date +%s.%N; }
export KEVO_CACHE_DIR=$(mktemp -d)
t0=$(now); "$K" eval softmax $CAND --visible-only --seeds 3 --time-budget 1 > /tmp/bench-cold.txt; rc=$?; t1=$(now)
"$K" eval softmax $CAND --visible-only --seeds 3 --time-budget 1 > /tmp/bench-warm.txt; t2=$(now)
"$K" eval softmax $CAND --compile-only > /dev/null; t3=$(now)
cold=$(python3 -c "print(round($t1-$t0,2))"); warm=$(python3 -c "print(round($t2-$t1,2))"); conly=$(python3 -c "print(round($t3-$t2,2))")
grep -E "compile|VERDICT" /tmp/bench-cold.txt
echo "EVAL_COLD_SECONDS $cold (exit $rc)"
echo "EVAL_CACHED_SECONDS $warm"
echo "COMPILE_ONLY_CACHED_SECONDS $conly"
rm -rf "$KEVO_CACHE_DIR"; export KEVO_CACHE_DIR=$(mktemp -d)
t0=$(now); "$K" eval softmax $CAND --compile-only > /tmp/bench-c1.txt; t1=$(now)
echo "COMPILE_ONLY_COLD_SECONDS $(python3 -c "print(round($t1-$t0,2))")"
python3 bench/load_inline_bench.py $CAND 2>&1 | tail -2
# Repeatability of the reported median (same kernel, 5 separate evals).
meds=()
for i in 1 2 3 4 5; do
  m=$("$K" eval softmax $CAND --json --visible-only --seeds 1 --time-budget 2 |
      python3 -c 'import json,sys; j=json.load(sys.stdin); t=j["timing"]; print(t["candidate"]["median_ms"], t["speedup"]["value"])')
  echo "REPEAT $i median_ms,speedup $m"; meds+=("${m%% *}")
done
python3 -c 'import statistics as s,sys; v=[float(x) for x in sys.argv[1:]]; print(f"MEDIAN_CV {s.stdev(v)/s.mean(v)*100:.3f}% over {len(v)} evals (mean {s.mean(v):.4f} ms)")' "${meds[@]}"
