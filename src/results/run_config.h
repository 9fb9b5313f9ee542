// A run's stored configuration (RunRow::config_json) as the read side needs it: the model, whether
// the marker evaluator stood in, and the budgets. The engine writes the whole configuration and
// reads it back to resume (evolve/engine.h options_of_run); this is the tolerant reader for
// tables, the report and `kevo serve`: a missing or mistyped field reads as unset.
// Thread-safety: plain data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace kevo::results {

// The budgets a run was started with (evolve/engine.h Budgets); unset: no such limit.
struct RunBudgets {
  std::optional<int64_t> max_candidates, max_calls, max_tokens;
  std::optional<double> max_usd, max_minutes;
};

struct RunConfig {
  std::string llm;              // the model or ensemble name; "" without one (offline tuning)
  bool fake_evaluator = false;  // verdicts came from `// fake:` markers: they prove nothing
  uint64_t seed = 0;
  RunBudgets budgets;
};

RunConfig config_from_json(const nlohmann::json& j);
RunConfig config_from_text(const std::string& stored_text);

}  // namespace kevo::results
