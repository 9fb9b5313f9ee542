// `kevo task lint`: filters for degenerate tasks (after robust-kbench), run over a task's reference
// outputs on its small configurations.
//
// A task is degenerate when a kernel that does not really compute the op would still pass the
// checker. Every filter therefore asks "would this shortcut pass the task's own comparison?", using
// the task's tolerance (check/compare.h) rather than a fixed threshold:
//   nonfinite        the reference produces NaN/Inf on ordinary inputs;
//   tiny_band        writing one constant (zero, or the outputs' mean) everywhere passes;
//   seed_constant    the outputs for one input draw pass as the outputs for other draws;
//   uniform_axis     broadcasting one slice (or the mean) along an axis passes;
//   input_unused     redrawing one input leaves the outputs within tolerance;
//   backward_pair, reduction_tolerance   a backward task only (lint/backward_lint.h);
//   baseline         the baseline's outputs do not match the reference's (needs a GPU: the
//                    baseline's outputs come through a callback, see lint_baseline).
// A property that holds on every checked configuration fails the task (the shortcut passes the
// whole check); one that holds on some configurations only is a warning (those configurations
// test less than they seem to).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "task/task.h"
#include "task/tensor.h"
#include "util/result.h"

namespace kevo {

// Outputs (as doubles, one vector per task output) for a config and its inputs: the CPU
// reference, a GPU run of the baseline, or a fixed table in tests.
using OutputsFn = std::function<Result<std::vector<std::vector<double>>>(
    const Config&, const std::vector<HostTensor>&)>;

struct LintOptions {
  int seeds = 3;                     // input draws compared by seed_constant (>= 2)
  int64_t max_elements = 1 << 22;    // skip configs with more input+output elements than this...
  int max_configs = 3;               // ...and check at most this many (smallest first)
  bool include_held_out = true;      // held-out configs are candidates too
  std::vector<std::string> configs;  // if set: exactly these configs (by name), no size limit
  uint64_t seed = 20240601;          // base seed of the draws (deterministic lint)
};

enum class Severity { Skip, Pass, Warn, Fail };  // Skip: not run here (e.g. needs a GPU)

struct LintFinding {
  std::string check;  // "tiny_band", "seed_constant", ...
  Severity severity = Severity::Pass;
  std::string message;  // what holds, on which configs, for which output/input
  std::vector<std::string> keys;  // where it holds on some config: "output 'y'", "input 'w'", ...
};

struct LintReport {
  std::string task;
  std::vector<std::string> configs;   // the configs checked
  std::vector<LintFinding> findings;  // every check run, passes included
  bool ok() const;                    // no Fail
  int count(Severity s) const;
};

// The degenerate-output filters over `outputs` (normally cpu_reference_outputs). Errors mean the
// lint could not run (bad task, reference failure), not that the task is degenerate.
Result<LintReport> lint_outputs(const Task& task, const OutputsFn& outputs,
                                const LintOptions& opts = {});

// Baseline vs reference on the same inputs, with the task's tolerance: Fail on any config where
// they disagree. `baseline` is meant to run the task's baseline.cu on a GPU (the evaluator's
// oracle path); on a machine without one the CLI reports this check as skipped.
Result<LintFinding> lint_baseline(const Task& task, const OutputsFn& reference,
                                  const OutputsFn& baseline, const LintOptions& opts = {});

// Compiles the task's reference.cpp (host compiler, kevo's compile cache) and returns a function
// running it in-process.
Result<OutputsFn> cpu_reference_outputs(const Task& task);

// The configs lint_outputs would check, by name (for messages and tests).
std::vector<const Config*> lint_configs(const Task& task, const LintOptions& opts);

const char* to_string(Severity s);  // "SKIP", "PASS", "WARN", "FAIL"
// Multi-line human-readable report ("PASS tiny_band ...").
std::string format_report(const LintReport& r);

}  // namespace kevo
