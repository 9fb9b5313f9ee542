#!/usr/bin/env bash
# A quick GPU smoke test of the checker (a few verdicts), before the full scripts/gpu-check.sh.
set -uo pipefail
B=$(realpath "${1:-.carry}")
export PATH=/usr/local/cuda/bin:$PATH KEVO_CACHE_DIR=/tmp/kevo-cache
K="$B/bin/kevo"
$K doctor
$K eval gelu --baseline --visible-only --time-budget 1
for f in good/gelu_float4.cu adversarial/legacy_stream.cu adversarial/illegal_address.cu adversarial/pointer_cache.cu; do
  t=$(sed -n 's|^// task: *||p' tests/gpu/kernels/$f | head -1); t=${t:-gelu}
  echo "== $f ($t)"; $K eval $t tests/gpu/kernels/$f --time-budget 1 --timeout 10 --visible-only; echo "exit $?"
done
echo "== second_stream, runtime defences only"
$K eval gelu tests/gpu/kernels/adversarial/second_stream.cu --no-static-gate --time-budget 1 --visible-only; echo "exit $?"
