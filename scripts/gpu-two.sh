#!/usr/bin/env bash
# Issue 23 on a host with two GPUs (device kind nvidia-h100-x2 / nvidia-h200-x2), in one device call:
#   1. `kevo evolve` with a scripted model on --gpus 0 and on --gpus all: search candidates/min
#   2. the same good kernels timed on GPU 0 and on GPU 1 (at once: different GPUs, different locks)
#   3. two kevo processes at once on both GPUs: the per-GPU lock's waits, their figures
#   4. PostgreSQL on the machine, one `kevo worker` per GPU, a coordinator with --gpus none; one
#      worker killed with SIGKILL mid-run: the run completes, every candidate has one row and one job
#   5. GPU busy per GPU (nvidia-smi sampling every 200 ms) during 1 and 4
# Run from the repo root with the packed build (scripts/pack-for-gpu.sh; .carry/pg.tar.xz from
# scripts/gpu-pg.sh --pack). FAKE=1 runs the evolve/worker parts with --fake-gpu (a script check
# on a machine without GPUs; proves nothing about GPUs).
#   KEVO_LOGS=/tmp/kl scripts/gpu-two.sh .carry [CANDIDATES]
set -uo pipefail
B=$(realpath "${1:-.carry}"); N=${2:-16}
OUT=${KEVO_LOGS:-${OUT:-/tmp/kevo-two}}; mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH KEVO_HOME=$(pwd) KEVO_RUNNER=$B/bin/kevo-runner
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
K=$B/bin/kevo
FAKE_FLAG=(); [ "${FAKE:-0}" = 1 ] && FAKE_FLAG=(--fake-gpu)
TASK=${TASK:-softmax}
PARTS=${PARTS:-1 2 3 4}  # a subset when a device call is short
part() { [[ " $PARTS " == *" $1 "* ]]; }
stamp() { echo "== $(date +%T) $*"; }
lock_waits() {  # name db: per GPU, the candidates evaluated there and the seconds they waited for its lock
  python3 - "$1" "$2" <<'PY'
import json, sqlite3, sys
per = {}
for (v,) in sqlite3.connect(sys.argv[2]).execute("SELECT verdict FROM candidates"):
    try:
        j = json.loads(v)
    except ValueError:
        continue
    g = (j.get("device") or {}).get("uuid", "")
    if not g:
        continue
    n, w = per.get(g, (0, 0.0))
    per[g] = (n + 1, w + j.get("work_seconds", {}).get("gpu_lock_wait", 0.0))
for g, (n, w) in sorted(per.items()):
    print(f"LOCK {sys.argv[1]} {g}: {n} verdicts, {w:.1f} s waiting for the GPU's lock")
PY
}
busy_start() {  # name: samples every GPU's utilization until busy_stop
  [ "${FAKE:-0}" = 1 ] && return
  nvidia-smi --query-gpu=index,utilization.gpu --format=csv,noheader,nounits -lms 200 > "$OUT/busy-$1.csv" 2>/dev/null &
  BUSY=$!
}
busy_stop() {  # name: mean utilization per GPU
  [ "${FAKE:-0}" = 1 ] && return
  kill "$BUSY" 2>/dev/null; wait "$BUSY" 2>/dev/null
  awk -F', ' -v n="$1" '{s[$1]+=$2; c[$1]++} END {for (g in s) printf "BUSY %s gpu%s %.1f%% (%d samples)\n", n, g, s[g]/c[g], c[g]}' "$OUT/busy-$1.csv"
}
evolve() {  # name cache db gpus: one scripted evolve run, its summary lines
  local name=$1 cache=$2 db=$3 gpus=$4
  KEVO_CACHE_DIR=$cache timeout 240 "$K" evolve "$TASK" --model "$M" --llm live --budget-candidates "$N" \
    --parallel 6 --seeds 2 --time-budget 1 --db "$db" --gpus "$gpus" "${FAKE_FLAG[@]}" --quiet \
    > "$OUT/evolve-$name.txt" 2> "$OUT/evolve-$name.err"
  echo "EVOLVE $name (exit $?): $(grep -E '^time|^candidates|best|winner' "$OUT/evolve-$name.txt" | tr '\n' ' ')"
  grep -hiE "held by|waits for|waiting" "$OUT/evolve-$name.err" | head -3 | sed "s/^/LOCK $name: /"
}

[ "${FAKE:-0}" = 1 ] || nvidia-smi -L | tee "$OUT/gpus.txt"
W=$(mktemp -d /tmp/kevo-two-XXXXXX); chmod 755 "$W"  # gpu-pg.sh runs the server as nobody
python3 bench/scripted_llm.py --root . > "$W/llm.txt" 2>&1 &
LLM=$!
PGDIR=$W/pg
trap 'kill $LLM 2>/dev/null; scripts/gpu-pg.sh --stop "$PGDIR"' EXIT
for _ in $(seq 50); do grep -q PORT "$W/llm.txt" && break; sleep 0.1; done
M="http://127.0.0.1:$(sed -n 's/^PORT //p' "$W/llm.txt")/v1#scripted"

if part 1; then
stamp "1. --gpus 0 vs --gpus all ($N candidates each, separate caches: both compile and verify the baseline)"
busy_start one; evolve gpu0 "$W/c-one" "$W/one.db" 0; busy_stop one
busy_start all; evolve all "$W/c-all" "$W/all.db" all; busy_stop all
lock_waits all "$W/all.db"
fi

if [ "${FAKE:-0}" != 1 ] && part 2; then
  stamp "2. the same kernels on GPU 0 and GPU 1"
  evals=()
  for g in 0 1; do
    (for k in softmax:softmax_online gelu:gelu_float4 transpose:transpose_smem row_sum:row_sum_warp; do
       CUDA_VISIBLE_DEVICES=$g KEVO_CACHE_DIR=$W/c-all timeout 60 "$K" eval "${k%%:*}" "tests/gpu/kernels/good/${k#*:}.cu" \
         --seeds 2 --time-budget 2 --json > "$OUT/eval-gpu$g-${k#*:}.json" 2> /dev/null
     done) &
    evals+=($!)
  done
  wait "${evals[@]}"
  for k in softmax_online gelu_float4 transpose_smem row_sum_warp; do
    python3 - "$OUT/eval-gpu0-$k.json" "$OUT/eval-gpu1-$k.json" "$k" <<'EOF'
import json, sys
def get(p):
    try:
        j = json.load(open(p)); t = j.get("timing") or {}
        return j["outcome"], t.get("speedup", {}).get("value", 0), t.get("candidate", {}).get("median_ms", 0), j.get("device", {}).get("uuid", "?")
    except Exception as e:
        return "error", 0, 0, str(e)[:60]
a, b = get(sys.argv[1]), get(sys.argv[2])
d = abs(a[1] / b[1] - 1) * 100 if a[1] and b[1] else float("nan")
print(f"SAME_KERNEL {sys.argv[3]}: gpu0 {a[0]} {a[1]:.3f}x ({a[2]:.4f} ms, {a[3]}) | gpu1 {b[0]} {b[1]:.3f}x ({b[2]:.4f} ms, {b[3]}) | differ {d:.2f}%")
EOF
  done
fi

if part 3; then
stamp "3. two kevo processes at once on both GPUs (the baseline verified in 1 is reused)"
evolve pair-a "$W/c-all" "$W/pair-a.db" all &
pa=$!
evolve pair-b "$W/c-all" "$W/pair-b.db" all &
wait $pa $!
lock_waits pair-a "$W/pair-a.db"
lock_waits pair-b "$W/pair-b.db"
fi
part 4 || { stamp done; exit 0; }

stamp "4. PostgreSQL, a worker per GPU, a coordinator with --gpus none, one worker killed"
url=$(scripts/gpu-pg.sh .carry/pg.tar.xz "$PGDIR" 2> "$OUT/pg.err") || { echo "PG: did not start"; tail -5 "$OUT/pg.err"; exit 1; }
PSQL=("$PGDIR/root/usr/lib/postgresql/15/bin/psql" -X -q -A -F ' ' -t)
export LD_LIBRARY_PATH=$PGDIR/root/lib:$LD_LIBRARY_PATH
pids=()
for g in 0 1; do
  KEVO_CACHE_DIR=$W/c-w$g "$K" worker --db "$url" --gpus $g --lease 10 "${FAKE_FLAG[@]}" > "$OUT/worker$g.txt" 2>&1 &
  pids+=($!)
done
busy_start queue
KEVO_CACHE_DIR=$W/c-coord timeout 300 "$K" evolve "$TASK" --model "$M" --llm live --budget-candidates "$N" --parallel 6 \
  --seeds 2 --time-budget 1 --db "$url" --gpus none "${FAKE_FLAG[@]}" --quiet > "$OUT/evolve-queue.txt" 2>&1 &
coord=$!
killed=""
for _ in $(seq 1200); do  # kill worker 1 while it holds a candidate's job (seq > 1: not the baseline)
  held=$("${PSQL[@]}" "$url" -c "SELECT id, seq FROM jobs WHERE state='claimed' AND worker LIKE '%gpu1%' AND seq > 1 LIMIT 1" 2>/dev/null)
  if [ -n "$held" ]; then kill -9 "${pids[1]}"; killed=$held; break; fi
  kill -0 $coord 2>/dev/null || break
  sleep 0.1
done
echo "KILLED worker gpu1 holding job (id seq): ${killed:-none}"
wait $coord; echo "COORDINATOR exit $?: $(grep -E '^time|^candidates' "$OUT/evolve-queue.txt" | tr '\n' ' ')"
busy_stop queue
kill -TERM "${pids[0]}" 2>/dev/null; wait "${pids[0]}" 2>/dev/null
run=$("${PSQL[@]}" "$url" -c "SELECT max(id) FROM runs")
echo "QUEUE run $run jobs by state/worker: $("${PSQL[@]}" "$url" -c "SELECT state, worker, count(*), sum(attempts) FROM jobs WHERE run_id=$run GROUP BY 1,2 ORDER BY 1,2" | tr '\n' ';')"
echo "QUEUE candidates: $("${PSQL[@]}" "$url" -c "SELECT count(*), count(DISTINCT seq) FROM candidates WHERE run_id=$run" | tr '\n' ' ')| by outcome: $("${PSQL[@]}" "$url" -c "SELECT outcome, count(*) FROM candidates WHERE run_id=$run GROUP BY 1 ORDER BY 1" | tr '\n' ';')"
[ -n "$killed" ] && echo "QUEUE the killed job: $("${PSQL[@]}" "$url" -c "SELECT id, seq, state, attempts, worker FROM jobs WHERE id=${killed%% *}")"
cp "$W"/*.db "$OUT/" 2>/dev/null
stamp done
