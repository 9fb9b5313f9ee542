#include "results/run_config.h"

#include "results/stored_json.h"

namespace kevo::results {

using nlohmann::json;

namespace {

std::optional<int64_t> count_at(const json& j, const char* key) {
  const json& v = member(j, key);
  return v.is_number_integer() ? std::optional<int64_t>(v.get<int64_t>()) : std::nullopt;
}

std::optional<double> amount_at(const json& j, const char* key) {
  const json& v = member(j, key);
  return v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt;
}

}  // namespace

RunConfig config_from_json(const json& j) {
  RunConfig c;
  c.llm = text(j, "llm");
  c.fake_evaluator = flag(j, "fake_evaluator");
  c.seed = member(j, "seed").is_number_unsigned() ? member(j, "seed").get<uint64_t>() : 0;
  const json& b = member(j, "budgets");
  c.budgets = {count_at(b, "max_candidates"), count_at(b, "max_calls"), count_at(b, "max_tokens"),
               amount_at(b, "max_usd"), amount_at(b, "max_minutes")};
  return c;
}

RunConfig config_from_text(const std::string& stored_text) { return config_from_json(parse_object(stored_text)); }

}  // namespace kevo::results
