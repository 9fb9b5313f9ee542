#include "cli/evaluator_factory.h"

#include <cstdio>

#include "evolve/marker_evaluator.h"

namespace kevo::cli {

std::unique_ptr<evolve::CandidateEvaluator> make_evaluator(bool fake_gpu) {
  if (fake_gpu) return std::make_unique<evolve::MarkerEvaluator>();
  return evolve::make_gpu_evaluator(0);
}

std::unique_ptr<evolve::CandidateEvaluator> make_evaluator_said(bool fake_gpu, const char* prog) {
  if (fake_gpu)
    std::fprintf(stderr, "%s: --fake-gpu: verdicts come from '// fake:' markers, not a GPU; "
                         "this run proves nothing about any kernel\n", prog);
  return make_evaluator(fake_gpu);
}

}  // namespace kevo::cli
