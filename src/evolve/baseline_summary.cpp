#include "evolve/baseline_summary.h"

#include <utility>

#include "check/kernel_profile.h"

namespace kevo::evolve {

using nlohmann::json;

json baseline_summary(const Verdict& v, bool fake) {
  json j = {{"outcome", outcome_name(v.outcome)}, {"reason", v.reason_text()}, {"message", v.message},
            {"fake_evaluator", fake}};
  if (v.device) j["gpu"] = v.device->name;
  if (v.compile) j["arch"] = v.compile->arch_used;
  if (v.timing) {
    j["time_ms"] = v.timing->candidate.median;
    j["sol_floor_ms"] = v.timing->floor.floor_ms;
    j["sol_bound"] = v.timing->floor.bound ? v.timing->floor.bound : "";
  }
  if (v.profile) j["profile"] = v.profile->to_json();
  // Which configs were checked against the reference and which only against the baseline itself
  // (over the host budget): a reader of a reused record sees what "verified" meant.
  j["configs"] = json::object();
  for (const auto& c : v.configs) j["configs"][c.config] = to_string(c.against);
  return j;
}

Verdict verdict_from_summary(const json& j) {
  Verdict v;
  if (j.contains("gpu")) v.device = DeviceCeilings{.name = j.value("gpu", "")};
  if (j.contains("arch")) v.compile = CompileResult{.ok = true, .arch_used = j.value("arch", "")};
  if (j.contains("time_ms")) {
    Timing t;
    t.candidate.median = j.value("time_ms", 0.0);
    t.floor.floor_ms = j.value("sol_floor_ms", 0.0);
    t.floor.bound = j.value("sol_bound", "") == "compute" ? "compute" : "memory";
    v.timing = t;
  }
  if (j.contains("profile"))  // advice only: a damaged one is left out
    if (auto p = profile_from_json(j["profile"])) v.profile = std::move(*p);
  return v;
}

}  // namespace kevo::evolve
