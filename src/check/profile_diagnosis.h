// Why a kernel is slow, in one short line for the next prompt: rule-based reading of a profile
// (check/kernel_profile.h), no model. "memory-bound: DRAM 82% of peak; loads use 4 of 32 bytes per
// sector (8.0 sectors/request): uncoalesced; occupancy 25% (limit: registers, 128/thread); top
// stalls: long_scoreboard 12.3, barrier 3.1 cycles/issue". Only kevo's own words and numbers go
// in (never a kernel name: that is the candidate's text), and at most kMaxDiagnosisChars.
// Thread-safety: pure function.
#pragma once

#include <string>

#include "check/kernel_profile.h"

namespace kevo {

// About 75 tokens: enough for the bound, one access problem, occupancy and the stalls.
inline constexpr size_t kMaxDiagnosisChars = 300;

// Empty when there is nothing to say (not profiled, or no figures).
std::string diagnose_profile(const Profile& p);

}  // namespace kevo
