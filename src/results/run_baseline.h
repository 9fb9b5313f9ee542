// A run's baseline as the run database stores it (RunRow::baseline_json) and as a verified
// baseline's record keeps it (evolve/baseline_record.h): the baseline's outcome and the few figures
// a run needs from its verdict (time, GPU, architecture, speed-of-light floor, profile), which
// configs were checked against what, whether it was reused, and the PyTorch times `kevo bench`
// adds later. Written by the engine from the baseline's verdict (evolve/stored_verdict.h) and read
// here only; docs/VERDICT.md gives the format. A row of an older kevo reads with its missing fields
// at their defaults (no outcome: it passed; torch_time_ms: PyTorch eager).
// Thread-safety: plain data.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/verdict_view.h"
#include "store/records.h"

namespace kevo::results {

struct RunBaseline {
  // A verified record from an earlier run was used instead of checking the baseline again.
  struct Reuse {
    double verified_at = 0;  // unix seconds
    nlohmann::json key;      // evolve/baseline_record.h BaselineKey::to_json
  };

  bool recorded = false;  // the row held a baseline object (false: none yet, or damaged text)
  store::CandidateOutcome outcome = store::CandidateOutcome::kPass;
  std::string reason, message;
  bool fake_evaluator = false;  // judged by the marker evaluator: proves nothing
  std::string gpu, arch;        // "" when not known
  std::optional<double> time_ms;  // the baseline's median on the main config; absent: not timed
  double sol_floor_ms = 0;        // 0: no floor
  std::string sol_bound;          // "memory" or "compute" with a floor
  nlohmann::json profile;         // check/kernel_profile.h Profile::to_json; null when not profiled
  std::vector<std::pair<std::string, Against>> configs;  // by name, in name order
  std::optional<Reuse> reused;
  nlohmann::json pytorch;               // the bench's PyTorch record, as stored; null: none
  std::optional<double> torch_time_ms;  // older rows: PyTorch eager's time

  bool passed() const { return outcome == store::CandidateOutcome::kPass; }
  // PyTorch's times on the timed config (eager from torch_time_ms in an older row).
  PytorchTimes pytorch_times() const;
  nlohmann::json to_json() const;  // the stored form; from_json(to_json()) gives this back
};

RunBaseline baseline_from_json(const nlohmann::json& j);
RunBaseline baseline_from_text(const std::string& stored_text);

}  // namespace kevo::results
