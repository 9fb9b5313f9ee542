#include "cli/evolve_launch.h"

#include <fmt/format.h>

#include "util/json_fields.h"

namespace kevo::cli {

using nlohmann::json;

json EvolveLaunch::to_json() const {
  return {{"models", models},
          {"overrides", overrides},
          {"llm_mode", llm_mode},
          {"llm_toml", llm_toml},
          {"verifier_model", verifier_model},
          {"fake_gpu", fake_gpu},
          {"gpus", pool.gpus},
          {"evals_per_gpu", pool.evals_per_gpu},
          {"queue", pool.queue},
          {"queue_slots", pool.queue_slots}};
}

namespace {

// A list of strings at key (empty when missing); another type: an error naming the field.
Status strings(const json& j, const char* key, std::vector<std::string>& out) {
  if (!j.contains(key) || j[key].is_null()) return {};
  const json& v = j[key];
  if (!v.is_array()) return fail("launch: field '{}' is {}, expected a list of strings", key, v.type_name());
  for (const auto& s : v) {
    if (!s.is_string()) return fail("launch: field '{}' holds a {}, expected strings", key, s.type_name());
    out.push_back(s.get<std::string>());
  }
  return {};
}

}  // namespace

Result<EvolveLaunch> EvolveLaunch::from_json(const json& j) {
  EvolveLaunch l;
  JsonFields f(j, "launch");
  if (j.is_object()) {
    KEVO_TRY(strings(j, "models", l.models));
    KEVO_TRY(strings(j, "overrides", l.overrides));
  }
  l.llm_mode = f.get("llm_mode", l.llm_mode);
  l.llm_toml = f.get("llm_toml", l.llm_toml);
  l.verifier_model = f.get("verifier_model", l.verifier_model);
  l.fake_gpu = f.get("fake_gpu", l.fake_gpu);
  l.pool.gpus = f.get("gpus", l.pool.gpus);
  l.pool.evals_per_gpu = f.get("evals_per_gpu", l.pool.evals_per_gpu);
  l.pool.queue = f.get("queue", l.pool.queue);
  l.pool.queue_slots = f.get("queue_slots", l.pool.queue_slots);
  KEVO_TRY(f.status());
  return l;
}

std::string resume_command(int64_t run_id, const std::string& db) {
  // Quoted for a shell when the path holds anything but the plain characters of a path or URL.
  const bool plain = !db.empty() && db.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                          "0123456789_./:@%+=,-") == std::string::npos;
  std::string quoted = "'";
  for (char c : db) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return fmt::format("kevo evolve --resume {} --db {}", run_id, plain ? db : quoted + "'");
}

}  // namespace kevo::cli
