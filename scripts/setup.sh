#!/usr/bin/env bash
# Installs what kevo needs on Debian 12 (the CUDA toolkit must already be at /usr/local/cuda for
# GPU work and for compiling kernels) and builds into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
if ! dpkg -s libcurl4-openssl-dev nlohmann-json3-dev libsqlite3-dev libcli11-dev libfmt-dev \
     libspdlog-dev libtomlplusplus-dev libgtest-dev libgmock-dev libcpp-httplib-dev libssl-dev \
     libpqxx-dev libpq-dev libseccomp-dev cmake ninja-build g++ pkg-config >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libcurl4-openssl-dev nlohmann-json3-dev \
    libsqlite3-dev libcli11-dev libfmt-dev libspdlog-dev libtomlplusplus-dev libgtest-dev libgmock-dev \
    libcpp-httplib-dev libssl-dev libpqxx-dev libpq-dev libseccomp-dev cmake ninja-build g++ pkg-config
fi
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B "${BUILD:-build}" -G Ninja ${CMAKE_ARGS:-}
cmake --build "${BUILD:-build}"
