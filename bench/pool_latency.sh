#!/usr/bin/env bash
# `kevo eval` latency of gelu's baseline (as a candidate) without and with the runner pool, on one
# machine in one call (GPU machine; issue 13's figure): first with no pool anywhere
# (KEVO_RUNNER_POOL=off), then with one (`kevo runners start`). Each part: N cold evals (a source
# never compiled: the baseline with a unique comment), then N cached ones (the same source again),
# one second apart (a pool refills its two runners meanwhile; without one, the previous eval's
# runners finish their teardown). Prints one line per eval (process wall time, the verdict's
# seconds and where they went) and the medians.
#   bench/pool_latency.sh BUILD [N]
set -uo pipefail
B=$(realpath "${1:-build}")
N=${2:-5}
K="$B/bin/kevo"
export PATH=/usr/local/cuda/bin:$PATH KEVO_RUNNER=$B/bin/kevo-runner
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}  # a carried build (scripts/pack-for-gpu.sh)
export KEVO_RUNNER_POOL_DIR=$(mktemp -d)/pool
ARGS="--visible-only --seeds 3 --time-budget 1 --no-torch-time --json"
now() { date +%s.%N; }
line() {  # label wall json
  python3 - "$@" <<'PY'
import json, sys
label, wall, path = sys.argv[1], float(sys.argv[2]), sys.argv[3]
try:
    j = json.load(open(path))
except ValueError:
    print(f"EVAL {label} FAILED: " + open("/tmp/pool-lat.err").read()[-400:])
    sys.exit(0)
w = j.get("work_seconds", {})
t = j.get("timing") or {}
print(f"EVAL {label} wall {wall:.3f} verdict {j['seconds']:.3f} {j['outcome']} | "
      + ", ".join(f"{k} {v:.3f}" for k, v in j.get("phases", {}).items()) + " | "
      + ", ".join(f"{k} {v:.3f}" for k, v in sorted(w.items()))
      + f" | median_ms {t.get('candidate', {}).get('median_ms', 0):.4f}"
      + f" | rounds {t.get('outside_clock', {}).get('rounds', 0)}"
      + f" retried {t.get('outside_clock', {}).get('retried_rounds', 0)}")
PY
}
run_part() {  # label
  local label=$1 i src
  for i in $(seq "$N"); do
    src=/tmp/pool-lat-$label-$i-$$.cu
    { cat tasks/gelu/baseline.cu; echo "// $label $i $(date +%s%N)"; } > "$src"
    t0=$(now); "$K" eval gelu "$src" $ARGS > /tmp/pool-lat.json 2>/tmp/pool-lat.err; t1=$(now)
    line "$label-cold" "$(python3 -c "print($t1-$t0)")" /tmp/pool-lat.json
    sleep 1
  done
  for i in $(seq "$N"); do
    t0=$(now); "$K" eval gelu "$src" $ARGS > /tmp/pool-lat.json 2>/tmp/pool-lat.err; t1=$(now)
    line "$label-cached" "$(python3 -c "print($t1-$t0)")" /tmp/pool-lat.json
    sleep 1
  done
}
export KEVO_CACHE_DIR=$(mktemp -d)
# The device's ceilings and the baseline's compile, once, so neither part pays for them.
KEVO_RUNNER_POOL=off "$K" eval gelu tasks/gelu/baseline.cu $ARGS > /dev/null 2>&1
KEVO_RUNNER_POOL=off run_part nopool | tee /tmp/pool-lat-$$.txt
"$K" runners start --spares 4
# One eval to have the pool keep this kind of runner (the first finds none ready), then its refill.
KEVO_RUNNER_POOL=use "$K" eval gelu tasks/gelu/baseline.cu $ARGS > /dev/null 2>&1
sleep 3
"$K" runners status
KEVO_RUNNER_POOL=use run_part pool | tee -a /tmp/pool-lat-$$.txt
"$K" runners status
"$K" runners stop
python3 - /tmp/pool-lat-$$.txt <<'PY'
import re, statistics as st, sys
rows = {}
for l in open(sys.argv[1]):
    m = re.match(r"EVAL (\S+) wall (\S+) verdict (\S+) .*runner_wait ([0-9.]+)", l)
    if m:
        rows.setdefault(m[1], []).append((float(m[2]), float(m[3]), float(m[4])))
for label, r in rows.items():
    print(f"MEDIAN {label}: wall {st.median(x[0] for x in r):.3f} s, verdict {st.median(x[1] for x in r):.3f} s, "
          f"runner_wait {st.median(x[2] for x in r):.3f} s (n={len(r)})")
meds = [float(re.search(r"median_ms (\S+)", l)[1]) for l in open(sys.argv[1]) if l.startswith("EVAL pool-cached")]
if len(meds) > 1:
    print(f"CV_OF_MEDIAN pool-cached: {100 * st.pstdev(meds) / st.mean(meds):.3f}% over {len(meds)} evals "
          f"(median {st.median(meds):.4f} ms)")
PY
