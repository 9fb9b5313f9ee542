#include "results/run_baseline.h"

#include "results/stored_json.h"

namespace kevo::results {

using nlohmann::json;

namespace {

void read_figures(const json& j, RunBaseline& b) {
  b.gpu = text(j, "gpu");
  b.arch = text(j, "arch");
  if (member(j, "time_ms").is_number()) b.time_ms = number(j, "time_ms");
  b.sol_floor_ms = number(j, "sol_floor_ms");
  b.sol_bound = text(j, "sol_bound");
  b.profile = member(j, "profile");
  if (const json& c = member(j, "configs"); c.is_object())
    for (const auto& [name, against] : c.items())
      b.configs.emplace_back(name, parse_against(against.is_string() ? against.get<std::string>() : "")
                                       .value_or(Against::kOracle));
}

void read_extras(const json& j, RunBaseline& b) {
  if (const json& r = member(j, "reused"); r.is_object()) b.reused = RunBaseline::Reuse{number(r, "verified_at"), member(r, "key")};
  if (member(j, "pytorch").is_object()) b.pytorch = member(j, "pytorch");
  if (member(j, "torch_time_ms").is_number()) b.torch_time_ms = number(j, "torch_time_ms");
}

}  // namespace

PytorchTimes RunBaseline::pytorch_times() const {
  PytorchTimes t{positive(pytorch, "eager_ms"), positive(pytorch, "compile_ms"), positive(pytorch, "extension_ms"),
                 text(pytorch, "skipped")};
  if (!t.eager_ms && torch_time_ms && *torch_time_ms > 0) t.eager_ms = torch_time_ms;
  return t;
}

json RunBaseline::to_json() const {
  json j = {{"outcome", store::to_string(outcome)}, {"reason", reason}, {"message", message},
            {"fake_evaluator", fake_evaluator}, {"configs", json::object()}};
  if (!gpu.empty()) j["gpu"] = gpu;
  if (!arch.empty()) j["arch"] = arch;
  if (time_ms) {
    j["time_ms"] = *time_ms;
    j["sol_floor_ms"] = sol_floor_ms;
    j["sol_bound"] = sol_bound;
  }
  if (!profile.is_null()) j["profile"] = profile;
  for (const auto& [name, against] : configs) j["configs"][name] = to_string(against);
  if (reused) j["reused"] = {{"verified_at", reused->verified_at}, {"key", reused->key}};
  if (!pytorch.is_null()) j["pytorch"] = pytorch;
  if (torch_time_ms) j["torch_time_ms"] = *torch_time_ms;
  return j;
}

RunBaseline baseline_from_json(const json& j) {
  RunBaseline b;
  if (!j.is_object()) return b;
  b.recorded = true;
  const std::string outcome = text(j, "outcome");
  b.outcome = outcome.empty() ? store::CandidateOutcome::kPass : store::candidate_outcome_or_unknown(outcome);
  b.reason = text(j, "reason");
  b.message = text(j, "message");
  b.fake_evaluator = flag(j, "fake_evaluator");
  read_figures(j, b);
  read_extras(j, b);
  return b;
}

RunBaseline baseline_from_text(const std::string& stored_text) {
  if (stored_text.empty()) return {};
  return baseline_from_json(json::parse(stored_text, nullptr, false));
}

}  // namespace kevo::results
