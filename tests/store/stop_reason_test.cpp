// Stop reasons as the run database keeps them: every kind round-trips through its text, a detail
// survives with its own colons, unknown text is kept as kOther, and only failures fail a run.
#include "store/stop_reason.h"

#include <gtest/gtest.h>

using namespace kevo::store;

TEST(StopReason, EveryKindRoundTripsThroughItsText) {
  for (int i = static_cast<int>(StopKind::kInterrupted); i < static_cast<int>(StopKind::kOther); ++i) {
    const StopReason r{static_cast<StopKind>(i), ""};
    ASSERT_STRNE(to_string(r.kind), "") << i;
    const StopReason back = parse_stop_reason(r.text());
    EXPECT_EQ(back.kind, r.kind) << r.text();
    EXPECT_EQ(back.detail, "") << r.text();
  }
}

TEST(StopReason, DetailKeepsItsColons) {
  const StopReason r{StopKind::kInfraError, "config 'main': runner exit code 4: out of memory"};
  EXPECT_EQ(r.text(), "infra_error: config 'main': runner exit code 4: out of memory");
  const StopReason back = parse_stop_reason(r.text());
  EXPECT_EQ(back.kind, StopKind::kInfraError);
  EXPECT_EQ(back.detail, r.detail);
  EXPECT_EQ(parse_stop_reason("llm_failures: 3 in a row, last: HTTP 500").kind, StopKind::kLlmFailures);
}

TEST(StopReason, UnknownTextIsKeptAsOther) {
  EXPECT_TRUE(parse_stop_reason("").empty());
  const StopReason r = parse_stop_reason("translated_by_a_newer_kevo");
  EXPECT_EQ(r.kind, StopKind::kOther);
  EXPECT_EQ(r.text(), "translated_by_a_newer_kevo");
  // A prefix is not a kind: only the whole word before the colon counts.
  EXPECT_EQ(parse_stop_reason("infra_errors galore").kind, StopKind::kOther);
  EXPECT_EQ(parse_stop_reason("budget").kind, StopKind::kOther);
}

TEST(StopReason, TranslationReasonsAreKinds) {
  EXPECT_EQ(parse_stop_reason("translated").kind, StopKind::kTranslated);
  EXPECT_EQ(parse_stop_reason("translate_rounds_exhausted").kind, StopKind::kTranslateRounds);
  EXPECT_EQ(parse_stop_reason("llm_failed").kind, StopKind::kLlmFailed);
  EXPECT_FALSE((StopReason{StopKind::kTranslated, ""}).failed());
  EXPECT_TRUE((StopReason{StopKind::kTranslateRounds, ""}).failed());
  EXPECT_TRUE((StopReason{StopKind::kLlmFailed, ""}).failed());
}

TEST(StopReason, OnlyFailuresFailARun) {
  EXPECT_TRUE((StopReason{StopKind::kLlmFatal, "401"}).failed());
  EXPECT_TRUE((StopReason{StopKind::kInfraError, ""}).failed());
  EXPECT_TRUE((StopReason{StopKind::kBaselineFailed, ""}).failed());
  for (StopKind k : {StopKind::kNone, StopKind::kInterrupted, StopKind::kBudgetCandidates, StopKind::kStagnation,
                     StopKind::kLlmFailures, StopKind::kTuningDone, StopKind::kOther})
    EXPECT_FALSE((StopReason{k, ""}).failed()) << to_string(k);
}
