// Tests of the backward-task lints (src/lint/backward_lint.cpp): the pair check finds its forward
// next to the task, and the tolerance check fails a gradient whose sum is too long for its atol.
#include <gtest/gtest.h>

#include <fstream>

#include "lint/backward_lint.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;
using namespace kevo;

namespace {

const char* kConfigs = R"(
[[configs]]
name = "a"
dims = { B = 64, N = 64 }
[[configs]]
name = "b"
dims = { B = 100, N = 33 }
[[configs]]
name = "c"
dims = { B = 2, N = 2 }
[[configs]]
name = "big"
dims = { B = 1000000, N = 7 }
held_out = true
)";

// y[b] = sum_n x[b,n] * w[n]; the backward's dw sums over the batch.
const std::string kForward = std::string(R"(
name = "dot_rows"
category = "reduction"
description = "Row dot products."
dims = ["B", "N"]
flops = "2*B*N"
bytes = "4*B*N"
[[inputs]]
name = "x"
dtype = "f32"
shape = ["B", "N"]
[[inputs]]
name = "w"
dtype = "f32"
shape = ["N"]
role = "weight"
[[outputs]]
name = "y"
dtype = "f32"
shape = ["B"]
)") + kConfigs;

const std::string kBackward = std::string(R"(
name = "dot_rows_backward"
category = "reduction"
description = "Gradient of row dot products with respect to w."
dims = ["B", "N"]
flops = "2*B*N"
bytes = "4*B*N"
[[inputs]]
name = "x"
dtype = "f32"
shape = ["B", "N"]
[[inputs]]
name = "dy"
dtype = "f32"
shape = ["B"]
[[outputs]]
name = "dw"
dtype = "f32"
shape = ["N"]
[backward]
of = "dot_rows"
saved = ["x"]
grad_outputs = { dy = "y" }
gradients = [{ output = "dw", of = "w", sums_over = "B" }]
[tolerance]
f32 = { atol = 1e-3 }
)") + kConfigs;

void write_task(const fs::path& dir, const std::string& toml) {
  fs::create_directories(dir);
  std::ofstream(dir / "task.toml") << toml;
  std::ofstream(dir / "baseline.cu") << "// not compiled by this test\n";
  std::ofstream(dir / "reference.cpp") << "// not compiled by this test\n";
}

const LintFinding* find(const std::vector<LintFinding>& fs, const std::string& check) {
  for (const auto& f : fs)
    if (f.check == check) return &f;
  ADD_FAILURE() << "no finding " << check;
  return nullptr;
}

std::vector<LintFinding> lint_in(const test::TempDir& tmp, const std::string& bwd,
                                 const std::string* fwd) {
  if (fwd) write_task(tmp.path / "dot_rows", *fwd);
  write_task(tmp.path / "dot_rows_backward", bwd);
  auto task = load_task(tmp.path / "dot_rows_backward");
  EXPECT_TRUE(task) << (task ? "" : task.error().message);
  return task ? lint_backward(*task) : std::vector<LintFinding>{};
}

std::string with_atol(const std::string& atol) {
  std::string s = kBackward;
  return s.replace(s.find("atol = 1e-3"), 11, "atol = " + atol);
}

}  // namespace

TEST(BackwardLint, PassesAMatchingPairWithEnoughTolerance) {
  test::TempDir tmp("kevo-backward-lint");
  auto fs = lint_in(tmp, kBackward, &kForward);
  ASSERT_EQ(fs.size(), 2u);
  EXPECT_EQ(find(fs, "backward_pair")->severity, Severity::Pass)
      << find(fs, "backward_pair")->message;
  // 8 * 2^-24 * sqrt(1e6) = 4.8e-4 <= 1e-3.
  EXPECT_EQ(find(fs, "reduction_tolerance")->severity, Severity::Pass)
      << find(fs, "reduction_tolerance")->message;
}

TEST(BackwardLint, ToleranceTooTightForTheLongestSumFails) {
  test::TempDir tmp("kevo-backward-lint");
  auto fs = lint_in(tmp, with_atol("1e-4"), &kForward);
  const LintFinding* f = find(fs, "reduction_tolerance");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::Fail);
  // The held-out config is the longest sum: it is named, with the atol it needs.
  EXPECT_NE(f->message.find("'dw' sums 1000000 terms on config 'big' and needs atol >= 0.000477"),
            std::string::npos)
      << f->message;
}

TEST(BackwardLint, MissingOrMismatchedForwardFails) {
  {
    test::TempDir tmp("kevo-backward-lint");
    auto fs = lint_in(tmp, kBackward, nullptr);
    const LintFinding* f = find(fs, "backward_pair");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->severity, Severity::Fail);
    EXPECT_NE(f->message.find("the forward task 'dot_rows' does not load"), std::string::npos)
        << f->message;
  }
  test::TempDir tmp("kevo-backward-lint");
  std::string fwd = kForward;
  fwd.replace(fwd.find("shape = [\"N\"]"), 13, "shape = [\"B\"]");
  auto fs = lint_in(tmp, kBackward, &fwd);
  const LintFinding* f = find(fs, "backward_pair");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::Fail);
  EXPECT_NE(f->message.find("gradient 'dw'"), std::string::npos) << f->message;
}

TEST(BackwardLint, ForwardTasksGetNoBackwardFindings) {
  auto t = parse_task(kForward, "x/task.toml");
  ASSERT_TRUE(t);
  EXPECT_TRUE(lint_backward(*t).empty());
}
