// Every prompt kevo sends is built here, from templates in prompts.cpp, so a test (and a
// person reading docs/EVOLVE.md) can see exactly what each strategy and operator sends.
#pragma once

#include <string>
#include <vector>

#include "evolve/strategy.h"
#include "evolve/task_context.h"
#include "store/records.h"

namespace kevo::evolve {

struct SolutionView {  // I2: an earlier solution
  int64_t id = 0;
  std::string name, rationale, source;
  double speedup = 0, time_ms = 0;
  std::string diagnosis;  // its profile read by rule (check/profile_diagnosis.h); empty: none
};

struct InsightView {  // I3: what an earlier candidate tried and what came of it
  int64_t id = 0;
  std::string name, rationale;
  store::CandidateOutcome outcome = store::CandidateOutcome::kUnknown;
  double speedup = 0;
};

// An example from the kernel archive (info "archive"): another run's kernel with where it came
// from, the GPU and config it was measured on, and its effect.
struct ArchiveExampleView {
  int64_t id = 0;
  std::string origin, task, op_kind, bound, dtypes, gpu, config, name, rationale, diff, source;
  double speedup = 0, sol_before = 0, sol_after = 0;
  std::string kind;  // "winner" (held-out verified) or "improvement"
};

struct PromptInput {
  Op op = Op::kInit;
  const TaskContext* ctx = nullptr;
  std::vector<SolutionView> parents;   // the operator's inputs (mutate/diff: 1, crossover: 2)
  std::vector<InsightView> insights;   // used only when the strategy has I3
  std::string failed_source;           // repair: the candidate that failed
  std::string feedback;                // repair: trimmed diagnostic or first mismatch
  std::vector<ArchiveExampleView> archive;  // used only when the strategy's info has "archive"
};

struct Prompt {
  std::string system, user;
};

Prompt build_prompt(const StrategyConfig& s, const PromptInput& in);

// I1 alone, as every strategy with task information shows it (what an agent's `task` tool answers).
std::string task_context_text(const TaskContext& ctx);

// The LLM verifier (llm_verifier.h): the task's contract and a candidate, reviewed against a fixed
// checklist (docs/EVOLVE.md lists it); the answer is "VERDICT: PASS|FAIL" and "REASONS: ...".
Prompt build_verifier_prompt(const TaskContext& ctx, const std::string& source);

// `kevo translate` (translate.h): a first kernel in the kevo ABI from the task's PyTorch
// reference. Round 1 sends the task context (no baseline: there is none) and the module; later
// rounds add the kernel that failed and what went wrong.
struct TranslatePromptInput {
  const TaskContext* ctx = nullptr;
  std::string torch_file;    // the reference's file name, e.g. "reference.py"
  std::string torch_source;  // its contents
  std::string failed_source; // rounds > 1: the previous kernel
  std::string feedback;      // rounds > 1: trimmed diagnostic, first mismatch, or why it was rejected
  int round = 1, rounds = 1;
};

Prompt build_translate_prompt(const TranslatePromptInput& in);

}  // namespace kevo::evolve
