// kevo export: the winner as a standalone kernel and host example; the files are written and compile with nvcc (no GPU needed to compile).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "interop/standalone_export.h"
#include "support/temp_dir.h"
#include "util/fs.h"

namespace kevo::interop {
namespace {

std::filesystem::path temp_dir(const std::string& tag) {
  return kevo::test::temp_dir_until_exit("kevo-export-test-" + tag);
}

void write(const std::filesystem::path& p, const std::string& s) { std::ofstream(p) << s; }

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

std::string nvcc_path() {
  for (const char* p : {"/usr/local/cuda/bin/nvcc", "/usr/bin/nvcc"})
    if (std::filesystem::exists(p)) return p;
  return {};
}

TEST(Export, WritesAStandaloneKernelAndHostExampleThatCompile) {
  auto dir = temp_dir("export");
  // A bundled task with scalars-free f32 tensors, and its real baseline as the "winner".
  auto task = load_task(std::filesystem::path(KEVO_SOURCE_DIR) / "tasks" / "softmax");
  ASSERT_TRUE(task) << task.error().message;
  auto src = read_file(task->baseline_path());
  ASSERT_TRUE(src);
  auto files = export_kernel(*task, *src, "kevo run 1 candidate #7", dir / "out");
  ASSERT_TRUE(files) << files.error().message;
  auto main = read_file(files->main);
  ASSERT_TRUE(main);
  EXPECT_TRUE(contains(*main, "kevo_forward(&a)"));
  EXPECT_TRUE(contains(*main, "{16384, 16384}"));   // the timed config's shapes
  EXPECT_FALSE(contains(*main, "3001"));            // never a held-out one
  auto kernel = read_file(files->kernel);
  EXPECT_TRUE(contains(*kernel, "kevo run 1 candidate #7"));
  EXPECT_TRUE(std::filesystem::exists(files->header));
  // Held-out configs cannot be chosen for the example.
  EXPECT_FALSE(export_kernel(*task, *src, "x", dir / "out2", "held"));

  std::string nvcc = nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "no nvcc";
  std::string cmd = "cd '" + (dir / "out").string() + "' && '" + nvcc +
                    "' -O3 -std=c++17 -arch=sm_90 -I. kernel.cu main.cu -o example 2>&1";
  int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << cmd;
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "example"));
  std::filesystem::remove_all(dir);
}

TEST(Export, HostExampleCoversIntsScalarsAndWorkspace) {
  // A task with an integer input, a scalar and a workspace.
  auto dir = temp_dir("export2");
  std::filesystem::create_directories(dir / "t");
  write(dir / "t" / "task.toml", R"(name = "gather"
category = "index"
description = "y[i] = s * x[idx[i]]"
dims = ["N", "V"]
flops = "N"
bytes = "12*N"
workspace = "4*N"

[[inputs]]
name = "x"
dtype = "f16"
shape = ["V"]

[[inputs]]
name = "idx"
dtype = "i32"
shape = ["N"]
init = { dist = "int", low = 0, high = "V" }
wide = false

[[outputs]]
name = "y"
dtype = "f16"
shape = ["N"]

[[scalars]]
name = "s"
value = 0.5

[[configs]]
name = "main"
dims = { N = 1000, V = 77 }
[[configs]]
name = "b"
dims = { N = 64, V = 64 }
[[configs]]
name = "c"
dims = { N = 33, V = 5 }
[[configs]]
name = "h"
dims = { N = 99, V = 9 }
held_out = true
)");
  write(dir / "t" / "baseline.cu", "x");
  write(dir / "t" / "reference.cpp", "x");
  auto task = load_task(dir / "t");
  ASSERT_TRUE(task) << task.error().message;
  auto main = host_example(*task, task->main(), "sm_90");
  ASSERT_TRUE(main) << main.error().message;
  EXPECT_TRUE(contains(*main, "make_tensor(KEVO_I32, {1000})"));
  EXPECT_TRUE(contains(*main, "random_host(x.dtype, n, 0, 77, rng)"));
  EXPECT_TRUE(contains(*main, "std::vector<double> scalars = {0.5}"));
  EXPECT_TRUE(contains(*main, "size_t workspace_bytes = 4000"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kevo::interop
