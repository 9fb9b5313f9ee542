// The lints of a backward task (Task::backward): it matches the forward task it names, and its
// tolerance covers the rounding error of the longest sum each gradient takes.
#pragma once

#include <vector>

#include "lint/lint.h"
#include "task/task.h"

namespace kevo {

// Two findings for a backward task, none for another:
//   backward_pair        the forward task (next to this one) loads and matches (task/backward.h);
//   reduction_tolerance  on every config (held-out and main included), each gradient's atol is at
//                        least reduction_atol(sums_over): Fail names the gradient, the config, the
//                        number of terms and the atol it needs.
std::vector<LintFinding> lint_backward(const Task& task);

}  // namespace kevo
