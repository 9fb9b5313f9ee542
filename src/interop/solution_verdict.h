// What `kevo recheck` (and later `kevo eval PROBLEM SOLUTION.py`) says of one KernelBench solution
// (a Python module defining ModelNew): the outcome, why, kevo's speedups against PyTorch eager and
// torch.compile of the problem's Model with their 95% intervals, and whether KernelBench's own
// check (allclose at atol = rtol = 1e-2) would pass the outputs kevo compared.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kevo::interop {

enum class SolutionOutcome {
  kPass,           // correct on every config and seed, within the task's tolerance
  kWrongOutput,    // an output differs from the reference's
  kFormat,         // breaks a rule of the format: a lazy or aliased result, an input changed, ...
  kCompileError,   // its inline sources do not build
  kCrash,          // its process died or raised
  kTimeout,        // a call did not return in time
  kNeedsGpu,       // not evaluated: no GPU runtime for Python candidates here
  kBadSolution,    // the file is no solution: unreadable, not Python, no class ModelNew
  kProblemError,   // its problem did not map to a file or did not import as a task
  kInfraError,     // kevo's side failed (the bridge, the runner)
};

const char* to_string(SolutionOutcome o);
std::optional<SolutionOutcome> parse_solution_outcome(std::string_view s);

// KernelBench's 1e-2 allclose over kevo's comparison: not known where nothing was compared.
enum class LooseCheck { kUnknown, kPass, kFail };
const char* to_string(LooseCheck c);
std::optional<LooseCheck> parse_loose_check(std::string_view s);

struct Speedup {
  double median = 0, low = 0, high = 0;  // baseline time / solution time, with its 95% interval
};

struct SolutionVerdict {
  SolutionOutcome outcome = SolutionOutcome::kInfraError;
  std::string reason;  // one line: what failed and where, or what passed
  std::optional<Speedup> vs_eager, vs_compile;
  LooseCheck kernelbench_allclose = LooseCheck::kUnknown;
};

}  // namespace kevo::interop
