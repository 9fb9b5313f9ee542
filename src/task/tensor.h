// Host-side tensors (contiguous, row-major) and the generation of task inputs from their
// declared distributions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "task/draw.h"
#include "task/resolved.h"
#include "task/task.h"

namespace kevo {

struct HostTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t numel() const {
    int64_t n = 1;
    for (auto s : shape) n *= s;
    return n;
  }
  double at(size_t i) const { return load_as_double(bytes.data(), dtype, i); }
};

HostTensor make_tensor(const std::string& name, DType dtype, std::vector<int64_t> shape);

// Draws a tensor from `init`. Deterministic in (seed, name, index) and independent of thread count;
// `wide` selects the widened distribution (docs/TASK_FORMAT.md).
Result<HostTensor> generate_input(const TensorSpec& spec, const std::vector<int64_t>& shape,
                                  const DimValues& dims, uint64_t seed, bool wide);

// The formula's parameters for one tensor and draw (draw.h): what the host generator uses, and
// what the checker sends kevo-runner so it can fill the buffer on the GPU itself.
Result<DrawSpec> draw_spec(const TensorSpec& spec, const DimValues& dims, uint64_t seed, bool wide);

// All inputs of a task for one config and seed.
Result<std::vector<HostTensor>> generate_inputs(const ResolvedConfig& r, uint64_t seed, bool wide);
Result<std::vector<HostTensor>> generate_inputs(const Task& task, const Config& c, uint64_t seed,
                                                bool wide);

// Runs fn(begin, end) over [0, n) split across hardware threads.
void parallel_ranges(int64_t n, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace kevo
