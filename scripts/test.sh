#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite: the normal build, then an ASan/UBSan build.
# GPU tests (label "gpu") skip with a visible message where there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
./scripts/setup.sh
# PyTorch interop tests use Debian's CPU build of torch, the report test Debian's chromium (both
# skip, visibly, without them).
if ! dpkg -s python3-torch python3-numpy chromium universal-ctags >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-torch python3-numpy chromium universal-ctags || \
    echo "NOTE: python3-torch/chromium could not be installed: interop and report-render tests will skip"
fi
command -v nvcc >/dev/null || echo "NOTE: nvcc not found: kernel-compiling tests will skip (visibly)"
(cd build && ctest --output-on-failure -j2)
echo "== GPU tests on this machine (skip without a GPU):"
(cd build && ctest -L gpu --output-on-failure | tail -n 3)
if [ "${KEVO_SKIP_SANITIZE:-0}" != 1 ]; then
  BUILD=build-asan CMAKE_ARGS="-DKEVO_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug" ./scripts/setup.sh
  (cd build-asan && ASAN_OPTIONS=detect_leaks=0 ctest --output-on-failure -j2 -LE gpu)
fi
# Fuzz smoke (issue 15): every libFuzzer harness (tests/fuzz) for a bounded time from its seed
# corpus, in its own clang-14 + ASan/UBSan build (build-fuzz); a crash, leak or hang fails the run.
# Each prints its executions per second. KEVO_FUZZ_SECONDS sets the time per harness.
if [ "${KEVO_SKIP_FUZZ:-0}" != 1 ]; then
  ./scripts/fuzz.sh "${KEVO_FUZZ_SECONDS:-30}"
fi
