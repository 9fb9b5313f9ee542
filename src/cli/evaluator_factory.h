// The evaluator a command judges candidates with: the GPU checker, or with --fake-gpu the
// marker-driven double whose verdicts come from `// fake:` comments (CPU tests, dry runs).
// Every command chooses it here, so the two never differ between commands.
#pragma once

#include <memory>

#include "evolve/candidate_evaluator.h"

namespace kevo::cli {

std::unique_ptr<evolve::CandidateEvaluator> make_evaluator(bool fake_gpu);
// The same, and with --fake-gpu says on stderr, as `prog`, that the run proves nothing.
std::unique_ptr<evolve::CandidateEvaluator> make_evaluator_said(bool fake_gpu, const char* prog);

}  // namespace kevo::cli
