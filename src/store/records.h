// The rows of the run database. Plain data: the store knows nothing about verdicts or prompts,
// it keeps their text (JSON where structured) so that any later kevo can read an old run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace kevo::store {

enum class RunStatus { kRunning, kFinished, kInterrupted, kFailed };
const char* to_string(RunStatus s);  // "running", "finished", "interrupted", "failed"
// The stored text back to the enum; nullopt for text this build does not know.
std::optional<RunStatus> parse_run_status(std::string_view text);

struct RunRow {
  int64_t id = 0;
  double created_at = 0, updated_at = 0;  // unix seconds
  std::string task;         // the task's name
  std::string task_dir;     // where it was loaded from (resume reloads it)
  std::string strategy;     // preset name
  std::string config_json;  // the full strategy and budgets, so --resume needs no flags
  RunStatus status = RunStatus::kRunning;
  std::string stop_reason;  // "budget_candidates", "stagnation", "interrupted", ...
  int64_t best_candidate = 0;  // 0: none yet
  double best_speedup = 0;
  std::string baseline_json;  // the baseline's verdict summary (time, device, arch)
  std::string final_json;     // the winner's held-out re-verification
  std::string note;           // e.g. "offline tuning: no LLM configured"
};

// What became of a candidate, as the run database records it: the checker's verdict outcomes (the
// names of check/verdict.h's Outcome) and the two the engine records without evaluating. It is the
// store's own enum because the store sits below check (docs/ARCHITECTURE.md, Layers) and cannot
// use check's; evolve converts a verdict's outcome where it makes a row (evolve/stored_verdict.h).
// Rows carry the enum; its text, the stable storage and JSON form, appears only where a backend
// reads or writes a row and where JSON is written or read.
enum class CandidateOutcome {
  kUnknown,  // text this build does not know (an older or newer kevo wrote it), or none
  kPass,
  kCompileError,
  kIncorrect,
  kUnsafe,
  kTimeout,
  kCrash,
  kInfraError,
  kInvalidAnswer,  // the model's answer held no code, or its edits did not apply
  kDuplicate,      // the same program as an earlier candidate: not evaluated again
};
// "pass", "compile_error", ..., "invalid_answer", "duplicate"; "unknown" for kUnknown.
const char* to_string(CandidateOutcome o);
// The stored text back to the enum; nullopt for text this build does not know ("unknown" among it).
std::optional<CandidateOutcome> parse_candidate_outcome(std::string_view text);
// The stored text as a row holds it: kUnknown for text this build does not know.
CandidateOutcome candidate_outcome_or_unknown(std::string_view text);
// An outcome becomes JSON only as its text (to_string): without this, nlohmann would quietly write
// the enumerator's number where readers expect the stable text.
void to_json(nlohmann::json& j, CandidateOutcome o) = delete;

struct CandidateRow {
  int64_t id = 0, run_id = 0;
  int seq = 0;  // 1, 2, ... within the run, in the order candidates were completed
  int generation = 0, island = 0, repair_round = 0;
  std::string op;  // init, mutate, crossover, rewrite, diff_edit, repair, tune
  std::vector<int64_t> parents;
  std::string model, prompt, answer;
  std::string name, rationale;  // the model's stated idea (the I3 "insight")
  std::string source;
  CandidateOutcome outcome = CandidateOutcome::kUnknown;
  std::string reason, message;  // the verdict's reason code (check/reason.h's text), readable line
  bool passed() const { return outcome == CandidateOutcome::kPass; }
  std::string compile_json, verdict_json, features_json, flags_json;
  double speedup = 0, speedup_lo = 0, speedup_hi = 0, time_ms = 0;
  bool accepted = false;  // became the run's best when it was completed
  double created_at = 0;
};

struct LlmCallRow {
  int64_t id = 0, run_id = 0, candidate_id = 0;  // candidate_id 0: the call produced none
  std::string model, purpose;                    // purpose: the operator
  int64_t input_tokens = 0, output_tokens = 0;
  double cost_usd = 0, latency_s = 0;
  bool from_cache = false;
  std::string error;  // empty on success
  double created_at = 0;
};

struct EventRow {
  int64_t id = 0, run_id = 0;
  double t = 0;
  std::string kind, data_json;
};

// The evaluation queue (scale-out): the coordinator enqueues what to evaluate, workers on any host
// claim jobs under a lease they renew by heartbeat, and write one result per job.
enum class JobState { kQueued, kClaimed, kDone, kFailed };
const char* to_string(JobState s);  // "queued", "claimed", "done", "failed"
// The stored text back to the enum; nullopt for text this build does not know.
std::optional<JobState> parse_job_state(std::string_view text);

struct JobRow {
  int64_t id = 0, run_id = 0;
  int64_t seq = 0;             // the coordinator's own number for it, unique in the run
  std::string payload_json;    // what to evaluate (the engine's format; the store keeps text)
  JobState state = JobState::kQueued;
  int attempts = 0;            // claims so far (a lease that expired was one)
  std::string worker;          // who holds the lease, or who wrote the result
  double lease_until = 0;      // unix seconds; a claimed job past it may be claimed again
  std::string result_json;     // the result (kDone), or why it was given up (kFailed)
  double created_at = 0, finished_at = 0;
};

struct RunTotals {
  int64_t candidates = 0, valid = 0, llm_calls = 0, tokens = 0;
  double cost_usd = 0;
};

}  // namespace kevo::store
