// Coverage of KernelBench (label `kernelbench`): every problem file of levels 1 and 2 under
// $KEVO_KERNELBENCH_DIR (default ../shared/kernelbench beside the source tree) is imported through
// one bridge; each must import, its task must load, and a sample of problems small enough to
// materialize has the main config's input shapes and dtypes compared with the module's own
// get_inputs() at full size. Prints a table (level, file, result, seconds, reason) and the
// median/max time. Slow (minutes): it runs only with KEVO_KERNELBENCH_FULL=1, else it skips saying
// how to run it; KEVO_KERNELBENCH_FILTER=substring limits it to matching files,
// KEVO_KERNELBENCH_OUT=DIR keeps the tasks there.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>

#include "interop/import.h"
#include "interop/task_compat.h"
#include "task/task.h"
#include "test_support.h"
#include "util/fs.h"

namespace kevo::interop {
namespace {

using testing::TempDir;

fs::path kernelbench_dir() {
  if (const char* d = getenv("KEVO_KERNELBENCH_DIR"); d && *d) return d;
  return fs::path(KEVO_SOURCE_DIR) / ".." / "shared" / "kernelbench";
}

std::vector<fs::path> problem_files(const fs::path& level) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(level, ec))
    if (e.path().extension() == ".py") out.push_back(e.path());
  auto num = [](const fs::path& p) { return std::atoi(p.filename().string().c_str()); };
  std::sort(out.begin(), out.end(), [&](const auto& a, const auto& b) { return num(a) < num(b); });
  return out;
}

// The main config's input shapes and dtypes against get_inputs() at full size (a real load).
void check_against_get_inputs(torch::TorchBridge& b, const fs::path& file, const Task& task) {
  auto s = b.load(file, {}, 0, false);
  ASSERT_TRUE(s) << s.error().message;
  auto d = b.describe(false);
  ASSERT_TRUE(d) << d.error().message;
  size_t k = 0;
  for (const auto& a : d->args) {
    if (a.scalar) continue;
    ASSERT_LT(k, task.inputs.size());
    const auto& in = task.inputs[k++];
    EXPECT_EQ(in.name, a.name) << file;
    EXPECT_EQ(in.dtype, a.tensor.dtype) << file << " " << a.name;
    auto shape = task.shape_of(in, task.main());
    ASSERT_TRUE(shape) << shape.error().message;
    std::vector<int64_t> want = a.tensor.shape.empty() ? std::vector<int64_t>{1} : a.tensor.shape;
    EXPECT_EQ(*shape, want) << file << " " << a.name;
  }
}

TEST(KernelBenchCoverage, EveryProblemOfLevels1And2Imports) {
  const char* full = getenv("KEVO_KERNELBENCH_FULL");
  if (!full || std::string(full) != "1")
    GTEST_SKIP() << "slow: run with KEVO_KERNELBENCH_FULL=1 ctest -L kernelbench (docs/kernelbench-import.md)";
  fs::path root = kernelbench_dir();
  if (!fs::exists(root / "level1")) GTEST_SKIP() << "no KernelBench problems at " << root;
  KEVO_BRIDGE_OR_SKIP(b);
  const char* filter = getenv("KEVO_KERNELBENCH_FILTER");
  TempDir tmp;
  std::vector<double> times;
  int failed = 0, sampled = 0, derived = 0;
  for (const char* level : {"level1", "level2"}) {
    for (const auto& f : problem_files(root / level)) {
      if (filter && f.filename().string().find(filter) == std::string::npos) continue;
      ImportOptions o;
      const char* keep = getenv("KEVO_KERNELBENCH_OUT");  // keep the tasks there (for inspection)
      o.out_dir = (keep && *keep ? fs::path(keep) : tmp.path) / level;
      o.overwrite = true;
      auto t0 = std::chrono::steady_clock::now();
      auto t = import_kernelbench(*b, f, o);
      double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      times.push_back(sec);
      std::string why = t ? "" : t.error().message.substr(0, t.error().message.find('\n'));
      std::string flops = "-";
      if (t) {
        auto task = load_task_with_torch(t->dir);
        EXPECT_TRUE(task) << f << ": " << task.error().message;
        if (task) {
          flops = read_file(t->dir / "task.toml")->find("flops: derived") != std::string::npos ? "derived" : "bound";
          derived += flops == "derived";
          auto bytes = task->bytes(task->main());
          // Sample: the first 25 problems whose main tensors take under 64 MB, checked at full size.
          if (bytes && *bytes < 64e6 && sampled < 25) {
            ++sampled;
            check_against_get_inputs(*b, f, *task);
          }
        }
      } else {
        ++failed;
        ADD_FAILURE() << f << ": " << why;
      }
      if (t)
        for (const auto& n : t->notes)
          if (n.rfind("flops", 0) == 0) std::printf("KB-NOTE\t%s\t%s\n", f.filename().string().c_str(), n.c_str());
      std::printf("KB\t%s\t%s\t%s\t%.2f\t%s\t%s\n", level, f.filename().string().c_str(), t ? "imported" : "FAILED",
                  sec, flops.c_str(), why.c_str());
      std::fflush(stdout);
      if (!b->alive()) b = testing::shared_bridge(&why_b);
      ASSERT_NE(b, nullptr);
    }
  }
  std::sort(times.begin(), times.end());
  if (!times.empty())
    std::printf("KB-SUMMARY\tfiles %zu\tfailed %d\tflops derived %d\tlower bound %d\tsampled %d\tmedian %.2f s\t"
                "max %.2f s\n", times.size(), failed, derived, static_cast<int>(times.size()) - failed - derived, sampled,
                times[times.size() / 2], times.back());
}

}  // namespace
}  // namespace kevo::interop
