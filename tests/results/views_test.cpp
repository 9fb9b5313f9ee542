// The read side's views on stored rows of older kevos, damaged text and mistyped fields: each reads
// as its defaults where it cannot read a field, never throws.
#include <gtest/gtest.h>

#include "results/candidate_figures.h"
#include "results/job_result_view.h"
#include "results/run_baseline.h"
#include "results/run_config.h"
#include "results/run_final.h"
#include "results/verdict_view.h"

namespace kevo::results {
namespace {

using store::CandidateOutcome;

TEST(RunBaseline, AnOlderRowWithoutOutcomePassedAndItsTorchTimeIsEager) {
  const RunBaseline b = baseline_from_text(R"({"time_ms":2.0,"torch_time_ms":4.0,"gpu":"H100"})");
  EXPECT_TRUE(b.recorded);
  EXPECT_TRUE(b.passed());
  EXPECT_EQ(b.gpu, "H100");
  EXPECT_EQ(b.pytorch_times().eager_ms, 4.0);
  EXPECT_FALSE(b.pytorch_times().compile_ms);
  // Written back, the older field stays: a reader of either kind finds it.
  EXPECT_EQ(baseline_from_json(b.to_json()).pytorch_times().eager_ms, 4.0);
}

TEST(RunBaseline, ABenchRecordOfPyTorchWinsOverTheOlderField) {
  const RunBaseline b = baseline_from_text(
      R"({"outcome":"pass","time_ms":2.0,"torch_time_ms":4.0,"pytorch":{"eager_ms":3.0,"compile_ms":2.5,"extension_ms":null}})");
  const PytorchTimes t = b.pytorch_times();
  EXPECT_EQ(t.eager_ms, 3.0);
  EXPECT_EQ(t.compile_ms, 2.5);
  EXPECT_FALSE(t.extension_ms);
  EXPECT_EQ(baseline_from_text(R"({"pytorch":{"skipped":"no torch"}})").pytorch_times().skipped, "no torch");
}

TEST(RunBaseline, UnknownOutcomeTextIsUnknownNotPass) {
  const RunBaseline b = baseline_from_text(R"({"outcome":"exploded"})");
  EXPECT_EQ(b.outcome, CandidateOutcome::kUnknown);
  EXPECT_FALSE(b.passed());
}

TEST(RunBaseline, NoneOrDamagedTextIsNotRecorded) {
  EXPECT_FALSE(baseline_from_text("").recorded);
  EXPECT_FALSE(baseline_from_text("{not json").recorded);
  EXPECT_FALSE(baseline_from_text("[1,2]").recorded);
  const RunBaseline typo = baseline_from_text(R"({"outcome":7,"time_ms":"fast","gpu":3,"configs":[1]})");
  EXPECT_TRUE(typo.passed());  // a mistyped outcome reads as absent
  EXPECT_FALSE(typo.time_ms);
  EXPECT_EQ(typo.gpu, "");
  EXPECT_TRUE(typo.configs.empty());
}

TEST(RunBaseline, ReuseAndConfigsAreReadAndWrittenBack) {
  const RunBaseline b = baseline_from_text(
      R"({"outcome":"pass","configs":{"big":"consistency","main":"oracle"},"reused":{"verified_at":12.5,"key":{"toolkit":"CUDA 13.0"}}})");
  ASSERT_TRUE(b.reused);
  EXPECT_DOUBLE_EQ(b.reused->verified_at, 12.5);
  EXPECT_EQ(b.reused->key["toolkit"], "CUDA 13.0");
  ASSERT_EQ(b.configs.size(), 2u);
  EXPECT_EQ(b.configs[0], (std::pair<std::string, Against>{"big", Against::kConsistency}));
  const RunBaseline again = baseline_from_json(b.to_json());
  EXPECT_EQ(again.configs, b.configs);
  EXPECT_TRUE(again.reused);
}

TEST(RunConfig, ReadsTheModelTheFakeFlagAndBudgets) {
  const RunConfig c = config_from_text(
      R"({"llm":"anthropic:x","fake_evaluator":true,"seed":7,"budgets":{"max_candidates":45,"max_usd":2.5}})");
  EXPECT_EQ(c.llm, "anthropic:x");
  EXPECT_TRUE(c.fake_evaluator);
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.budgets.max_candidates, 45);
  EXPECT_EQ(c.budgets.max_usd, 2.5);
  EXPECT_FALSE(c.budgets.max_calls);
  EXPECT_FALSE(c.budgets.max_minutes);
}

TEST(RunConfig, MistypedFieldsReadAsUnset) {
  const RunConfig c = config_from_text(R"({"llm":5,"fake_evaluator":"yes","budgets":{"max_candidates":"many"}})");
  EXPECT_EQ(c.llm, "");
  EXPECT_FALSE(c.fake_evaluator);
  EXPECT_FALSE(c.budgets.max_candidates);
  EXPECT_FALSE(config_from_text("").fake_evaluator);
}

TEST(RunFinal, ReadsTheWinnerAndTheAttempts) {
  const RunFinal f = final_from_text(
      R"({"winner":13,"winner_speedup":1.9,"not_faster":false,"best_failed_held_out":true,)"
      R"("attempts":[{"candidate":12,"outcome":"incorrect","reason":"mismatch","message":"m","speedup":0,"speedup_ci":[0,0]},)"
      R"({"candidate":13,"outcome":"pass","speedup":1.9,"speedup_ci":[1.8,2.0]}]})");
  EXPECT_TRUE(f.recorded);
  EXPECT_EQ(f.winner, 13);
  EXPECT_DOUBLE_EQ(f.winner_speedup, 1.9);
  EXPECT_TRUE(f.best_failed_held_out);
  ASSERT_EQ(f.attempts.size(), 2u);
  EXPECT_EQ(f.attempts[0].outcome, CandidateOutcome::kIncorrect);
  EXPECT_EQ(f.attempts[0].reason, "mismatch");
  ASSERT_TRUE(f.attempts[1].speedup_ci);
  EXPECT_DOUBLE_EQ(f.attempts[1].speedup_ci->second, 2.0);
  EXPECT_TRUE(f.winner_pytorch.is_null());
  EXPECT_FALSE(final_from_text("").recorded);
  EXPECT_EQ(final_from_text(R"({"winner":"13"})").winner, 0);
}

TEST(VerdictView, AnOlderVerdictReadsWithDefaults) {
  // Before "against", "small_calls" and the device's UUID were written.
  const VerdictView v = verdict_view(std::string(
      R"({"outcome":"pass","reason":"","configs":[{"config":"main","ok":true}],"device":{"name":"A100"},)"
      R"("timing":{"config":"main","candidate":{"n":10,"median_ms":1.5}}})"));
  EXPECT_EQ(v.outcome, CandidateOutcome::kPass);
  ASSERT_EQ(v.configs.size(), 1u);
  EXPECT_EQ(v.configs[0].against, Against::kOracle);
  EXPECT_EQ(v.device->uuid, "");
  ASSERT_TRUE(v.timing);
  EXPECT_FALSE(v.timing->baseline);
  EXPECT_FALSE(v.timing->speedup_ci95);
  EXPECT_FALSE(v.timing->candidate.median_ci_ms);
  EXPECT_FALSE(v.timing->pytorch);
  EXPECT_DOUBLE_EQ(v.timing->candidate.median_ms, 1.5);
}

TEST(VerdictView, DamagedOrMistypedTextReadsAsUnknown) {
  EXPECT_EQ(verdict_view(std::string("{oops")).outcome, CandidateOutcome::kUnknown);
  EXPECT_EQ(verdict_view(std::string("")).outcome, CandidateOutcome::kUnknown);
  const VerdictView v = verdict_view(std::string(R"({"outcome":"pass","timing":[1],"configs":{"a":1},"seed":-1})"));
  EXPECT_FALSE(v.timing);
  EXPECT_TRUE(v.configs.empty());
  EXPECT_EQ(v.seed, 0u);
}

TEST(Against, TextBothWays) {
  for (Against a : {Against::kOracle, Against::kConsistency}) EXPECT_EQ(parse_against(to_string(a)), a);
  EXPECT_FALSE(parse_against("reference"));
}

TEST(CandidateFigures, ReadTheCompileRecordAndTheVerdictOnce) {
  store::CandidateRow c;
  c.compile_json = R"({"ok":true,"diagnostics":""})";
  c.verdict_json = R"({"outcome":"pass","seconds":3.5,"device":{"name":"H200","uuid":"GPU-1"},"timing":{"sol_fraction":0.25}})";
  const CandidateFigures f = figures_of(c);
  EXPECT_TRUE(f.compiled);
  EXPECT_DOUBLE_EQ(f.sol_fraction, 0.25);
  EXPECT_EQ(f.device, "H200");
  EXPECT_EQ(f.device_uuid, "GPU-1");
  EXPECT_DOUBLE_EQ(f.eval_s, 3.5);
  c.compile_json = R"({"ok":"yes"})";
  EXPECT_FALSE(compiled(c));
  c.compile_json.clear();
  EXPECT_FALSE(figures_of(c).compiled);  // an answer without code did not compile
}

TEST(JobResultView, ReadsTheWorkersSecondsAndTheVerdictsDevice) {
  const JobResultView r = job_result_view(R"({"busy_s":4.5,"worker":"w1","verdict":{"outcome":"crash","device":{"name":"H200"}}})");
  EXPECT_DOUBLE_EQ(r.busy_s, 4.5);
  EXPECT_EQ(r.worker, "w1");
  EXPECT_EQ(r.verdict.outcome, CandidateOutcome::kCrash);
  EXPECT_EQ(r.verdict.device->name, "H200");
  EXPECT_DOUBLE_EQ(job_result_view("job 3 was lost").busy_s, 0);
}

}  // namespace
}  // namespace kevo::results
