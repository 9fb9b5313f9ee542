#include "evolve/stored_outcome.h"

namespace kevo {

using store::CandidateOutcome;

CandidateOutcome stored_outcome(Outcome o) {
  switch (o) {
    case Outcome::Pass: return CandidateOutcome::kPass;
    case Outcome::CompileError: return CandidateOutcome::kCompileError;
    case Outcome::Incorrect: return CandidateOutcome::kIncorrect;
    case Outcome::Unsafe: return CandidateOutcome::kUnsafe;
    case Outcome::Timeout: return CandidateOutcome::kTimeout;
    case Outcome::Crash: return CandidateOutcome::kCrash;
    case Outcome::InfraError: return CandidateOutcome::kInfraError;
  }
  return CandidateOutcome::kUnknown;
}

}  // namespace kevo
