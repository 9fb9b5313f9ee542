#!/usr/bin/env bash
# On a GPU machine: every bundled task's baseline evaluated as a candidate (so the oracle is the
# baseline in its own runner, on the device data plane) with correctness only, which runs the
# checker's tolerance phase against the baseline oracle; then one task under --sanitize and
# --profile, whose tool runs confine the runner before the candidate loads. Prints one line per
# task and a summary; exit 1 when any verdict is not a pass.
#
#   scripts/gpu-tolerance-and-tools.sh CARRY LOGDIR [PARALLEL]
#
# CARRY: a folder from scripts/pack-for-gpu.sh (bin/kevo, bin/kevo-runner, lib/).
set -uo pipefail
C=$(cd "$1" && pwd); LOGS=$2; PAR=${3:-8}
mkdir -p "$LOGS"
export LD_LIBRARY_PATH="$C/lib:${LD_LIBRARY_PATH:-}" PATH="/usr/local/cuda/bin:$PATH"
export KEVO_RUNNER="$C/bin/kevo-runner" KEVO_HOME="$PWD" KEVO_CACHE_DIR="${KEVO_CACHE_DIR:-/tmp/kevo-cache}"
t0=$(date +%s)
ls tasks | xargs -P "$PAR" -I{} sh -c \
  '"$0" eval {} tasks/{}/baseline.cu --no-time --no-torch-time --seeds 1 --json > "$1/{}.json" 2> "$1/{}.err"; echo "{} $?"' \
  "$C/bin/kevo" "$LOGS" > "$LOGS/rc.txt"
echo "baselines as candidates: $(wc -l < "$LOGS/rc.txt") tasks in $(( $(date +%s) - t0 )) s"
bad=0
while read -r task rc; do
  tol=$(python3 -c "import json,sys; v=json.load(open(sys.argv[1])); print(v.get('outcome'), v.get('reason',''), round(v.get('work',{}).get('tolerance',0),4))" "$LOGS/$task.json" 2>/dev/null)
  echo "  $task rc=$rc $tol"
  [ "$rc" = 0 ] || bad=1
done < <(sort "$LOGS/rc.txt")
t1=$(date +%s)
"$C/bin/kevo" eval gelu tasks/gelu/baseline.cu --sanitize --profile --seeds 1 > "$LOGS/gelu-tools.txt" 2>&1
echo "gelu --sanitize --profile: rc=$? in $(( $(date +%s) - t1 )) s"
grep -E "sanitize|profile|VERDICT|isolated" "$LOGS/gelu-tools.txt" | head -20
exit "$bad"
