// The translate stage as a command runs it and says what happened: `kevo translate`, and `kevo
// evolve` on a task that has no baseline.cu yet.
#pragma once

#include "evolve/candidate_evaluator.h"
#include "evolve/translate.h"
#include "llm/cancel.h"
#include "llm/client.h"
#include "store/run_db.h"
#include "task/task.h"

namespace kevo::cli {

// Runs evolve::translate and prints each round and the outcome, as `prog`. Returns 0 when
// baseline.cu was written, else the exit code: 2 bad arguments (such as no model), 1 every round
// failed (3 with `failed_rounds_fatal`), 3 the LLM failed or the checker could not run a kernel
// (no usable GPU), 130 interrupted.
int translate_and_report(const char* prog, const Task& task, evolve::CandidateEvaluator& evaluator, store::RunDb& db,
                         llm::LlmClient* llm, const llm::CancelToken& cancel, const evolve::TranslateOptions& o,
                         bool failed_rounds_fatal);

}  // namespace kevo::cli
