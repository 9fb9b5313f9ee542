#!/usr/bin/env bash
# Tool-using episodes on the GPU (kevo evolve --mutator agent), against the same search with one
# model answer per proposal, on the same machine in the same call:
#  1. throughput: a 2 s model and IN_FLIGHT proposals in flight, single-shot (bench/throughput.sh)
#     and as episodes three ways (bench/agent_episode_model.py, one line each, AGENT ...):
#       plain:       task, compile of a broken kernel, evaluate of one that writes nothing,
#                    EPISODE_EVALS correct kernels, submit (nothing compiles cleanly before its
#                    evaluate, so speculation has nothing to start);
#       compile-off: every kernel compiled before it is evaluated, speculation off
#                    (`episode_speculate = false`);
#       compile-on:  the same with speculation: a clean compile starts the kernel's evaluation
#                    while the model writes its next turn, and the evaluate joins it;
#     each: candidates/min, evaluators busy, NVML, the in-episode evaluate call's latency (median,
#     p95) and speculative evaluations started / used (ready, still running) / wasted (their slot
#     seconds) / never started;
#  2. one scripted episode per provider (OpenAI chat completions through bench/scripted_llm.py
#     above; Anthropic Messages through kevo-fake-model) on softmax with real kernels.
#   bench/agent_episode.sh BUILD_DIR OUT_DIR
# CANDIDATES (48), LATENCY (2), IN_FLIGHT (8), EPISODE_EVALS (4), TASK (softmax), AGENT_RUNS
# ("plain compile-off compile-on"), SINGLE=0 (skip the single-shot run); KEVO_THROUGHPUT_FAKE=1
# tests the script on a machine without a GPU (its figures then mean nothing).
set -uo pipefail
B=$(realpath "$1"); W=$(realpath -m "$2"); K="$B/bin/kevo"
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$W"
export CANDIDATES=${CANDIDATES:-48} LATENCIES=${LATENCY:-2} IN_FLIGHT=${IN_FLIGHT:-8}
EPISODE_EVALS=${EPISODE_EVALS:-4}; TASK=${TASK:-softmax}; AGENT_RUNS=${AGENT_RUNS:-plain compile-off compile-on}
FAKE=()
[[ ${KEVO_THROUGHPUT_FAKE:-0} == 1 ]] && FAKE=(--fake-gpu)
rc=0
[[ ${SINGLE:-1} == 1 ]] && { bench/throughput.sh "$B" "$W/single" || rc=1; }

LLM=""
stop_llm() { [[ -n $LLM ]] && kill "$LLM" 2>/dev/null && wait "$LLM" 2>/dev/null; LLM=""; }
trap stop_llm EXIT
# One episode run: NAME, its answers numbered from FIRST, SPECULATE (true|false), then the model's
# own flags. Its files: $W/agent-NAME.{log,db,events.jsonl,llm.txt,toml}.
agent_run() {
  local name=$1 first=$2 speculate=$3 f="$W/agent-$1" port=""
  shift 3
  stop_llm
  python3 bench/agent_episode_model.py --root . --latency-s "$LATENCIES" --distinct --first-answer "$first" \
    --tools --episode-evals "$EPISODE_EVALS" "$@" > "$f.llm.txt" 2>&1 &
  LLM=$!
  for _ in $(seq 100); do
    port=$(sed -n 's/^PORT //p' "$f.llm.txt")
    [[ -n $port ]] && break
    sleep 0.1
  done
  [[ -n $port ]] || { echo "AGENT $name: the model server did not start: $(cat "$f.llm.txt")"; return 1; }
  rm -f "$f.db" "$f.events.jsonl"
  printf '[llm.providers.throughput]\nprotocol = "openai"\nbase_url = "http://127.0.0.1:%s/v1"\napi_key_env = ""\nmax_concurrency = %s\nlocal = true\n\n[evolve]\nepisode_speculate = %s\n' \
    "$port" "$IN_FLIGHT" "$speculate" > "$f.toml"
  "$K" evolve "$TASK" --model "http://127.0.0.1:$port/v1#scripted" -c "$f.toml" --llm live --mutator agent \
    --strategy evoengineer-full --parallel "$IN_FLIGHT" --budget-candidates "$CANDIDATES" --db "$f.db" \
    --events jsonl "$f.events.jsonl" "${FAKE[@]}" > "$f.log" 2>&1
  local e=$?
  python3 bench/agent_episode_summary.py "$f.events.jsonl" "$name (exit $e)"
  stop_llm
  ((e <= 1))  # 0: a verified winner, 1: none; both are complete runs
}
n=0
for r in $AGENT_RUNS; do
  n=$((n + 1))
  case $r in
    plain) agent_run plain $((n * 1000000)) true || rc=1 ;;
    compile-off) agent_run compile-off $((n * 1000000)) false --compile-first || rc=1 ;;
    compile-on) agent_run compile-on $((n * 1000000)) true --compile-first || rc=1 ;;
    *) echo "AGENT $r: not a run (plain, compile-off, compile-on)"; rc=1 ;;
  esac
done
LAST=$(for r in $AGENT_RUNS; do echo "$r"; done | tail -1)

# 2. Anthropic Messages: a scripted episode with real kernels through the loopback server.
python3 - "$W/anthropic.script.json" <<'PY'
import json, pathlib, sys
good = pathlib.Path("tests/gpu/kernels/good/softmax_online.cu").read_text()
broken = good.replace("__global__", "__global__ undeclared_t", 1)
noop = "#include <kevo/kernel.h>\nKEVO_EXPORT int kevo_forward(const kevo_args* a) { (void)a; return 0; }\n"
t = lambda tool, args={}: {"tool_calls": [{"tool": tool, "arguments": args}]}
json.dump({"turns": [t("task"), t("compile", {"source": broken}),
                     t("evaluate", {"source": noop, "name": "noop"}),
                     t("evaluate", {"source": good, "name": "online softmax", "idea": "one pass, running max"}),
                     t("submit", {"source": good}), {"text": "done"}]}, open(sys.argv[1], "w"))
PY
"$B/bin/kevo-fake-model" --script "$W/anthropic.script.json" --log "$W/anthropic.model.log" --port-file "$W/anthropic.port" &
FM=$!
for _ in $(seq 50); do [[ -s "$W/anthropic.port" ]] && break; sleep 0.1; done
PORT=$(sed 's#.*:##' "$W/anthropic.port")
printf '[llm.providers.loop]\nprotocol = "anthropic"\nbase_url = "http://127.0.0.1:%s/v1"\napi_key_env = ""\nlocal = true\n' "$PORT" > "$W/anthropic.toml"
"$K" evolve softmax --model loop:scripted -c "$W/anthropic.toml" --llm live --mutator agent --strategy evoengineer-full \
  --parallel 1 --budget-candidates 2 --db "$W/anthropic.db" ${KEVO_THROUGHPUT_FAKE:+--fake-gpu} > "$W/anthropic.log" 2>&1
echo "ANTHROPIC episode: exit $? ($(grep -E '^winner|^no candidate' "$W/anthropic.log" | head -1))"
"$K" show 1 --db "$W/anthropic.db" | sed -n '/^episodes/,/^lineage/p' | head -24
kill $FM 2>/dev/null
echo "OPENAI episode (first of the $LAST run):"
"$K" show 1 --db "$W/agent-$LAST.db" | sed -n '/^episode 1 /,/^episode 2 /p' | head -14
exit $rc
