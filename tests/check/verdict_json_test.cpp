// A verdict survives the trip through JSON (a worker's verdict read back by the coordinator):
// every figure the engine, the prompts and the reports use comes back, and a damaged document is
// an error naming the field.
#include <gtest/gtest.h>

#include "check/verdict_json.h"

using namespace kevo;

namespace {

Verdict full_verdict() {
  Verdict v;
  v.outcome = Outcome::Pass;
  v.task = "softmax";
  v.candidate = "c.cu";
  v.seed = 1234567890123ULL;
  v.seconds = 1.5;
  CompileResult c;
  c.ok = true;
  c.cache_hit = true;
  c.arch_used = "sm_90";
  c.driver = "nvcc";
  c.diagnostics = "warning: x";
  c.kernels.push_back({.function = "k", .arch = "sm_90", .registers = 40, .shared_bytes = 4096, .stack_bytes = 8,
                       .spill_store_bytes = 4, .spill_load_bytes = 4});
  v.compile = c;
  v.findings.push_back({Finding::Severity::Warning, 7, "printf", "prints"});
  v.configs.push_back({"main", false, true, 6, 1e-6, 2e-5, 0.25, ""});
  v.configs.push_back({"held", true, false, 6, 0.5, 0.1, 0.2, "mismatch at [3]", CheckedAgainst::kConsistency});
  Timing t;
  t.config = "main";
  t.candidate.n = 36, t.candidate.median = 1.25, t.candidate.median_lo = 1.24, t.candidate.median_hi = 1.26;
  t.baseline.n = 36, t.baseline.median = 2.5;
  t.has_baseline = true;
  t.speedup = {2.0, 1.97, 2.03};
  t.floor.floor_ms = 0.5, t.floor.bound = "compute", t.floor.impossible_ms = 0.1;
  t.sol_fraction = 0.4;
  t.events_median = 1.2;
  t.outside.verdict = OutsideVerdict::Agree, t.outside.outside_ms = 1.24, t.outside.allowed_ms = 0.04;
  t.outside_baseline.verdict = OutsideVerdict::Inconclusive;
  t.batch_calls = 16, t.small_calls = 1, t.rounds = 8, t.around_ms = 0.3;
  t.outside.fixed_excess_ms = 0.25, t.outside.detail = "in-process events 1.2 ms";
  t.outside.median_outside_ms = 1.23, t.outside.median_allowed_ms = 0.037;
  t.walls_candidate = {{16, 25.5, 20.0}, {32, 50.25, 40.0}};
  t.walls_around = {{16, 5.5, 0.01}};
  torch::TimeResult p;
  p.device = "cuda";
  p.device_name = "H100";
  p.modes["eager"] = {.ok = true, .median_ms = 2.6, .ci_low_ms = 2.5, .ci_high_ms = 2.7, .min_ms = 2.4, .n = 20};
  p.modes["compile"] = {.ok = false, .error = "no torch.compile"};
  t.pytorch = p;
  v.timing = t;
  v.flags.push_back({Reason::kTimingUnconfirmed, "why"});
  v.flags.push_back({Reason::kStatic, "fake", "stream_create"});
  v.device = DeviceCeilings{.name = "NVIDIA H100", .uuid = "GPU-1", .copy_gbps = 3000};
  v.phases = {{EvalPhase::kSetup, 0.5}, {EvalPhase::kCorrectness, 0.5}, {EvalPhase::kTiming, 0.5},
              {EvalPhase::kProfile, 0.25}};
  v.work["oracle"] = 0.1;
  Profile prof;
  prof.status = ProfileStatus::kProfiled;
  prof.config = "main";
  KernelProfile k;
  k.name = "k";
  k.duration_us = 1200, k.dram_pct = 81.5, k.registers_per_thread = 40, k.occupancy_limiter = "registers";
  k.top_stalls = {{"long_scoreboard", 12.5}};
  prof.kernels.push_back(k);
  v.profile = prof;
  return v;
}

}  // namespace

TEST(VerdictJson, RoundTripKeepsEveryFigure) {
  const Verdict v = full_verdict();
  auto r = verdict_from_json(v.to_json());
  ASSERT_TRUE(r) << r.error().message;
  // The text rendering covers every field shown to people; the JSON covers the rest.
  EXPECT_EQ(r->to_text(), v.to_text());
  EXPECT_EQ(r->to_json(), v.to_json());
  EXPECT_EQ(r->seed, v.seed);
  EXPECT_EQ(std::string(r->timing->floor.bound), "compute");
  EXPECT_EQ(r->timing->events_median, 1.2);
  ASSERT_TRUE(r->profile);
  EXPECT_EQ(r->profile->kernels.at(0).top_stalls.at(0).reason, "long_scoreboard");
  EXPECT_NE(v.to_text().find("  profile   kernel 1 k: 1200 us"), std::string::npos) << v.to_text();
}

TEST(VerdictJson, ADamagedProfileIsNamed) {
  auto j = full_verdict().to_json();
  j["profile"]["kernels"][0]["dram_pct"] = "high";
  auto r = verdict_from_json(j);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("dram_pct"), std::string::npos) << r.error().message;
}

TEST(VerdictJson, FailedVerdictsComeBackWithTheirReason) {
  Verdict v;
  v.set(Outcome::Unsafe, Reason::kTimingForged, "events below the checker's clock");
  auto r = verdict_from_json(v.to_json());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->outcome, Outcome::Unsafe);
  EXPECT_EQ(r->reason, Reason::kTimingForged);
  // A static finding: the code and its rule apart, written together as ever.
  Verdict s;
  s.set(Outcome::Unsafe, Reason::kStatic, "line 3: cudaStreamCreate", "stream_create");
  EXPECT_EQ(s.to_json()["reason"], "static:stream_create");
  auto rs = verdict_from_json(s.to_json());
  ASSERT_TRUE(rs) << rs.error().message;
  EXPECT_EQ(rs->reason, Reason::kStatic);
  EXPECT_EQ(rs->static_rule, "stream_create");
  EXPECT_NE(rs->to_text().find("VERDICT: unsafe [static:stream_create] line 3"), std::string::npos) << rs->to_text();
  EXPECT_FALSE(r->timing);
  EXPECT_FALSE(r->compile);
}

TEST(VerdictJson, DamagedDocumentsAreErrorsNamingTheField) {
  EXPECT_FALSE(verdict_from_json(nlohmann::json::array()));
  auto bad = verdict_from_json({{"outcome", "maybe"}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("maybe"), std::string::npos);
  auto unknown = verdict_from_json({{"outcome", "unsafe"}, {"reason", "made_up"}});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("made_up"), std::string::npos) << unknown.error().message;
  auto j = full_verdict().to_json();
  j["timing"]["speedup"]["value"] = "fast";
  auto r = verdict_from_json(j);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("value"), std::string::npos) << r.error().message;
  j = full_verdict().to_json();
  j["compile"]["kernels"][0]["registers"] = "many";
  r = verdict_from_json(j);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("registers"), std::string::npos) << r.error().message;
  j = full_verdict().to_json();
  j["timing"]["outside_clock"]["batches"]["candidate"][1] = {32, "slow"};
  r = verdict_from_json(j);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("batches.candidate"), std::string::npos) << r.error().message;
}
