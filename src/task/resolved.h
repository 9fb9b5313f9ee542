// A task's config resolved (Task::resolve): every tensor's shape, element count and bytes, the dim
// values in the ABI's order, the flops/bytes model, the workspace and the output tolerance, each
// evaluated once with checked arithmetic, so no caller loops over shape expressions itself.
// Thread-safety: a value; it points into the Task and Config it was made from, which must outlive
// it unchanged.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "task/task.h"

namespace kevo {

struct ResolvedTensor {
  const TensorSpec* spec = nullptr;
  std::vector<int64_t> shape;
  int64_t numel = 0;    // the product of `shape`
  uint64_t nbytes = 0;  // numel * the dtype's size

  const std::string& name() const { return spec->name; }
  DType dtype() const { return spec->dtype; }
};

struct ResolvedConfig {
  const Config* config = nullptr;
  std::vector<ResolvedTensor> inputs, outputs;  // in the task's (the ABI's) order
  std::vector<int64_t> dims;                    // values of Task::dims, in that order
  // The task's model of one call: nullopt where the task declares none (an empty expression, as a
  // Task built in code may have; every task.toml declares both, positive on every config).
  std::optional<double> flops, bytes;
  uint64_t workspace_bytes = 0;
  uint64_t input_bytes = 0, output_bytes = 0;  // sums of nbytes; their sum fits too (checked)
  Tolerance tolerance;                         // for every output: Task::precision()'s

  // One copy of the config's data (what it takes on a device, without the workspace).
  uint64_t data_bytes() const { return input_bytes + output_bytes; }
  // Elements of all inputs (no larger than input_bytes, so it fits).
  uint64_t input_numel() const;
  // The input or output called `name`; nullptr when there is none.
  const ResolvedTensor* find(std::string_view name) const;
};

}  // namespace kevo
