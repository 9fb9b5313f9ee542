// The figures of kevo bench on hand cases.
#include <gtest/gtest.h>

#include <cmath>

#include "results/metrics.h"

namespace kevo::results {
namespace {

using O = store::CandidateOutcome;

TEST(Metrics, MedianGeomeanMean) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
  EXPECT_DOUBLE_EQ(geomean({2, 8}), 4);
  EXPECT_NEAR(geomean({1, 2, 4}), 2, 1e-12);
  EXPECT_DOUBLE_EQ(geomean({}), 0);
  EXPECT_DOUBLE_EQ(geomean({2, 0}), 0);
  EXPECT_DOUBLE_EQ(mean({1, 2, 6}), 3);
  EXPECT_DOUBLE_EQ(mean({}), 0);
}

TEST(Metrics, FastPCountsTasksWithoutACorrectCandidateAsNotFast) {
  std::vector<std::optional<double>> s = {2.5, 1.5, 1.0, 0.8, std::nullopt};
  EXPECT_DOUBLE_EQ(fast_p(s, 1.0), 2.0 / 5);   // strictly faster: 1.0x is not fast
  EXPECT_DOUBLE_EQ(fast_p(s, 1.5), 1.0 / 5);
  EXPECT_DOUBLE_EQ(fast_p(s, 2.0), 1.0 / 5);
  EXPECT_DOUBLE_EQ(fast_p(s, 0.0), 4.0 / 5);
  EXPECT_DOUBLE_EQ(fast_p({}, 1.0), 0);
  EXPECT_DOUBLE_EQ(fast_p({std::nullopt, std::nullopt}, 0.0), 0);
}

store::CandidateRow cand(int64_t id, int seq, store::CandidateOutcome outcome, double speedup, bool accepted,
                         bool compiled, std::vector<int64_t> parents = {}) {
  store::CandidateRow c;
  c.id = id;
  c.seq = seq;
  c.outcome = outcome;
  c.speedup = speedup;
  c.time_ms = speedup > 0 ? 2.0 / speedup : 0;
  c.accepted = accepted;
  c.parents = std::move(parents);
  c.compile_json = compiled ? R"({"ok":true})" : R"({"ok":false})";
  return c;
}

store::RunRow run(store::RunStatus st, const std::string& final_json, int64_t best = 0) {
  store::RunRow r;
  r.id = 1;
  r.task = "t";
  r.status = st;
  r.best_candidate = best;
  r.baseline_json = R"({"outcome":"pass","time_ms":2.0,"sol_floor_ms":0.5})";
  r.final_json = final_json;
  return r;
}

TEST(Metrics, TaskResultUsesTheVerifiedWinnerReTimed) {
  std::vector<store::CandidateRow> cs = {cand(10, 1, O::kCompileError, 0, false, false),
                                         cand(11, 2, O::kPass, 1.5, true, true),
                                         cand(12, 3, O::kIncorrect, 0, false, true),
                                         cand(13, 4, O::kPass, 2.0, true, true, {11})};
  auto r = task_result(run(store::RunStatus::kFinished, R"({"winner":13,"winner_speedup":1.9})", 13), cs,
                       {.candidates = 4, .valid = 2, .llm_calls = 4, .tokens = 400, .cost_usd = 0.2});
  ASSERT_TRUE(r.speedup);
  EXPECT_DOUBLE_EQ(*r.speedup, 1.9);
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.best_candidate, 13);
  EXPECT_DOUBLE_EQ(*r.best_ms, 1.0);
  EXPECT_DOUBLE_EQ(*r.sol_fraction, 0.5);
  EXPECT_FALSE(r.speedup_vs_eager);  // no PyTorch times recorded
  EXPECT_FALSE(r.speedup_vs_compile);
  EXPECT_FALSE(r.eager_ms);
  EXPECT_EQ(r.candidates, 4);
  EXPECT_EQ(r.valid, 2);
  EXPECT_EQ(r.compiled, 3);
  EXPECT_EQ(r.tokens, 400);
  EXPECT_DOUBLE_EQ(r.baseline_ms, 2.0);
}

TEST(Metrics, SpeedupsOverPyTorchFromTheBaselineRecord) {
  std::vector<store::CandidateRow> cs = {cand(13, 1, O::kPass, 2.0, true, true)};  // 1.0 ms
  auto rr = run(store::RunStatus::kFinished, R"({"winner":13,"winner_speedup":1.9})", 13);
  rr.baseline_json = R"({"outcome":"pass","time_ms":2.0,"pytorch":{"device":"cuda","eager_ms":3.0,)"
                     R"("compile_ms":1.5,"extension_ms":null,"errors":{"extension":"no CUDA toolkit"}}})";
  auto r = task_result(rr, cs, {});
  ASSERT_TRUE(r.speedup_vs_eager);
  EXPECT_DOUBLE_EQ(*r.speedup_vs_eager, 3.0);
  ASSERT_TRUE(r.speedup_vs_compile);
  EXPECT_DOUBLE_EQ(*r.speedup_vs_compile, 1.5);
  EXPECT_FALSE(r.speedup_vs_extension);
  EXPECT_DOUBLE_EQ(*r.eager_ms, 3.0);
  EXPECT_FALSE(r.extension_ms);
  // Older records: torch_time_ms is the eager time.
  rr.baseline_json = R"({"outcome":"pass","time_ms":2.0,"torch_time_ms":4.0})";
  r = task_result(rr, cs, {});
  ASSERT_TRUE(r.speedup_vs_eager);
  EXPECT_DOUBLE_EQ(*r.speedup_vs_eager, 4.0);
  EXPECT_FALSE(r.speedup_vs_compile);
  // PyTorch was timed but there is no correct candidate: times, no speedups.
  rr.baseline_json = R"({"outcome":"pass","time_ms":2.0,"pytorch":{"eager_ms":3.0}})";
  rr.final_json = R"({"winner":0})";
  r = task_result(rr, cs, {});
  EXPECT_DOUBLE_EQ(*r.eager_ms, 3.0);
  EXPECT_FALSE(r.speedup_vs_eager);
}

TEST(Metrics, NoVerifiedWinnerMeansNoCorrectCandidate) {
  std::vector<store::CandidateRow> cs = {cand(11, 1, O::kPass, 1.5, true, true)};
  auto failed_held_out =
      task_result(run(store::RunStatus::kFinished, R"({"winner":0,"best_failed_held_out":true})", 11), cs, {});
  EXPECT_FALSE(failed_held_out.correct());
  auto baseline_failed = task_result(run(store::RunStatus::kFailed, "", 0), {}, {});
  EXPECT_FALSE(baseline_failed.correct());
  // A run still going reports its current best, unverified.
  auto interrupted = task_result(run(store::RunStatus::kInterrupted, "", 11), cs, {});
  ASSERT_TRUE(interrupted.speedup);
  EXPECT_DOUBLE_EQ(*interrupted.speedup, 1.5);
  EXPECT_FALSE(interrupted.verified);
}

TEST(Metrics, AggregatesOverTasks) {
  std::vector<TaskResult> ts(4);
  ts[0].speedup = 4.0;
  ts[0].candidates = 10, ts[0].valid = 5, ts[0].compiled = 8, ts[0].tokens = 100, ts[0].cost_usd = 1;
  ts[1].speedup = 1.0;
  ts[1].candidates = 10, ts[1].valid = 5, ts[1].compiled = 8, ts[1].tokens = 100, ts[1].cost_usd = 1;
  ts[2].speedup = 1.6;
  ts[2].candidates = 10, ts[2].valid = 0, ts[2].compiled = 4;
  for (int i = 0; i < 3; ++i) ts[static_cast<size_t>(i)].verified = true;
  ts[3] = missing_task("none");  // no run at all
  auto a = aggregate(ts);
  EXPECT_EQ(a.tasks, 4);
  EXPECT_EQ(a.correct, 3);
  EXPECT_DOUBLE_EQ(a.median, 1.6);
  EXPECT_NEAR(a.geomean, std::cbrt(4.0 * 1.0 * 1.6), 1e-12);
  EXPECT_NEAR(a.mean, 6.6 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(a.median_all, 1.3);  // 1.0, 1.0 (unsolved), 1.6, 4.0
  EXPECT_DOUBLE_EQ(a.fast_1, 0.5);       // 4.0 and 1.6 of 4 tasks
  EXPECT_DOUBLE_EQ(a.fast_1_5, 0.5);
  EXPECT_DOUBLE_EQ(a.fast_2, 0.25);
  EXPECT_DOUBLE_EQ(a.validity_rate, 10.0 / 30);
  EXPECT_DOUBLE_EQ(a.compile_rate, 20.0 / 30);
  EXPECT_EQ(a.tokens, 200);
  EXPECT_DOUBLE_EQ(a.cost_usd, 2);
  auto none = aggregate({missing_task("a"), missing_task("b")});
  EXPECT_EQ(none.correct, 0);
  EXPECT_DOUBLE_EQ(none.median, 0);
  EXPECT_DOUBLE_EQ(none.geomean_all, 1);
  EXPECT_DOUBLE_EQ(none.fast_1, 0);
  EXPECT_DOUBLE_EQ(none.validity_rate, 0);
}

// An interrupted bench: a run's best so far is shown, unverified, and counts as unsolved.
TEST(Metrics, AnUnverifiedResultIsNotSolved) {
  std::vector<TaskResult> ts(2);
  ts[0].speedup = 3.0;
  ts[0].verified = true;
  ts[1].speedup = 2.5;  // an interrupted run's best so far
  auto a = aggregate(ts);
  EXPECT_EQ(a.tasks, 2);
  EXPECT_EQ(a.correct, 1);
  EXPECT_EQ(a.unverified, 1);
  EXPECT_DOUBLE_EQ(a.fast_2, 0.5);
  EXPECT_DOUBLE_EQ(a.median, 3.0);
  EXPECT_DOUBLE_EQ(a.median_all, 2.0);  // 1.0 (unsolved) and 3.0
}

TEST(Metrics, BestSoFarAndLineage) {
  std::vector<store::CandidateRow> cs = {cand(3, 3, O::kPass, 1.4, false, true),  // not confidently better
                                         cand(1, 1, O::kIncorrect, 0, false, true),
                                         cand(2, 2, O::kPass, 1.2, true, true),
                                         cand(4, 4, O::kPass, 2.0, true, true, {2})};
  EXPECT_EQ(best_so_far(cs), (std::vector<double>{0, 1.2, 1.2, 2.0}));
  auto chain = lineage(cs, 4);
  ASSERT_EQ(chain.size(), 2u);
  EXPECT_EQ(chain[0]->id, 4);
  EXPECT_EQ(chain[1]->id, 2);
  EXPECT_TRUE(lineage(cs, 99).empty());
}

}  // namespace
}  // namespace kevo::results
