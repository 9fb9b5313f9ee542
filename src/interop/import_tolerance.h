// An imported task's tolerance, from its oracle's output scale (docs/INTEROP.md, step 7 of
// `kevo import kernelbench`). The default band, atol x max(1, rms(ref)), is absolute for outputs
// below 1, and a constant can sit inside it: a softmax over 16,384 classes gives ~6e-5 per
// element, under f32's 1e-4, so a kernel writing one value everywhere would pass. The derived atol
// keeps the band at most 1% of the outputs' spread on every config (the bundled softmax task sets
// its own in the same spirit); where the default already does, it stays.
#pragma once

#include <string>
#include <vector>

#include "task/task.h"
#include "torch/bridge.h"
#include "util/result.h"

namespace kevo::interop {

struct DerivedTolerance {
  std::string toml;                // "[tolerance]\nf32 = { atol = 7e-07, rtol = 0.0001 }\n"; "": the default holds
  std::vector<std::string> notes;  // what was derived from which config; the configs not run here
};

// Whether the import runs a config's oracle on the CPU: inputs and outputs within 64 MiB and at
// most 1e10 flops, so a level of KernelBench imports in minutes, not hours.
bool cpu_affordable(const Task& task, const Config& c);

// Runs the task's PyTorch reference on the CPU once on every affordable config, smallest first and
// none after 20 s (inputs drawn from `seed`), and lowers the precision dtype's atol to the largest that keeps atol x max(1, rms) within
// 1% of every output's standard deviation, when the default does not.
Result<DerivedTolerance> derive_tolerance(torch::TorchBridge& b, const Task& task, uint64_t seed);

}  // namespace kevo::interop
