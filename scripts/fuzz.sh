#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz, clang-14 with ASan/UBSan) in build-fuzz and runs each
# for a bounded time from its seed corpus (tests/fuzz/corpus/<name>), failing on any crash, leak,
# sanitizer report or hang. Prints each harness's executions and executions per second.
#
#   scripts/fuzz.sh                 # every harness, 30 s each
#   scripts/fuzz.sh 600 task expr   # the named harnesses, 10 min each
#
# Env: KEVO_FUZZ_BUILD (build folder, default build-fuzz), KEVO_FUZZ_NICE=1 (run under nice -n 19),
# KEVO_FUZZ_NO_BUILD=1 (run what is built), KEVO_FUZZ_KEEP=1 (keep the inputs found in build-fuzz/corpus/<name> instead of a temp folder).
# A failing input is written to build-fuzz/artifacts/<name>/; replay it with
# build-fuzz/fuzz/<name>_fuzz FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH="${1:-30}"
shift || true
ALL=(task expr static_check answer channel store)
HARNESSES=("$@")
[ ${#HARNESSES[@]} -gt 0 ] || HARNESSES=("${ALL[@]}")
BUILD="${KEVO_FUZZ_BUILD:-build-fuzz}"

if ! command -v clang++-14 >/dev/null || ! dpkg -s libfuzzer-14-dev >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang-14 libfuzzer-14-dev
fi

# No CUDA and no tests in this tree: only the instrumented libraries the harnesses link.
# KEVO_FUZZ_NO_BUILD=1 runs the binaries already there.
[ "${KEVO_FUZZ_NO_BUILD:-0}" = 1 ] || {
cmake -S . -B "$BUILD" -G Ninja -DKEVO_FUZZ=ON -DKEVO_BUILD_TESTS=OFF \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" ${CMAKE_ARGS:-} >/dev/null
targets=()
for h in "${HARNESSES[@]}"; do targets+=("${h}_fuzz"); done
cmake --build "$BUILD" -j"${KEVO_FUZZ_JOBS:-2}" --target "${targets[@]}"
}

NICE=(); [ "${KEVO_FUZZ_NICE:-0}" = 1 ] && NICE=(nice -n 19)
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=()
for h in "${HARNESSES[@]}"; do
  seeds="tests/fuzz/corpus/$h"
  art="$BUILD/artifacts/$h"
  mkdir -p "$art"
  if [ "${KEVO_FUZZ_KEEP:-0}" = 1 ]; then
    work="$BUILD/corpus/$h"; mkdir -p "$work"
  else
    work="$(mktemp -d)"
  fi
  log="$BUILD/fuzz-$h.log"
  echo "== fuzz $h: ${SECONDS_EACH}s (log $log)"
  rc=0
  # New inputs go to the first folder (scratch), the seeds are only read; -timeout: a hang fails.
  "${NICE[@]}" "$BUILD/fuzz/${h}_fuzz" -max_total_time="$SECONDS_EACH" -timeout="${KEVO_FUZZ_TIMEOUT:-25}" \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$art/" "$work" "$seeds" \
    >"$log" 2>&1 || rc=$?
  [ "${KEVO_FUZZ_KEEP:-0}" = 1 ] || rm -rf "$work"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 || true)
  echo "   $h: ${execs:-?} executions, ${rate:-?} exec/s, ${cov:-cov: ?}, exit $rc"
  if [ "$rc" != 0 ]; then
    failed+=("$h")
    grep -E 'ERROR: |SUMMARY: |runtime error|Test unit written|terminate called|what\(\)' "$log" | head -n 20 || true
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (inputs in $BUILD/artifacts/)"
  exit 1
fi
echo "fuzz: all ${#HARNESSES[@]} harnesses ran clean"
