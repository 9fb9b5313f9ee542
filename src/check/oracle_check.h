// `kevo eval TASK --oracle-check`: the task's oracle checked on its own, with no candidate. For
// every config (visible and held-out) the oracle runs twice on the same drawn inputs, on the device
// data plane where it has one (PyTorch with a trusted runner lending the inputs through CUDA IPC,
// as the evaluator does), else on the host path; what can be seen from outside is checked: the
// declared number, sizes and dtypes of the outputs, finite values, not all zeros, and the two runs
// agreeing within the task's tolerance. A failing config (even a dead bridge or runner) is
// recorded with its reason and the next config still runs. Then PyTorch eager and torch.compile
// are timed on the main config as the evaluator's PyTorch phase does.
// Thread-safety: one check, one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/compare.h"
#include "check/oracle.h"
#include "task/task.h"
#include "torch/time_result.h"

namespace kevo {

enum class OracleCheckReason {
  kOk,
  kOracleFailed,      // the oracle itself reported an error (the reference raised, wrong dtype or size)
  kInfraError,        // the machinery around it failed: a runner, the bridge, CUDA IPC, memory
  kShapeMismatch,     // outputs not of the task's number, sizes or dtypes
  kNonFinite,         // NaN or Inf in an output
  kAllZero,           // an output is all zeros (a reference that computes nothing)
  kUnwritten,         // the oracle left elements of a lent output buffer unwritten
  kNondeterministic,  // a second run on the same inputs disagrees beyond the task's tolerance
};
std::string to_string(OracleCheckReason r);

struct OracleConfigResult {
  std::string config;
  bool held_out = false;
  OracleCheckReason reason = OracleCheckReason::kOk;
  std::string detail;           // empty when ok
  double oracle_seconds = 0;    // both oracle runs
  double max_abs_diff = 0;      // between the two runs
  bool ok() const { return reason == OracleCheckReason::kOk; }
};

struct OracleCheckReport {
  std::string task;
  std::string oracle;  // "torch", "baseline" or "reference"
  bool device_plane = false;
  std::string host_path_why;  // when !device_plane: why the host path was taken
  uint64_t seed = 0;
  std::vector<OracleConfigResult> configs;
  std::optional<torch::TimeResult> pytorch;
  std::string pytorch_note;  // why PyTorch was not timed
  double seconds = 0;

  // 0 every config ok, 11 an oracle's outputs failed a check, 20 an infrastructure error (kevo
  // eval's codes).
  int exit_code() const;
  nlohmann::json to_json() const;
  std::string to_text() const;
};

struct OracleCheckOptions {
  bool device_data = true;           // the device data plane when the oracle has one
  bool torch_time = true;            // time PyTorch eager and torch.compile on the main config
  // The bridge's device: "cuda", "cpu" (tests); empty: "cuda" on the device data plane, else
  // wherever the bridge's torch can run.
  std::string torch_device;
  bool visible_only = false, held_out_only = false;
  std::optional<uint64_t> seed;
  std::chrono::milliseconds call_timeout{60000};  // one oracle run (a cold torch load included)
  double time_budget_s = 4.0;                     // per PyTorch timing mode
  std::string gpu;                                // CUDA_VISIBLE_DEVICES for the runners
};

OracleCheckReport check_oracle(const Task& task, const OracleCheckOptions& opts);

// The pieces, for tests with a fake oracle.
// What two runs' outputs say about one config (host data).
OracleConfigResult judge_oracle_outputs(const Task& task, const Config& c, const std::vector<Expected>& first,
                                        const std::vector<Expected>& second, const Tolerance& tol);
// The host path over the selected configs, one draw each: an oracle error on one config is recorded
// and the others still run; after an infrastructure error (the oracle's bridge died, or `make`
// failed) the next config gets a fresh oracle from `make`.
using OracleFactory = std::function<Result<std::unique_ptr<Oracle>>()>;
std::vector<OracleConfigResult> check_configs_on_host(const Task& task, const OracleCheckOptions& opts, uint64_t seed,
                                                      const OracleFactory& make);

}  // namespace kevo
