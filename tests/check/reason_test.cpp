// Reason: every code has its own stored string, and that string reads back as the code; the strings
// are the ones stored runs hold, so they must never change.
#include "check/reason.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace kevo {
namespace {

TEST(Reason, EveryCodeRoundTripsThroughItsString) {
  std::set<std::string> seen;
  for (int i = 0; i < kReasonCount; ++i) {
    const Reason r = static_cast<Reason>(i);
    const std::string text(to_string(r));
    EXPECT_NE(text, "?") << "reason " << i << " has no string";
    EXPECT_TRUE(seen.insert(text).second) << "'" << text << "' is the string of two reasons";
    auto back = parse_reason(text);
    ASSERT_TRUE(back) << "'" << text << "' does not parse";
    EXPECT_EQ(static_cast<int>(*back), i) << text;
    EXPECT_EQ(reason_text(r), text);
  }
}

// What earlier kevo versions stored, read back as their codes.
TEST(Reason, StoredStringsAreTheSameAsEver) {
  EXPECT_EQ(to_string(Reason::kNone), "");
  EXPECT_EQ(to_string(Reason::kMismatch), "mismatch");
  EXPECT_EQ(to_string(Reason::kTimingForged), "timing_forged");
  EXPECT_EQ(to_string(Reason::kInputModified), "input_modified");
  EXPECT_EQ(to_string(Reason::kSanitizerMemcheck), "sanitizer:memcheck");
  EXPECT_EQ(to_string(Reason::kDuplicate), "duplicate");
  EXPECT_EQ(to_string(Reason::kNoCode), "no_code");
  for (IntakeCode c : {IntakeCode::TooLarge, IntakeCode::NotUtf8, IntakeCode::Empty, IntakeCode::NoForward,
                       IntakeCode::SeveralForwards, IntakeCode::NotExported})
    EXPECT_EQ(to_string(intake_reason(c)), std::string("intake:") + to_string(c));
}

TEST(Reason, AStaticFindingKeepsItsRuleApart) {
  EXPECT_EQ(reason_text(Reason::kStatic, "stream_create"), "static:stream_create");
  EXPECT_EQ(reason_text(Reason::kStatic), "static");
  EXPECT_EQ(reason_text(Reason::kHiddenWork, "ignored"), "hidden_work");  // only kStatic has a rule
  EXPECT_EQ(parse_reason("static:stream_create"), Reason::kStatic);
  EXPECT_EQ(static_rule_of("static:stream_create"), "stream_create");
  EXPECT_EQ(static_rule_of("hidden_work"), "");
}

TEST(Reason, TextOfAnotherVersionIsNotGuessed) {
  EXPECT_FALSE(parse_reason("made_up"));
  EXPECT_FALSE(parse_reason("Mismatch"));
  EXPECT_FALSE(parse_reason("mismatch "));
}

}  // namespace
}  // namespace kevo
