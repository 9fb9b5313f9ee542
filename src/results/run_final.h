// A run's held-out re-verification as the run database stores it (RunRow::final_json, written by
// the engine when a run finishes): the winner, its re-timed speedup, and every candidate tried on
// the held-out configs. Absent until the run finishes; a missing or mistyped field reads as unset.
// Thread-safety: plain data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/records.h"

namespace kevo::results {

struct VerifyAttempt {
  int64_t candidate = 0;
  store::CandidateOutcome outcome = store::CandidateOutcome::kUnknown;
  std::string reason, message;
  double speedup = 0;
  std::optional<std::pair<double, double>> speedup_ci;
};

struct RunFinal {
  bool recorded = false;   // the row held a final record (false: the run has not finished)
  int64_t winner = 0;      // the candidate that passed held-out re-verification; 0: none
  double winner_speedup = 0;  // its re-timed speedup; 0: not re-timed
  bool best_failed_held_out = false;  // the search's best failed on the held-out configs
  bool not_faster = false;            // no verified candidate beat the baseline
  std::vector<VerifyAttempt> attempts;
  nlohmann::json winner_pytorch;  // the winner's PyTorch times (torch/time_result.h), or null
};

RunFinal final_from_json(const nlohmann::json& j);
RunFinal final_from_text(const std::string& stored_text);

}  // namespace kevo::results
