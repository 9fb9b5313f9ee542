// A verdict's outcome is stored under the name the checker gives it.
#include "evolve/stored_outcome.h"

#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace kevo
