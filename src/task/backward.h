// Backward tasks (Task::backward, docs/TASK_FORMAT.md): how one is checked against the forward task
// it names, and the tolerance a gradient needs for the number of terms it sums.
#pragma once

#include <filesystem>

#include "task/task.h"
#include "util/result.h"

namespace kevo {

// The forward task's folder: next to the backward task's (tasks/linear for tasks/linear_backward).
std::filesystem::path forward_dir(const Task& backward);

// Checks a backward task against its forward, on every config of the backward task: the forward's
// dims are all declared; each saved input is a forward input of the same name, dtype, shape and
// distribution (so it draws the same values for the same seed); each saved output and incoming
// gradient has the dtype and shape of the forward output it names; each gradient the dtype and shape of the forward
// input it is the gradient of. Errors name both task files and the tensor.
Status check_backward_pair(const Task& backward, const Task& forward);

// An f32 sum of n terms is off by about 2^-24 * sqrt(n) of its typical magnitude (rounding errors
// add up like a random walk); kernels accumulate in f32 whatever their output's dtype.
inline constexpr double kF32Roundoff = 0x1p-24;
// The largest of many elements' errors reaches several times the typical one: the atol a task
// states for a gradient must be at least this many times the typical error.
inline constexpr double kReductionMargin = 8;
// The smallest atol (relative to the output's rms, check/compare.h) a gradient summing `terms`
// terms may be checked with.
double reduction_atol(double terms);

}  // namespace kevo
