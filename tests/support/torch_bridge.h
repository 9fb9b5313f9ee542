// One PyTorch bridge per test binary (importing torch takes seconds), for the tests of the bridge
// and of what is built on it (tests/torch, tests/interop); KEVO_BRIDGE_OR_SKIP skips a test
// visibly where no Python with torch exists. Header-only, like the other support/ helpers.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "torch/bridge.h"

namespace kevo::test {

// The shared bridge, restarted when a test killed it; nullptr with *why set when no Python with
// torch exists.
inline torch::TorchBridge* shared_bridge(std::string* why) {
  static std::optional<torch::TorchBridge> bridge;
  static std::string error;
  if (bridge && bridge->alive()) return &*bridge;
  if (!error.empty()) {
    *why = error;
    return nullptr;
  }
  auto py = torch::find_torch_python();
  if (!py) {
    error = "needs python3 with torch and numpy (apt-get install python3-torch python3-numpy): " + py.error().message;
    *why = error;
    return nullptr;
  }
  auto b = torch::TorchBridge::start();
  if (!b) {
    ADD_FAILURE() << "the bridge does not start: " << b.error().message;
    *why = "bridge failed to start";
    return nullptr;
  }
  bridge.emplace(std::move(*b));
  return &*bridge;
}

}  // namespace kevo::test

#define KEVO_BRIDGE_OR_SKIP(var)                                                  \
  std::string why_##var;                                                          \
  ::kevo::torch::TorchBridge* var = ::kevo::test::shared_bridge(&why_##var);    \
  if (!var) GTEST_SKIP() << why_##var
