#!/usr/bin/env bash
# The whole GPU check, run on the GPU machine from the repo root with the build folder carried
# (built on the CPU machine, then scripts/pack-for-gpu.sh). Logs go to $OUT, written as they come.
#   scripts/gpu-check.sh [build-dir]
# KEVO_PHASES picks the phases (default: all, in this order), so the check can be split over
# several device calls of at most 10 minutes:
#   devdata    the device data plane: GPU input draws vs the host generator, IPC comparisons
#   probe      every task: baseline vs CPU reference on its non-main configs, main-config time
#   baselines  every task: `kevo eval --baseline` (the real checker, all configs)
#   kernels    the adversarial and good kernels of tests/gpu/kernels/manifest.toml, compute-sanitizer
#   e2e        the evolution engine end to end (scripted model, real kernels)
#   bench      bench/run.sh: eval latency cold/cached vs torch load_inline, median CV
#   suite      `kevo bench` of the quick suite, offline and with a scripted model, tables, report
#   torchoracle  the PyTorch oracle on the device data plane: real runners lend buffers to the
#              bridge through CUDA IPC (tests/torch/torch_oracle_gpu_test.cpp, ~1-2 min)
#   interop    KernelBench-format tasks against the PyTorch oracle, eager/compile, export --torch
#   kboracle   bench/kb_oracle.sh: 24 imported KernelBench level-1/2 problems, `kevo eval
#              --oracle-check` on each (every config on the device data plane, eager and
#              torch.compile timed, 6 at a time: times indicative only; ~3-5 min). The KernelBench
#              folder (level1/, level2/) is $KEVO_KB, default BUILD/kb (scripts/pack-for-gpu.sh
#              copies ../shared/kernelbench there)
#   pair       `kevo import robust-kbench` of tests/interop/data/robust_kbench (forward + backward),
#              `kevo eval` of its test kernels against the PyTorch oracle, and `kevo export-torch
#              --backward` of both with the generated test_autograd.py (gradients vs autograd, ~2 min)
#   backward   every bundled backward baseline: `kevo eval --baseline` and PyTorch's backward (eager,
#              torch.compile) on the same main-config shapes (bench/backward_vs_torch.py, ~4 min);
#              then tasks/linear + tasks/linear_backward exported as one autograd.Function and a
#              200-step MLP training run through it against plain PyTorch (bench/train_pair.py);
#              then a scripted-model `kevo bench` of two backward tasks (bench/suite.sh, SUITE=file)
#   profile    `kevo eval --baseline --profile` (Nsight Compute) on 12 bundled baselines
#              (KEVO_PROFILE_TASKS picks others); ncu's raw CSV reports are kept in $OUT/ncu/ to
#              replace the constructed fixtures in tests/check/data/; then a scripted gelu run with
#              profiles, prompts with and without the feedback (prompt length per proposal)
#   throughput bench/throughput.sh: `kevo evolve softmax` against a loopback model that answers
#              distinct correct kernels after 2 s and 10 s, with 4 and 16 proposals in flight:
#              candidates/min, the evaluators' occupancy and NVML's GPU utilization over the search
#              (targets on an H100: >= 150 candidates/min at 2 s with 16 in flight, NVML >= 50%;
#              ~6-8 min; LATENCIES, IN_FLIGHT, CANDIDATES narrow it to fit a call)
# KEVO_E2E_FILTER picks e2e tests (gtest filter, e.g. EvolveE2E.Gelu).
# KEVO_TASKS (space-separated) limits the probe and baselines phases to those tasks; the backward
# tasks and their new forward: KEVO_TASKS="linear $(grep -v "^#" suites/backward.txt)"
# Logs go to $KEVO_LOGS (default $OUT). The device tool returns only a few files from $OUT, so a
# device call should keep them elsewhere and send back one archive, e.g.
#   export OUT KEVO_LOGS=/tmp/kl; mkdir -p $KEVO_LOGS; KEVO_PHASES="e2e kernels" timeout 560 \
#     scripts/gpu-check.sh .carry > $KEVO_LOGS/check.log 2>&1; tar czf $OUT/logs.tgz -C $KEVO_LOGS .;
#   tail -80 $KEVO_LOGS/check.log
set -uo pipefail
B=$(realpath "${1:-build}")
OUT=${KEVO_LOGS:-${OUT:-/tmp/kevo-gpu-out}}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
export KEVO_HOME=$(pwd) KEVO_BUILD=$B KEVO_CACHE_DIR=${KEVO_CACHE_DIR:-/tmp/kevo-cache}
export KEVO_RUNNER=$B/bin/kevo-runner  # test binaries live in tests/*/, not beside the runner
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}  # see scripts/pack-for-gpu.sh
PHASES=${KEVO_PHASES:-devdata probe baselines kernels e2e scaleout bench suite torchoracle interop kboracle pair backward profile throughput}
K="$B/bin/kevo"
rc=0
stamp() { echo "== $(date +%T) $*" | tee -a "$OUT/phases.txt"; }
has() { [[ " $PHASES " == *" $1 "* ]]; }
TASKS=${KEVO_TASKS:-$(ls tasks | tr '\n' ' ')}
FILTER=$(for t in $TASKS; do printf 'Tasks/Baseline.*/%s:' "$t"; done)

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$OUT/gpu.txt" 2>&1
"$K" doctor > "$OUT/doctor.txt" 2>&1

# Shards a gtest binary over N processes (the GPU is shared: fine for correctness; every timing
# reported from a sharded phase is a same-run ratio).
shard() {  # name n binary args...
  local name=$1 n=$2; shift 2
  local pids=()
  for ((i = 0; i < n; i++)); do
    GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$i "$@" --gtest_color=no > "$OUT/$name-shard$i.txt" 2>&1 &
    pids+=($!)
  done
  local r=0
  for p in "${pids[@]}"; do wait "$p" || r=1; done
  cat "$OUT/$name"-shard*.txt > "$OUT/$name.txt" && rm -f "$OUT/$name"-shard*.txt
  return $r
}

if has devdata; then
  stamp devdata
  "$B/tests/gpu/device_data_test" --gtest_color=no > "$OUT/devdata.txt" 2>&1 || rc=1
  grep -hE "^(DRAW|COMPARE)|^\[  (FAILED|PASSED) |Failure" "$OUT/devdata.txt"
fi
if has probe; then
  stamp probe
  # Compile every baseline first, in parallel, into the cache the probe reads.
  printf '%s\n' $TASKS | xargs -P 16 -I{} sh -c "'$K' eval {} --baseline --compile-only > /dev/null 2>&1"
  "$B/tests/lint/lint_gpu_probe" $TASKS > "$OUT/probe.txt" 2>&1 || rc=1
  grep -E "^(CHECK|TIME|ERROR|DONE)" "$OUT/probe.txt" | grep -vE "^CHECK \S+ PASS" | head -80
  grep -c "^CHECK \S* PASS" "$OUT/probe.txt" | sed 's/^/probe checks passed: /'
fi
if has baselines; then
  stamp baselines
  shard baselines ${KEVO_SHARDS:-8} "$B/tests/gpu/gpu_eval_test" --gtest_filter="$FILTER" || rc=1
  grep -hE "^\[  (FAILED|PASSED) |^BASELINE" "$OUT/baselines.txt" | sort | grep -v "^BASELINE" | uniq -c
  grep -h "^\[  FAILED  \] Tasks" "$OUT/baselines.txt" | head -20
fi
if has kernels; then
  stamp kernels
  shard kernels 3 "$B/tests/gpu/gpu_eval_test" --gtest_filter='Manifest/*:Sanitize.*' || rc=1
  grep -hE "^(VERDICT|SPEEDUP|SANITIZE)" "$OUT/kernels.txt" | sort > "$OUT/kernels-summary.txt"
  grep -hE "^\[  (FAILED|PASSED) " "$OUT/kernels.txt" | sort | uniq -c | tee -a "$OUT/kernels-summary.txt"
fi
if has e2e; then
  stamp e2e
  "$B/tests/gpu/evolve_e2e_test" --gtest_color=no --gtest_filter="${KEVO_E2E_FILTER:-*}" > "$OUT/evolve-e2e.txt" 2>&1 || rc=1
  grep -hE "^E2E|^\[  (FAILED|PASSED) " "$OUT/evolve-e2e.txt"
fi
if has scaleout; then
  stamp scaleout
  # The per-GPU lock (util/gpu_lock.h): two kevo processes evaluating on this GPU at once; the one
  # that asks second logs that it waits, and both verdicts stand.
  for x in a b; do
    "$K" eval softmax tests/gpu/kernels/good/softmax_online.cu --visible-only --seeds 2 --time-budget 2 \
      > "$OUT/lock-$x.txt" 2>&1 &
  done
  wait
  grep -hE "held by|VERDICT|speedup " "$OUT"/lock-*.txt
fi
if has bench; then
  stamp bench
  bench/run.sh "$B" > "$OUT/bench.txt" 2>&1 || rc=1
  grep -E "SECONDS|COLD_RUN|COMPILE_|LOAD_INLINE|MEDIAN_CV|x less" "$OUT/bench.txt"
fi
if has suite; then
  stamp suite
  bench/suite.sh "$B" "$OUT/suite" > "$OUT/suite.txt" 2>&1 || rc=1
  tail -40 "$OUT/suite.txt"
fi
if has torchoracle; then
  stamp torchoracle
  "$B/tests/torch/torch_gpu_test" --gtest_color=no > "$OUT/torchoracle.txt" 2>&1 || rc=1
  grep -hE "^TORCH_ORACLE|^\[  (FAILED|PASSED|SKIPPED) |Failure" "$OUT/torchoracle.txt"
fi
if has kboracle; then
  stamp kboracle
  bench/kb_oracle.sh "$B" "$OUT/kboracle" "${KEVO_KB:-$B/kb}" > "$OUT/kboracle.txt" 2>&1 || rc=1
  grep -E "^(KB_ORACLE|\[)" "$OUT/kboracle.txt"
fi
if has interop; then
  stamp interop
  bench/interop.sh "$B" "$OUT/interop" > "$OUT/interop.txt" 2>&1 || rc=1
  # Every task's line (a plain tail cut the first ones off), then the end.
  grep -E "^(INTEROP|EXPORT_TEST)|^== |winner|vs PyTorch" "$OUT/interop.txt"
  tail -12 "$OUT/interop.txt"
fi
if has pair; then
  stamp pair
  P="$OUT/pair"; D=tests/interop/data
  mkdir -p "$P"
  {
    "$B/bin/kevo" import robust-kbench "$D/robust_kbench" --out "$P/tasks" --force || echo "PAIR import failed"
    for t in scale_shift scale_shift_backward; do
      # --json keeps the outside clock's batches (timing.outside_clock.batches) for a reader.
      "$B/bin/kevo" eval "$P/tasks/$t" "$D/robust_kbench_kernels/$t.cu" --json > "$P/$t.json"; e=$?
      python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["outcome"], j.get("reason",""), j.get("message","")[:300])' "$P/$t.json"
      echo "PAIR eval $t exit $e"
    done
    "$B/bin/kevo" export-torch "$P/tasks/scale_shift" "$D/robust_kbench_kernels/scale_shift.cu" "$P/both" \
      --backward "$P/tasks/scale_shift_backward" --backward-kernel "$D/robust_kbench_kernels/scale_shift_backward.cu"
    timeout 400 python3 "$P/both/test_autograd.py"; echo "PAIR test_autograd exit $?"
  } > "$OUT/pair.txt" 2>&1
  grep -q "PAIR test_autograd exit 0" "$OUT/pair.txt" && ! grep -qE "PAIR (import failed|eval .* exit [^0])" "$OUT/pair.txt" || rc=1
  grep -E "^PAIR|^(PASS|FAIL|SKIP)" "$OUT/pair.txt"; tail -12 "$OUT/pair.txt"
fi
if has backward; then
  stamp backward
  python3 bench/backward_vs_torch.py "$B" "$OUT/backward" > "$OUT/backward.txt" 2>&1 || rc=1
  grep -E "^BWD_VS_TORCH|^   " "$OUT/backward.txt"
  P="$OUT/train_pair"; rm -rf "$P"
  "$K" export-torch linear tasks/linear/baseline.cu "$P" --backward linear_backward \
    --backward-kernel tasks/linear_backward/baseline.cu > "$OUT/train_pair.txt" 2>&1 &&
    timeout 400 python3 bench/train_pair.py "$P" --json "$OUT/backward/train_pair.json" >> "$OUT/train_pair.txt" 2>&1 || rc=1
  grep -E "^(GRAD_CHECK|TRAIN|FAIL|SKIP)" "$OUT/train_pair.txt"; tail -5 "$OUT/train_pair.txt"
  # The ReLU pair: its forward saves its output y for the backward kernel (saved_outputs).
  P="$OUT/train_pair_relu"; rm -rf "$P"
  "$K" export-torch gemm_bias_relu tasks/gemm_bias_relu/baseline.cu "$P" --backward gemm_bias_relu_backward \
    --backward-kernel tasks/gemm_bias_relu_backward/baseline.cu > "$OUT/train_pair_relu.txt" 2>&1 &&
    timeout 400 python3 bench/train_pair.py "$P" --relu --json "$OUT/backward/train_pair_relu.json" >> "$OUT/train_pair_relu.txt" 2>&1 || rc=1
  grep -E "^(GRAD_CHECK|TRAIN|FAIL|SKIP)" "$OUT/train_pair_relu.txt"; tail -5 "$OUT/train_pair_relu.txt"
  # A scripted-model evolution of two backward tasks, end to end (prompts, checker, selection).
  printf 'softmax_backward\nlayernorm_backward\n' > "$OUT/backward-pair-suite.txt"
  SUITE="$OUT/backward-pair-suite.txt" PARTS="scripted" bench/suite.sh "$B" "$OUT/backward-evolve" 4 \
    > "$OUT/backward-evolve.txt" 2>&1 || rc=1
  tail -12 "$OUT/backward-evolve.txt"
fi
if has profile; then
  stamp profile
  mkdir -p "$OUT/ncu"
  KEVO_NCU_KEEP="$OUT/ncu" shard profile 3 "$B/tests/gpu/gpu_eval_test" --gtest_filter='Tasks/Profiled.*' || rc=1
  grep -hE "^DIAGNOSIS|^PROFILE_COST|^\[  (FAILED|PASSED|SKIPPED) |not profiled" "$OUT/profile.txt"
  if [ "${KEVO_PROFILE_E2E:-1}" = 1 ]; then  # 0: the baselines' profiles alone (a short call)
    "$B/tests/gpu/evolve_e2e_test" --gtest_color=no --gtest_filter='EvolveE2E.ProfileFeedbackInPrompts' \
      > "$OUT/profile-e2e.txt" 2>&1 || rc=1
    grep -hE "^E2E_PROFILE|^\[  (FAILED|PASSED|SKIPPED) |not profiled" "$OUT/profile-e2e.txt"
  fi
fi
if has throughput; then
  stamp throughput
  bench/throughput.sh "$B" "$OUT/throughput" > "$OUT/throughput.txt" 2>&1 || rc=1
  grep -E "^THROUGHPUT|^throughput:" "$OUT/throughput.txt"
fi
stamp "done rc=$rc"
exit $rc
