#!/usr/bin/env bash
# The runner's sealed-copy start and private /proc on a real GPU (~1 min), from the repo root with
# the build carried (scripts/pack-for-gpu.sh): `kevo doctor`, then gelu's baseline as a candidate,
# cold and pooled, each verdict's isolation (proc_private, seccomp, Landlock) and outcome. Logs in $OUT.
#   scripts/gpu-isolation.sh [build-dir]
set -uo pipefail
B=$(realpath "${1:-build}")
OUT=${OUT:-/tmp/kevo-gpu-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH KEVO_HOME=$(pwd) KEVO_CACHE_DIR=${KEVO_CACHE_DIR:-/tmp/kevo-cache}
export KEVO_RUNNER=$B/bin/kevo-runner KEVO_RUNNER_POOL_DIR=$(mktemp -d)
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
K="$B/bin/kevo"
rc=0
"$K" doctor > "$OUT/doctor.txt" 2>&1
grep -i isolation "$OUT/doctor.txt"
for run in off-cold off-cached use-first use-pooled; do
  [ "$run" = use-first ] && { "$K" runners start >> "$OUT/pool.txt" 2>&1; sleep 1; }
  [ "$run" = use-pooled ] && sleep 4  # the pool keeps the kind the first take asked for
  KEVO_RUNNER_POOL=${run%%-*} "$K" eval tasks/gelu tasks/gelu/baseline.cu --json > "$OUT/eval-$run.json" 2> "$OUT/eval-$run.err"
  python3 - "$OUT/eval-$run.json" "$run" <<'PY' || rc=1
import json, sys
v = json.load(open(sys.argv[1])); iso = v.get("isolation", {})
print(sys.argv[2], v.get("outcome"), v.get("reason", ""), "isolation:", json.dumps(iso))
sys.exit(0 if v.get("outcome") == "pass" and iso.get("proc_private") and iso.get("seccomp") else 1)
PY
done
"$K" runners status >> "$OUT/pool.txt" 2>&1
"$K" runners stop >> "$OUT/pool.txt" 2>&1
cp "$KEVO_RUNNER_POOL_DIR/pool.log" "$OUT/pool.log" 2>/dev/null
rm -rf "$KEVO_RUNNER_POOL_DIR"
echo "gpu-isolation: $([ $rc = 0 ] && echo ok || echo FAILED)"
exit $rc
