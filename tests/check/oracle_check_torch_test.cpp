// kevo eval --oracle-check with the real PyTorch bridge and no GPU: on the device data plane through
// the fake runner (its files stand in for CUDA IPC buffers; the bridge runs on the CPU), and on the
// host data path; a reference that is fine on one config, raises on another, returns a NaN on a
// third and noise on the held-out one must be told apart config by config on both.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "check/oracle_check.h"
#include "support/temp_dir.h"
#include "torch/bridge.h"
#include "util/subprocess.h"

namespace fs = std::filesystem;
using namespace kevo;

namespace {

const fs::path kDir = fs::path(KEVO_SOURCE_DIR) / "tests" / "check" / "fake_runner";

class OracleCheckTorch : public testing::Test {
 protected:
  void SetUp() override {
    if (!find_program("python3")) GTEST_SKIP() << "python3 not found";
    if (auto py = torch::find_torch_python(); !py)
      GTEST_SKIP() << "needs python3 with torch and numpy: " << py.error().message;
    setenv("KEVO_RUNNER", (kDir / "fake_runner.py").c_str(), 1);
    setenv("KEVO_CACHE_DIR", (dir_.path / "cache").c_str(), 1);
    std::ifstream in(kDir / "scale2" / "task.toml");
    std::ofstream(dir_.path / "task.toml") << "oracle = \"torch\"\ntorch_reference = \"reference.py\"\n" << in.rdbuf();
    // scale2's configs: main N=4096, ragged 1001, tiny 33, held (held out) 777.
    std::ofstream(dir_.path / "reference.py")
        << "import torch\n\nN = 4096\n\n\ndef module_fn(x):\n"
           "    if x.numel() == 1001:\n        raise RuntimeError('kevo-test: broken on purpose')\n"
           "    if x.numel() == 33:\n        return 2 * x + float('nan')\n"
           "    if x.numel() == 777:\n        return 2 * x + torch.rand_like(x)\n"
           "    return 2 * x\n\n\ndef get_inputs():\n    return [torch.randn(N)]\n";
  }
  void TearDown() override {
    unsetenv("KEVO_RUNNER");
    unsetenv("KEVO_CACHE_DIR");
  }
  OracleCheckReport run(bool device_data) {
    auto t = load_task(dir_.path);
    EXPECT_TRUE(t) << t.error().message;
    if (!t) return {};
    OracleCheckOptions o;
    o.device_data = device_data;
    o.torch_device = "cpu";
    o.torch_time = false;
    o.seed = 11;
    return check_oracle(*t, o);
  }
  static OracleCheckReason reason(const OracleCheckReport& r, const std::string& config) {
    for (const auto& c : r.configs)
      if (c.config == config) return c.reason;
    ADD_FAILURE() << "no result for " << config;
    return OracleCheckReason::kOk;
  }
  void expect_each_told_apart(const OracleCheckReport& r) {
    ASSERT_EQ(r.configs.size(), 4u) << r.to_text();
    EXPECT_EQ(reason(r, "main"), OracleCheckReason::kOk) << r.to_text();
    EXPECT_EQ(reason(r, "ragged"), OracleCheckReason::kOracleFailed) << r.to_text();
    EXPECT_EQ(reason(r, "tiny"), OracleCheckReason::kNonFinite) << r.to_text();
    EXPECT_EQ(reason(r, "held"), OracleCheckReason::kNondeterministic) << r.to_text();
    EXPECT_NE(r.to_text().find("broken on purpose"), std::string::npos) << r.to_text();
    EXPECT_EQ(r.exit_code(), 11);
  }
  kevo::test::TempDir dir_;
};

TEST_F(OracleCheckTorch, DevicePlaneTellsEachConfigsFailureApart) {
  auto r = run(true);
  EXPECT_TRUE(r.device_plane) << r.host_path_why;
  expect_each_told_apart(r);
}

TEST_F(OracleCheckTorch, HostPathTellsEachConfigsFailureApart) {
  auto r = run(false);
  EXPECT_FALSE(r.device_plane);
  expect_each_told_apart(r);
}

TEST_F(OracleCheckTorch, AWellBehavedReferencePassesOnTheDevicePlane) {
  std::ofstream(dir_.path / "reference.py")
      << "import torch\n\nN = 4096\n\n\ndef module_fn(x):\n    return 2 * x\n\n\ndef get_inputs():\n    return [torch.randn(N)]\n";
  auto r = run(true);
  EXPECT_TRUE(r.device_plane) << r.host_path_why;
  EXPECT_EQ(r.exit_code(), 0) << r.to_text();
  auto j = r.to_json();
  EXPECT_EQ(j["configs_ok"], 4);
  EXPECT_EQ(j["oracle"], "torch");
}

}  // namespace
