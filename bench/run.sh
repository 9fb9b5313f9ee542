#!/usr/bin/env bash
# kevo eval benchmarks, run on the GPU machine (scripts/gpu-check.sh phase "bench"):
#  1. end-to-end `kevo eval` latency per candidate: first on the device (measures its ceilings),
#     cold (a never-compiled candidate) and cached, and with --host-data, with
#     where the time went (verdict phases), next to a PyTorch load_inline compile of the same
#     kernel on the same machine;
#  2. the coefficient of variation of the reported median over 5 repeated evals of a short
#     kernel (gemm_gelu_softmax's ~1.9 ms baseline, checked as a candidate: small inputs, so the
#     five evals are quick).
set -uo pipefail
B=$(realpath "${1:-build}")
K="$B/bin/kevo"
export PATH=/usr/local/cuda/bin:$PATH
CAND=tests/gpu/kernels/good/softmax_online.cu
PARTS=${BENCH_PARTS:-latency inline cv}  # a subset when a device call is short
part() { [[ " $PARTS " == *" $1 "* ]]; }
now() { date +%s.%N; }
secs() { python3 -c "print(round($2-$1,2))"; }
phases() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["outcome"], "total", round(j["seconds"],2), "s |", ", ".join(f"{k} {v:.2f} s" for k,v in j.get("phases",{}).items()), "| work", ", ".join(f"{k} {v:.2f} s" for k,v in j.get("work_seconds",{}).items()), "| compile", round(j.get("compile",{}).get("seconds",0),2), "s cached" if j.get("compile",{}).get("cache_hit") else "s")' "$1"; }
export KEVO_CACHE_DIR=$(mktemp -d)
if part latency; then
# 1. The first eval ever on this machine: also measures the device's ceilings (once per device).
t0=$(now); "$K" eval softmax $CAND --visible-only --seeds 3 --time-budget 1 --json > /tmp/bench-first.json; t1=$(now)
echo "EVAL_FIRST_ON_DEVICE_SECONDS $(secs $t0 $t1): $(phases /tmp/bench-first.json)"
# 2. Cold: a candidate never compiled before (a unique source, as every new LLM proposal is), the
#    baseline already in the cache as it is after a run's first candidate.
#    Three of them (each a new source), so one slow compile does not decide the figure.
colds=()
for i in 1 2 3; do
  COLD=/tmp/bench-cold-$$-$i.cu
  { cat $CAND; echo "// cold $i $(date +%s%N)"; } > $COLD
  t0=$(now); "$K" eval softmax $COLD --visible-only --seeds 3 --time-budget 1 --json > /tmp/bench-cold.json; rc=$?; t1=$(now)
  echo "EVAL_COLD_RUN $i $(secs $t0 $t1) (exit $rc): $(phases /tmp/bench-cold.json)"
  colds+=("$(secs $t0 $t1)")
done
echo "EVAL_COLD_MEDIAN_SECONDS $(python3 -c 'import statistics,sys; print(statistics.median(map(float,sys.argv[1:])))' "${colds[@]}")"
# 3. Cached: the same candidate again.
t1=$(now); "$K" eval softmax $COLD --visible-only --seeds 3 --time-budget 1 --json > /tmp/bench-warm.json; t2=$(now)
"$K" eval softmax $CAND --compile-only > /dev/null; t3=$(now)
# 4. The same eval with the checker drawing inputs and comparing on the CPU (--host-data).
"$K" eval softmax $CAND --visible-only --seeds 3 --time-budget 1 --json --host-data > /tmp/bench-host.json; t4=$(now)
echo "EVAL_CACHED_SECONDS $(secs $t1 $t2): $(phases /tmp/bench-warm.json)"
echo "COMPILE_ONLY_CACHED_SECONDS $(secs $t2 $t3)"
echo "EVAL_HOST_DATA_CACHED_SECONDS $(secs $t3 $t4): $(phases /tmp/bench-host.json)"
rm -rf "$KEVO_CACHE_DIR"; export KEVO_CACHE_DIR=$(mktemp -d)
t0=$(now); "$K" eval softmax $CAND --compile-only > /dev/null; t1=$(now)
echo "COMPILE_ONLY_COLD_SECONDS $(secs $t0 $t1)"
# nvcc's steps with the front ends in parallel (the default) vs plain nvcc (KEVO_NVCC_SERIAL=1),
# three new sources each, alternating; the figure is the verdict's compile seconds.
for i in 1 2 3; do
  for serial in 0 1; do
    S=/tmp/bench-compile-$$-$i-$serial.cu
    { cat $CAND; echo "// compile $i $serial $(date +%s%N)"; } > $S
    KEVO_NVCC_SERIAL=$serial "$K" eval softmax $S --compile-only --json > /tmp/bench-compile.json
    python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["compile"]; print("COMPILE_RUN", sys.argv[2], c.get("driver"), round(c["seconds"],3))' /tmp/bench-compile.json "$serial"
  done
done | tee /tmp/bench-compile.txt
python3 - <<'PY'
import statistics as st
rows=[l.split() for l in open("/tmp/bench-compile.txt") if l.startswith("COMPILE_RUN")]
par=[float(r[3]) for r in rows if r[1]=="0"]; ser=[float(r[3]) for r in rows if r[1]=="1"]
if par and ser:
    print(f"COMPILE_STEPS_VS_NVCC median {st.median(par):.3f} s (steps) vs {st.median(ser):.3f} s (plain nvcc): {st.median(ser)/st.median(par):.2f}x")
PY
fi
part inline && python3 bench/load_inline_bench.py $CAND 2>&1 | tail -2
part cv || exit 0
# Repeatability of the reported median (same kernel, 5 separate evals).
CV_TASK=gemm_gelu_softmax
meds=()
for i in 1 2 3 4 5; do
  m=$("$K" eval $CV_TASK tasks/$CV_TASK/baseline.cu --json --visible-only --seeds 1 --time-budget 2 |
      python3 -c 'import json,sys; j=json.load(sys.stdin); t=j["timing"]; print(t["candidate"]["median_ms"], t["speedup"]["value"], round(j["seconds"],1))')
  echo "REPEAT $i median_ms,speedup,eval_s $m"; meds+=("${m%% *}")
done
python3 -c 'import statistics as s,sys; v=[float(x) for x in sys.argv[1:]]; print(f"MEDIAN_CV {s.stdev(v)/s.mean(v)*100:.3f}% over {len(v)} evals (mean {s.mean(v):.4f} ms)")' "${meds[@]}"
