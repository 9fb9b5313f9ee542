// Scratch folders for tests, under std::filesystem::temp_directory_path() (so $TMPDIR), that are
// removed again: a test run leaves the temporary folder as it found it (scripts/tmp-hygiene.sh).
// Header-only; tests add ${PROJECT_SOURCE_DIR}/tests to their include path (kevo_add_test does).
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <deque>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>

namespace kevo::test {

// A fresh, empty folder named PREFIX-XXXXXX, removed with its contents at destruction by the
// process that made it (a forked child that exits does not take its parent's folder along).
struct TempDir {
  std::filesystem::path path;
  pid_t owner = ::getpid();
  explicit TempDir(const std::string& prefix = "kevo-test") {
    std::string t = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (!mkdtemp(t.data())) throw std::runtime_error("mkdtemp " + t);  // a test edge: fails the test
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path.empty() && ::getpid() == owner) std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// A fresh, empty folder removed when the test binary exits normally: for helpers that hand out
// paths that must outlive one test (a database shared by several, a compiled reference cache).
inline std::filesystem::path temp_dir_until_exit(const std::string& prefix) {
  static std::mutex mu;
  static std::deque<TempDir> dirs;  // destroyed (and so removed) at exit; a deque never moves them
  std::lock_guard lock(mu);
  return dirs.emplace_back(prefix).path;
}

}  // namespace kevo::test
