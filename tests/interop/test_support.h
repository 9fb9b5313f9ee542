// Shared helpers of the interop tests: sample files, a bridge per binary, temporary directories.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <optional>
#include <string>

#include "support/temp_dir.h"
#include "torch/bridge.h"

namespace kevo::interop {
namespace fs = std::filesystem;
}

namespace kevo::interop::testing {

namespace fs = std::filesystem;

inline fs::path data(const std::string& f) { return fs::path(KEVO_SOURCE_DIR) / "tests" / "interop" / "data" / f; }

// One bridge shared by the tests of a binary (importing torch takes seconds); restarted when a test
// killed it. nullptr with *why set when no Python with torch exists.
inline TorchBridge* shared_bridge(std::string* why) {
  static std::optional<TorchBridge> bridge;
  static std::string error;
  if (bridge && bridge->alive()) return &*bridge;
  if (!error.empty()) {
    *why = error;
    return nullptr;
  }
  auto py = find_torch_python();
  if (!py) {
    error = "needs python3 with torch and numpy (apt-get install python3-torch python3-numpy): " + py.error().message;
    *why = error;
    return nullptr;
  }
  auto b = TorchBridge::start();
  if (!b) {
    ADD_FAILURE() << "the bridge does not start: " << b.error().message;
    *why = "bridge failed to start";
    return nullptr;
  }
  bridge.emplace(std::move(*b));
  return &*bridge;
}

#define KEVO_BRIDGE_OR_SKIP(var)                                  \
  std::string why_##var;                                          \
  ::kevo::interop::TorchBridge* var = ::kevo::interop::testing::shared_bridge(&why_##var); \
  if (!var) GTEST_SKIP() << why_##var

// A fresh temporary directory, removed at destruction.
using TempDir = ::kevo::test::TempDir;

}  // namespace kevo::interop::testing
