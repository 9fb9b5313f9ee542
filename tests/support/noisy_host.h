// Fake-runner verdicts on a host too loaded for the checker's clock (timing_noisy): no verdict on
// the candidate's timing, never a pass, but not a failure of what a test checks either. Tests that
// expect a pass skip visibly on it; tests that expect an accusation accept it.
#pragma once

#include <cstdio>

#include "check/verdict.h"

namespace kevo::testing_support {

inline bool too_noisy(const Verdict& v) {
  if (v.outcome != Outcome::InfraError || v.reason != Reason::kTimingNoisy) return false;
  std::printf("NOTE: this host was too noisy for the checker's clock: %s\n", v.message.c_str());
  return true;
}

}  // namespace kevo::testing_support
