// Whether a task's tolerance means anything on a config: a kernel that computes nothing and writes
// one constant everywhere must fail the comparison a candidate gets. With the default f32
// tolerance (|out-ref| <= 1e-4 * max(1, rms(ref)) + 1e-4 * |ref|), outputs far below 1 (a softmax
// over 30,000 classes, ~3e-5 each) sit inside the absolute band, and the constant of their mean
// passes every check; a run on such a task converges on the constant. This lets a checker refuse
// to time such a task rather than report a speedup over a kernel nobody needs to compute (the
// evaluator does not call it: the import's lint is what refuses such tasks today).
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
// the check belongs on the visible configs, where the op's outputs vary.
//
// The check at load, for one config: its inputs drawn on the host from `seed`, the oracle's
// outputs for them (host_outputs), then check_tolerance_rejects_constant. An oracle that fails is
// an error too (not ErrorCode::kParse: the task's tolerance is not known to be at fault).
Status check_tolerance_at_load(const Task& task, const Config& c, Oracle& oracle, uint64_t seed);

}  // namespace kevo
