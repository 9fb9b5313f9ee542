#!/usr/bin/env bash
# Throughput per GPU (scripts/gpu-check.sh phase "throughput"): `kevo evolve TASK` against a
# loopback model (bench/scripted_llm.py --distinct: every answer a real, correct kernel no earlier
# one repeats, each compiled, checked and timed) that answers after a set latency, for each latency
# x proposals in flight (`--parallel`). One line per setting:
#   THROUGHPUT latency 2s in-flight 16: 152.3 candidates/min over the search (60 in 23.6 s),
#     evaluators busy 91%, GPU util 57% (NVML), exit 0 | kevo evolve ...
# candidates/min, the evaluators' occupancy and NVML's GPU utilization are over the search alone
# (after the baseline, before held-out verification), from the run's "finished" event.
# Targets on an H100 (issue 16): >= 150 candidates/min at 2 s latency with 16 in flight, NVML
# utilization >= 50% during the search.
#   bench/throughput.sh BUILD_DIR OUT_DIR
# Settings from the environment: TASK (softmax), CANDIDATES (60 per run), LATENCIES ("2 10"
# seconds), IN_FLIGHT ("4 16"), STRATEGY (evoengineer-full: it takes whole kernels, which is what
# the server sends), SEEDS and TIME_BUDGET (kevo's defaults unless set), GPUS (kevo's --gpus, all),
# EVALS_PER_GPU (kevo's --evals-per-gpu; kevo's default, 2, unless set), NO_RACE=1 (kevo's
# --no-race: every candidate timed to precision, to compare with racing), MUTATOR=agent (kevo's
# --mutator agent: each proposal a tool-using episode; the server answers with tool calls, and
# EPISODE_EVALS correct kernels per episode, default 4).
# Needs a GPU (it exits 2 without one); KEVO_THROUGHPUT_FAKE=1 runs it with --fake-gpu instead, to
# test the script itself on a machine without one (its figures then mean nothing).
# Logs, run databases and events go to OUT_DIR: L<latency>-P<in-flight>.{log,db,events.jsonl,
# llm.txt,toml,split.txt (bench/search_split.py)}, and gpu.txt (the GPU's name, driver and clocks).
set -uo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: bench/throughput.sh BUILD_DIR OUT_DIR" >&2
  exit 2
fi
B=$(realpath "$1"); W=$(realpath -m "$2"); K="$B/bin/kevo"
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}  # a carried build (scripts/pack-for-gpu.sh)
TASK=${TASK:-softmax}; N=${CANDIDATES:-60}; LATENCIES=${LATENCIES:-2 10}; IN_FLIGHT=${IN_FLIGHT:-4 16}
STRATEGY=${STRATEGY:-evoengineer-full}; GPUS=${GPUS:-all}; EVALS_PER_GPU=${EVALS_PER_GPU:-}
FAKE=()
if [[ ${KEVO_THROUGHPUT_FAKE:-0} == 1 ]]; then
  FAKE=(--fake-gpu)
  echo "throughput: KEVO_THROUGHPUT_FAKE=1: no GPU is used; the figures test the script, they measure nothing"
elif ! nvidia-smi -L 2>/dev/null | grep -q "^GPU"; then
  echo "throughput: no GPU (nvidia-smi lists none): this benchmark runs on a GPU machine only" >&2
  exit 2
fi
[[ -x "$K" ]] || { echo "throughput: $K is not built" >&2; exit 2; }
mkdir -p "$W"
EXTRA=()
[[ -n ${SEEDS:-} ]] && EXTRA+=(--seeds "$SEEDS")
[[ -n ${TIME_BUDGET:-} ]] && EXTRA+=(--time-budget "$TIME_BUDGET")
[[ ${NO_RACE:-0} == 1 ]] && EXTRA+=(--no-race)
[[ -n ${MUTATOR:-} ]] && EXTRA+=(--mutator "$MUTATOR")
max_p=1
for p in $IN_FLIGHT; do ((p > max_p)) && max_p=$p; done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$W/gpu.txt" 2>&1

LLM=""
stop_llm() { [[ -n $LLM ]] && kill "$LLM" 2>/dev/null && wait "$LLM" 2>/dev/null; LLM=""; }
trap stop_llm EXIT
# Starts the model server with latency $1, answers numbered from $2, its log in $3; sets PORT.
start_llm() {
  stop_llm
  python3 bench/scripted_llm.py --root . --latency-s "$1" --distinct --first-answer "$2" \
    ${MUTATOR:+--tools --episode-evals "${EPISODE_EVALS:-4}"} > "$3" 2>&1 &
  LLM=$!
  PORT=""
  for _ in $(seq 100); do
    PORT=$(sed -n 's/^PORT //p' "$3")
    [[ -n $PORT ]] && return 0
    sleep 0.1
  done
  echo "throughput: the model server did not start: $(cat "$3")" >&2
  return 1
}

# The search's figures from a run's "finished" event: candidates/min, occupancy, NVML, counts.
summarize() {  # events.jsonl
  [[ -f $1 ]] || { echo "no events (kevo failed before the run started)"; return; }
  python3 - "$1" <<'EOF'
import json, sys
fin = None
for line in open(sys.argv[1]):
    try:
        j = json.loads(line)
    except ValueError:
        continue
    if j.get("kind") == "finished":
        fin = j
if fin is None:
    print("no finished event")
    sys.exit(0)
n, s = fin.get("search_candidates", 0), fin.get("search_s", 0.0)
rate = n * 60.0 / s if s > 0 else 0.0
util = fin.get("search_gpu_util_nvml")
print(f"{rate:.1f} candidates/min over the search ({n} in {s:.1f} s), evaluators busy "
      f"{100 * fin.get('search_evaluators_busy', 0):.0f}%, GPU util "
      f"{'n/a' if util is None else f'{100 * util:.0f}% (NVML)'}")
EOF
}

rc=0
setting=0
for L in $LATENCIES; do
  for P in $IN_FLIGHT; do
    setting=$((setting + 1))
    # A server per setting, its answers numbered apart: no answer is a compile-cache hit.
    name="L$L-P$P"
    start_llm "$L" $((setting * 100000)) "$W/$name.llm.txt" || exit 1
    rm -f "$W/$name.db" "$W/$name.events.jsonl"
    # The model's provider, so more than 4 requests (a URL model's default) may be in flight.
    cat > "$W/$name.toml" <<EOF
[llm.providers.throughput]
protocol = "openai"
base_url = "http://127.0.0.1:$PORT/v1"
api_key_env = ""
max_concurrency = $max_p
local = true
EOF
    cmd=("$K" evolve "$TASK" --model "http://127.0.0.1:$PORT/v1#scripted" -c "$W/$name.toml" --llm live
         --strategy "$STRATEGY" --parallel "$P" --budget-candidates "$N" --gpus "$GPUS" ${EVALS_PER_GPU:+--evals-per-gpu "$EVALS_PER_GPU"} --db "$W/$name.db"
         --events jsonl "$W/$name.events.jsonl" "${EXTRA[@]}" "${FAKE[@]}")
    "${cmd[@]}" > "$W/$name.log" 2>&1
    e=$?
    # Where the candidates' evaluations went (phases and work items of their verdicts).
    [[ -f "$W/$name.db" ]] && python3 "$(dirname "$0")/search_split.py" "$W/$name.db" > "$W/$name.split.txt" 2>&1
    # 0: a verified winner, 1: none (both are complete runs); anything else is a failure.
    ((e > 1)) && rc=1
    echo "THROUGHPUT latency ${L}s in-flight $P: $(summarize "$W/$name.events.jsonl"), exit $e | ${cmd[*]}"
    grep -E "^candidates |^time " "$W/$name.log" | sed 's/^/  /'
  done
done
exit $rc
