// Runtime guards inside kevo-runner. The runner exports its own definitions of a few CUDA runtime
// entry points; a candidate .so (linked against the shared cudart) binds to them first, so every
// kernel launch, stream creation and allocation it makes passes through here. Stream misuse is
// recorded as a violation while a candidate call is "armed".
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "run/protocol.h"

namespace kevo::guard {

// What the runner replies with (kind: foreign_stream, stream_created, alloc_limit, ...).
using Violation = proto::Violation;

// Arms the guards for one candidate call made on `stream`.
void arm(cudaStream_t stream, size_t alloc_limit_bytes);
void disarm();
// From now on candidate code may run (called just before its library is loaded): host callbacks
// (cudaLaunchHostFunc, cudaStreamAddCallback, graph host nodes) are refused, and so are driver
// entry points beyond a kernel's needs (cudaGetDriverEntryPoint), each recorded as a violation.
void seal();
// Violations recorded since the last take (also those recorded while disarmed, e.g. by a thread the
// candidate left behind).
std::vector<Violation> take();
// The runner's own launches (input draws, comparisons) inside this scope, on this thread, are not
// the candidate's: not recorded. Thread-local, so a thread a candidate left behind is still seen.
struct Trusted {
  Trusted();
  ~Trusted();
  Trusted(const Trusted&) = delete;
  Trusted& operator=(const Trusted&) = delete;
};
size_t allocated_bytes();

}  // namespace kevo::guard
