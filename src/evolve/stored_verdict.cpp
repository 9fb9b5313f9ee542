#include "evolve/stored_verdict.h"

#include <algorithm>

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

results::RunBaseline stored_baseline(const Verdict& v, bool fake) {
  results::RunBaseline b;
  b.recorded = true;
  b.outcome = stored_outcome(v.outcome);
  b.reason = v.reason_text();
  b.message = v.message;
  b.fake_evaluator = fake;
  if (v.device) b.gpu = v.device->name;
  if (v.compile) b.arch = v.compile->arch_used;
  if (v.timing) {
    b.time_ms = v.timing->candidate.median;
    b.sol_floor_ms = v.timing->floor.floor_ms;
    b.sol_bound = v.timing->floor.bound ? v.timing->floor.bound : "";
  }
  if (v.profile) b.profile = v.profile->to_json();
  // Which configs were checked against the reference and which only against the baseline itself
  // (over the host budget): a reader of a reused record sees what "verified" meant.
  for (const auto& c : v.configs)
    b.configs.emplace_back(c.config, c.against == CheckedAgainst::kConsistency ? results::Against::kConsistency
                                                                                : results::Against::kOracle);
  std::sort(b.configs.begin(), b.configs.end());
  return b;
}

Verdict baseline_verdict(const results::RunBaseline& b) {
  Verdict v;
  if (!b.gpu.empty()) v.device = DeviceCeilings{.name = b.gpu};
  if (!b.arch.empty()) v.compile = CompileResult{.ok = true, .arch_used = b.arch};
  if (b.time_ms) {
    Timing t;
    t.candidate.median = *b.time_ms;
    t.floor.floor_ms = b.sol_floor_ms;
    t.floor.bound = b.sol_bound == "compute" ? "compute" : "memory";
    v.timing = t;
  }
  if (!b.profile.is_null())
    if (auto p = profile_from_json(b.profile)) v.profile = std::move(*p);
  return v;
}

}  // namespace kevo
