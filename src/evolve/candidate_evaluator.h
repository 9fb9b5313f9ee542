// What the engine asks of "the GPU": evaluate one candidate file under the checker, evaluate the
// task's baseline once (its time and the device go into the prompt), and optionally warm the
// compile cache ahead of the GPU queue. The real implementation calls kevo::evaluate; the marker
// evaluator (marker_evaluator.h) derives verdicts from comments so the loop runs without a GPU.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "check/evaluator.h"
#include "check/verdict.h"
#include "task/task.h"

namespace kevo::evolve {

class CandidateEvaluator {
 public:
  virtual ~CandidateEvaluator() = default;
  // Thread-compatible: the engine calls evaluate() from one thread at a time (the GPU is serial).
  virtual Verdict evaluate(const Task& task, const std::filesystem::path& source_file,
                           const EvalOptions& opts) = 0;
  // The baseline checked against its CPU reference and timed: the run's reference point.
  virtual Verdict evaluate_baseline(const Task& task, const EvalOptions& opts) = 0;
  // Compiles `source` into the cache so evaluate() finds it there. Called from proposal
  // threads, concurrently; must be thread-safe. Default: nothing to warm.
  virtual void warm(const Task&, const std::string& /*source*/) {}
  // The device's architecture ("sm_90") learned from a recorded baseline, so warm() can compile
  // ahead before this evaluator has run anything. Default: nothing to learn.
  virtual void remember_arch(const std::string& /*arch*/) {}
  // "CUDA 12.4" or empty when unknown (goes into the prompt).
  virtual std::string cuda_version() { return {}; }
  // What makes two sources the same program, so a repeat is not evaluated again. Default: the
  // code without comments and insignificant whitespace (fingerprint.h).
  virtual std::string fingerprint(const std::string& source) const;
  // True for test doubles: recorded in the run so a report never passes one off as a GPU result.
  virtual bool is_fake() const { return false; }
};

// kevo::evaluate on the local GPU, with a compile pool for warm().
std::unique_ptr<CandidateEvaluator> make_gpu_evaluator(int compile_threads);

}  // namespace kevo::evolve
