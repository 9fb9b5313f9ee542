// ncu reports read into profiles (constructed ones, and two recorded on an H100): both CSV pages,
// thousands separators, units, missing and "n/a" figures, ncu's failures, hostile kernel names, and
// the JSON round trip.
#include "check/kernel_profile.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "util/fs.h"

using namespace kevo;

namespace {

std::string fixture(const char* name) {
  auto text = read_file(std::string(KEVO_SOURCE_DIR) + "/tests/check/data/" + name);
  EXPECT_TRUE(text) << name;
  return text ? *text : std::string();
}

void expect_scale_kernel(const KernelProfile& k) {
  EXPECT_EQ(k.name, "scale_kernel(const float *, float *, int)");
  EXPECT_NEAR(k.duration_us, 1234.56, 1e-9);  // nanoseconds with separators
  EXPECT_DOUBLE_EQ(k.dram_pct, 41.27);
  EXPECT_DOUBLE_EQ(k.sm_pct, 12.05);
  EXPECT_DOUBLE_EQ(k.achieved_occupancy_pct, 31.62);
  EXPECT_EQ(k.grid_size, 4096);
  EXPECT_EQ(k.registers_per_thread, 128);
  EXPECT_EQ(k.occupancy_limiter, "registers");  // 3 blocks/SM, the fewest
  EXPECT_DOUBLE_EQ(k.load_sectors_per_request, 8.0);
  EXPECT_DOUBLE_EQ(k.store_sectors_per_request, 4.0);
  EXPECT_DOUBLE_EQ(k.load_bytes_per_sector, 4.0);
  ASSERT_EQ(k.top_stalls.size(), 3u);  // zero stalls and "n/a" are left out, the rest cut to 3
  EXPECT_EQ(k.top_stalls[0].reason, "long_scoreboard");
  EXPECT_DOUBLE_EQ(k.top_stalls[0].cycles_per_issue, 18.42);
  EXPECT_EQ(k.top_stalls[1].reason, "lg_throttle");
  EXPECT_EQ(k.top_stalls[2].reason, "wait");
}

}  // namespace

TEST(KernelProfile, ReadsTheDetailsPage) {
  Profile p = read_ncu_report(fixture("ncu_details.csv"));
  ASSERT_EQ(p.status, ProfileStatus::kProfiled) << p.note;
  ASSERT_EQ(p.kernels.size(), 2u);
  expect_scale_kernel(p.kernels[0]);
  const auto& r = p.kernels[1];
  EXPECT_NEAR(r.duration_us, 105.3, 1e-9);
  EXPECT_EQ(r.shared_static_bytes, 1024);
  EXPECT_EQ(r.block_size, -1);           // not in the report: unknown, not zero
  EXPECT_EQ(r.occupancy_limiter, "");    // no limits reported
  EXPECT_DOUBLE_EQ(r.shared_bank_conflicts, 65536);
  EXPECT_EQ(r.load_sectors_per_request, -1);
}

TEST(KernelProfile, ReadsTheRawPage) {
  Profile p = read_ncu_report(fixture("ncu_raw.csv"));
  ASSERT_EQ(p.status, ProfileStatus::kProfiled) << p.note;
  ASSERT_EQ(p.kernels.size(), 1u);
  expect_scale_kernel(p.kernels[0]);
}

TEST(KernelProfile, NcuFailuresAreNamed) {
  Profile p = read_ncu_report(
      "==PROF== Connected to process 7\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access "
      "NVIDIA GPU Performance Counters on the target device 0.\n");
  EXPECT_EQ(p.status, ProfileStatus::kNoPermission);
  EXPECT_NE(p.note.find("ERR_NVGPUCTRPERM"), std::string::npos);
  p = read_ncu_report("==ERROR== Failed to find metric sm__bogus.sum\n");
  EXPECT_EQ(p.status, ProfileStatus::kFailed);
  EXPECT_NE(p.note.find("Failed to find metric sm__bogus.sum"), std::string::npos) << p.note;
  p = read_ncu_report("==PROF== Connected\n==WARNING== No kernels were profiled.\n");
  EXPECT_EQ(p.status, ProfileStatus::kFailed);
  EXPECT_EQ(p.note, "ncu profiled no kernel");
  p = read_ncu_report("");
  EXPECT_EQ(p.status, ProfileStatus::kFailed);
  EXPECT_EQ(p.note, "ncu wrote no CSV report");
}

TEST(KernelProfile, KernelNamesAreBoundedAndSanitized) {
  Profile p;
  std::string long_name = std::string(300, 'k') + "\x07";
  p = read_ncu_report("\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\"0\",\"" + long_name +
                      "\",\"launch__grid_size\",\"\",\"12\"\n");
  ASSERT_EQ(p.status, ProfileStatus::kProfiled);
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].name.size(), kMaxKernelNameChars);
  EXPECT_EQ(p.kernels[0].grid_size, 12);
  p = read_ncu_report("\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\"0\",\"k\x1b[0m\",\"launch__grid_size\",\"\",\"1\"\n");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].name, "k??0m");
}

TEST(KernelProfile, KeepsAtMostTheLimitOfKernels) {
  std::string csv = "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
  for (int i = 0; i < kMaxProfiledKernels + 3; ++i)
    csv += "\"" + std::to_string(i) + "\",\"k\",\"gpu__time_duration.sum\",\"usecond\",\"5\"\n";
  Profile p = read_ncu_report(csv);
  EXPECT_EQ(static_cast<int>(p.kernels.size()), kMaxProfiledKernels);
  EXPECT_EQ(p.kernels_dropped, 3);
  EXPECT_DOUBLE_EQ(p.kernels[0].duration_us, 5);
}

TEST(KernelProfile, JsonRoundTrip) {
  Profile p = read_ncu_report(fixture("ncu_details.csv"));
  p.config = "main";
  auto back = profile_from_json(p.to_json());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->to_json(), p.to_json());
  EXPECT_EQ(back->kernels[1].block_size, -1);
  EXPECT_EQ(back->to_text(), p.to_text());
  EXPECT_NE(p.to_text().find("limit: registers"), std::string::npos) << p.to_text();

  Profile none{ProfileStatus::kNoNcu, "ncu not found", "", {}, 0};
  back = profile_from_json(none.to_json());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->status, ProfileStatus::kNoNcu);
  EXPECT_EQ(back->to_text(), "not profiled (no_ncu): ncu not found\n");

  auto bad = profile_from_json({{"status", "great"}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("'status'"), std::string::npos);
  bad = profile_from_json({{"status", "profiled"}, {"kernels", {{{"dram_pct", "high"}}}}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("kernels[0]"), std::string::npos) << bad.error().message;
}

TEST(KernelProfile, ArgumentsAskForEveryMetricOnce) {
  auto args = ncu_arguments("/tmp/x.log");
  auto it = std::find(args.begin(), args.end(), "--metrics");
  ASSERT_NE(it, args.end());
  std::string list = *(it + 1);
  for (const auto& m : ncu_metrics()) EXPECT_NE(list.find(m), std::string::npos) << m;
  auto sorted = ncu_metrics();
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  EXPECT_EQ(args.back(), "/tmp/x.log");
  EXPECT_NE(std::find(args.begin(), args.end(), std::to_string(kMaxProfiledKernels + 1)), args.end());
}

// Reports ncu 2025.3 wrote on an H100 (scripts/gpu-check.sh phase profile, 2026-11-26): the
// figures the GPU run printed for the same profiles (its PROFILE lines) come back from the CSV.
TEST(KernelProfile, ReadsRecordedH100Reports) {
  Profile a = read_ncu_report(fixture("ncu_h100_argmax_dim1.csv"));
  ASSERT_EQ(a.status, ProfileStatus::kProfiled) << a.note;
  ASSERT_EQ(a.kernels.size(), 1u);
  const auto& k = a.kernels[0];
  EXPECT_EQ(k.name, "argmax_dim1_kernel(const float *, long *, long, long, long)");
  EXPECT_NEAR(k.duration_us, 1385.504, 1e-9);
  EXPECT_DOUBLE_EQ(k.dram_pct, 92.53);
  EXPECT_DOUBLE_EQ(k.l2_pct, 89.68);
  EXPECT_DOUBLE_EQ(k.sm_pct, 33.26);
  EXPECT_DOUBLE_EQ(k.achieved_occupancy_pct, 96.31);
  EXPECT_EQ(k.grid_size, 1024);
  EXPECT_EQ(k.block_size, 256);
  EXPECT_EQ(k.registers_per_thread, 32);
  EXPECT_EQ(k.occupancy_limiter, "registers");
  EXPECT_DOUBLE_EQ(k.load_sectors_per_request, 4.0);
  ASSERT_GE(k.top_stalls.size(), 3u);
  EXPECT_EQ(k.top_stalls[0].reason, "long_scoreboard");
  EXPECT_DOUBLE_EQ(k.top_stalls[0].cycles_per_issue, 49.01);

  Profile b = read_ncu_report(fixture("ncu_h100_attention_backward.csv"));
  ASSERT_EQ(b.status, ProfileStatus::kProfiled) << b.note;
  ASSERT_EQ(b.kernels.size(), 2u);
  EXPECT_NEAR(b.kernels[0].duration_us, 11263.712, 1e-9);
  EXPECT_NEAR(b.kernels[1].duration_us, 11358.464, 1e-9);
  EXPECT_DOUBLE_EQ(b.kernels[1].l2_pct, 66.06);
  EXPECT_DOUBLE_EQ(b.kernels[1].shared_bank_conflicts, 281976.0);
  EXPECT_EQ(b.kernels[0].shared_dynamic_bytes, 8192);
  EXPECT_EQ(b.kernels[0].shared_static_bytes, 512);
  EXPECT_EQ(b.kernels[1].top_stalls[2].reason, "lg_throttle");
}
