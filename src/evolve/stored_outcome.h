// A verdict's outcome as the run database records it (store/records.h CandidateOutcome). The store
// sits below check and cannot name check's Outcome, so the conversion lives here, on the layer
// that makes rows from verdicts. Thread-safety: pure functions.
#pragma once

#include "check/verdict.h"
#include "store/records.h"

namespace kevo {

// The stored outcome of a verdict: the one of the same name.
store::CandidateOutcome stored_outcome(Outcome o);

}  // namespace kevo
