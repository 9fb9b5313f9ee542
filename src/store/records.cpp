#include "store/records.h"

#include "util/enum_text.h"

namespace kevo::store {

namespace {

// Stored in the run database and written in JSON: a value's text never changes.
constexpr EnumText<RunStatus> kRunStatusTexts[] = {
    {RunStatus::kRunning, "running"},
    {RunStatus::kFinished, "finished"},
    {RunStatus::kInterrupted, "interrupted"},
    {RunStatus::kFailed, "failed"},
};

// kUnknown has no row: "unknown" is text this build does not know, like any other.
constexpr EnumText<CandidateOutcome> kCandidateOutcomeTexts[] = {
    {CandidateOutcome::kPass, "pass"},
    {CandidateOutcome::kCompileError, "compile_error"},
    {CandidateOutcome::kIncorrect, "incorrect"},
    {CandidateOutcome::kUnsafe, "unsafe"},
    {CandidateOutcome::kTimeout, "timeout"},
    {CandidateOutcome::kCrash, "crash"},
    {CandidateOutcome::kInfraError, "infra_error"},
    {CandidateOutcome::kInvalidAnswer, "invalid_answer"},
    {CandidateOutcome::kDuplicate, "duplicate"},
};

constexpr EnumText<JobState> kJobStateTexts[] = {
    {JobState::kQueued, "queued"},
    {JobState::kClaimed, "claimed"},
    {JobState::kDone, "done"},
    {JobState::kFailed, "failed"},
};

}  // namespace

const char* to_string(CandidateOutcome o) { return enum_text(kCandidateOutcomeTexts, o, "unknown"); }

std::optional<CandidateOutcome> parse_candidate_outcome(std::string_view text) {
  return enum_parse(kCandidateOutcomeTexts, text);
}

CandidateOutcome candidate_outcome_or_unknown(std::string_view text) {
  return parse_candidate_outcome(text).value_or(CandidateOutcome::kUnknown);
}

const char* to_string(RunStatus s) { return enum_text(kRunStatusTexts, s); }

std::optional<RunStatus> parse_run_status(std::string_view text) { return enum_parse(kRunStatusTexts, text); }

const char* to_string(JobState s) { return enum_text(kJobStateTexts, s); }

std::optional<JobState> parse_job_state(std::string_view text) { return enum_parse(kJobStateTexts, text); }

}  // namespace kevo::store
