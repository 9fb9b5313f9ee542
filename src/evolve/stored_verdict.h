// A verdict as the run database records it: its outcome (store/records.h CandidateOutcome), the
// candidate row made from it, and a baseline's record (results/run_baseline.h). The store sits below check and cannot name check's types, so the
// conversion lives here, on the layer that makes rows from verdicts. Thread-safety: pure functions.
#pragma once

#include <string>

#include "check/verdict.h"
#include "results/run_baseline.h"
#include "store/records.h"

namespace kevo {

// The stored outcome of a verdict: the one of the same name.
store::CandidateOutcome stored_outcome(Outcome o);

// The row of a candidate with this source and verdict: outcome, reason, message, the compile
// record without its full log, the verdict's JSON, the kernel's features and the flags. Timing
// figures are the caller's to add (a translation's verdict has no baseline to be faster than).
store::CandidateRow candidate_row(const Verdict& v, const std::string& source);

// The baseline's verdict as a run stores it (RunRow::baseline_json, and the records of
// evolve/baseline_record.h): its outcome and the figures the run needs; `fake`: judged by the
// marker evaluator. Stored as its to_json().
results::RunBaseline stored_baseline(const Verdict& v, bool fake);
// What the task context reads of a stored baseline (device, architecture, timing, profile), as a
// verdict (evolve/task_context.h make_task_context). A damaged profile is left out: advice only.
Verdict baseline_verdict(const results::RunBaseline& b);

}  // namespace kevo
