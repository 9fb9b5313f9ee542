// Sanity limits on a task's sizes, checked when task.toml is parsed, and the byte counts the
// checker needs to compare a config with a device's free memory. A config past these limits is a
// mistake in the file (an extra zero, a wrong expression), not a workload kevo can check: the
// checker holds every tensor on the host as well as on the device.
#pragma once

#include <cstdint>
#include <vector>

#include "task/resolved.h"
#include "task/task.h"
#include "util/result.h"

namespace kevo {

// 2^34 elements (17 G): more than any GPU kevo targets holds as f32 along with its reference.
inline constexpr uint64_t kMaxTensorElements = uint64_t{1} << 34;
// 128 GiB of inputs plus outputs per config (the largest GPU kevo targets has 141 GiB).
inline constexpr uint64_t kMaxConfigBytes = uint64_t{1} << 37;

// The element count of a shape; fails on overflow.
Result<uint64_t> shape_elements(const std::vector<int64_t>& shape);

// Bytes of all inputs and outputs of `task` in config `c` (what one copy of the data takes on a
// device; the workspace is ResolvedConfig::workspace_bytes). Errors name the config and tensor.
Result<uint64_t> config_bytes(const Task& task, const Config& c);

// Every tensor within kMaxTensorElements and the config within kMaxConfigBytes; the error names
// the config, the tensor and the numbers.
Status check_config_limits(const Task& task, const ResolvedConfig& r);
Status check_config_limits(const Task& task, const Config& c);

}  // namespace kevo
