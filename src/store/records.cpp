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

}  // namespace kevo::store
