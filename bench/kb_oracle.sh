#!/usr/bin/env bash
# The PyTorch oracle of imported KernelBench problems on the GPU (scripts/gpu-check.sh phase
# "kboracle"): imports a fixed, spread-out sample of KernelBench level-1 and level-2 problems
# (matmul, matvec, conv, norms, pooling, reductions, scans, activations and fused level-2 ops; no
# 3-D convolutions, whose imports and oracle runs are the slow ones) in one `kevo import kernelbench`
# call, then runs `kevo eval TASK --oracle-check --json` on each: every config (held-out included)
# run twice by the PyTorch oracle on the device data plane (the trusted kevo-runner draws the inputs
# and lends them to the bridge through CUDA IPC), its outputs checked (sizes, dtypes, NaN/Inf, all
# zeros, agreement of the two runs), then PyTorch eager and torch.compile timed on the main config.
# Tasks run KEVO_KB_JOBS at a time (default 3) on the one GPU, each under a timeout of
# KEVO_KB_TIMEOUT seconds (default 150): correctness is unaffected, but the eager and compile times
# are taken while other tasks share the GPU and the CPU, so they are indicative only (KEVO_KB_JOBS=1
# for clean figures, at several times the wall time). One line per task:
#   KB_ORACLE <task> exit <code> configs <ok>/<n> device_plane <yes|no> eager <ms> compile <ms> [<reason>]
# and a final KB_ORACLE_SUMMARY line. Exit 0 when every task's check exited 0.
#   bench/kb_oracle.sh BUILD_DIR WORK_DIR [KB_DIR]
# KB_DIR: a copy of KernelBench's level1/ and level2/ folders (default BUILD_DIR/kb, where
# scripts/pack-for-gpu.sh puts ../shared/kernelbench's); KEVO_KB_N (default 24) takes the first N
# of the sample, alternating levels; KEVO_KB_BACKWARD (default 6) of them also get their backward
# task imported (`--backward`) and checked.
set -uo pipefail
B=$(realpath "${1:-build}"); W=$(realpath -m "${2:-/tmp/kevo-kboracle}"); KB=$(realpath -m "${3:-$B/kb}")
K="$B/bin/kevo"
N=${KEVO_KB_N:-24}; JOBS=${KEVO_KB_JOBS:-3}; TO=${KEVO_KB_TIMEOUT:-150}
L1=(1_Square_matrix_multiplication_ 4_Matrix_vector_multiplication_ 19_ReLU 23_Softmax 26_GELU_ 33_BatchNorm
    36_RMSNorm_ 40_LayerNorm 42_Max_Pooling_2D 47_Sum_reduction_over_a_dimension
    63_conv_standard_2D__square_input__square_kernel 89_cumsum)
L2=(1_Conv2D_ReLU_BiasAdd 9_Matmul_Subtract_Multiply_ReLU 12_Gemm_Multiply_LeakyReLU 17_Conv2d_InstanceNorm_Divide
    21_Conv2d_Add_Scale_Sigmoid_GroupNorm 29_Matmul_Mish_Mish 33_Gemm_Scale_BatchNorm 40_Matmul_Scaling_ResidualAdd
    45_Gemm_Sigmoid_LogSumExp 57_Conv2d_ReLU_HardSwish 76_Gemm_Add_ReLU 99_Matmul_GELU_Softmax)
if [ ! -d "$KB/level1" ] || [ ! -d "$KB/level2" ]; then
  echo "kb_oracle: no KernelBench levels in $KB (give KB_DIR, or run scripts/pack-for-gpu.sh)" >&2
  exit 2
fi
rm -rf "$W"; mkdir -p "$W"
T0=$SECONDS
files=()
for ((i = 0; i < ${#L1[@]}; i++)); do files+=("$KB/level1/${L1[i]}.py" "$KB/level2/${L2[i]}.py"); done
files=("${files[@]:0:$N}")
# The first NB files also get their backward task (`--backward`): its oracle takes torch.autograd
# gradients, checked here on the device like any oracle.
NB=${KEVO_KB_BACKWARD:-6}
"$K" import kernelbench "${files[@]:0:$NB}" --backward --out "$W/tasks" > "$W/import.txt" 2>&1
echo "[$((SECONDS - T0))s] import --backward exit $?: $(tail -1 "$W/import.txt")"
"$K" import kernelbench "${files[@]:$NB}" --out "$W/tasks" >> "$W/import.txt" 2>&1
echo "[$((SECONDS - T0))s] import exit $?: $(tail -1 "$W/import.txt")"
# kevo names a task after its file: lower-cased, runs of other characters one "_", none at the ends.
tasks=()
for f in "${files[@]}"; do tasks+=("$(basename "$f" .py | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9]+/_/g; s/^_+//; s/_+$//')"); done
for t in "${tasks[@]:0:$NB}"; do tasks+=("${t}_backward"); done

check() {  # task
  local t=$1
  if [ ! -f "$W/tasks/$t/task.toml" ]; then echo none > "$W/$t.rc"; return; fi
  timeout -k 10 "$TO" "$K" eval "$W/tasks/$t" --oracle-check --json --time-budget 1 > "$W/$t.json" 2> "$W/$t.err"
  echo $? > "$W/$t.rc"
}
export -f check; export K W TO
printf '%s\n' "${tasks[@]}" | xargs -P "$JOBS" -I{} bash -c 'check {}'
echo "[$((SECONDS - T0))s] checked ${#tasks[@]} tasks, $JOBS at a time"

python3 - "$W" "${tasks[@]}" <<'PY'
import json, os, sys
w, tasks = sys.argv[1], sys.argv[2:]
def ms(x): return f"{x:.4f}" if isinstance(x, (int, float)) else "n/a"
n_ok = n_dev = n_eager = n_compile = 0
for t in tasks:
    rc = open(os.path.join(w, t + ".rc")).read().strip()
    if rc == "none":
        print(f"KB_ORACLE {t} exit none configs 0/0 device_plane no eager n/a compile n/a [not imported: see import.txt]")
        continue
    try:
        j = json.load(open(os.path.join(w, t + ".json")))
    except Exception:
        err = open(os.path.join(w, t + ".err")).read().strip().splitlines()
        why = "timed out" if rc in ("124", "137") else (err[-1] if err else "no JSON")
        print(f"KB_ORACLE {t} exit {rc} configs 0/0 device_plane no eager n/a compile n/a [{why[:200]}]")
        continue
    bad = [c for c in j["configs"] if not c["ok"]]
    why = "; ".join(f"{c['config']}: {c['reason']}: {c['detail'][:160]}" for c in bad)
    if not j["device_plane"]: why = (why + "; " if why else "") + "host path: " + j.get("host_path_why", "")
    errs = (j.get("pytorch") or {}).get("errors") or {}
    if "compile" in errs: why = (why + "; " if why else "") + "compile: " + errs["compile"].splitlines()[0][:160]
    if j.get("pytorch_note"): why = (why + "; " if why else "") + "pytorch: " + j["pytorch_note"][:160]
    n_ok += rc == "0"; n_dev += bool(j["device_plane"])
    n_eager += isinstance(j.get("eager_ms"), (int, float)); n_compile += isinstance(j.get("compile_ms"), (int, float))
    print(f"KB_ORACLE {t} exit {rc} configs {j['configs_ok']}/{j['configs_total']} device_plane "
          f"{'yes' if j['device_plane'] else 'no'} eager {ms(j.get('eager_ms'))} compile {ms(j.get('compile_ms'))}"
          + (f" [{why}]" if why else ""))
print(f"KB_ORACLE_SUMMARY tasks {len(tasks)} exit0 {n_ok} device_plane {n_dev} eager {n_eager} compile {n_compile}")
sys.exit(0 if n_ok == len(tasks) else 1)
PY
