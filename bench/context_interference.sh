#!/usr/bin/env bash
# Whether making or ending CUDA contexts in other processes disturbs timing on the same GPU
# (bench/context_interference.cu, .py), and what a context costs with fewer hardware queues.
#   bench/context_interference.sh OUT_DIR
set -uo pipefail
cd "$(dirname "$0")/.."
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
W=$(realpath -m "${1:-/tmp/ci-out}"); mkdir -p "$W"
ci="$W/ci"
nvcc -O2 -o "$ci" bench/context_interference.cu || exit 2
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$W/gpu.txt"
# Context costs alone, by CUDA_DEVICE_MAX_CONNECTIONS (the default is 8).
for c in 8 4 2 1; do
  CUDA_DEVICE_MAX_CONNECTIONS=$c timeout 60 "$ci" churn 10 50 > "$W/alone-conn$c.txt"
  echo "alone, connections $c: $(awk '$1=="C"{print ($3-$2)/1e6}' "$W/alone-conn$c.txt" | sort -n | awk '{a[NR]=$1} END{printf "made median %.1f ms (min %.1f, max %.1f)", a[int((NR+1)/2)], a[1], a[NR]}')"
done
# Beside a timer: contexts made and ended (no memory), then ones holding 4 GiB (a candidate's slab).
for alloc in 0 4096; do
  timeout 60 "$ci" timer 20 512 8 > "$W/timer-$alloc.txt" &
  t=$!
  sleep 2
  timeout 90 "$ci" churn 20 150 "$alloc" > "$W/churn-$alloc.txt"
  wait $t
  echo "== beside a timer, children allocating $alloc MiB"
  python3 bench/context_interference.py "$W/timer-$alloc.txt" "$W/churn-$alloc.txt"
done
