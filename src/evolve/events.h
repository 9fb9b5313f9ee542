// Progress a person can watch and a machine can read: the status line's figures and an event
// stream (`--events jsonl FILE`: one JSON object per line, flushed as it happens).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace kevo::evolve {

struct Progress {
  int64_t run_id = 0;
  int done = 0, budget = 0, valid = 0, in_flight = 0;
  double best_speedup = 0;
  int64_t tokens = 0;
  double cost_usd = 0;
  // The evaluators' occupancy: busy evaluation-seconds over wall time x slots. Not the GPU's own
  // utilization (NVML), which counts only the time kernels run.
  double gpu_busy = 0;
  // NVML's GPU utilization over the run so far (the share of time a kernel ran on the GPUs that
  // evaluate here, util/nvml.h); nullopt: not known (no NVML, no local GPU), shown as "n/a".
  std::optional<double> gpu_util;
  double elapsed_s = 0;
  // Where the run is: checking its baseline, searching, or re-verifying on held-out shapes; the
  // detail names what (e.g. "candidate #12, 1 of up to 3").
  enum class Phase { kBaseline, kSearch, kHeldOut } phase = Phase::kSearch;
  std::string detail;
  double eta_s = -1;  // the search's time left at its pace so far (-1: not known yet)
  // "run 3  12/45 done  valid 58%  best 1.84x  tokens 210k  $0.42  evaluators busy 71%  GPU util 19% (NVML)
  //  2 in flight  3m10s  ETA 4m05s" ("GPU util n/a" when not known); in the other phases
  //  "run 3  baseline: checking against its reference  0m12s".
  std::string status_line() const;
};

// NVML's figure as shown: "19% (NVML)", or "n/a" where it is not known.
std::string gpu_util_text(const std::optional<double>& fraction);

class EventSink {
 public:
  virtual ~EventSink() = default;
  // kind: run_started, candidate, new_best, migration, llm_error, stopped, verified, finished
  virtual void emit(int64_t run_id, const std::string& kind, const nlohmann::json& data) = 0;
};

class JsonlEventSink final : public EventSink {
 public:
  static Result<std::unique_ptr<JsonlEventSink>> open(const std::filesystem::path& path);
  ~JsonlEventSink() override;
  void emit(int64_t run_id, const std::string& kind, const nlohmann::json& data) override;

 private:
  explicit JsonlEventSink(std::FILE* f) : f_(f) {}
  std::FILE* f_;
  std::mutex mu_;
};

}  // namespace kevo::evolve
