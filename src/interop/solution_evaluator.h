// The step of `kevo recheck` that judges one KernelBench solution against its problem's task. It
// is an interface because the real one needs a GPU and the Python candidate runtime (a runner
// process that loads the solution confined, times it and checks its outputs against the task's
// oracle): on a machine without it every solution gets `needs_gpu`, and tests use a fake that reads
// the verdict it should give from a marker in the solution file.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "interop/solution_verdict.h"
#include "task/task.h"

namespace kevo::interop {

class SolutionEvaluator {
 public:
  virtual ~SolutionEvaluator() = default;
  // Stored with each result: a result is reused only by the evaluator that produced it, so the
  // needs_gpu rows of a CPU machine are redone where a GPU evaluator runs.
  virtual std::string name() const = 0;
  virtual SolutionVerdict evaluate(const Task& task, const std::filesystem::path& solution) = 0;
};

// Every solution: needs_gpu, saying what is missing.
std::unique_ptr<SolutionEvaluator> needs_gpu_evaluator();

// For tests and dry runs (`--fake-gpu`): the verdict comes from the first line of the solution of
// the form `# kevo-fake: outcome=pass eager=2.1 compile=1.4 allclose=pass reason=...` (keys
// optional; eager/compile may be `2.1:1.9:2.3`, median, low, high); a file without one passes with
// speedup 1. Nothing of the solution is run.
std::unique_ptr<SolutionEvaluator> fake_solution_evaluator();

}  // namespace kevo::interop
