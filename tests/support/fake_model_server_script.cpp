#include "support/fake_model_server_script.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace kevo::test {

namespace {

Result<ScriptedToolCall> parse_call(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return fail("{}: not an object", where);
  if (!j.contains("tool") || !j["tool"].is_string() || j["tool"].get<std::string>().empty())
    return fail("{}.tool: missing or not a non-empty string", where);
  ScriptedToolCall c;
  c.tool = j["tool"].get<std::string>();
  c.arguments = j.value("arguments", nlohmann::json::object());
  if (!c.arguments.is_object()) return fail("{}.arguments: not an object", where);
  if (j.contains("raw_arguments")) {
    if (!j["raw_arguments"].is_string()) return fail("{}.raw_arguments: not a string", where);
    c.raw_arguments = j["raw_arguments"].get<std::string>();
  }
  c.unoffered = j.value("unoffered", false);
  return c;
}

Result<ScriptedTurn> parse_turn(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return fail("{}: not an object", where);
  ScriptedTurn t;
  if (j.contains("tool_calls")) {
    const auto& calls = j["tool_calls"];
    if (!calls.is_array() || calls.empty()) return fail("{}.tool_calls: not a non-empty array", where);
    for (size_t i = 0; i < calls.size(); ++i) {
      auto c = parse_call(calls[i], fmt::format("{}.tool_calls[{}]", where, i));
      if (!c) return c.unexpected();
      t.tool_calls.push_back(std::move(*c));
    }
  } else if (j.contains("text") && j["text"].is_string()) {
    t.text = j["text"].get<std::string>();
  } else {
    return fail("{}: neither tool_calls nor a text", where);
  }
  return t;
}

}  // namespace

Result<ModelScript> parse_model_script(const nlohmann::json& j) {
  if (!j.is_object()) return fail("script: not a JSON object");
  ModelScript s;
  s.server = j.value("server", std::string("kevo"));
  if (!j.contains("turns") || !j["turns"].is_array() || j["turns"].empty())
    return fail("script.turns: missing or not a non-empty array");
  for (size_t k = 0; k < j["turns"].size(); ++k) {
    auto t = parse_turn(j["turns"][k], fmt::format("turns[{}]", k));
    if (!t) return t.unexpected();
    // A final text ends the CLI's conversation: nothing could follow it.
    if (t->tool_calls.empty() && k + 1 != j["turns"].size())
      return fail("turns[{}]: a text turn must be the last", k);
    s.turns.push_back(std::move(*t));
  }
  return s;
}

Result<ModelScript> load_model_script(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return fail("{}: cannot read", file.string());
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded()) return fail("{}: not JSON", file.string());
  auto s = parse_model_script(j);
  if (!s) return fail("{}: {}", file.string(), s.error().message);
  return s;
}

std::string tool_call_id(const std::string& prefix, size_t turn, size_t i) {
  return fmt::format("{}kevo_{}_{}", prefix, turn, i);
}

std::optional<size_t> turn_for(const ModelScript& s, const std::string& id_prefix,
                               const std::vector<std::string>& results) {
  auto answered = [&](size_t k) {
    for (size_t i = 0; i < s.turns[k].tool_calls.size(); ++i)
      if (std::find(results.begin(), results.end(), tool_call_id(id_prefix, k, i)) == results.end()) return false;
    return !s.turns[k].tool_calls.empty();
  };
  for (size_t k = s.turns.size(); k-- > 0;)
    if (answered(k)) return k + 1 < s.turns.size() ? std::optional<size_t>(k + 1) : std::nullopt;
  return 0;
}

}  // namespace kevo::test
