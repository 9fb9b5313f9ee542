// A tolerance that passes a constant is refused: outputs far below 1 sit inside the default
// absolute band, so writing their mean everywhere passes; a tolerance scaled to them does not.
#include "check/tolerance_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace kevo;

namespace {

Task task_with(const std::string& tolerance) {
  auto t = parse_task(R"(name = "probs"
category = "softmax"
description = "outputs of a given scale"
dims = ["N"]
flops = "N"
bytes = "8*N"

[[inputs]]
name = "x"
dtype = "f32"
shape = ["N"]

[[outputs]]
name = "y"
dtype = "f32"
shape = ["N"]

[[configs]]
name = "small"
dims = { N = 4096 }
main = true

[[configs]]
name = "ragged"
dims = { N = 1001 }

[[configs]]
name = "tiny"
dims = { N = 33 }

[[configs]]
name = "held"
dims = { N = 777 }
held_out = true
)" + tolerance,
                      "task.toml");
  EXPECT_TRUE(t) << (t ? "" : t.error().message);
  return *t;
}

// Values of `scale` in size, spread between 0.5 and 1.5 times it (a softmax row's look).
std::vector<Expected> outputs_of_scale(double scale) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  std::vector<double> v(4096);
  for (double& x : v) x = scale * u(rng);
  return {Expected::of(std::move(v))};
}

// An oracle whose outputs are probabilities of a given scale, whatever the inputs.
class ScaleOracle : public Oracle {
 public:
  explicit ScaleOracle(double scale) : scale_(scale) {}
  Result<std::vector<Expected>> host_outputs(const Config&, const std::vector<HostTensor>& ins) override {
    auto out = outputs_of_scale(scale_);
    out.front().values.resize(static_cast<size_t>(ins.front().numel()), scale_);
    return out;
  }
  Status device_outputs(const Config&, const std::vector<proto::TensorDesc>&,
                        const std::vector<proto::TensorDesc>&) override {
    return fail("host only");
  }
  bool on_device() const override { return false; }

 private:
  double scale_;
};

}  // namespace

TEST(ToleranceCheck, AtLoadItAsksTheOracleForTheVisibleConfigsSmallestFirst) {
  Task t = task_with("");
  auto configs = tolerance_check_configs(t);
  ASSERT_EQ(configs.size(), 3u);  // the held-out one is not checked
  EXPECT_EQ(configs[0]->name, "tiny");
  EXPECT_EQ(configs[1]->name, "ragged");
  EXPECT_EQ(configs[2]->name, "small");
  ScaleOracle small(1.0 / 30000), large(1.0);
  auto s = check_tolerance_at_load(t, small, 5);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("config 'tiny'"), std::string::npos) << s.error().message;
  EXPECT_EQ(s.error().code, ErrorCode::kParse);
  EXPECT_TRUE(check_tolerance_at_load(t, large, 5));
}

// One config whose draw makes it degenerate does not refuse the task: a later one that rejects the
// constant is enough.
TEST(ToleranceCheck, OneDegenerateConfigIsNotTheTasks) {
  Task t = task_with("");
  class FirstConstant : public Oracle {
   public:
    Result<std::vector<Expected>> host_outputs(const Config& c, const std::vector<HostTensor>& ins) override {
      ++calls;
      auto out = outputs_of_scale(1.0);
      out.front().values.resize(static_cast<size_t>(ins.front().numel()), 1.0);
      if (c.name == "tiny") std::fill(out.front().values.begin(), out.front().values.end(), 0.0);
      return out;
    }
    Status device_outputs(const Config&, const std::vector<proto::TensorDesc>&,
                          const std::vector<proto::TensorDesc>&) override {
      return fail("host only");
    }
    bool on_device() const override { return false; }
    int calls = 0;
  } oracle;
  EXPECT_TRUE(check_tolerance_at_load(t, oracle, 5));
  EXPECT_EQ(oracle.calls, 2) << "it stops at the first config that rejects the constant";
}

TEST(ToleranceCheck, TheDefaultBandPassesAConstantOnSmallOutputs) {
  Task t = task_with("");
  auto rc = t.resolve(t.configs.front());
  ASSERT_TRUE(rc);
  auto s = check_tolerance_rejects_constant(*rc, outputs_of_scale(1.0 / 30000));
  ASSERT_FALSE(s) << "a constant passed unnoticed";
  EXPECT_NE(s.error().message.find("config 'small': output 'y' passes as the constant"), std::string::npos)
      << s.error().message;
  EXPECT_EQ(s.error().code, ErrorCode::kParse);
}

TEST(ToleranceCheck, AToleranceScaledToTheOutputsRefusesTheConstant) {
  Task t = task_with("[tolerance]\nf32 = { atol = 1e-9, rtol = 1e-4 }\n");
  auto rc = t.resolve(t.configs.front());
  ASSERT_TRUE(rc);
  EXPECT_TRUE(check_tolerance_rejects_constant(*rc, outputs_of_scale(1.0 / 30000)));
}

TEST(ToleranceCheck, OutputsOfOrderOneAreFineWithTheDefault) {
  Task t = task_with("");
  auto rc = t.resolve(t.configs.front());
  ASSERT_TRUE(rc);
  EXPECT_TRUE(check_tolerance_rejects_constant(*rc, outputs_of_scale(1.0)));
}

TEST(ToleranceCheck, AConstantOutputIsCaughtAndAMissingOneIsAnError) {
  Task t = task_with("");
  auto rc = t.resolve(t.configs.front());
  ASSERT_TRUE(rc);
  EXPECT_FALSE(check_tolerance_rejects_constant(*rc, {Expected::of(std::vector<double>(4096, 3.0))}));
  EXPECT_FALSE(check_tolerance_rejects_constant(*rc, {}));
}
