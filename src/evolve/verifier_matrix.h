// The verifier's confusion matrix is read-side code and lives in results/verifier_matrix.h; these
// names let the engine's sources, which write the "verifier" events, keep naming it from evolve.
#pragma once

#include "results/verifier_matrix.h"

namespace kevo::evolve {

using results::CheckerTruth;
using results::checker_truth;
using results::kVerifierEvent;
using results::VerifierMatrix;
using results::verifier_matrix;

}  // namespace kevo::evolve
