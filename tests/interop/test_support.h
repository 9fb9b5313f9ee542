// Shared helpers of the interop tests: sample files, a bridge per binary, temporary directories.
#pragma once

#include <filesystem>
#include <string>

#include "support/temp_dir.h"
#include "support/torch_bridge.h"

namespace kevo::interop {
namespace fs = std::filesystem;
}

namespace kevo::interop::testing {

namespace fs = std::filesystem;

inline fs::path data(const std::string& f) { return fs::path(KEVO_SOURCE_DIR) / "tests" / "interop" / "data" / f; }

using ::kevo::test::shared_bridge;

// A fresh temporary directory, removed at destruction.
using TempDir = ::kevo::test::TempDir;

}  // namespace kevo::interop::testing
