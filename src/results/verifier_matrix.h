// How the LLM verifier (evolve/llm_verifier.h) did against the checker over a run: a confusion matrix
// where "positive" is the verifier answering FAIL and the truth is the checker's verdict (pass, or
// a failure: compile_error, incorrect, unsafe, timeout, crash). Precision: of the kernels it
// failed, the share the checker failed too (a false positive is a correct kernel it would have
// thrown away); recall: of the kernels the checker failed, the share it caught. Candidates the
// checker reached no verdict on (infra_error, duplicates) and answers without a VERDICT line are
// counted apart. Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/records.h"

namespace kevo::results {

// The run event kind the engine writes for each verifier answer (evolve/llm_verifier.h
// VerifierAnswer::to_json gives its data).
inline constexpr const char* kVerifierEvent = "verifier";

enum class CheckerTruth { kPass, kFail, kNone };
CheckerTruth checker_truth(store::CandidateOutcome outcome);

struct VerifierMatrix {
  std::string models;  // the verifier models seen, comma-separated
  int64_t tp = 0, fp = 0, tn = 0, fn = 0;
  int64_t unanswered = 0;  // the call failed or the answer held no VERDICT line
  int64_t no_verdict = 0;  // the checker reached no verdict (infra_error, duplicate, ...)
  int64_t calls = 0, input_tokens = 0, output_tokens = 0;
  double cost_usd = 0;

  int64_t judged() const { return tp + fp + tn + fn; }
  std::optional<double> precision() const;  // tp / (tp + fp); none without a FAIL
  std::optional<double> recall() const;     // tp / (tp + fn); none without a checker failure
  nlohmann::json to_json() const;
  std::string to_text() const;  // a few lines for `kevo show`; empty when the verifier never ran
};

// The matrix of a run from its events (kind kVerifierEvent, each naming its candidate) and its
// candidates. Events that name no stored candidate count as no_verdict.
VerifierMatrix verifier_matrix(const std::vector<store::EventRow>& events,
                               const std::vector<store::CandidateRow>& candidates);

}  // namespace kevo::results
