// OpenAI Chat Completions as its API reference documents it, without streaming: the request's
// tools are `{"type": "function", "function": {"name", "description", "parameters"}}`, a tool's
// result comes back as a `{"role": "tool", "tool_call_id", "content"}` message, and the answer is
// a chat.completion whose first choice's message holds `tool_calls: [{"id", "type": "function",
// "function": {"name", "arguments"}}]` (arguments as a JSON text) with finish_reason "tool_calls".
#include <fmt/format.h>

#include "support/fake_model_server_wire.h"

namespace kevo::test {

using nlohmann::json;

namespace {

WireAnswer completion(const json& body, size_t k, json message, const char* finish) {
  const int in = static_cast<int>(body.dump().size() / 4), out = 20;
  json r = {{"id", fmt::format("chatcmpl-kevo-{}", k)},
            {"object", "chat.completion"},
            {"created", 1764547200},
            {"model", body.value("model", std::string("kevo-fake-model"))},
            {"choices", json::array({{{"index", 0}, {"message", std::move(message)}, {"logprobs", nullptr},
                                      {"finish_reason", finish}}})},
            {"usage", {{"prompt_tokens", in}, {"completion_tokens", out}, {"total_tokens", in + out}}}};
  WireAnswer a;
  a.content_type = "application/json";
  a.chunks.push_back(r.dump());
  return a;
}

}  // namespace

std::vector<std::string> chat_tool_results(const json& body) {
  std::vector<std::string> ids;
  if (!body.contains("messages") || !body["messages"].is_array()) return ids;
  for (const auto& m : body["messages"])
    if (m.is_object() && m.value("role", "") == "tool" && m.contains("tool_call_id") && m["tool_call_id"].is_string())
      ids.push_back(m["tool_call_id"].get<std::string>());
  return ids;
}

bool chat_offers_tools(const json& body) {
  return body.contains("tools") && body["tools"].is_array() && !body["tools"].empty();
}

std::optional<OfferedTool> chat_find_tool(const json& body, const std::string& /*server*/, const std::string& tool) {
  if (!chat_offers_tools(body)) return std::nullopt;
  for (const auto& t : body["tools"])
    if (t.is_object() && t.value("type", "") == "function" && t.contains("function") &&
        t["function"].value("name", "") == tool)
      return OfferedTool{tool, ""};
  return std::nullopt;
}

WireAnswer chat_answer(const ScriptedTurn& turn, size_t k, const std::vector<OfferedTool>& tools, const json& body) {
  if (turn.tool_calls.empty())
    return completion(body, k, {{"role", "assistant"}, {"content", turn.text}, {"refusal", nullptr}}, "stop");
  json calls = json::array();
  for (size_t i = 0; i < turn.tool_calls.size(); ++i)
    calls.push_back({{"id", tool_call_id("call_", k, i)},
                     {"type", "function"},
                     {"function", {{"name", tools[i].name}, {"arguments", turn.tool_calls[i].wire_arguments()}}}});
  return completion(body, k, {{"role", "assistant"}, {"content", nullptr}, {"refusal", nullptr}, {"tool_calls", calls}},
                    "tool_calls");
}

WireAnswer chat_text(const std::string& text, const json& body) {
  ScriptedTurn t;
  t.text = text;
  return chat_answer(t, 9999, {}, body);
}

}  // namespace kevo::test
