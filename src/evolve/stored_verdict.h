// A verdict as the run database records it: its outcome (store/records.h CandidateOutcome) and the
// candidate row made from it. The store sits below check and cannot name check's types, so the
// conversion lives here, on the layer that makes rows from verdicts. Thread-safety: pure functions.
#pragma once

#include <string>

#include "check/verdict.h"
#include "store/records.h"

namespace kevo {

// The stored outcome of a verdict: the one of the same name.
store::CandidateOutcome stored_outcome(Outcome o);

// The row of a candidate with this source and verdict: outcome, reason, message, the compile
// record without its full log, the verdict's JSON, the kernel's features and the flags. Timing
// figures are the caller's to add (a translation's verdict has no baseline to be faster than).
store::CandidateRow candidate_row(const Verdict& v, const std::string& source);

}  // namespace kevo
