// Whether a task's tolerance means anything on a config: a kernel that computes nothing and writes
// one constant everywhere must fail the comparison a candidate gets. With the default f32
// tolerance (|out-ref| <= 1e-4 * max(1, rms(ref)) + 1e-4 * |ref|), outputs far below 1 (a softmax
// over 30,000 classes, ~3e-5 each) sit inside the absolute band, and the constant of their mean
// passes every check; a run on such a task converges on the constant. The evaluator refuses
// such a task (tolerance_phase) rather than report a speedup over a kernel nobody needs to compute.
#pragma once

#include <vector>

#include "check/compare.h"
#include "check/oracle.h"
#include "task/resolved.h"
#include "util/result.h"

namespace kevo {

// For each output of config `rc` with at least two elements: the constant of the mean of the
// oracle's finite values `want[o]`, every element written (no poison), compared with `want[o]` as
// a candidate's output is (compare_output, rc.tolerance). An error (ErrorCode::kParse: the task is
// at fault) names the config, the output and the band that let the constant through.
Status check_tolerance_rejects_constant(const ResolvedConfig& rc, const std::vector<Expected>& want);

// An output the op itself makes constant at a config (a softmax over one column is all ones) passes
// as its mean under any tolerance: bundled tasks hold such held-out edge configs on purpose, so
// the check belongs on the visible configs, where the op's outputs vary. One config may still be
// degenerate by its draw (a 3-channel conv + batch norm + ReLU whose channels are all negative):
// the task is refused only when a constant passes every config checked.
//
// The configs checked: the visible ones, smallest first, those up to 1M input elements (the
// smallest always), so the CPU reference answers in well under a second.
std::vector<const Config*> tolerance_check_configs(const Task& task);

// The check at load: for each of those configs, its inputs drawn on the host from `seed`, the
// oracle's outputs for them (host_outputs), then check_tolerance_rejects_constant, until one
// rejects the constant. An error (ErrorCode::kParse) when none does, naming the smallest; an
// oracle that fails is an error too (not kParse: the task's tolerance is not known to be at fault;
// the evaluator leaves it to the correctness phase).
Status check_tolerance_at_load(const Task& task, Oracle& oracle, uint64_t seed);

}  // namespace kevo
