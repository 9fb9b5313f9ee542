// The enums of the run database's rows: every candidate outcome has its own stored text, and that
// text reads back as the outcome; the texts are what stored runs hold, so they never change.
#include "store/records.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace kevo::store {
namespace {

TEST(CandidateOutcome, EveryOutcomeRoundTripsThroughItsText) {
  std::set<std::string> seen;
  for (int i = static_cast<int>(CandidateOutcome::kPass); i <= static_cast<int>(CandidateOutcome::kDuplicate); ++i) {
    const auto o = static_cast<CandidateOutcome>(i);
    const std::string text = to_string(o);
    EXPECT_TRUE(seen.insert(text).second) << "'" << text << "' is the text of two outcomes";
    EXPECT_EQ(parse_candidate_outcome(text), o) << text;
    EXPECT_EQ(candidate_outcome_or_unknown(text), o) << text;
  }
}

TEST(CandidateOutcome, StoredTextsAreTheSameAsEver) {
  EXPECT_STREQ(to_string(CandidateOutcome::kPass), "pass");
  EXPECT_STREQ(to_string(CandidateOutcome::kCompileError), "compile_error");
  EXPECT_STREQ(to_string(CandidateOutcome::kIncorrect), "incorrect");
  EXPECT_STREQ(to_string(CandidateOutcome::kUnsafe), "unsafe");
  EXPECT_STREQ(to_string(CandidateOutcome::kTimeout), "timeout");
  EXPECT_STREQ(to_string(CandidateOutcome::kCrash), "crash");
  EXPECT_STREQ(to_string(CandidateOutcome::kInfraError), "infra_error");
  EXPECT_STREQ(to_string(CandidateOutcome::kInvalidAnswer), "invalid_answer");
  EXPECT_STREQ(to_string(CandidateOutcome::kDuplicate), "duplicate");
}

TEST(CandidateOutcome, TextThisBuildDoesNotKnowIsUnknown) {
  for (const char* text : {"", "unknown", "Pass", "pass ", "from_a_newer_kevo"}) {
    EXPECT_FALSE(parse_candidate_outcome(text)) << text;
    EXPECT_EQ(candidate_outcome_or_unknown(text), CandidateOutcome::kUnknown) << text;
  }
  EXPECT_STREQ(to_string(CandidateOutcome::kUnknown), "unknown");
  EXPECT_FALSE(CandidateRow{}.passed());
}

}  // namespace
}  // namespace kevo::store
