#include "evolve/stored_verdict.h"

#include <nlohmann/json.hpp>

#include "compile/cache.h"
#include "evolve/features.h"

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

store::CandidateRow candidate_row(const Verdict& v, const std::string& source) {
  store::CandidateRow c;
  c.source = source;
  c.outcome = stored_outcome(v.outcome);
  c.reason = v.reason_text();
  c.message = v.message;
  if (v.compile) {
    nlohmann::json cj = *v.compile;
    cj.erase("log");  // the full compiler log is large; diagnostics keep what matters
    c.compile_json = cj.dump();
  }
  c.verdict_json = v.to_json().dump();
  evolve::KernelFeatures f = evolve::extract_features(source, v.compile ? v.compile->kernels : std::vector<KernelResources>{},
                                      v.compile.has_value());
  c.features_json = f.to_json().dump();
  nlohmann::json flags = nlohmann::json::array();
  for (const auto& fl : v.flags) flags.push_back({{"reason", fl.reason_text()}, {"detail", fl.detail}});
  c.flags_json = flags.dump();
  return c;
}

}  // namespace kevo
