// Shared helpers of the bridge's tests: sample files, a bridge per binary, temporary directories.
#pragma once

#include <filesystem>
#include <string>

#include "support/temp_dir.h"
#include "support/torch_bridge.h"

namespace kevo::torch {
namespace fs = std::filesystem;
}

namespace kevo::torch::testing {

namespace fs = std::filesystem;

// Files of these tests (references of bundled tasks' ops, every dtype, prints, a hang).
inline fs::path data(const std::string& f) { return fs::path(KEVO_SOURCE_DIR) / "tests" / "torch" / "data" / f; }
// KernelBench-format problem files, good and malformed, which the import tests read too.
inline fs::path kb_data(const std::string& f) {
  return fs::path(KEVO_SOURCE_DIR) / "tests" / "interop" / "data" / f;
}

using ::kevo::test::shared_bridge;

// A fresh temporary directory, removed at destruction.
using TempDir = ::kevo::test::TempDir;

}  // namespace kevo::torch::testing
