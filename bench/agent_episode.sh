#!/usr/bin/env bash
# Tool-using episodes on the GPU (kevo evolve --mutator agent), against the same search with one
# model answer per proposal, on the same machine in the same call:
#  1. throughput: bench/throughput.sh with a 2 s model and 8 proposals in flight, once single-shot
#     and once as episodes (each: task, compile of a broken kernel, evaluate of one that writes
#     nothing, EPISODE_EVALS correct kernels, submit): candidates/min, evaluators busy, NVML, and
#     the in-episode evaluate call's latency (median, p95) from the episodes' records;
#  2. one scripted episode per provider (OpenAI chat completions through bench/scripted_llm.py
#     above; Anthropic Messages through kevo-fake-model) on softmax with real kernels.
#   bench/agent_episode.sh BUILD_DIR OUT_DIR
# CANDIDATES (48), LATENCY (2), IN_FLIGHT (8) as in bench/throughput.sh; KEVO_THROUGHPUT_FAKE=1
# tests the script on a machine without a GPU (its figures then mean nothing).
set -uo pipefail
B=$(realpath "$1"); W=$(realpath -m "$2"); K="$B/bin/kevo"
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$W"
export CANDIDATES=${CANDIDATES:-48} LATENCIES=${LATENCY:-2} IN_FLIGHT=${IN_FLIGHT:-8}
rc=0
bench/throughput.sh "$B" "$W/single" || rc=1
MUTATOR=agent bench/throughput.sh "$B" "$W/agent" || rc=1
python3 bench/episode_latency.py "$W/agent/L$LATENCIES-P$IN_FLIGHT.db" || rc=1

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
echo "OPENAI episode (first of the throughput run):"
"$K" show 1 --db "$W/agent/L$LATENCIES-P$IN_FLIGHT.db" | sed -n '/^episode 1 /,/^episode 2 /p' | head -14
exit $rc
