// kevo eval --oracle-check's logic with a fake oracle (no bridge, no runner): what two runs' outputs
// say about a config, one config's failure leaving the others checked, and the report's exit codes.
#include "check/oracle_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

namespace kevo {
namespace {

constexpr const char* kToml = R"(name = "twice"
category = "elementwise"
description = "y = 2 x"
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
name = "main"
dims = { N = 64 }
main = true
[[configs]]
name = "ragged"
dims = { N = 33 }
[[configs]]
name = "tiny"
dims = { N = 9 }
[[configs]]
name = "held"
dims = { N = 17 }
held_out = true
)";

Task task() {
  auto t = parse_task(kToml, "task.toml");
  EXPECT_TRUE(t) << t.error().message;
  return *t;
}

// What the fake oracle does on a config.
enum class Behaviour { kTwice, kNoisy, kNaN, kZero, kFail, kShort };

class FakeOracle : public Oracle {
 public:
  explicit FakeOracle(std::map<std::string, Behaviour> b) : b_(std::move(b)) {}
  Result<std::vector<Expected>> host_outputs(const Config& c, const std::vector<HostTensor>& ins) override {
    Behaviour b = b_.count(c.name) ? b_[c.name] : Behaviour::kTwice;
    if (b == Behaviour::kFail) return fail("the reference raised on '{}'", c.name);
    std::vector<double> y;
    for (int64_t i = 0; i < ins[0].numel(); ++i) y.push_back(2 * ins[0].at(static_cast<size_t>(i)));
    ++calls_;
    if (b == Behaviour::kNoisy && calls_ % 2 == 0) y[3] += 0.5;
    if (b == Behaviour::kNaN) y[5] = std::nan("");
    if (b == Behaviour::kZero) y.assign(y.size(), 0.0);
    if (b == Behaviour::kShort) y.pop_back();
    std::vector<Expected> out;
    out.push_back(Expected::of(std::move(y)));
    return out;
  }
  Status device_outputs(const Config&, const std::vector<proto::TensorDesc>&,
                        const std::vector<proto::TensorDesc>&) override {
    return fail("host only");
  }
  bool on_device() const override { return false; }

 private:
  std::map<std::string, Behaviour> b_;
  int calls_ = 0;
};

std::vector<OracleConfigResult> check(std::map<std::string, Behaviour> b, OracleCheckOptions o = {}) {
  Task t = task();
  return check_configs_on_host(t, o, 7, [&]() -> Result<std::unique_ptr<Oracle>> { return std::unique_ptr<Oracle>(std::make_unique<FakeOracle>(b)); });
}

OracleCheckReason reason_of(const std::vector<OracleConfigResult>& rs, const std::string& config) {
  for (const auto& r : rs)
    if (r.config == config) return r.reason;
  ADD_FAILURE() << "no result for " << config;
  return OracleCheckReason::kOk;
}

TEST(OracleCheck, DeterministicOracleIsOkOnEveryConfigHeldOutIncluded) {
  auto rs = check({});
  ASSERT_EQ(rs.size(), 4u);
  for (const auto& r : rs) EXPECT_TRUE(r.ok()) << r.config << ": " << r.detail;
  EXPECT_TRUE(rs[3].held_out);
  OracleCheckReport rep;
  rep.configs = rs;
  EXPECT_EQ(rep.exit_code(), 0);
  EXPECT_EQ(rep.to_json()["configs_ok"], 4);
}

TEST(OracleCheck, SecondRunThatDisagreesIsNondeterministic) {
  auto rs = check({{"ragged", Behaviour::kNoisy}});
  EXPECT_EQ(reason_of(rs, "ragged"), OracleCheckReason::kNondeterministic);
  EXPECT_EQ(reason_of(rs, "main"), OracleCheckReason::kOk);
  for (const auto& r : rs)
    if (r.config == "ragged") {
      EXPECT_NE(r.detail.find("flat index 3"), std::string::npos) << r.detail;
      EXPECT_NEAR(r.max_abs_diff, 0.5, 1e-6);
    }
  OracleCheckReport rep;
  rep.configs = rs;
  EXPECT_EQ(rep.exit_code(), 11);
  EXPECT_EQ(rep.to_json()["configs"][1]["reason"], "nondeterministic");
}

TEST(OracleCheck, NaNAllZerosAndWrongSizesAreFlagged) {
  auto rs = check({{"main", Behaviour::kNaN}, {"ragged", Behaviour::kZero}, {"held", Behaviour::kShort}});
  EXPECT_EQ(reason_of(rs, "main"), OracleCheckReason::kNonFinite);
  EXPECT_EQ(reason_of(rs, "ragged"), OracleCheckReason::kAllZero);
  EXPECT_EQ(reason_of(rs, "held"), OracleCheckReason::kShapeMismatch);
}

TEST(OracleCheck, AnOracleErrorOnOneConfigLeavesTheOthersChecked) {
  auto rs = check({{"main", Behaviour::kFail}});
  ASSERT_EQ(rs.size(), 4u);
  EXPECT_EQ(reason_of(rs, "main"), OracleCheckReason::kOracleFailed);
  EXPECT_NE(rs[0].detail.find("raised"), std::string::npos);
  EXPECT_EQ(reason_of(rs, "ragged"), OracleCheckReason::kOk);
  EXPECT_EQ(reason_of(rs, "held"), OracleCheckReason::kOk);
}

TEST(OracleCheck, AnOracleThatCannotStartIsAnInfrastructureErrorAndIsTriedAgain) {
  Task t = task();
  int made = 0;
  auto rs = check_configs_on_host(t, {}, 7, [&]() -> Result<std::unique_ptr<Oracle>> {
    if (made++ == 0) return fail("the bridge died");
    return std::unique_ptr<Oracle>(std::make_unique<FakeOracle>(std::map<std::string, Behaviour>{}));
  });
  ASSERT_EQ(rs.size(), 4u);
  EXPECT_EQ(rs[0].reason, OracleCheckReason::kInfraError);
  EXPECT_NE(rs[0].detail.find("the bridge died"), std::string::npos);
  EXPECT_TRUE(rs[1].ok() && rs[2].ok() && rs[3].ok());
  OracleCheckReport rep;
  rep.configs = rs;
  EXPECT_EQ(rep.exit_code(), 20);  // infrastructure outranks a failed check
  EXPECT_NE(rep.to_text().find("infra_error"), std::string::npos);
}

TEST(OracleCheck, VisibleOnlyAndHeldOutOnlySelectConfigs) {
  OracleCheckOptions o;
  o.visible_only = true;
  EXPECT_EQ(check({}, o).size(), 3u);
  o = {};
  o.held_out_only = true;
  auto rs = check({}, o);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].config, "held");
}

TEST(OracleCheck, NothingCheckedIsNoPass) {
  OracleCheckReport rep;
  EXPECT_EQ(rep.exit_code(), 20);
}

}  // namespace
}  // namespace kevo
