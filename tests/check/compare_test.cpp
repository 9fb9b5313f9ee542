#include "check/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "check/verdict.h"

using namespace kevo;

namespace {
HostTensor f32(std::vector<float> v, std::vector<int64_t> shape) {
  HostTensor t = make_tensor("y", DType::F32, std::move(shape));
  std::memcpy(t.bytes.data(), v.data(), v.size() * 4);
  return t;
}
}  // namespace

TEST(Compare, WithinToleranceIsOk) {
  auto c = compare_output(f32({1.f, 2.00001f, -3.f}, {3}), {1, 2, -3}, {1e-4, 1e-4}, true);
  EXPECT_TRUE(c.ok);
  EXPECT_GT(c.max_abs_err, 0);
  EXPECT_EQ(c.mismatches, 0);
}

TEST(Compare, MismatchNamesTheFirstIndex) {
  auto c = compare_output(f32({1, 2, 3, 4, 5, 7}, {2, 3}), {1, 2, 3, 4, 5, 6}, {1e-4, 1e-4}, true);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.reason, Reason::kMismatch);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_EQ(c.first_bad, 5);
  EXPECT_NE(c.describe({2, 3}).find("[1, 2]"), std::string::npos) << c.describe({2, 3});
  EXPECT_NE(c.describe({2, 3}).find("got 7"), std::string::npos);
}

TEST(Compare, PoisonMeansUnwrittenAndNanMeansNan) {
  HostTensor t = f32({1, 2, 3}, {3});
  std::memset(t.bytes.data() + 4, kPoisonByte, 4);  // element 1 never written
  auto c = compare_output(t, {1, 2, 3}, {1e-4, 1e-4}, true);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.reason, Reason::kUnwritten);
  EXPECT_EQ(c.unwritten, 1);
  auto n = compare_output(f32({1, NAN, 3}, {3}), {1, 2, 3}, {1e-4, 1e-4}, true);
  EXPECT_EQ(n.reason, Reason::kNan);
  auto inf = compare_output(f32({1, INFINITY, 3}, {3}), {1, 2, 3}, {1e-4, 1e-4}, true);
  EXPECT_EQ(inf.reason, Reason::kNan);
  // A NaN where the reference is NaN is right.
  EXPECT_TRUE(compare_output(f32({1, NAN}, {2}), {1, NAN}, {1e-4, 1e-4}, true).ok);
}

TEST(Compare, AtolScalesWithTheReferenceMagnitude) {
  // Values around 1000: an absolute error of 0.05 is within 1e-4 * rms + 1e-4 * |ref|.
  auto c = compare_output(f32({1000.05f, -1000.f}, {2}), {1000, -1000}, {1e-4, 1e-4}, true);
  EXPECT_TRUE(c.ok);
  // Around 1, the same error is not.
  auto d = compare_output(f32({1.05f, -1.f}, {2}), {1, -1}, {1e-4, 1e-4}, true);
  EXPECT_FALSE(d.ok);
}

TEST(Compare, LargeTensorsInParallelFindTheEarliestMismatch) {
  std::vector<float> v(1 << 20, 1.f);
  std::vector<double> want(v.size(), 1.0);
  v[900000] = 2.f;
  v[300001] = 3.f;
  auto c = compare_output(f32(v, {static_cast<int64_t>(v.size())}), want, {1e-4, 1e-4}, true);
  EXPECT_EQ(c.mismatches, 2);
  EXPECT_EQ(c.first_bad, 300001);
  EXPECT_DOUBLE_EQ(c.first_got, 3.0);
}

TEST(Compare, RunsThatDisagreeAreNondeterministic) {
  auto c = compare_runs(f32({1, 2}, {2}), f32({1, 2.5}, {2}), {1e-4, 1e-4});
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.reason, Reason::kNondeterministic);
}

// An oracle's output tensor is the reference as it is: the same verdicts as its double values.
TEST(Compare, TensorReferenceAgreesWithItsDoubles) {
  HostTensor want = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  for (const HostTensor& got : {f32({1, 2, 3, 4, 5, 6}, {2, 3}), f32({1, 2, 3, 4, 5, 7}, {2, 3}),
                                f32({1, NAN, 3, 4, 5, 6}, {2, 3})}) {
    Comparison a = compare_output(got, Expected::of(want), {1e-4, 1e-4}, true);
    Comparison b = compare_output(got, to_doubles(want), {1e-4, 1e-4}, true);
    EXPECT_EQ(a.ok, b.ok);
    EXPECT_EQ(a.reason, b.reason);
    EXPECT_EQ(a.first_bad, b.first_bad);
    EXPECT_EQ(a.mismatches, b.mismatches);
  }
  EXPECT_FALSE(compare_output(f32({1, 2}, {2}), Expected::of(want), {1e-4, 1e-4}, true).ok);  // sizes differ
  EXPECT_EQ(Expected::of(want).size(), 6);
  EXPECT_EQ(Expected::of(std::vector<double>{1, 2}).at(1), 2);
}

TEST(Compare, CountUnwrittenSeesOnlyFloatPoison) {
  HostTensor t = f32({1, 2, 3, 4}, {4});
  std::memset(t.bytes.data() + 4, kPoisonByte, 8);  // elements 1 and 2
  EXPECT_EQ(count_unwritten(t), 2);
  EXPECT_EQ(count_unwritten(f32({1, NAN}, {2})), 0);  // a computed NaN is not poison
  HostTensor ints = make_tensor("i", DType::I32, {2});
  std::memset(ints.bytes.data(), kPoisonByte, 8);  // reads as -1, a legitimate integer
  EXPECT_EQ(count_unwritten(ints), 0);
}

TEST(Verdict, FirstFailureWinsAndExitCodesAreDistinct) {
  Verdict v;
  v.set(Outcome::Incorrect, Reason::kMismatch, "first");
  v.set(Outcome::Unsafe, Reason::kStatic, "second", "stream_create");
  EXPECT_EQ(v.outcome, Outcome::Incorrect);
  EXPECT_EQ(v.reason, Reason::kMismatch);
  EXPECT_EQ(v.static_rule, "");  // the later failure's rule is not kept either
  EXPECT_EQ(v.message, "first");
  std::set<int> codes;
  for (Outcome o : {Outcome::Pass, Outcome::CompileError, Outcome::Incorrect, Outcome::Unsafe,
                    Outcome::Timeout, Outcome::Crash, Outcome::InfraError})
    codes.insert(exit_code(o));
  EXPECT_EQ(codes.size(), 7u);
  auto j = v.to_json();
  EXPECT_EQ(j["outcome"], "incorrect");
  EXPECT_EQ(j["exit_code"], 11);
  EXPECT_NE(v.to_text().find("VERDICT: incorrect [mismatch] first"), std::string::npos);
}
