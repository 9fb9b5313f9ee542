#!/usr/bin/env bash
# PyTorch interop on the GPU (scripts/gpu-check.sh phase "interop"):
#  1. import the KernelBench-format problems of bench/kernelbench/ as kevo tasks;
#  2. translate each with a scripted model (bench/scripted_llm.py answers with the matching bundled
#     baseline) into its baseline.cu, checked against the PyTorch oracle;
#  3. `kevo eval TASK --baseline`: the baseline against the PyTorch oracle on every config, timed,
#     with PyTorch eager and torch.compile timed next to it. The oracle is on the device data plane
#     (inputs drawn by the oracle's runner and lent to the bridge through CUDA IPC, compared on the
#     GPU); KEVO_INTEROP_HOST_DATA=1 adds a --host-data eval of the first task for comparison;
#  4. a short `kevo evolve` of one task, `kevo export RUN --torch`, and the exported extension's own
#     test script against the original module.
# Every step prints its wall time ("[Ns]") so a device call that runs out shows where it went.
# KEVO_INTEROP_TASKS (space-separated) limits steps 2-3 to those tasks; KEVO_INTEROP_EVOLVE=0 skips
# step 4. Together they split the check over two device calls if one runs out of time.
#   bench/interop.sh BUILD_DIR WORK_DIR
set -uo pipefail
B=$(realpath "${1:-build}"); W=$(realpath -m "${2:-/tmp/kevo-interop}")
K="$B/bin/kevo"
rm -rf "$W"; mkdir -p "$W"
export KEVO_DB="$W/runs.db"
python3 bench/scripted_llm.py --root . > "$W/llm.txt" 2>&1 &
LLM=$!
trap 'kill $LLM 2>/dev/null' EXIT
for _ in $(seq 50); do grep -q PORT "$W/llm.txt" && break; sleep 0.1; done
M="http://127.0.0.1:$(sed -n 's/^PORT //p' "$W/llm.txt")/v1#scripted"
rc=0
T0=$SECONDS
lap() { echo "[$((SECONDS - T0))s] $*"; }
"$K" import kernelbench bench/kernelbench/{gelu,relu,softmax,rowsum}_kb.py --out "$W/tasks" || rc=1
"$K" import kernelbench bench/kernelbench/matmul_kb.py --flops "2*M*N*K" --out "$W/tasks" || rc=1
lap "imported"
for t in ${KEVO_INTEROP_TASKS:-gelu_kb relu_kb softmax_kb rowsum_kb matmul_kb}; do
  echo "== $t"
  "$K" translate "$W/tasks/$t" --model "$M" --rounds 2 --seeds 1 > "$W/$t.translate.txt" 2>&1
  lap "translate exit $?: $(tail -1 "$W/$t.translate.txt")"
  "$K" eval "$W/tasks/$t" --baseline --seeds 2 --time-budget 2 --json > "$W/$t.eval.json" 2> "$W/$t.eval.err"
  e=$?
  python3 - "$W/$t.eval.json" "$t" "$e" <<'PY'
import json, sys
path, task, code = sys.argv[1:]
try:
    j = json.load(open(path))
except Exception as ex:
    print(f"INTEROP {task} exit {code}: no JSON ({ex})"); sys.exit(0)
t = j.get("timing") or {}
c = (t.get("candidate") or {}).get("median_ms")
p = t.get("pytorch") or {}
def f(x): return f"{x:.4f} ms" if isinstance(x, (int, float)) else "n/a"
def r(x): return f"{x:.2f}x" if isinstance(x, (int, float)) else "n/a"
w = j.get("work_seconds") or {}
print(f"INTEROP {task} exit {code} outcome {j.get('outcome')} [{j.get('reason','')}] {j.get('seconds', 0):.1f} s "
      f"(oracle {w.get('oracle', 0):.1f} s, pytorch timing {(j.get('phases') or {}).get('pytorch', 0):.1f} s) configs "
      f"{sum(1 for x in j.get('configs', []) if x.get('ok'))}/{len(j.get('configs', []))} | kevo baseline {f(c)} | "
      f"eager {f(p.get('eager_ms'))} (baseline {r(t.get('speedup_vs_eager'))}) | "
      f"torch.compile {f(p.get('compile_ms'))} (baseline {r(t.get('speedup_vs_compile'))}) | "
      f"errors {p.get('errors') or p.get('skipped') or '-'}")
if j.get("outcome") != "pass": print("  ", j.get("message", "")[:400])
PY
  [ $e = 0 ] || rc=1
  lap "eval $t"
  if [ -n "${KEVO_INTEROP_HOST_DATA:-}" ] && [ -z "${HOST_DONE:-}" ]; then
    HOST_DONE=1
    "$K" eval "$W/tasks/$t" --baseline --seeds 2 --time-budget 2 --no-torch-time --host-data --json \
      > "$W/$t.eval-host.json" 2> "$W/$t.eval-host.err"
    lap "eval $t --host-data exit $?: $(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j.get("outcome"), round(j.get("seconds",0),1), "s")' "$W/$t.eval-host.json" 2>&1 | tail -1)"
  fi
done
[ "${KEVO_INTEROP_EVOLVE:-1}" = 0 ] && { lap "done (evolve skipped)"; exit $rc; }
echo "== evolve + export --torch (gelu_kb)"
"$K" evolve "$W/tasks/gelu_kb" --model "$M" --budget-candidates 4 --parallel 2 --quiet > "$W/evolve.txt" 2>&1 || rc=1
tail -6 "$W/evolve.txt"
lap "evolve"
RUN=$(sed -n 's/^run \([0-9]*\) .*/\1/p' "$W/evolve.txt" | tail -1)
echo "run $RUN"
"$K" export "$RUN" --torch "$W/export" > "$W/export.txt" 2>&1 || rc=1
tail -3 "$W/export.txt"
ls "$W/export"
( cd "$W/export" && timeout 400 python3 test_ext.py ) > "$W/export-test.txt" 2>&1
e=$?; tail -15 "$W/export-test.txt"; echo "EXPORT_TEST exit $e"
lap "export test"
[ $e = 0 ] || rc=1
exit $rc
