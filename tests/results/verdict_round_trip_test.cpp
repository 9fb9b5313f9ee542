// The checker's writer (Verdict::to_json, read back by check/verdict_json.h) and the read side's
// view (results/verdict_view.h) on the same verdicts, so the two cannot drift apart; and a
// baseline's verdict through its stored form (evolve/stored_verdict.h, results/run_baseline.h).
#include <gtest/gtest.h>

#include "check/verdict.h"
#include "check/verdict_json.h"
#include "evolve/stored_verdict.h"
#include "results/run_baseline.h"
#include "results/verdict_view.h"

namespace kevo::results {
namespace {

using store::CandidateOutcome;

Summary summary(double median, size_t n) {
  Summary s;
  s.n = n;
  s.median = median, s.mean = median * 1.01, s.min = median * 0.9, s.max = median * 1.2;
  s.iqr = median * 0.05, s.cv = 0.02;
  s.median_lo = median * 0.98, s.median_hi = median * 1.03;
  return s;
}

Timing timing() {
  Timing t;
  t.config = "main";
  t.candidate = summary(1.25, 40);
  t.baseline = summary(2.5, 40);
  t.has_baseline = true;
  t.events_median = 1.2;
  t.speedup = {2.0, 1.9, 2.1};
  t.floor.floor_ms = 0.5;
  t.floor.impossible_ms = 0.1;
  t.floor.bound = "compute";
  t.sol_fraction = 0.4;
  t.outside.verdict = OutsideVerdict::Agree;
  t.outside.events_ms = 1.2;
  t.batch_calls = 16, t.small_calls = 1, t.rounds = 5;
  t.walls_candidate = {{16, 20.5, 19.8}};
  torch::TimeResult pt;
  pt.device = "cuda";
  pt.device_name = "NVIDIA H200";
  pt.modes["eager"] = {true, "", 3.75, 3.7, 3.8, 3.6, 20};
  pt.modes["compile"] = {false, "torch.compile is missing", 0, 0, 0, 0, 0};
  t.pytorch = pt;
  return t;
}

// A verdict with every part the writer can write.
Verdict full_verdict() {
  Verdict v;
  v.set(Outcome::Incorrect, Reason::kMismatch, "y[3]: got 1, want 2");
  v.task = "softmax", v.candidate = "cand.cu", v.seed = 1234567890123ull, v.seconds = 12.5;
  CompileResult c;
  c.ok = true, c.cache_hit = true, c.seconds = 0.75, c.arch_used = "sm_90a", c.driver = "nvcc";
  c.diagnostics = "warning: unused";
  c.kernels = {KernelResources{}, KernelResources{}};
  v.compile = c;
  v.findings.push_back({Finding::Severity::Warning, 7, "printf", "printf in a kernel"});
  ConfigCheck held;
  held.config = "big", held.held_out = true, held.ok = false, held.draws = 6;
  held.max_abs_err = 1.5, held.max_rel_err = 0.25, held.seconds = 3.5, held.detail = "y[3]: got 1, want 2";
  held.against = CheckedAgainst::kConsistency;
  ConfigCheck main_config;
  main_config.config = "main", main_config.draws = 4;
  v.configs = {main_config, held};
  v.timing = timing();
  v.flags.push_back({Reason::kHiddenWork, "work outside the events", ""});
  v.flags.push_back({Reason::kStatic, "a second stream", "stream_create"});
  v.device = DeviceCeilings{.name = "NVIDIA H200", .uuid = "GPU-1234"};
  v.sanitizer = "0 errors";
  v.phases = {{EvalPhase::kSetup, 2.0}, {EvalPhase::kCorrectness, 4.0}};
  v.work = {{"oracle", 1.5}, {"candidate", 0.5}};
  return v;
}

// The stored text, as a candidate row or a job result holds it.
VerdictView stored(const Verdict& v) { return verdict_view(v.to_json().dump()); }

TEST(VerdictRoundTrip, TheViewReadsEveryScalarTheWriterWrites) {
  const Verdict v = full_verdict();
  const VerdictView r = stored(v);
  EXPECT_EQ(r.outcome, stored_outcome(v.outcome));
  EXPECT_EQ(r.reason, "mismatch");
  EXPECT_EQ(r.message, v.message);
  EXPECT_EQ(r.task, "softmax");
  EXPECT_EQ(r.candidate, "cand.cu");
  EXPECT_EQ(r.seed, 1234567890123ull);
  EXPECT_DOUBLE_EQ(r.seconds, 12.5);
  EXPECT_EQ(r.sanitizer, "0 errors");
  ASSERT_TRUE(r.device);
  EXPECT_EQ(r.device->name, "NVIDIA H200");
  EXPECT_EQ(r.device->uuid, "GPU-1234");
  ASSERT_TRUE(r.compile);
  EXPECT_TRUE(r.compile->ok);
  EXPECT_TRUE(r.compile->cache_hit);
  EXPECT_DOUBLE_EQ(r.compile->seconds, 0.75);
  EXPECT_EQ(r.compile->arch, "sm_90a");
  EXPECT_EQ(r.compile->driver, "nvcc");
  EXPECT_EQ(r.compile->diagnostics, "warning: unused");
  EXPECT_EQ(r.compile->kernels, 2);
  EXPECT_EQ(r.phases, (std::map<std::string, double>{{"setup", 2.0}, {"correctness", 4.0}}));
  EXPECT_EQ(r.work_seconds, v.work);
  EXPECT_TRUE(r.profile.is_null());
  EXPECT_TRUE(r.isolation.is_null());
}

TEST(VerdictRoundTrip, ConfigsAndFlagsComeBackInOrder) {
  const VerdictView r = stored(full_verdict());
  ASSERT_EQ(r.configs.size(), 2u);
  EXPECT_EQ(r.configs[0].config, "main");
  EXPECT_TRUE(r.configs[0].ok);
  EXPECT_EQ(r.configs[0].against, Against::kOracle);
  const ConfigView& held = r.configs[1];
  EXPECT_EQ(held.config, "big");
  EXPECT_TRUE(held.held_out);
  EXPECT_FALSE(held.ok);
  EXPECT_EQ(held.against, Against::kConsistency);
  EXPECT_EQ(held.draws, 6);
  EXPECT_DOUBLE_EQ(held.max_abs_err, 1.5);
  EXPECT_DOUBLE_EQ(held.max_rel_err, 0.25);
  EXPECT_DOUBLE_EQ(held.seconds, 3.5);
  EXPECT_EQ(held.detail, "y[3]: got 1, want 2");
  ASSERT_EQ(r.flags.size(), 2u);
  EXPECT_EQ(r.flags[0].reason, "hidden_work");
  EXPECT_EQ(r.flags[0].detail, "work outside the events");
  EXPECT_EQ(r.flags[1].reason, "static:stream_create");
}

TEST(VerdictRoundTrip, TimingFiguresMatchTheWriter) {
  const Verdict v = full_verdict();
  const Timing& t = *v.timing;
  const VerdictView r = stored(v);
  ASSERT_TRUE(r.timing);
  const TimingView& x = *r.timing;
  EXPECT_EQ(x.config, "main");
  EXPECT_EQ(x.candidate.n, 40);
  EXPECT_DOUBLE_EQ(x.candidate.median_ms, t.candidate.median);
  EXPECT_DOUBLE_EQ(x.candidate.mean_ms, t.candidate.mean);
  EXPECT_DOUBLE_EQ(x.candidate.min_ms, t.candidate.min);
  EXPECT_DOUBLE_EQ(x.candidate.max_ms, t.candidate.max);
  EXPECT_DOUBLE_EQ(x.candidate.iqr_ms, t.candidate.iqr);
  EXPECT_DOUBLE_EQ(x.candidate.cv, t.candidate.cv);
  ASSERT_TRUE(x.candidate.median_ci_ms);
  EXPECT_DOUBLE_EQ(x.candidate.median_ci_ms->first, t.candidate.median_lo);
  EXPECT_DOUBLE_EQ(x.candidate.median_ci_ms->second, t.candidate.median_hi);
  ASSERT_TRUE(x.baseline);
  EXPECT_DOUBLE_EQ(x.baseline->median_ms, 2.5);
  EXPECT_DOUBLE_EQ(x.speedup, 2.0);
  ASSERT_TRUE(x.speedup_ci95);
  EXPECT_DOUBLE_EQ(x.speedup_ci95->first, 1.9);
  EXPECT_DOUBLE_EQ(x.speedup_ci95->second, 2.1);
  EXPECT_DOUBLE_EQ(x.floor_ms, 0.5);
  EXPECT_DOUBLE_EQ(x.impossible_below_ms, 0.1);
  EXPECT_DOUBLE_EQ(x.events_median_ms, 1.2);
  EXPECT_DOUBLE_EQ(x.sol_fraction, 0.4);
  EXPECT_DOUBLE_EQ(r.sol_fraction(), 0.4);
  EXPECT_EQ(x.bound, "compute");
  EXPECT_EQ(x.outside_clock["candidate"]["verdict"], to_string(OutsideVerdict::Agree));
  ASSERT_TRUE(x.pytorch);
  EXPECT_EQ(x.pytorch->eager_ms, 3.75);
  EXPECT_FALSE(x.pytorch->compile_ms);  // failed: no time
  EXPECT_FALSE(x.pytorch->extension_ms);
}

TEST(VerdictRoundTrip, TheViewAgreesWithTheCheckersOwnReader) {
  const Verdict v = full_verdict();
  auto back = verdict_from_json(v.to_json());
  ASSERT_TRUE(back) << back.error().message;
  const VerdictView a = stored(v), b = stored(*back);
  EXPECT_EQ(a.outcome, b.outcome);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.configs.size(), b.configs.size());
  EXPECT_EQ(a.flags.size(), b.flags.size());
  EXPECT_DOUBLE_EQ(a.timing->candidate.median_ms, b.timing->candidate.median_ms);
  EXPECT_DOUBLE_EQ(a.timing->speedup, b.timing->speedup);
  EXPECT_EQ(a.timing->pytorch->eager_ms, b.timing->pytorch->eager_ms);
}

TEST(VerdictRoundTrip, APassWithoutTimingOrCompileHasNone) {
  Verdict v;
  v.task = "t";
  const VerdictView r = stored(v);
  EXPECT_EQ(r.outcome, CandidateOutcome::kPass);
  EXPECT_EQ(r.reason, "");
  EXPECT_FALSE(r.timing);
  EXPECT_FALSE(r.compile);
  EXPECT_FALSE(r.device);
  EXPECT_TRUE(r.configs.empty());
  EXPECT_DOUBLE_EQ(r.sol_fraction(), 0);
}

TEST(VerdictRoundTrip, EveryOutcomeReadsAsTheStoredOneOfItsName) {
  for (Outcome o : {Outcome::Pass, Outcome::CompileError, Outcome::Incorrect, Outcome::Unsafe, Outcome::Timeout,
                    Outcome::Crash, Outcome::InfraError}) {
    Verdict v;
    v.outcome = o;
    EXPECT_EQ(stored(v).outcome, stored_outcome(o)) << outcome_name(o);
    EXPECT_EQ(store::to_string(stored(v).outcome), std::string(outcome_name(o)));
  }
}

TEST(BaselineRoundTrip, AStoredBaselineReadsBackAsTheFiguresOfItsVerdict) {
  Verdict v = full_verdict();
  v.outcome = Outcome::Pass, v.reason = Reason::kNone, v.message.clear();
  const RunBaseline b = baseline_from_text(stored_baseline(v, false).to_json().dump());
  EXPECT_TRUE(b.recorded);
  EXPECT_TRUE(b.passed());
  EXPECT_FALSE(b.fake_evaluator);
  EXPECT_EQ(b.gpu, "NVIDIA H200");
  EXPECT_EQ(b.arch, "sm_90a");
  ASSERT_TRUE(b.time_ms);
  EXPECT_DOUBLE_EQ(*b.time_ms, 1.25);
  EXPECT_DOUBLE_EQ(b.sol_floor_ms, 0.5);
  EXPECT_EQ(b.sol_bound, "compute");
  const std::vector<std::pair<std::string, Against>> configs = {{"big", Against::kConsistency},
                                                                {"main", Against::kOracle}};
  EXPECT_EQ(b.configs, configs);
  EXPECT_EQ(b.to_json(), stored_baseline(v, false).to_json());
  const Verdict back = baseline_verdict(b);
  ASSERT_TRUE(back.device && back.compile && back.timing);
  EXPECT_EQ(back.device->name, "NVIDIA H200");
  EXPECT_EQ(back.compile->arch_used, "sm_90a");
  EXPECT_DOUBLE_EQ(back.timing->candidate.median, 1.25);
  EXPECT_DOUBLE_EQ(back.timing->floor.floor_ms, 0.5);
  EXPECT_STREQ(back.timing->floor.bound, "compute");
}

TEST(BaselineRoundTrip, AFailedFakeBaselineKeepsItsOutcomeAndReason) {
  Verdict v;
  v.set(Outcome::Crash, Reason::kMismatch, "it crashed");
  const RunBaseline b = baseline_from_json(stored_baseline(v, true).to_json());
  EXPECT_EQ(b.outcome, CandidateOutcome::kCrash);
  EXPECT_EQ(b.reason, "mismatch");
  EXPECT_EQ(b.message, "it crashed");
  EXPECT_TRUE(b.fake_evaluator);
  EXPECT_FALSE(b.time_ms);
  EXPECT_FALSE(baseline_verdict(b).timing);
}

}  // namespace
}  // namespace kevo::results
