#!/usr/bin/env bash
# A fresh process's CUDA start (bench/context_start.cu), on a GPU machine: alone (three times, a
# second apart), two and three at once, and beside a process that holds a context. Then the
# runners' hellos of `kevo eval` (cached, KEVO_TRACE_CALLS) when BUILD_DIR is given.
#   bench/context_start.sh [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nvcc -O2 -o "$work/cs" bench/context_start.cu || exit 2
nvidia-smi -q | grep -i -m1 persistence
echo "== alone"
for i in 1 2 3; do "$work/cs"; sleep 1; done
echo "== two at once"
for i in 1 2 3; do "$work/cs" & "$work/cs"; wait; done
echo "== three at once"
for i in 1 2; do "$work/cs" & "$work/cs" & "$work/cs"; wait; done
echo "== beside a process that holds a context"
"$work/cs" hold 6 & sleep 2
for i in 1 2 3; do "$work/cs"; done
wait
[[ $# -ge 1 ]] || exit 0
B=$(realpath "$1")
export KEVO_HOME="${KEVO_HOME:-$PWD}" KEVO_RUNNER="$B/bin/kevo-runner" LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}" KEVO_CACHE_DIR="$work/cache"
echo "== kevo eval gelu (cached after the first): the runners' hellos"
for i in 1 2 3 4; do
  KEVO_TRACE_CALLS=1 "$B/bin/kevo" eval gelu tasks/gelu/baseline.cu --visible-only --seeds 3 --time-budget 1 \
    >"$work/ev.txt" 2>"$work/ev.err"
  echo "$(grep -h ' hello ' "$work/ev.err" | awk '{printf "hello %s ms  ", $4}')$(grep VERDICT "$work/ev.txt")"
done
