#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite in one instrumented tree (build-ci): clang-14 with
# ASan + UBSan and libFuzzer coverage, so every test runs under the sanitizers and the fuzz
# harnesses (tests/fuzz) come from the same build. One tree instead of three (normal, ASan, fuzz)
# keeps CI on 2 cores well inside its time limit; clang-14 compiles this tree ~3x faster than
# GCC 12 does an ASan build. GPU tests (label "gpu") skip with a visible message where there is no
# GPU; on a GPU machine scripts/gpu-check.sh runs them from the normal build (scripts/setup.sh).
#
# Env: KEVO_SKIP_FUZZ=1 (no fuzz smoke), KEVO_FUZZ_SECONDS (per harness, default 30),
#      KEVO_TEST_BUILD (the tree, default build-ci), KEVO_CTEST_ARGS (extra ctest arguments).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
BUILD="${KEVO_TEST_BUILD:-build-ci}"
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
# PyTorch interop tests use Debian's CPU build of torch, the report test Debian's chromium (both
# skip, visibly, without them); clang-14 and libFuzzer build this tree; the PostgreSQL run-database
# tests start a throwaway PostgreSQL 15 server of their own (tests/support/pg_server.h).
if ! dpkg -s python3-torch python3-numpy chromium universal-ctags clang-14 libfuzzer-14-dev postgresql-15 \
     >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang-14 libfuzzer-14-dev postgresql-15
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-torch python3-numpy chromium universal-ctags || \
    echo "NOTE: python3-torch/chromium could not be installed: interop and report-render tests will skip"
fi
command -v nvcc >/dev/null || echo "NOTE: nvcc not found: kernel-compiling tests will skip (visibly)"
# Build type "CI": no preset flags, so -O0 with line tables only (-g1: sanitizer reports keep file
# and line, at a fraction of full debug info's cost) and assertions on.
BUILD="$BUILD" CMAKE_ARGS="-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DKEVO_SANITIZE=ON \
  -DKEVO_FUZZ=ON -DCMAKE_BUILD_TYPE=CI -DCMAKE_CXX_FLAGS=-g1 -DCMAKE_C_FLAGS=-g1 ${CMAKE_ARGS:-}" ./scripts/setup.sh
# Leaks are the fuzz smoke's to find (libFuzzer checks each input); here the forked runners and
# bridges exit without freeing what the OS takes back anyway. --timeout: a test that hangs (or a
# scan gone quadratic) fails instead of stalling CI.
(cd "$BUILD" && ASAN_OPTIONS=detect_leaks=0 ctest --output-on-failure -j2 --timeout 600 -LE gpu ${KEVO_CTEST_ARGS:-})
echo "== GPU tests on this machine (skip without a GPU):"
(cd "$BUILD" && ASAN_OPTIONS=detect_leaks=0 ctest -L gpu --output-on-failure | tail -n 3)
# Fuzz smoke (issue 15): every libFuzzer harness for a bounded time from its seed corpus; a crash,
# leak or hang fails the run. Each prints its executions per second.
if [ "${KEVO_SKIP_FUZZ:-0}" != 1 ]; then
  KEVO_FUZZ_BUILD="$BUILD" KEVO_FUZZ_NO_BUILD=1 ./scripts/fuzz.sh "${KEVO_FUZZ_SECONDS:-30}"
fi
