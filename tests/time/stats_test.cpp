#include "time/stats.h"

#include <gtest/gtest.h>

#include "time/sol.h"

using namespace kevo;

TEST(Stats, Summary) {
  Summary s = summarize({5, 1, 3, 2, 4});
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.q1, 2);
  EXPECT_DOUBLE_EQ(s.q3, 4);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_NEAR(s.cv, std::sqrt(2.5) / 3, 1e-12);
  EXPECT_LE(s.median_lo, s.median);
  EXPECT_GE(s.median_hi, s.median);
  EXPECT_EQ(summarize({}).n, 0u);
}

TEST(Stats, SpeedupIntervalCoversTheRatio) {
  std::vector<double> slow, fast;
  for (int i = 0; i < 200; ++i) {
    slow.push_back(2.0 + 0.01 * (i % 10));
    fast.push_back(1.0 + 0.01 * (i % 7));
  }
  Ratio r = median_ratio(slow, fast);
  EXPECT_NEAR(r.value, 2.04 / 1.03, 0.02);
  EXPECT_LE(r.lo, r.value);
  EXPECT_GE(r.hi, r.value);
  EXPECT_LT(r.hi - r.lo, 0.1);
  // Deterministic: the same samples give the same interval.
  Ratio again = median_ratio(slow, fast);
  EXPECT_EQ(r.lo, again.lo);
  EXPECT_EQ(r.hi, again.hi);
}

TEST(Sol, FloorUsesThePrecisionsPeakAndAGenerousImpossibleLine) {
  DeviceCeilings d;
  d.copy_gbps = 3000;
  d.fp32_tflops = 60;
  d.tensor_tflops = 600;
  // 3 GB at 3000 GB/s = 1 ms; 60 GFLOP at 60 TFLOP/s = 1 ms (f32), 0.1 ms (bf16).
  SolFloor mem = sol_floor(d, 1e9, 3e9, DType::F32);
  EXPECT_NEAR(mem.floor_ms, 1.0, 1e-9);
  EXPECT_STREQ(mem.bound, "memory");
  SolFloor f32 = sol_floor(d, 120e9, 3e9, DType::F32);
  EXPECT_NEAR(f32.floor_ms, 2.0, 1e-9);
  EXPECT_STREQ(f32.bound, "compute");
  SolFloor bf16 = sol_floor(d, 120e9, 3e6, DType::BF16);
  EXPECT_NEAR(bf16.floor_ms, 0.2, 1e-9);
  EXPECT_LT(mem.impossible_ms, mem.floor_ms);
  EXPECT_GT(mem.impossible_ms, 0.5);
  EXPECT_EQ(sol_floor(DeviceCeilings{}, 1, 1, DType::F32).floor_ms, 0);
}
