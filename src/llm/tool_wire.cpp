#include "llm/tool_wire.h"

#include "llm/protocol.h"

namespace kevo::llm {

using nlohmann::json;

json tool_arguments(const std::string& text) {
  json j = json::parse(text.empty() ? std::string("{}") : text, nullptr, false);
  return !j.is_discarded() && j.is_object() ? j : json();
}

json tool_schema(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  return !j.is_discarded() && j.is_object() ? j : json{{"type", "object"}, {"properties", json::object()}};
}

json openai_tools(const std::vector<ToolDef>& tools) {
  json out = json::array();
  for (const auto& t : tools)
    out.push_back({{"type", "function"},
                   {"function", {{"name", t.name}, {"description", t.description}, {"parameters", tool_schema(t.parameters_json)}}}});
  return out;
}

void openai_append_message(json& messages, const Message& m) {
  for (const auto& r : m.tool_results)  // the answers to the previous turn's calls come first
    messages.push_back({{"role", "tool"}, {"tool_call_id", r.call_id},
                        {"content", r.is_error ? "error: " + r.content : r.content}});
  if (m.role == Role::kUser && !m.tool_results.empty() && m.content.empty()) return;
  json msg = {{"role", m.role == Role::kUser ? "user" : "assistant"}, {"content", m.content}};
  if (m.role == Role::kAssistant && !m.tool_calls.empty()) {
    json calls = json::array();
    for (const auto& c : m.tool_calls)
      calls.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    msg["tool_calls"] = calls;
    if (m.content.empty()) msg["content"] = nullptr;
  }
  messages.push_back(std::move(msg));
}

std::vector<ToolCall> openai_tool_calls(const json& message) {
  std::vector<ToolCall> out;
  auto calls = message.find("tool_calls");
  if (calls == message.end() || !calls->is_array()) return out;
  for (const auto& c : *calls) {
    if (!c.is_object()) continue;
    const json fn = c.value("function", json::object());
    ToolCall t;
    t.id = json_str(c, "id");
    t.name = fn.is_object() ? json_str(fn, "name") : "";
    t.arguments = fn.is_object() ? json_str(fn, "arguments") : "";
    t.arguments_valid = !tool_arguments(t.arguments).is_null();
    out.push_back(std::move(t));
  }
  return out;
}

json anthropic_tools(const std::vector<ToolDef>& tools) {
  json out = json::array();
  for (const auto& t : tools)
    out.push_back({{"name", t.name}, {"description", t.description}, {"input_schema", tool_schema(t.parameters_json)}});
  return out;
}

json anthropic_message(const Message& m) {
  const char* role = m.role == Role::kUser ? "user" : "assistant";
  if (m.tool_calls.empty() && m.tool_results.empty()) return {{"role", role}, {"content", m.content}};
  json blocks = json::array();
  for (const auto& r : m.tool_results)  // tool_result blocks come first in their user turn
    blocks.push_back({{"type", "tool_result"}, {"tool_use_id", r.call_id}, {"content", r.content}, {"is_error", r.is_error}});
  if (!m.content.empty()) blocks.push_back({{"type", "text"}, {"text", m.content}});
  for (const auto& c : m.tool_calls) {
    json input = tool_arguments(c.arguments);
    blocks.push_back({{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", input.is_null() ? json::object() : input}});
  }
  return {{"role", role}, {"content", blocks}};
}

ToolCall anthropic_tool_call(const json& block) {
  ToolCall t;
  t.id = json_str(block, "id");
  t.name = json_str(block, "name");
  auto in = block.find("input");
  t.arguments_valid = in != block.end() && in->is_object();
  t.arguments = in != block.end() ? in->dump(-1, ' ', false, json::error_handler_t::replace) : "";
  return t;
}

}  // namespace kevo::llm
