// The timed-output summaries: a correct output within tolerance always agrees with the baseline's,
// an output of other inputs (a cache, a skipped call) never does.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "check/output_sums.h"
#include "task/tensor.h"

using namespace kevo;

namespace {

HostTensor tensor_of(const std::vector<double>& v, DType dt = DType::F32) {
  HostTensor t = make_tensor("y", dt, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) store_from_double(t.bytes.data(), dt, i, v[i]);
  return t;
}

std::vector<double> normal(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<double> d(0, 1);
  std::vector<double> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

}  // namespace

TEST(OutputSums, CorrectWithinToleranceAgrees) {
  auto want = normal(100000, 1);
  auto got = want;
  std::mt19937 g(2);
  std::uniform_real_distribution<double> u(-1, 1);
  // Every element off by up to 90% of the allowed error, in a systematic direction for half of them.
  Tolerance tol{1e-4, 1e-4};
  for (size_t i = 0; i < got.size(); ++i) {
    double allowed = tol.atol + tol.rtol * std::fabs(want[i]);
    got[i] += 0.9 * allowed * (i % 2 ? 1.0 : u(g));
  }
  for (uint64_t key : {1ull, 99ull, 12345ull}) {
    auto c = compare_sums(sums_of(tensor_of(got, DType::F32), key), sums_of(tensor_of(want, DType::F32), key), tol);
    EXPECT_TRUE(c.ok) << c.why;
  }
}

TEST(OutputSums, OtherInputsOutputFails) {
  Tolerance tol{1e-4, 1e-4};
  auto want = normal(4096, 3), stale = normal(4096, 4);
  // Scaled to the same L2 norm: only the signed sums can tell them apart, and they must.
  double nw = 0, ns = 0;
  for (size_t i = 0; i < want.size(); ++i) nw += want[i] * want[i], ns += stale[i] * stale[i];
  for (auto& x : stale) x *= std::sqrt(nw / ns);
  auto c = compare_sums(sums_of(tensor_of(stale), 7), sums_of(tensor_of(want), 7), tol);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.why.find("signed sums"), std::string::npos) << c.why;
  // bf16-like tolerances still separate them.
  EXPECT_FALSE(compare_sums(sums_of(tensor_of(stale), 7), sums_of(tensor_of(want), 7), {1e-2, 1e-2}).ok);
}

TEST(OutputSums, UnwrittenElementsFail) {
  auto want = normal(1000, 5);
  auto got = want;
  got[10] = std::nan("");  // the poison of an element never written reads as NaN
  auto c = compare_sums(sums_of(tensor_of(got), 1), sums_of(tensor_of(want), 1), {1e-4, 1e-4});
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.why.find("non-finite"), std::string::npos) << c.why;
}

TEST(OutputSums, ScaledOutputFailsTheNorm) {
  auto want = normal(1000, 6);
  auto got = want;
  for (auto& x : got) x *= 1.01;
  auto c = compare_sums(sums_of(tensor_of(got), 1), sums_of(tensor_of(want), 1), {1e-4, 1e-4});
  EXPECT_FALSE(c.ok) << c.why;
}
