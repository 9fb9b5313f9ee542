// `kevo translate TASK`: a first kernel in the kevo ABI, written by a model from the task's
// PyTorch reference (the AI CUDA Engineer's translation stage). Each round the model's kernel is
// compiled and checked by the CandidateEvaluator on the visible configurations (against the
// task's oracle: for oracle = "torch", the PyTorch module through the bridge); a failure sends
// the trimmed compiler diagnostic or the first mismatch back, for up to `rounds` rounds. A kernel
// that passes is re-checked on the held-out configurations (a failure there goes back to the
// model as a generic "fails on other shapes" message: no held-out name or size reaches a prompt),
// then written to TASK/baseline.cu atomically, never over an existing one unless `force`.
//
// The attempts are stored in the run database as a run of strategy "translate": one candidate
// per round, operator "translate", each the parent of the next.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "evolve/candidate_evaluator.h"
#include "llm/cancel.h"
#include "llm/client.h"
#include "store/run_db.h"
#include "task/task.h"
#include "util/result.h"

namespace kevo::evolve {

struct TranslateOptions {
  int rounds = 4;                     // LLM calls at most, the first included
  bool force = false;                 // replace an existing baseline.cu
  EvalOptions eval;                   // seeds, timeouts; the held-out/visible flags are set here
  std::filesystem::path work_dir;     // attempt files; empty: beside the database
};

struct TranslateAttempt {
  int round = 0;                      // 1-based
  int64_t candidate = 0;              // its row in the run database
  store::CandidateOutcome outcome = store::CandidateOutcome::kUnknown;  // kInvalidAnswer: no code came back
  std::string reason;                 // the verdict's (check/reason.h's text)
  std::string feedback;               // what was sent back to the model (empty for the winner)
};

enum class TranslateStatus {
  kTranslated,      // baseline.cu written
  kRoundsExhausted, // every round failed; `message` ends with the last diagnostic
  kLlmFailed,       // a fatal LLM error, a budget, an exhausted replay (after the client's retries)
  kInfraFailed,     // the checker could not run a kernel (no usable GPU, ...): never sent to the model
  kInterrupted,
};

struct TranslateOutcome {
  TranslateStatus status = TranslateStatus::kRoundsExhausted;
  std::string message;                // why it failed (empty when translated)
  int64_t run_id = 0;
  int64_t candidate = 0;              // the kernel written as the baseline (0: none)
  std::filesystem::path baseline;     // TASK/baseline.cu
  std::vector<TranslateAttempt> attempts;
  bool ok() const { return status == TranslateStatus::kTranslated; }
};

// The note shown when translate (or evolve on a task without baseline.cu) has no model.
std::string translate_needs_model_note();

// An error (no run started) when no model is given, the task already has a baseline.cu (without
// `force`), the task has no PyTorch reference, or the database/files fail. Otherwise the outcome
// says whether a baseline was written; the run is recorded either way (status finished/failed).
Result<TranslateOutcome> translate(const Task& task, CandidateEvaluator& evaluator, store::RunDb& db,
                                   llm::LlmClient* llm, const llm::CancelToken& cancel,
                                   const TranslateOptions& opts);

}  // namespace kevo::evolve
