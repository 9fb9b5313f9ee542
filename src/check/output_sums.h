// Every timed call's output is checked, not only the last one: trusted kernels in each runner
// summarise it (runner/device_data.h), and the candidate's summaries are compared with the baseline's
// for the same inputs (timed calls with the same numbers draw the same values in both runners).
// The summaries are chosen so that a correct output passes for sure and one computed from other
// inputs (a cache, a skipped call) fails:
//  - the L2 norm: ||got|| and ||want|| differ by at most the L2 norm of the per-element tolerances
//    (triangle inequality), a hard bound;
//  - two sums signed by pseudo-random +-1 weights: for an output within tolerance the difference is
//    a sum of bounded terms with random signs, below kSigmas times that same norm except with
//    probability < 1e-10 (Hoeffding); an output of other inputs differs by ~sqrt(n) times the
//    values' spread, orders of magnitude above it for the tasks' tolerances.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "run/protocol.h"
#include "task/task.h"
#include "task/tensor.h"

namespace kevo {

// Hoeffding: P(|sum| > k * sqrt(sum d_i^2)) <= 2 exp(-k^2 / 2); 7 gives 4.6e-11 per comparison,
// so thousands of timed calls per evaluation never reject a correct kernel by chance.
constexpr double kSumsSigmas = 7.0;

struct SumsCheck {
  bool ok = true;
  std::string why;  // which summary differs, and by how much against what bound
};

// got vs want (the baseline's summary of the same call) under the task's tolerance.
SumsCheck compare_sums(const proto::Sums& got, const proto::Sums& want, Tolerance tol);

// The summary the runner's kernels compute, computed on the host (tests, the fake runner's twin).
proto::Sums sums_of(const HostTensor& t, uint64_t key);

}  // namespace kevo
