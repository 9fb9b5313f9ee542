// The few figures the read side takes from a candidate's large stored columns (its compile record
// and its verdict), read once per candidate so a summary of thousands of candidates keeps them and
// drops the texts (serve/run_cache.h). Thread-safety: pure functions, plain data.
#pragma once

#include <string>

#include "store/records.h"

namespace kevo::results {

struct CandidateFigures {
  bool compiled = false;    // its compile record says ok (an answer without code did not compile)
  double sol_fraction = 0;  // speed-of-light floor / its time; 0: none
  std::string device;       // the GPU's name from its verdict ("" when not evaluated)
  std::string device_uuid;
  double eval_s = 0;        // the verdict's seconds (its evaluation's wall time)
};

CandidateFigures figures_of(const store::CandidateRow& c);

// Whether a candidate compiled: its compile record (CandidateRow::compile_json) says ok.
bool compiled(const store::CandidateRow& c);

}  // namespace kevo::results
