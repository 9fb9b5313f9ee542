// The outside clock's logic on synthetic figures: a slope from batches of k and 2k calls, and the
// verdict on a candidate's in-process figure (agreeing, forged, noisy).
#include <gtest/gtest.h>

#include <random>

#include "check/outside_clock.h"

using namespace kevo;

namespace {

// Batches of k and 2k calls: fixed cost + per-call cost, with Gaussian jitter.
std::vector<BatchWall> walls(double per_call, double fixed, int k, int rounds, double jitter, unsigned seed = 1) {
  std::mt19937 g(seed);
  std::normal_distribution<double> n(0, jitter);
  std::vector<BatchWall> w;
  for (int r = 0; r < rounds; ++r) {
    int calls = r % 2 ? 2 * k : k;
    w.push_back({calls, fixed + calls * per_call + n(g)});
  }
  return w;
}

}  // namespace

TEST(OutsideClock, SlopeCancelsFixedCosts) {
  Slope s = fit_slope(walls(2.0, 5.0, 10, 12, 0.0));
  ASSERT_TRUE(s.ok);
  EXPECT_NEAR(s.per_call_ms, 2.0, 1e-9);
  EXPECT_NEAR(s.ci_ms, 0.0, 1e-9);
}

TEST(OutsideClock, NeedsTwoSizesAndTwoOfEach) {
  EXPECT_FALSE(fit_slope({{10, 25.0}, {10, 25.1}, {10, 24.9}}).ok);
  EXPECT_TRUE(fit_slope({{10, 25.0}, {20, 45.0}, {10, 25.1}, {20, 45.1}}).ok);
  EXPECT_FALSE(fit_slope({{10, 25.0}, {20, 45.0}, {20, 45.1}}).ok);
  EXPECT_FALSE(fit_slope({}).ok);
}

TEST(OutsideClock, HonestEventsAgree) {
  // Candidate 2 ms per call plus 0.3 ms of work around it; events read 2.01 ms (their own overhead).
  Slope cand = fit_slope(walls(2.3, 1.0, 10, 16, 0.05, 1)), around = fit_slope(walls(0.3, 1.0, 10, 16, 0.05, 2));
  OutsideCheck c = check_outside(2.01, cand, around);
  EXPECT_EQ(c.verdict, OutsideVerdict::Agree) << c.detail;
  EXPECT_NEAR(c.outside_ms, 2.0, 0.02);
}

TEST(OutsideClock, ForgedEventsAreCaught) {
  // The process reports 0.5 ms per call (a 4x "speedup") while the checker waits 2 ms per call.
  Slope cand = fit_slope(walls(2.3, 1.0, 10, 16, 0.05, 3)), around = fit_slope(walls(0.3, 1.0, 10, 16, 0.05, 4));
  OutsideCheck c = check_outside(0.5, cand, around);
  EXPECT_EQ(c.verdict, OutsideVerdict::Forged) << c.detail;
  // A 5% shave is caught too: the tolerance is 3%.
  EXPECT_EQ(check_outside(0.95 * 2.0, cand, around).verdict, OutsideVerdict::Forged);
  // Within the tolerance it is not (that is what a forger can still gain, and what the report states).
  EXPECT_EQ(check_outside(0.985 * 2.0, cand, around).verdict, OutsideVerdict::Agree);
}

TEST(OutsideClock, NoiseWidensTheAllowanceInsteadOfAccusing) {
  // A noisy host (jitter 2 ms on 20-40 ms batches): the outside figure's interval is wide, and an
  // honest figure inside it is not called forged; the allowance says how much could hide there.
  Slope cand = fit_slope(walls(2.3, 1.0, 10, 12, 2.0, 5)), around = fit_slope(walls(0.3, 1.0, 10, 12, 2.0, 6));
  OutsideCheck c = check_outside(2.0, cand, around);
  EXPECT_EQ(c.verdict, OutsideVerdict::Agree) << c.detail;
  EXPECT_GT(c.allowed_ms, kOutsideTolerance * 2.0);
}

TEST(OutsideClock, AShortfallOnlyExtremeNoiseHidesIsInconclusiveNotBelieved) {
  // A very noisy host (jitter 8 ms on 20-40 ms batches) and a process reporting a figure below the
  // outside one by more than the 3% tolerance but inside twice the interval, which is beyond a
  // quarter of the figure. Neither believed (Agree) nor accused (Forged); more batches decide.
  Slope cand = fit_slope(walls(2.3, 1.0, 10, 12, 8.0, 5)), around = fit_slope(walls(0.3, 1.0, 10, 12, 8.0, 6));
  const OutsideCheck m = check_outside(0, cand, around);
  ASSERT_GT(2 * m.ci_ms, kNoisyShare * m.outside_ms) << m.detail;  // the precondition: extreme noise
  const double shaved = m.outside_ms - (kOutsideTolerance * m.outside_ms + m.allowed_ms) / 2;
  OutsideCheck c = check_outside(shaved, cand, around);
  EXPECT_EQ(c.verdict, OutsideVerdict::Inconclusive) << c.detail;
  // An honest figure, at the outside one, is believed however noisy the host.
  EXPECT_EQ(check_outside(c.outside_ms, cand, around).verdict, OutsideVerdict::Agree);
  // Many more batches: the same shortfall is caught, the honest figure still agrees.
  Slope cand_long = fit_slope(walls(2.3, 1.0, 10, 600, 8.0, 7)), around_long = fit_slope(walls(0.3, 1.0, 10, 600, 8.0, 8));
  EXPECT_EQ(check_outside(0.6 * 2.0, cand_long, around_long).verdict, OutsideVerdict::Forged);
  EXPECT_EQ(check_outside(2.0, cand_long, around_long).verdict, OutsideVerdict::Agree);
}

TEST(OutsideClock, UnmeasuredWithoutBatches) {
  EXPECT_EQ(check_outside(1.0, Slope{}, Slope{}).verdict, OutsideVerdict::Unmeasured);
}
