// Kernel features for MAP-Elites (population.h) and for reports: what resources a candidate uses
// (from the ptxas report) and which techniques it uses (from its source, comments removed).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/ptxas.h"

namespace kevo::evolve {

struct KernelFeatures {
  int registers = 0;       // the most any kernel of the candidate uses
  long shared_bytes = 0;   // the most static shared memory of any kernel
  bool dynamic_shared = false;  // extern __shared__ (size chosen at launch)
  bool tensor_cores = false;    // wmma / mma.sync / wgmma / cute MMA atoms
  bool vector_loads = false;    // float4/int4/half2-style accesses, ld.global.v2/v4
  bool warp_shuffles = false;   // __shfl_*_sync, cooperative_groups reduce
  bool known_resources = false;  // the compile report was available

  // The MAP-Elites cell: register class (<=32, <=64, <=128, more), shared-memory class (none,
  // <=16 KiB, <=48 KiB, more; dynamic counts as at least the second), and the three techniques.
  std::string cell() const;
  nlohmann::json to_json() const;
  static KernelFeatures from_json(const nlohmann::json& j);
};

// Source with // and /* */ comments and string literals blanked, so a comment that mentions
// "float4" or a fake marker does not count as a technique.
std::string strip_comments(std::string_view src);

KernelFeatures extract_features(std::string_view source, const std::vector<KernelResources>& kernels,
                                bool have_report);

}  // namespace kevo::evolve
