// Shared helpers for the compile tests: a scratch directory and locating nvcc.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/temp_dir.h"
#include "util/subprocess.h"

namespace kevo::test {

// TempDir: support/temp_dir.h (a scratch folder removed at destruction).

inline void write_text(const std::filesystem::path& p, const std::string& text, bool executable = false) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
  if (executable) chmod(p.c_str(), 0755);
}

// nvcc from PATH, else the default toolkit location; empty when absent.
inline std::string find_nvcc() {
  if (auto p = find_program("nvcc")) return *p;
  if (std::filesystem::exists("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  return "";
}

}  // namespace kevo::test

#define KEVO_REQUIRE_NVCC(var)                                                      \
  const std::string var = ::kevo::test::find_nvcc();                                \
  if (var.empty()) GTEST_SKIP() << "SKIPPED: nvcc not found (install the CUDA toolkit)"
