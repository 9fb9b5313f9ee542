// kevo eval's PyTorch timing without a GPU: kevo::evaluate against the fake runner (as in
// evaluator_fake_test.cpp) on a task with a torch_reference; after kevo's timing the reference is
// timed through the bridge on the CPU (EvalOptions::torch_device "cpu") on the same inputs, and the
// verdict carries the times, the speedups and the "vs PyTorch" line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>

#include "check/evaluator.h"
#include "torch/bridge.h"
#include "util/fs.h"
#include "util/subprocess.h"
#include "support/noisy_host.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;
using namespace kevo;
using kevo::testing_support::too_noisy;

// Every scratch file of this test binary lives in one folder removed at exit (support/temp_dir.h).
static std::filesystem::path scratch() {
  static const std::filesystem::path p = kevo::test::temp_dir_until_exit("kevo-checker-test");
  return p;
}

namespace {

const fs::path kDir = fs::path(KEVO_SOURCE_DIR) / "tests" / "check" / "fake_runner";

// Points kevo at the fake runner; returns why these tests cannot run here (empty: they can).
std::string use_fake_runner_with_torch() {
  if (!find_program("nvcc")) return "nvcc not found: checker tests with the fake runner skipped";
  if (!find_program("python3")) return "python3 not found";
  auto py = torch::find_torch_python();
  if (!py) return "needs python3 with torch and numpy: " + py.error().message;
  setenv("KEVO_RUNNER", (kDir / "fake_runner.py").c_str(), 1);
  setenv("KEVO_CACHE_DIR", (scratch() / "kevo-fake-runner-cache").c_str(), 1);
  return "";
}

// A fresh task directory for this test: scale2's task.toml after `toml_head`, and scale2's `files`.
fs::path scale2_task(const std::string& prefix, const std::string& toml_head, std::initializer_list<const char*> files) {
  fs::path dir = scratch() /
                 (prefix + testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : files) fs::copy_file(kDir / "scale2" / f, dir / f);
  auto toml = read_file(kDir / "scale2" / "task.toml");
  EXPECT_TRUE(toml) << toml.error().message;
  std::ofstream(dir / "task.toml") << toml_head << (toml ? *toml : "");
  return dir;
}

class TorchTimingEval : public testing::Test {
 protected:
  void SetUp() override {
    if (auto why = use_fake_runner_with_torch(); !why.empty()) GTEST_SKIP() << why;
    // scale2 plus a PyTorch reference of the same op.
    dir_ = scale2_task("kevo-eval-torch-", "torch_reference = \"reference.py\"\n", {"baseline.cu", "reference.cpp"});
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
  if (too_noisy(v)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
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
  if (too_noisy(v)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
  ASSERT_EQ(v.outcome, Outcome::Pass) << v.to_text();
  ASSERT_TRUE(v.timing);
  EXPECT_FALSE(v.timing->pytorch);
  EXPECT_TRUE(v.timing->pytorch_note.empty());
  EXPECT_FALSE(v.to_json()["timing"].contains("pytorch"));
}

// The PyTorch oracle (oracle = "torch") on the device data plane, end to end without a GPU: the
// fake runner draws the inputs into its buffers and lends copies and output buffers as files
// (its stand-in for CUDA IPC), the bridge runs the module on them in place on the CPU and writes
// its outputs there, and the oracle's runner compares the candidate's buffers with those. Every
// verdict is checked against the host data path (.npy files through the bridge) as well.
namespace {

class TorchOracleEval : public testing::Test {
 protected:
  void SetUp() override {
    if (auto why = use_fake_runner_with_torch(); !why.empty()) GTEST_SKIP() << why;
    dir_ = scale2_task("kevo-torch-oracle-", "oracle = \"torch\"\ntorch_reference = \"reference.py\"\n",
                       {"baseline.cu"});
    reference("return 2 * x");
    cmds_ = dir_ / "runner-commands.txt";
  }
  void TearDown() override {
    unsetenv("KEVO_FAKE_RUNNER_CMDS");
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  // The module's body (module_fn(x)); a helper that raises is there for the traceback test.
  void reference(const std::string& body) {
    std::ofstream(dir_ / "reference.py") << "import torch\n\nN = 4096\n\n\ndef helper(x):\n"
                                            "    raise ValueError('kevo-test: the module is broken on purpose')\n\n\n"
                                            "def module_fn(x):\n    "
                                         << body << "\n\n\ndef get_inputs():\n    return [torch.randn(N)]\n";
  }
  fs::path candidate(const std::string& behaviour) {
    auto base = read_file(kDir / "scale2" / "baseline.cu");
    fs::path p = dir_ / ("cand_" + behaviour + ".cu");
    std::ofstream(p) << *base << "\n__attribute__((used)) static const char kevo_fake[] = \"fake-runner: " << behaviour
                     << "\";\n";
    return p;
  }
  EvalOptions options(const std::string& behaviour, bool device_data) {
    EvalOptions o;
    o.candidate = candidate(behaviour);
    o.seeds = 1;
    o.seed = 42;
    o.time_budget_s = 0.5;
    o.call_timeout = std::chrono::milliseconds(3000);
    o.torch_device = "cpu";
    o.device_data = device_data;
    return o;
  }
  // Evaluates on both data paths; both must reach `outcome` with `reason`. Returns the device one.
  Verdict both(const std::string& behaviour, Outcome outcome, Reason reason) {
    auto task = load_task(dir_);
    EXPECT_TRUE(task) << task.error().message;
    if (!task) return {};
    fs::remove(cmds_);
    setenv("KEVO_FAKE_RUNNER_CMDS", cmds_.c_str(), 1);
    Verdict v = evaluate(*task, options(behaviour, true));
    unsetenv("KEVO_FAKE_RUNNER_CMDS");
    Verdict h = evaluate(*task, options(behaviour, false));
    if (outcome == Outcome::Pass && (too_noisy(v) || too_noisy(h))) {
      [] { GTEST_SKIP() << "the host was too noisy to confirm an honest figure"; }();  // marks the test
      return {};
    }
    for (const Verdict* x : {&v, &h}) {
      EXPECT_EQ(outcome_name(x->outcome), std::string(outcome_name(outcome))) << x->to_text();
      EXPECT_EQ(x->reason, reason) << x->to_text();
    }
    return v;
  }
  // Commands the runners received during the device-data eval, by name.
  std::map<std::string, int> commands() const {
    std::map<std::string, int> n;
    std::ifstream f(cmds_);
    std::string pid, cmd;
    while (f >> pid >> cmd) ++n[cmd];
    return n;
  }
  fs::path dir_, cmds_;
};

}  // namespace

TEST_F(TorchOracleEval, CorrectCandidatePassesOnDeviceData) {
  Verdict v = both("pass", Outcome::Pass, Reason::kNone);
  if (IsSkipped()) return;
  ASSERT_EQ(v.configs.size(), 4u);
  for (const auto& c : v.configs) EXPECT_EQ(c.draws, 3) << c.config;  // seed 0 twice, seed 1 wide
  // Inputs drawn and outputs compared by the runners: the checker moved no tensor.
  for (const char* w : {"oracle", "candidate", "compare", "timing_session"})
    EXPECT_TRUE(v.work.count(w)) << w << "\n" << v.to_text();
  EXPECT_FALSE(v.work.count("arena")) << v.to_text();
  EXPECT_FALSE(v.work.count("inputs")) << v.to_text();
  // PyTorch computed every correctness reference: one lend and one collect per draw of each
  // config. The timed calls are checked against the baseline's outputs for the same inputs (the
  // task has a baseline), the last one element by element: one more compare.
  auto n = commands();
  EXPECT_EQ(n["materialize"], 4 * 2);
  EXPECT_EQ(n["collect"], n["materialize"]);
  EXPECT_EQ(n["compare"], 4 * 3 + 1);
  EXPECT_EQ(n["load"], 2);  // the candidate in its runner, the baseline in the trusted one
  // Candidate, baseline and the work around calls: one calibrating batch and at least six rounds each.
  EXPECT_GE(n["time_batch"], 3 * 7);
}

TEST_F(TorchOracleEval, WrongElementIsNamedWhereItIs) {
  Verdict v = both("wrong_late", Outcome::Incorrect, Reason::kMismatch);
  // The smallest config first (tiny, N = 33): element 31 is off by one.
  EXPECT_NE(v.message.find("config 'tiny' seed 0: output 'y': 1 of 33 elements wrong; first at [31]"),
            std::string::npos)
      << v.message;
}

TEST_F(TorchOracleEval, UnwrittenOutputIsNamed) {
  Verdict v = both("noop", Outcome::Incorrect, Reason::kUnwritten);
  EXPECT_NE(v.message.find("never written"), std::string::npos) << v.message;
  both("partial", Outcome::Incorrect, Reason::kUnwritten);
}

TEST_F(TorchOracleEval, ModifiedInputIsFound) { both("mutate", Outcome::Incorrect, Reason::kInputModified); }

TEST_F(TorchOracleEval, ModuleThatRaisesComesBackWithItsTraceback) {
  reference("return helper(x)");
  Verdict v = both("pass", Outcome::InfraError, Reason::kOracle);
  EXPECT_NE(v.message.find("the PyTorch reference failed on config 'tiny'"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("ValueError: kevo-test: the module is broken on purpose"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("Python traceback"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("reference.py\", line 7, in helper"), std::string::npos) << v.message;
  // What was lent is taken back even when the module failed.
  auto n = commands();
  EXPECT_EQ(n["materialize"], 1);
  EXPECT_EQ(n["collect"], 1);
}

TEST_F(TorchOracleEval, OutputOfAnotherDtypeIsTheReferencesFault) {
  reference("return (2 * x).half()");
  Verdict v = both("pass", Outcome::InfraError, Reason::kOracle);
  EXPECT_NE(v.message.find("output 0 is f16, the task declares f32"), std::string::npos) << v.message;
}

// The reference may write into its inputs (in-place ops): on device data it gets copies, so the
// candidate's untouched inputs still equal the oracle's.
TEST_F(TorchOracleEval, InPlaceReferenceDoesNotTouchTheComparedInputs) {
  reference("return x.mul_(2)");
  both("pass", Outcome::Pass, Reason::kNone);
}

TEST_F(TorchOracleEval, BaselineCheckedAgainstPyTorch) {
  auto task = load_task(dir_);
  ASSERT_TRUE(task) << task.error().message;
  for (bool dev : {true, false}) {
    EvalOptions o = options("pass", dev);
    o.baseline_mode = true;
    Verdict v = evaluate(*task, o);
    EXPECT_EQ(v.outcome, Outcome::Pass) << v.to_text();
    ASSERT_TRUE(v.timing);
    EXPECT_FALSE(v.timing->has_baseline);  // the baseline is the candidate: timed alone
  }
}

TEST_F(TorchOracleEval, PyTorchTimedOnInputsLentByTheRunner) {
  auto task = load_task(dir_);
  ASSERT_TRUE(task) << task.error().message;
  for (bool dev : {true, false}) {
    fs::remove(cmds_);
    setenv("KEVO_FAKE_RUNNER_CMDS", cmds_.c_str(), 1);
    EvalOptions o = options("pass", dev);
    o.torch_time = true;
    Verdict v = evaluate(*task, o);
    unsetenv("KEVO_FAKE_RUNNER_CMDS");
    if (too_noisy(v)) GTEST_SKIP() << "the host was too noisy to confirm an honest figure";
    ASSERT_EQ(v.outcome, Outcome::Pass) << v.to_text();
    ASSERT_TRUE(v.timing);
    ASSERT_TRUE(v.timing->pytorch) << v.timing->pytorch_note;
    const auto& eager = v.timing->pytorch->modes.at("eager");
    EXPECT_TRUE(eager.ok) << eager.error;
    EXPECT_GT(eager.median_ms, 0);
    auto n = commands();
    // Both runners free their correctness buffers before timing; afterwards the idle trusted
    // runner frees the rest and lends the first timing set to PyTorch (on both data paths: the
    // host path's correctness references came through .npy files, one materialize in all).
    EXPECT_EQ(n["release"], 3);
    EXPECT_EQ(n["materialize"], dev ? 4 * 2 + 1 : 1);
  }
}

// kevo bench's PyTorch timing: a runner of its own draws the main config's inputs and lends them.
TEST_F(TorchOracleEval, BenchTimesPyTorchOnInputsARunnerLends) {
  auto task = load_task(dir_);
  ASSERT_TRUE(task) << task.error().message;
  setenv("KEVO_FAKE_RUNNER_CMDS", cmds_.c_str(), 1);
  torch::TorchTimingOptions o;
  o.device = "cpu";
  o.compile = false;
  o.budget_s = 0.2;
  auto r = time_torch_lent(*task, 7, o);
  unsetenv("KEVO_FAKE_RUNNER_CMDS");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_TRUE(r->modes.at("eager").ok) << r->modes.at("eager").error;
  auto n = commands();
  EXPECT_EQ(n["materialize"], 1);
  EXPECT_EQ(n["collect"], 1);
  // A module that raises is that mode's error, with its traceback.
  reference("return helper(x)");
  r = time_torch_lent(*task, 7, o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_NE(r->modes.at("eager").error.find("kevo-test: the module is broken on purpose"), std::string::npos)
      << r->modes.at("eager").error;
}
