// The LLM verifier: before a candidate is compiled, a configurable model reviews it
// against a fixed checklist (compile, numerics, memory, hacks) and answers pass or fail with
// reasons. It is never the gate: the checker judges every candidate as if there were no verifier,
// and the answer is recorded beside the checker's verdict (a "verifier" event of the run) so that
// its confusion matrix against the checker (results/verifier_matrix.h) shows whether it earns its cost.
// Thread-safety: run_verifier may be called from several proposal threads (the client is).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "evolve/task_context.h"
#include "llm/cancel.h"
#include "llm/client.h"
#include "util/result.h"

namespace kevo::evolve {

// The reasons a model gives are kept to this many characters (a page shows them).
inline constexpr size_t kMaxVerifierReasonChars = 600;

struct VerifierAnswer {
  bool answered = false;   // the call returned an answer
  bool parsed = false;     // it held a VERDICT line
  bool pass = false;       // VERDICT: PASS
  std::string reasons;     // bounded, control characters removed
  std::string model, error;
  int64_t input_tokens = 0, output_tokens = 0;
  double cost_usd = 0, latency_s = 0;
  bool from_cache = false;

  nlohmann::json to_json(int64_t candidate) const;  // the "verifier" event's data
};

// "VERDICT: PASS" / "VERDICT: FAIL" (any case, the last such line wins), then "REASONS: ...".
VerifierAnswer parse_verifier_answer(std::string_view text);

// One review of `source` for the task; a failed call is an answer with `error` set.
VerifierAnswer run_verifier(llm::LlmClient& client, const TaskContext& ctx, const std::string& source,
                            int64_t job_no, const llm::CancelToken& cancel);

}  // namespace kevo::evolve
