#!/usr/bin/env bash
# Copies the binaries the GPU check needs, without debug info, into .carry/ (git-ignored), so they
# fit the device tool's 64 MiB carry limit: pass `carry: [".carry"]` and run
#   scripts/gpu-check.sh .carry
set -euo pipefail
B=${1:-build}
rm -rf .carry && mkdir -p .carry/bin .carry/tests/gpu .carry/tests/lint
for f in kevo kevo-runner kevo-mcp-bridge; do objcopy --strip-debug "$B/bin/$f" ".carry/bin/$f"; done
for t in gpu_eval_test evolve_e2e_test device_data_test; do
  objcopy --strip-debug "$B/tests/gpu/$t" ".carry/tests/gpu/$t"
done
objcopy --strip-debug "$B/tests/lint/lint_gpu_probe" .carry/tests/lint/lint_gpu_probe
mkdir -p .carry/tests/torch  # the PyTorch oracle on the device data plane (gpu-check phase torchoracle)
objcopy --strip-debug "$B/tests/torch/torch_gpu_test" .carry/tests/torch/torch_gpu_test
# Debian builds cpp-httplib as a shared library that Ubuntu's machine does not have; the tests that
# start loopback servers (evolve_e2e_test) need it: scripts/gpu-check.sh puts .carry/lib on
# LD_LIBRARY_PATH.
mkdir -p .carry/lib
for l in $(ldd .carry/tests/gpu/evolve_e2e_test | awk '/libcpp-httplib|libbrotli/ {print $3}'); do
  cp -L "$l" .carry/lib/
done
# The PostgreSQL client (the run database's second backend): Debian's libpqxx and libpq, and the
# OpenLDAP 2.5 libraries libpq links (Ubuntu 24.04 ships 2.6 under other names).
for l in $(ldd .carry/bin/kevo | awk '/libpqxx|libpq\.|libldap-2|liblber-2/ {print $3}'); do
  cp -L "$l" .carry/lib/
done
[ -f "$B/bin/kevo-bench-queue" ] && objcopy --strip-debug "$B/bin/kevo-bench-queue" .carry/bin/kevo-bench-queue
# The loopback model server (both providers' wire formats) for bench/agent_episode.sh.
[ -f "$B/bin/kevo-fake-model" ] && objcopy --strip-debug "$B/bin/kevo-fake-model" .carry/bin/kevo-fake-model
# KernelBench's level-1/2 problems (gpu-check phase kboracle, bench/kb_oracle.sh reads BUILD/kb), when
# the shared copy is there: ~0.8 MiB of .py files.
if [ -d ../shared/kernelbench/level1 ]; then
  for l in level1 level2; do mkdir -p ".carry/kb/$l" && cp ../shared/kernelbench/$l/*.py ".carry/kb/$l/"; done
  cp ../shared/kernelbench/LICENSE .carry/kb/ 2>/dev/null || true
fi
du -sh .carry
