// Every enum's text, as run databases, JSON and logs hold it: each value's text is exactly the one
// listed here (written out by hand from the texts stored runs hold, so a change breaks this test,
// not a stored run), no two values share one, and where the enum has a parse the text reads back
// as the value. The helper itself (util/enum_text.h) is tested first.
#include "util/enum_text.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "store/records.h"
#include "store/stop_reason.h"

namespace kevo {
namespace {

enum class Color { kRed, kGreen, kBlue, kUnlisted };
constexpr EnumText<Color> kColorTexts[] = {
    {Color::kRed, "red"}, {Color::kGreen, "green"}, {Color::kBlue, "blue"}, {Color::kRed, "rouge"}};

TEST(EnumText, AValuesFirstRowIsItsTextAndEveryRowParses) {
  static_assert(enum_text(kColorTexts, Color::kGreen)[0] == 'g');  // usable in constant expressions
  EXPECT_STREQ(enum_text(kColorTexts, Color::kRed), "red");
  EXPECT_STREQ(enum_text(kColorTexts, Color::kUnlisted), "?");
  EXPECT_STREQ(enum_text(kColorTexts, Color::kUnlisted, "none"), "none");
  EXPECT_EQ(enum_parse(kColorTexts, "blue"), Color::kBlue);
  EXPECT_EQ(enum_parse(kColorTexts, "rouge"), Color::kRed);
  for (const char* other : {"", "Red", "red ", "?", "purple"}) EXPECT_EQ(enum_parse(kColorTexts, other), std::nullopt);
}

TEST(EnumText, ChoicesNameEachValueOnce) {
  EXPECT_EQ(enum_choices(kColorTexts), "red, green, blue");
  EXPECT_EQ(enum_choices(kColorTexts, " or "), "red, green or blue");
  constexpr EnumText<Color> one[] = {{Color::kRed, "red"}};
  EXPECT_EQ(enum_choices(one, " or "), "red");
}

template <typename E>
using Rows = std::vector<std::pair<E, std::string>>;

template <typename E, typename ToText>
void expect_texts(const Rows<E>& rows, ToText to_text) {
  std::set<std::string> seen;
  for (const auto& [value, text] : rows) {
    EXPECT_EQ(std::string(to_text(value)), text) << "value " << static_cast<int>(value);
    EXPECT_TRUE(seen.insert(text).second) << "'" << text << "' is the text of two values";
  }
}

template <typename E, typename ToText, typename Parse>
void expect_round_trip(const Rows<E>& rows, ToText to_text, Parse parse) {
  expect_texts(rows, to_text);
  for (const auto& [value, text] : rows) EXPECT_EQ(parse(text), std::optional<E>(value)) << text;
}

// ---- store ---------------------------------------------------------------------------------------

TEST(EnumTexts, RunStatus) {
  using store::RunStatus;
  const Rows<RunStatus> rows = {{RunStatus::kRunning, "running"},
                                {RunStatus::kFinished, "finished"},
                                {RunStatus::kInterrupted, "interrupted"},
                                {RunStatus::kFailed, "failed"}};
  expect_round_trip(rows, [](RunStatus s) { return store::to_string(s); }, store::parse_run_status);
  EXPECT_EQ(store::parse_run_status("paused"), std::nullopt);
}

TEST(EnumTexts, CandidateOutcome) {
  using store::CandidateOutcome;
  const Rows<CandidateOutcome> rows = {{CandidateOutcome::kPass, "pass"},
                                       {CandidateOutcome::kCompileError, "compile_error"},
                                       {CandidateOutcome::kIncorrect, "incorrect"},
                                       {CandidateOutcome::kUnsafe, "unsafe"},
                                       {CandidateOutcome::kTimeout, "timeout"},
                                       {CandidateOutcome::kCrash, "crash"},
                                       {CandidateOutcome::kInfraError, "infra_error"},
                                       {CandidateOutcome::kInvalidAnswer, "invalid_answer"},
                                       {CandidateOutcome::kDuplicate, "duplicate"}};
  EXPECT_EQ(rows.size(), size_t(CandidateOutcome::kDuplicate));  // every value but kUnknown
  expect_round_trip(rows, [](CandidateOutcome o) { return store::to_string(o); }, store::parse_candidate_outcome);
  EXPECT_STREQ(store::to_string(CandidateOutcome::kUnknown), "unknown");
  EXPECT_EQ(store::parse_candidate_outcome("unknown"), std::nullopt);  // text this build does not know
}

TEST(EnumTexts, JobState) {
  using store::JobState;
  const Rows<JobState> rows = {
      {JobState::kQueued, "queued"}, {JobState::kClaimed, "claimed"}, {JobState::kDone, "done"}, {JobState::kFailed, "failed"}};
  expect_round_trip(rows, [](JobState s) { return store::to_string(s); }, store::parse_job_state);
}

TEST(EnumTexts, StopKind) {
  using store::StopKind;
  const Rows<StopKind> rows = {{StopKind::kInterrupted, "interrupted"},
                               {StopKind::kBudgetCandidates, "budget_candidates"},
                               {StopKind::kBudgetCalls, "budget_calls"},
                               {StopKind::kBudgetTokens, "budget_tokens"},
                               {StopKind::kBudgetUsd, "budget_usd"},
                               {StopKind::kBudgetMinutes, "budget_minutes"},
                               {StopKind::kStagnation, "stagnation"},
                               {StopKind::kBudgetLlm, "budget_llm"},
                               {StopKind::kReplayExhausted, "replay_exhausted"},
                               {StopKind::kLlmFatal, "llm_fatal"},
                               {StopKind::kLlmFailures, "llm_failures"},
                               {StopKind::kInfraError, "infra_error"},
                               {StopKind::kNothingToTune, "nothing_to_tune"},
                               {StopKind::kTuningDone, "tuning_done"},
                               {StopKind::kBaselineFailed, "baseline_failed"},
                               {StopKind::kTranslated, "translated"},
                               {StopKind::kTranslateRounds, "translate_rounds_exhausted"},
                               {StopKind::kLlmFailed, "llm_failed"},
                               {StopKind::kAgentClientGone, "agent_client_gone"},
                               {StopKind::kAgentShutdown, "agent_shutdown"},
                               {StopKind::kAgentWallTime, "agent_wall_time"},
                               {StopKind::kOther, "other"}};
  expect_texts(rows, [](StopKind k) { return store::to_string(k); });
  EXPECT_STREQ(store::to_string(StopKind::kNone), "");
  for (const auto& [kind, text] : rows) {
    if (kind == StopKind::kOther) continue;  // "other" is text kept as it was read
    EXPECT_EQ(store::parse_stop_reason(text).kind, kind) << text;
    EXPECT_EQ(store::parse_stop_reason(text + ": why").text(), text + ": why");
  }
  EXPECT_EQ(store::parse_stop_reason("other").kind, StopKind::kOther);
  EXPECT_EQ(store::parse_stop_reason("from a newer kevo").text(), "from a newer kevo");
}

}  // namespace
}  // namespace kevo
