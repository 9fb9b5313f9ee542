#!/usr/bin/env bash
# `kevo bench` of the quick suite on the GPU (scripts/gpu-check.sh phase "suite"): once with the
# offline strategy (no model: tuning of the constants the baselines mark tunable) and once with a
# scripted model (bench/scripted_llm.py: real kernels, including a no-op and a compile error), then
# both tables side by side and the HTML report.
#   bench/suite.sh BUILD_DIR WORK_DIR [CANDIDATES_PER_TASK]
# SEEDS (default 1) and TIME_BUDGET (default 1 s) are smoke settings that fit a 10-minute device
# call: on the quick suite's GB-sized main configs a candidate's check costs ~10 s per seed; the
# winners are still re-verified on held-out shapes with fresh inputs.
set -uo pipefail
B=$(realpath "${1:-build}"); W=$(realpath -m "${2:-/tmp/kevo-suite}"); N=${3:-4}
SEEDS=${SEEDS:-1}; TB=${TIME_BUDGET:-1}
SUITE=${SUITE:-quick}  # a bundled suite's name or a suite file (one task per line)
# PARTS="offline scripted report" by default; split them over device calls when they do not fit
# one. A device machine starts bare, so bring WORK_DIR/*.db back with the call's logs: `kevo bench`
# resumes from a carried database, and `kevo bench table` / `kevo report` run on any machine.
PARTS=${PARTS:-offline scripted report}
part() { [[ " $PARTS " == *" $1 "* ]]; }
K="$B/bin/kevo"
mkdir -p "$W"
python3 bench/scripted_llm.py --root . > "$W/llm.txt" 2>&1 &
LLM=$!
trap 'kill $LLM 2>/dev/null' EXIT
for _ in $(seq 50); do grep -q PORT "$W/llm.txt" && break; sleep 0.1; done
M="http://127.0.0.1:$(sed -n 's/^PORT //p' "$W/llm.txt")/v1#scripted"
rc=0
if part offline; then
echo "== offline (no model), $N candidates per task"
"$K" bench --suite "$SUITE" --budget-candidates "$N" --seeds "$SEEDS" --time-budget "$TB" --db "$W/offline.db" --out "$W/offline" --quiet \
  > "$W/offline.log" 2>&1 || rc=1
cat "$W/offline/bench.md" 2>/dev/null || tail -20 "$W/offline.log"
fi
if part scripted; then
echo "== scripted model, evoengineer-full, $N candidates per task"
"$K" bench --suite "$SUITE" --strategy evoengineer-full --model "$M" --budget-candidates "$N" \
  --seeds "$SEEDS" --time-budget "$TB" \
  --parallel 2 --db "$W/scripted.db" --out "$W/scripted" --quiet > "$W/scripted.log" 2>&1 || rc=1
cat "$W/scripted/bench.md" 2>/dev/null || tail -20 "$W/scripted.log"
fi
part report || exit $rc
echo "== side by side"
dbs=$(ls "$W"/offline.db "$W"/scripted.db 2>/dev/null)
"$K" bench table $dbs --out "$W/compare" || rc=1
"$K" report $dbs -o "$W/report.html" --title "kevo $(basename "$SUITE" .txt) suite (GPU)" || rc=1
ls -la "$W/report.html"
exit $rc
