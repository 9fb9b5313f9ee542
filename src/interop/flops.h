// FLOPs of an imported task as an expression of its dims (docs/INTEROP.md, "FLOPs"). The bridge
// counts the reference's ATen ops on the meta device (python/kevo_bridge/flops.py): each op that
// computes is a record coef * product(factors), its factors shape entries. Counted at the original
// sizes and at one probe per size, every factor is fitted as an expression of the sizes
// (shape_fit.h), the records are summed into one expression, and that expression is checked
// against the counter's totals at two other configs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "interop/shape_fit.h"
#include "torch/bridge.h"
#include "util/result.h"

namespace kevo::interop {

struct FlopRecord {
  std::string op, kind;  // ATen op; matmul, conv, attention, softmax, norm, reduction, pool, elementwise
  int64_t coef = 1;
  std::vector<int64_t> factors;
};

struct FlopCount {
  std::vector<FlopRecord> records;
  double total = 0;
  std::vector<std::string> unknown;  // ops counted as elementwise without being known to be
};

// The `count_flops` request on the reference last loaded (a shapes-only load is enough).
Result<FlopCount> count_flops(torch::TorchBridge& b);
Result<FlopCount> flop_count_from(const torch::ojson& reply);

struct FlopSample {
  const Dims* dims;
  const FlopCount* count;
};

struct DerivedFlops {
  std::string expr;
  std::vector<std::string> checked_at;  // configs whose counted total the expression equals
};

// base: the count at the original sizes; probes: per size, (delta, count with that size moved);
// configs: other configs with their counts (named), used to check every factor and the total.
Result<DerivedFlops> derive_flops(const FlopCount& base, const Dims& base_dims,
                                  const std::map<std::string, std::pair<int64_t, FlopCount>>& probes,
                                  const std::vector<std::pair<std::string, FlopSample>>& configs,
                                  const std::vector<std::string>& order);

}  // namespace kevo::interop
