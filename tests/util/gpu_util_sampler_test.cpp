#include "util/gpu_util_sampler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace kevo {
namespace {

using namespace std::chrono_literals;

// Reads a scripted figure: the test sets what the GPUs "show" and counts the reads.
class FakeSource final : public GpuUtilSource {
 public:
  explicit FakeSource(std::atomic<int>* percent, std::atomic<int>* reads) : percent_(percent), reads_(reads) {}
  Result<double> read_percent() override {
    ++*reads_;
    int p = percent_->load();
    if (p < 0) return fail("GPU 0: nvmlDeviceGetUtilizationRates: GPU is lost");
    return static_cast<double>(p);
  }

 private:
  std::atomic<int>* percent_;
  std::atomic<int>* reads_;
};

// Waits (bounded) until the sampler has taken `n` samples in all.
void wait_samples(const GpuUtilSampler& s, int64_t n) {
  for (int i = 0; i < 2000 && s.samples() < n; ++i) std::this_thread::sleep_for(1ms);
}

TEST(GpuUtilSampler, MeansOverTheRunAndOverAWindowFromAMark) {
  std::atomic<int> pct{20}, reads{0};
  GpuUtilSampler s(std::make_unique<FakeSource>(&pct, &reads), 1ms);
  ASSERT_TRUE(s.available());
  wait_samples(s, 5);
  // A window from here on sees only what follows, the whole run both.
  pct = 80;
  auto m = s.mark();
  wait_samples(s, m.count + 20);
  s.stop();
  auto window = s.mean_since(m);
  ASSERT_TRUE(window.has_value());
  EXPECT_NEAR(*window, 0.8, 0.04);  // a read may straddle the switch
  auto all = s.mean();
  ASSERT_TRUE(all.has_value());
  EXPECT_GT(*all, 0.2);
  EXPECT_LT(*all, *window);
  // Between two marks: exactly the samples between them.
  auto end = s.mark();
  EXPECT_EQ(s.mean_between(m, end), s.mean_since(m));
  EXPECT_FALSE(s.mean_between(end, end).has_value());  // no sample in it: not known, not 0%
  EXPECT_TRUE(s.status().ok());
}

TEST(GpuUtilSampler, AFailedReadIsSkippedAndNamedOnce) {
  std::atomic<int> pct{-1}, reads{0};
  GpuUtilSampler s(std::make_unique<FakeSource>(&pct, &reads), 1ms);
  for (int i = 0; i < 2000 && reads < 3; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(s.samples(), 0);
  EXPECT_FALSE(s.mean().has_value());
  EXPECT_EQ(s.status().code, GpuUtilCode::kQueryFailed);
  EXPECT_NE(s.status().message.find("GPU is lost"), std::string::npos);
  pct = 50;
  wait_samples(s, 3);
  s.stop();
  ASSERT_TRUE(s.mean().has_value());
  EXPECT_DOUBLE_EQ(*s.mean(), 0.5);
  EXPECT_EQ(s.status().code, GpuUtilCode::kQueryFailed);  // still says why some were missed
}

TEST(GpuUtilSampler, StopsCleanlyAndTakesNoSampleAfterwards) {
  std::atomic<int> pct{30}, reads{0};
  auto s = std::make_unique<GpuUtilSampler>(std::make_unique<FakeSource>(&pct, &reads), 10s);
  wait_samples(*s, 1);
  EXPECT_EQ(s->samples(), 1);  // the first at once, the next only after a long period
  const auto t = std::chrono::steady_clock::now();
  s->stop();  // wakes the thread from its wait instead of sleeping out the period
  EXPECT_LT(std::chrono::steady_clock::now() - t, 2s);
  int after = reads;
  s->stop();  // idempotent
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(reads, after);
  EXPECT_DOUBLE_EQ(*s->mean(), 0.3);
  s.reset();  // the destructor after stop(): nothing left to join
}

TEST(GpuUtilSampler, AnUnavailableSamplerKnowsNoFigureAndSaysWhy) {
  GpuUtilSampler s(GpuUtilStatus{GpuUtilCode::kLibraryMissing, "cannot load libnvidia-ml.so.1"});
  EXPECT_FALSE(s.available());
  EXPECT_FALSE(s.mean().has_value());
  EXPECT_FALSE(s.mean_since(s.mark()).has_value());
  EXPECT_EQ(s.status().code, GpuUtilCode::kLibraryMissing);
  EXPECT_EQ(percent_or_na(s.mean()), "n/a");
  EXPECT_EQ(percent_or_na(0.0), "0%");
  EXPECT_EQ(percent_or_na(0.186), "19%");
  EXPECT_STREQ(to_string(GpuUtilCode::kLibraryMissing), "library_missing");
}

}  // namespace
}  // namespace kevo
