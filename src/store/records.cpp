#include "store/records.h"

namespace kevo::store {

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
