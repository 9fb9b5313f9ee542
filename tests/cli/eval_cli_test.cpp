// `kevo eval` as a user runs it, on a machine without a GPU: compile-only verdicts, exit codes,
// and every bundled baseline compiling with nvcc.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "support/temp_dir.h"
#include "torch/bridge.h"
#include "util/subprocess.h"

namespace fs = std::filesystem;
using namespace kevo;

namespace {
const fs::path kSrc = KEVO_SOURCE_DIR;
const fs::path kKevo = fs::path(KEVO_BINARY_DIR) / "bin" / "kevo";

// One compile cache for the whole binary (tests reuse each other's compiles), removed at exit.
const fs::path& cli_cache() {
  static const fs::path dir = kevo::test::temp_dir_until_exit("kevo-cli-cache");
  return dir;
}

RunResult kevo_run(std::vector<std::string> args) {
  args.insert(args.begin(), kKevo.string());
  auto r = run_process({.argv = args, .env_add = {{"KEVO_CACHE_DIR", cli_cache().string()}},
                        .timeout = std::chrono::seconds(300)});
  EXPECT_TRUE(r);
  return r ? *r : RunResult{};
}

#define REQUIRE_NVCC() \
  if (!find_program("nvcc")) GTEST_SKIP() << "nvcc not found: kernel compile tests skipped"

std::vector<std::string> tasks() {
  std::vector<std::string> v;
  for (auto& e : fs::directory_iterator(kSrc / "tasks"))
    if (fs::exists(e.path() / "task.toml")) v.push_back(e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
}
}  // namespace

class BundledBaseline : public testing::TestWithParam<std::string> {};
TEST_P(BundledBaseline, CompilesAndPassesStaticChecks) {
  REQUIRE_NVCC();
  auto r = kevo_run({"eval", (kSrc / "tasks" / GetParam()).string(), "--baseline", "--compile-only", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["outcome"], "pass");
  EXPECT_TRUE(j["compile"]["ok"]);
  EXPECT_FALSE(j["compile"]["kernels"].empty());
}
INSTANTIATE_TEST_SUITE_P(Tasks, BundledBaseline, testing::ValuesIn(tasks()));

TEST(EvalCli, CompileErrorExitCodeAndDiagnostics) {
  REQUIRE_NVCC();
  auto r = kevo_run({"eval", "gelu", (kSrc / "tests/gpu/kernels/adversarial/compile_error.cu").string(),
                     "--compile-only"});
  EXPECT_EQ(r.exit_code, 10) << r.out << r.err;
  // The diagnostics name the user's file with its line, not the checker's copy of it.
  EXPECT_NE(r.out.find("tests/gpu/kernels/adversarial/compile_error.cu("), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("candidate.cu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("VERDICT: compile_error"), std::string::npos) << r.out;
}

// Compiling is not checking: a compile-only pass says so in its last line and its JSON.
TEST(EvalCli, CompileOnlySaysNothingWasChecked) {
  REQUIRE_NVCC();
  const std::string good = (kSrc / "tests/gpu/kernels/good/gelu_float4.cu").string();
  auto r = kevo_run({"eval", "gelu", good, "--compile-only"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("VERDICT: PASS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("COMPILED, NOT CHECKED"), std::string::npos) << r.out;
  auto js = kevo_run({"eval", "gelu", good, "--compile-only", "--json"});
  EXPECT_EQ(js.exit_code, 0) << js.out << js.err;
  auto j = nlohmann::json::parse(js.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << js.out;
  EXPECT_EQ(j.value("checked", true), false) << js.out;
  EXPECT_NE(j.value("note", "").find("not known"), std::string::npos) << js.out;
}

TEST(EvalCli, UnsafeSourceIsRejectedBeforeCompiling) {
  auto r = kevo_run({"eval", "gelu", (kSrc / "tests/gpu/kernels/adversarial/second_stream.cu").string(),
                     "--compile-only", "--json"});
  EXPECT_EQ(r.exit_code, 12) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["reason"].get<std::string>().rfind("static:", 0), 0u);
  EXPECT_NE(j["message"].get<std::string>().find("line"), std::string::npos);
}

TEST(EvalCli, BadTaskAndMissingFilesAreClear) {
  auto r = kevo_run({"eval", "/nonexistent/task", "x.cu"});
  EXPECT_EQ(r.exit_code, 21);
  EXPECT_NE(r.err.find("/nonexistent/task"), std::string::npos) << r.err;
  auto m = kevo_run({"eval", "gelu", "/nonexistent/cand.cu", "--compile-only"});
  EXPECT_EQ(m.exit_code, 21) << m.out;  // a bad argument, not an infrastructure error
  EXPECT_NE(m.err.find("/nonexistent/cand.cu"), std::string::npos) << m.err;
  auto n = kevo_run({"eval", "gelu"});
  EXPECT_EQ(n.exit_code, 21);
}

TEST(EvalCli, WithoutAGpuEvaluationSaysSo) {
  if (find_program("nvidia-smi")) GTEST_SKIP() << "this machine may have a GPU";
  auto r = kevo_run({"eval", "gelu", (kSrc / "tests/gpu/kernels/good/gelu_float4.cu").string()});
  EXPECT_EQ(r.exit_code, 20) << r.out << r.err;
  EXPECT_NE(r.out.find("compile-only"), std::string::npos) << r.out;
}

// --oracle-check end to end on imported KernelBench problems with the machine's torch, on the host
// data path (this machine may have no GPU): every config of each task checked and PyTorch eager timed.
TEST(EvalCli, OracleCheckOfImportedKernelBenchTasksOnTheHostPath) {
  if (auto py = torch::find_torch_python(); !py)
    GTEST_SKIP() << "needs python3 with torch and numpy: oracle check skipped (" << py.error().message << ")";
  kevo::test::TempDir dir("kevo-oracle-check");
  auto imp = kevo_run({"import", "kernelbench", (kSrc / "tests/interop/data/kb_gelu.py").string(),
                       (kSrc / "tests/interop/data/kb_linear_gelu.py").string(), "--out", dir.path.string()});
  ASSERT_EQ(imp.exit_code, 0) << imp.out << imp.err;
  for (const char* task : {"kb_gelu", "kb_linear_gelu"}) {
    auto r = kevo_run({"eval", (dir.path / task).string(), "--oracle-check", "--host-data", "--json", "--time-budget",
                       "0.3", "--seed", "5"});
    EXPECT_EQ(r.exit_code, 0) << task << ": " << r.out << r.err;
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    EXPECT_EQ(j["oracle"], "torch");
    EXPECT_EQ(j["device_plane"], false);
    EXPECT_GE(j["configs_total"].get<int>(), 4) << r.out;  // held-out configs included
    EXPECT_EQ(j["configs_ok"], j["configs_total"]) << r.out;
    bool held_out = false;
    for (const auto& c : j["configs"]) held_out |= c["held_out"].get<bool>();
    EXPECT_TRUE(held_out) << r.out;
    ASSERT_TRUE(j["eager_ms"].is_number()) << r.out;
    EXPECT_GT(j["eager_ms"].get<double>(), 0);
    // torch.compile needs torch >= 2: measured, or said why not.
    EXPECT_TRUE(j["compile_ms"].is_number() || j["pytorch"]["errors"].contains("compile")) << r.out;
  }
}
