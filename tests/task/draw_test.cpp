// task/draw.h: the timed draws (draw_timed_value) every timed call's inputs come from.
#include "task/draw.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

using namespace kevo;

namespace {
struct Moments {
  double mean = 0, sd = 0, lo = 1e300, hi = -1e300;
};
Moments moments(const DrawSpec& d, int64_t n) {
  Moments m;
  double s = 0, ss = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = draw_timed_value(d, i);
    s += v;
    ss += v * v;
    m.lo = std::min(m.lo, v);
    m.hi = std::max(m.hi, v);
  }
  m.mean = s / n;
  m.sd = std::sqrt(ss / n - m.mean * m.mean);
  return m;
}
}  // namespace

TEST(TimedDraw, NormalHasTheTasksMeanAndSpreadWithinIrwinHallsBounds) {
  DrawSpec d{kDrawNormal, 1.5, 2.0, 0, 1, draw_call_base(7, 3), true};
  Moments m = moments(d, 400000);
  EXPECT_NEAR(m.mean, 1.5, 0.02);
  EXPECT_NEAR(m.sd, 2.0, 0.02);
  EXPECT_GE(m.lo, 1.5 - 2.0 * 3.4642);
  EXPECT_LE(m.hi, 1.5 + 2.0 * 3.4642);
  EXPECT_LT(m.lo, 1.5 - 2.0 * 2.5) << "the tails are there";
}

TEST(TimedDraw, UniformAndIntStayInTheirRanges) {
  Moments u = moments(DrawSpec{kDrawUniform, 1.0, 3.0, 0, 1, 99, true}, 200000);  // centre 1, half-width 3
  EXPECT_GT(u.lo, -2.0);
  EXPECT_LT(u.hi, 4.0);
  EXPECT_NEAR(u.mean, 1.0, 0.03);
  DrawSpec ints{kDrawInt, 0, 1, 3, 10, 99, true};
  std::set<double> seen;
  for (int64_t i = 0; i < 10000; ++i) seen.insert(draw_timed_value(ints, i));
  EXPECT_EQ(seen.size(), 7u);
  EXPECT_EQ(*seen.begin(), 3.0);
  EXPECT_EQ(*seen.rbegin(), 9.0);
  Moments e = moments(DrawSpec{kDrawExponential, 2.0, 1, 0, 1, 5, true}, 200000);
  EXPECT_GT(e.lo, 0.0);
  EXPECT_NEAR(e.mean, 0.5, 0.01);
}

// Every timed call draws afresh: the same element in two calls, or two elements of one call,
// are unrelated; the same call and element give the same value (both runners draw alike).
TEST(TimedDraw, FreshPerCallAndRepeatablePerKey) {
  DrawSpec a{kDrawNormal, 0, 1, 0, 1, draw_call_base(11, 0), true};
  DrawSpec b = a;
  b.base = draw_call_base(11, 1);
  int equal = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    equal += draw_timed_value(a, i) == draw_timed_value(b, i);
    EXPECT_EQ(draw_timed_value(a, i), draw_value(a, i)) << "draw_value follows DrawSpec::timed";
  }
  EXPECT_LT(equal, 20);  // 2^18 distinct values: a few coincide by chance
  DrawSpec accurate = a;
  accurate.timed = false;
  EXPECT_NE(draw_value(accurate, 0), draw_value(a, 0));
}

// The output sums' signs are balanced and differ between the two sums.
TEST(TimedDraw, SignsAreBalancedAndIndependent) {
  int s0 = 0, s1 = 0, same = 0;
  for (int64_t i = 0; i < 100000; ++i) {
    double g0, g1;
    draw_signs(12345, i, &g0, &g1);
    EXPECT_EQ(g0, draw_sign(12345, i, 0));
    EXPECT_EQ(g1, draw_sign(12345, i, 1));
    s0 += g0 > 0;
    s1 += g1 > 0;
    same += g0 == g1;
  }
  EXPECT_NEAR(s0, 50000, 800);
  EXPECT_NEAR(s1, 50000, 800);
  EXPECT_NEAR(same, 50000, 800);
}
