#include "results/run_final.h"

#include "results/stored_json.h"

namespace kevo::results {

using nlohmann::json;

namespace {

VerifyAttempt attempt_of(const json& a) {
  VerifyAttempt v{integer(a, "candidate"), store::candidate_outcome_or_unknown(text(a, "outcome")),
                  text(a, "reason"), text(a, "message"), number(a, "speedup"), std::nullopt};
  const json& ci = member(a, "speedup_ci");
  if (ci.is_array() && ci.size() == 2 && ci[0].is_number() && ci[1].is_number())
    v.speedup_ci = std::pair{ci[0].get<double>(), ci[1].get<double>()};
  return v;
}

}  // namespace

RunFinal final_from_json(const json& j) {
  RunFinal f;
  if (!j.is_object()) return f;
  f.recorded = true;
  f.winner = integer(j, "winner");
  f.winner_speedup = number(j, "winner_speedup");
  f.best_failed_held_out = flag(j, "best_failed_held_out");
  f.not_faster = flag(j, "not_faster");
  if (const json& a = member(j, "attempts"); a.is_array())
    for (const auto& x : a) f.attempts.push_back(attempt_of(x));
  f.winner_pytorch = member(j, "winner_pytorch");
  return f;
}

RunFinal final_from_text(const std::string& stored_text) {
  if (stored_text.empty()) return {};
  return final_from_json(json::parse(stored_text, nullptr, false));
}

}  // namespace kevo::results
