#include "store/records.h"

namespace kevo::store {

namespace {
constexpr CandidateOutcome kCandidateOutcomes[] = {
    CandidateOutcome::kPass,    CandidateOutcome::kCompileError, CandidateOutcome::kIncorrect,
    CandidateOutcome::kUnsafe,  CandidateOutcome::kTimeout,      CandidateOutcome::kCrash,
    CandidateOutcome::kInfraError, CandidateOutcome::kInvalidAnswer, CandidateOutcome::kDuplicate};
}  // namespace

const char* to_string(CandidateOutcome o) {
  switch (o) {
    case CandidateOutcome::kUnknown: return "unknown";
    case CandidateOutcome::kPass: return "pass";
    case CandidateOutcome::kCompileError: return "compile_error";
    case CandidateOutcome::kIncorrect: return "incorrect";
    case CandidateOutcome::kUnsafe: return "unsafe";
    case CandidateOutcome::kTimeout: return "timeout";
    case CandidateOutcome::kCrash: return "crash";
    case CandidateOutcome::kInfraError: return "infra_error";
    case CandidateOutcome::kInvalidAnswer: return "invalid_answer";
    case CandidateOutcome::kDuplicate: return "duplicate";
  }
  return "unknown";
}

std::optional<CandidateOutcome> parse_candidate_outcome(std::string_view text) {
  for (CandidateOutcome o : kCandidateOutcomes)
    if (text == to_string(o)) return o;
  return std::nullopt;
}

CandidateOutcome candidate_outcome_or_unknown(std::string_view text) {
  return parse_candidate_outcome(text).value_or(CandidateOutcome::kUnknown);
}

const char* to_string(RunStatus s) {
  switch (s) {
    case RunStatus::kRunning: return "running";
    case RunStatus::kFinished: return "finished";
    case RunStatus::kInterrupted: return "interrupted";
    case RunStatus::kFailed: return "failed";
  }
  return "?";
}

RunStatus parse_run_status(const std::string& s) {
  if (s == "finished") return RunStatus::kFinished;
  if (s == "interrupted") return RunStatus::kInterrupted;
  if (s == "failed") return RunStatus::kFailed;
  return RunStatus::kRunning;
}

const char* to_string(JobState s) {
  switch (s) {
    case JobState::kQueued: return "queued";
    case JobState::kClaimed: return "claimed";
    case JobState::kDone: return "done";
    case JobState::kFailed: return "failed";
  }
  return "?";
}

JobState parse_job_state(const std::string& s) {
  if (s == "claimed") return JobState::kClaimed;
  if (s == "done") return JobState::kDone;
  if (s == "failed") return JobState::kFailed;
  return JobState::kQueued;
}

}  // namespace kevo::store
