// What `kevo import` learns about a reference by loading it through the bridge (docs/INTEROP.md):
// its tensors at the original sizes (shapes only: meta tensors, nothing materialized), which
// top-level sizes change a tensor shape (the task's dims), every shape entry as an expression of
// them, the configs the module accepts, input statistics sampled at a config small enough to
// materialize, and the FLOPs as an expression of the dims.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "interop/config_search.h"
#include "interop/flops.h"
#include "interop/shape_fit.h"
#include "torch/bridge.h"
#include "util/result.h"

namespace kevo::interop {

struct ProblemShape {
  torch::Description base;  // at the original sizes; tensors carry statistics when sampled
  std::vector<Slot> base_slots;
  std::vector<std::string> sizes;  // the sizes that are dims, file order
  // Sizes that the module accepts only when equal (a loss whose predictions [B, N] broadcast
  // against targets [B] needs N == B): the first is the dim, the others follow it.
  std::map<std::string, std::vector<std::string>> tied;
  Dims base_dims;
  std::map<std::string, std::pair<int64_t, ConfigProbe>> probes;  // size -> (delta, probe)
  std::vector<FoundConfig> configs;                               // main first
  std::vector<std::vector<Axis>> axes;                            // per slot, per entry
  std::vector<std::string> dims;                                  // sizes, then derived dims
  std::string stats_config;                                       // where statistics were sampled
  Dims stats_dims;
  std::optional<DerivedFlops> flops;
  std::vector<std::string> notes;
};

// Bytes the inputs and weights of the main config may take before statistics are sampled at a
// smaller config instead (materializing them is what a shapes-only import avoids).
constexpr double kStatsBytesLimit = 64.0 * 1024 * 1024;
// No config above this is materialized for statistics at all (the defaults are used instead).
constexpr double kStatsBytesCeiling = 1024.0 * 1024 * 1024;

// A configuration the source itself names (robust-kbench's multi_* product): its sizes, by name.
struct GivenConfig {
  std::string name;
  Dims sizes;
};

// `where` names the file in errors. `given` configs become visible configs after main (before
// kevo's own variants) where the module accepts them; one that changes a size kevo keeps constant,
// or that the module rejects, is dropped with a note.
Result<ProblemShape> analyze_problem(torch::TorchBridge& b, const std::filesystem::path& file,
                                     const std::string& where, uint64_t seed,
                                     const std::vector<GivenConfig>& given = {});

// The error text with the bridge's absolute path of `file` replaced by `label`, prefixed by it.
Error relabel(const Error& e, const std::filesystem::path& file, const std::string& label);

}  // namespace kevo::interop
