// A candidate's kernels as Nsight Compute (ncu) measured them on the main config, after the
// verdict and never during timing: throughput against the device's peaks, occupancy and what
// limits it, the top warp-stall reasons, shared-memory bank conflicts and global-access
// coalescing, registers and shared memory. The figures come from a process that loaded the
// candidate, so they are advice for the next prompt and for a reader, never part of a verdict, a
// speedup or selection; the text is bounded (kernel names cut and reduced to safe characters, at
// most kMaxProfiledKernels kernels). Thread-safety: pure functions and plain data.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace kevo {

// kProfiled: figures below. Otherwise `note` says why there are none: ncu is not installed, the
// user may not read the GPU's performance counters (ERR_NVGPUCTRPERM), or ncu ran and failed
// (a timeout, no kernel launched, output kevo cannot read).
enum class ProfileStatus { kProfiled, kNoNcu, kNoPermission, kFailed };
const char* to_string(ProfileStatus s);
std::optional<ProfileStatus> parse_profile_status(std::string_view s);

// A profile keeps this many kernels (in launch order); a call that launches more is counted.
inline constexpr int kMaxProfiledKernels = 8;
// Kernel names are the candidate's text: cut to this many characters of [A-Za-z0-9_:<>,*&() ].
inline constexpr size_t kMaxKernelNameChars = 80;

struct StallReason {
  std::string reason;  // ncu's stall name without prefix: "long_scoreboard", "barrier", ...
  double cycles_per_issue = 0;  // warps stalled for it per issued instruction
};

// One kernel launch. A figure ncu did not report stays negative (unknown), never 0.
struct KernelProfile {
  std::string name;
  double duration_us = -1;
  int64_t block_size = -1, grid_size = -1;
  int64_t registers_per_thread = -1, shared_static_bytes = -1, shared_dynamic_bytes = -1;
  double dram_pct = -1, l2_pct = -1, sm_pct = -1, tensor_pct = -1;  // % of peak
  double achieved_occupancy_pct = -1, theoretical_occupancy_pct = -1;
  // The resource allowing the fewest blocks per SM: "registers", "shared_memory", "warps",
  // "blocks"; empty when unknown.
  std::string occupancy_limiter;
  std::vector<StallReason> top_stalls;  // at most 3, largest first
  double shared_bank_conflicts = -1, shared_wavefronts = -1;
  double load_sectors_per_request = -1, store_sectors_per_request = -1;
  double load_bytes_per_sector = -1;  // of 32: how much of each fetched sector a load uses

  nlohmann::json to_json() const;
};

struct Profile {
  ProfileStatus status = ProfileStatus::kFailed;
  std::string note;    // one line; empty when profiled
  std::string config;  // the config profiled (the task's main config)
  std::vector<KernelProfile> kernels;
  int kernels_dropped = 0;  // launches beyond kMaxProfiledKernels

  nlohmann::json to_json() const;
  std::string to_text() const;  // a few lines for `kevo show` and `kevo eval`
};

// The inverse of Profile::to_json; an error names the field.
Result<Profile> profile_from_json(const nlohmann::json& j);

// The metrics kevo asks ncu for (one list, so the GPU check can verify each with
// `ncu --query-metrics`).
const std::vector<std::string>& ncu_metrics();
// ncu's arguments before the profiled program: CSV with base units, kevo's metrics, at most
// kMaxProfiledKernels + 1 launches (one more shows that there were more), the report to `log_file`.
std::vector<std::string> ncu_arguments(const std::string& log_file);

// Reads ncu's CSV report (the details page, one row per metric, or `--page raw`, one row per
// kernel with a units row). Without a CSV header it returns kNoPermission or kFailed with the
// reason from ncu's ==ERROR== lines.
Profile read_ncu_report(std::string_view text);

}  // namespace kevo
