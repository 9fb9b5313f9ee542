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

// The records with their repeats merged (first appearance order): each distinct record once, its
// repeat count appended as one more factor.
FlopCount merge_repeats(const FlopCount& c);

struct FlopSample {
  const Dims* dims;  // the sizes, and derived dims where known
  const FlopCount* count;
};

struct DerivedFlops {
  std::string expr;
  std::vector<std::string> checked_at;  // configs whose counted total the expression equals
};

struct FlopSamples {
  const FlopCount* base = nullptr;  // at the original sizes
  const Dims* base_dims = nullptr;  // the original sizes
  const Dims* main_dims = nullptr;  // the main config's dims, derived ones included (may be null)
  std::map<std::string, std::pair<int64_t, FlopCount>> probes;  // size -> (delta, count with it moved)
  // Every config of the task but main, named (and any further samples after them); the expression
  // must give each aligned one's total. A factor may be a derived dim only when every entry aligns.
  std::vector<std::pair<std::string, FlopSample>> configs;
  std::vector<std::string> order;    // the sizes, in the order expressions name them
  std::vector<std::string> derived;  // derived dims, measured per config
};

// Every record's factors fitted (flop_factor.h) and summed into one expression, checked against
// the counted totals. When a probe runs other operations than the original sizes (a loop over a
// size), the records are compared with their repeats merged (merge_repeats).
Result<DerivedFlops> derive_flops(const FlopSamples& samples);

}  // namespace kevo::interop
