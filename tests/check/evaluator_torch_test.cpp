// kevo eval's PyTorch timing without a GPU: kevo::evaluate against the fake runner (as in
// evaluator_fake_test.cpp) on a task with a torch_reference; after kevo's timing the reference is
// timed through the bridge on the CPU (EvalOptions::torch_device "cpu") on the same inputs, and the
// verdict carries the times, the speedups and the "vs PyTorch" line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "check/evaluator.h"
#include "interop/bridge.h"
#include "util/fs.h"
#include "util/subprocess.h"

namespace fs = std::filesystem;
using namespace kevo;

namespace {

const fs::path kDir = fs::path(KEVO_SOURCE_DIR) / "tests" / "check" / "fake_runner";

class TorchTimingEval : public testing::Test {
 protected:
  void SetUp() override {
    if (!find_program("nvcc")) GTEST_SKIP() << "nvcc not found: checker tests with the fake runner skipped";
    if (!find_program("python3")) GTEST_SKIP() << "python3 not found";
    auto py = interop::find_torch_python();
    if (!py) GTEST_SKIP() << "needs python3 with torch and numpy: " << py.error().message;
    setenv("KEVO_RUNNER", (kDir / "fake_runner.py").c_str(), 1);
    setenv("KEVO_CACHE_DIR", (fs::path(testing::TempDir()) / "kevo-fake-runner-cache").c_str(), 1);
    // scale2 plus a PyTorch reference of the same op.
    dir_ = fs::path(testing::TempDir()) /
           (std::string("kevo-eval-torch-") + testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (const char* f : {"baseline.cu", "reference.cpp"}) fs::copy_file(kDir / "scale2" / f, dir_ / f);
    auto toml = read_file(kDir / "scale2" / "task.toml");
    ASSERT_TRUE(toml);
    std::ofstream(dir_ / "task.toml") << "torch_reference = \"reference.py\"\n" << *toml;
    std::ofstream(dir_ / "reference.py") << "import torch\n\nN = 4096\n\n\ndef module_fn(x):\n    return 2 * x\n\n\n"
                                            "def get_inputs():\n    return [torch.randn(N)]\n";
    auto base = read_file(kDir / "scale2" / "baseline.cu");
    ASSERT_TRUE(base);
    cand_ = dir_ / "cand.cu";
    std::ofstream(cand_) << *base << "\n__attribute__((used)) static const char kevo_fake[] = \"fake-runner: pass\";\n";
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  EvalOptions options(bool torch_time) const {
    EvalOptions o;
    o.candidate = cand_;
    o.seeds = 1;
    o.seed = 42;
    o.time_budget_s = 0.5;
    o.call_timeout = std::chrono::milliseconds(3000);
    o.torch_time = torch_time;
    o.torch_device = "cpu";
    return o;
  }
  fs::path dir_, cand_;
};

}  // namespace

TEST_F(TorchTimingEval, VerdictCarriesPyTorchTimesAfterKevoTiming) {
  auto task = load_task(dir_);
  ASSERT_TRUE(task) << task.error().message;
  Verdict v = evaluate(*task, options(true));
  ASSERT_EQ(v.outcome, Outcome::Pass) << v.to_text();
  ASSERT_TRUE(v.timing);
  ASSERT_TRUE(v.timing->pytorch) << v.timing->pytorch_note;
  const auto& eager = v.timing->pytorch->modes.at("eager");
  ASSERT_TRUE(eager.ok) << eager.error;
  EXPECT_GT(eager.median_ms, 0);
  EXPECT_TRUE(v.timing->pytorch->modes.count("compile"));
  EXPECT_FALSE(v.timing->pytorch->modes.count("extension"));  // the task has no torch_baseline
  auto j = v.to_json();
  EXPECT_DOUBLE_EQ(j["timing"]["pytorch"]["eager_ms"].get<double>(), eager.median_ms);
  EXPECT_DOUBLE_EQ(j["timing"]["speedup_vs_eager"].get<double>(), eager.median_ms / v.timing->candidate.median);
  EXPECT_EQ(j["timing"]["pytorch"]["device"], "cpu");
  EXPECT_NE(v.to_text().find("            vs PyTorch: eager "), std::string::npos) << v.to_text();
}

TEST_F(TorchTimingEval, NotAskedForNotTimed) {
  auto task = load_task(dir_);
  ASSERT_TRUE(task) << task.error().message;
  Verdict v = evaluate(*task, options(false));
  ASSERT_EQ(v.outcome, Outcome::Pass) << v.to_text();
  ASSERT_TRUE(v.timing);
  EXPECT_FALSE(v.timing->pytorch);
  EXPECT_TRUE(v.timing->pytorch_note.empty());
  EXPECT_FALSE(v.to_json()["timing"].contains("pytorch"));
}
