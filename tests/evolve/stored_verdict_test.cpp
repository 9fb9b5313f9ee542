// A verdict as the run database stores it: its outcome under the checker's name, and its row.
#include "evolve/stored_verdict.h"

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

namespace kevo {
namespace {

TEST(StoredOutcome, EveryVerdictOutcomeIsStoredUnderItsOwnName) {
  for (Outcome o : {Outcome::Pass, Outcome::CompileError, Outcome::Incorrect, Outcome::Unsafe, Outcome::Timeout,
                    Outcome::Crash, Outcome::InfraError}) {
    const store::CandidateOutcome s = stored_outcome(o);
    EXPECT_EQ(std::string(to_string(s)), outcome_name(o));
    EXPECT_NE(s, store::CandidateOutcome::kUnknown) << outcome_name(o);
  }
}

TEST(CandidateRow, KeepsTheVerdictWithoutTheCompilerLogOrTimingFigures) {
  Verdict v;
  v.set(Outcome::Unsafe, Reason::kHiddenWork, "the device stayed busy");
  v.flags.push_back({Reason::kHiddenWork, "batch 3"});
  CompileResult cr;
  cr.ok = true;
  cr.diagnostics = "warning: unused";
  cr.log = std::string(10000, 'x');
  v.compile = cr;
  const store::CandidateRow c = candidate_row(v, "__global__ void k() {}");
  EXPECT_EQ(c.outcome, store::CandidateOutcome::kUnsafe);
  EXPECT_EQ(c.reason, "hidden_work");
  EXPECT_EQ(c.message, "the device stayed busy");
  EXPECT_EQ(c.source, "__global__ void k() {}");
  const auto compile = nlohmann::json::parse(c.compile_json);
  EXPECT_FALSE(compile.contains("log"));
  EXPECT_EQ(compile.value("diagnostics", ""), "warning: unused");
  const auto flags = nlohmann::json::parse(c.flags_json);
  ASSERT_EQ(flags.size(), 1u);
  EXPECT_EQ(flags[0].value("reason", ""), "hidden_work");
  EXPECT_EQ(nlohmann::json::parse(c.verdict_json).value("outcome", ""), "unsafe");
  EXPECT_FALSE(nlohmann::json::parse(c.features_json).is_null());
  EXPECT_EQ(c.speedup, 0);
}

}  // namespace
}  // namespace kevo
