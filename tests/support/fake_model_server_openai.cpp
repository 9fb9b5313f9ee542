// OpenAI Responses, as its streaming reference documents it: every event carries a type and a
// sequence_number; output items are announced (output_item.added), filled (function-call argument
// deltas, or a message's content part and text deltas), closed (output_item.done), and the stream
// ends with response.completed holding the whole output and the usage. There is no [DONE] line.
#include <fmt/format.h>

#include "support/fake_model_server_wire.h"

namespace kevo::test {

using nlohmann::json;

namespace {

constexpr size_t kArgsPiece = 256;

struct Stream {
  WireAnswer a;
  int seq = 0;
  void event(const std::string& type, json data) {
    data["type"] = type;
    data["sequence_number"] = seq++;
    a.chunks.push_back(sse_event(type, data));
  }
};

json response_object(const json& body, size_t k, const std::string& status, const json& output) {
  json r = {{"id", fmt::format("resp_kevo_{}", k)},
            {"object", "response"},
            {"created_at", 1764547200},
            {"status", status},
            {"model", body.value("model", std::string("kevo-fake-model"))},
            {"output", output}};
  if (status == "completed") {
    const int in = static_cast<int>(body.dump().size() / 4), out = 20;
    r["usage"] = {{"input_tokens", in},
                  {"input_tokens_details", {{"cached_tokens", 0}}},
                  {"output_tokens", out},
                  {"output_tokens_details", {{"reasoning_tokens", 0}}},
                  {"total_tokens", in + out}};
  }
  return r;
}

json function_call_item(const OfferedTool& tool, const std::string& call_id, const std::string& item_id,
                        const std::string& args, const std::string& status) {
  json item = {{"type", "function_call"}, {"id", item_id},   {"call_id", call_id},
               {"name", tool.name},       {"arguments", args}, {"status", status}};
  if (!tool.name_space.empty()) item["namespace"] = tool.name_space;
  return item;
}

json stream_call(Stream& s, size_t index, const OfferedTool& tool, const ScriptedToolCall& call, size_t k) {
  const std::string call_id = tool_call_id("call_", k, index), item_id = tool_call_id("fc_", k, index);
  const std::string args = call.wire_arguments();
  s.event("response.output_item.added",
          {{"output_index", index}, {"item", function_call_item(tool, call_id, item_id, "", "in_progress")}});
  for (size_t off = 0; off < args.size(); off += kArgsPiece)
    s.event("response.function_call_arguments.delta",
            {{"item_id", item_id}, {"output_index", index}, {"delta", args.substr(off, kArgsPiece)}});
  s.event("response.function_call_arguments.done",
          {{"item_id", item_id}, {"output_index", index}, {"arguments", args}});
  json done = function_call_item(tool, call_id, item_id, args, "completed");
  s.event("response.output_item.done", {{"output_index", index}, {"item", done}});
  return done;
}

json stream_text(Stream& s, const std::string& text, size_t k) {
  const std::string id = fmt::format("msg_kevo_{}", k);
  json part = {{"type", "output_text"}, {"text", ""}, {"annotations", json::array()}};
  auto at = [&](const char* key, json value) {  // the content part's location, and one field
    return json{{"item_id", id}, {"output_index", 0}, {"content_index", 0}, {key, std::move(value)}};
  };
  s.event("response.output_item.added",
          {{"output_index", 0},
           {"item", {{"type", "message"}, {"id", id}, {"status", "in_progress"}, {"role", "assistant"},
                     {"content", json::array()}}}});
  s.event("response.content_part.added", at("part", part));
  s.event("response.output_text.delta", at("delta", text));
  s.event("response.output_text.done", at("text", text));
  part["text"] = text;
  s.event("response.content_part.done", at("part", part));
  json item = {{"type", "message"}, {"id", id}, {"status", "completed"}, {"role", "assistant"},
               {"content", json::array({part})}};
  s.event("response.output_item.done", {{"output_index", 0}, {"item", item}});
  return item;
}

}  // namespace

std::vector<std::string> openai_tool_results(const json& body) {
  std::vector<std::string> ids;
  if (!body.contains("input") || !body["input"].is_array()) return ids;
  for (const auto& item : body["input"])
    if (item.is_object() && item.value("type", "") == "function_call_output" && item.contains("call_id") &&
        item["call_id"].is_string())
      ids.push_back(item["call_id"].get<std::string>());
  return ids;
}

bool openai_offers_tools(const json& body) {
  return body.contains("tools") && body["tools"].is_array() && !body["tools"].empty();
}

// A function tool at the top level ("mcp__kevo__task" or "task"), or inside a namespace tool
// ({"type": "namespace", "name": "mcp__kevo", "tools": [...]}).
std::optional<OfferedTool> openai_find_tool(const json& body, const std::string& server, const std::string& tool) {
  if (!openai_offers_tools(body)) return std::nullopt;
  const std::string ns = "mcp__" + server, full = ns + "__" + tool;
  for (const auto& t : body["tools"]) {
    if (!t.is_object()) continue;
    const std::string name = t.value("name", "");
    if (t.value("type", "") == "namespace" && name == ns && t.contains("tools") && t["tools"].is_array()) {
      for (const auto& inner : t["tools"])
        if (inner.is_object() && (inner.value("name", "") == tool || inner.value("name", "") == full))
          return OfferedTool{inner.value("name", ""), ns};
    } else if (name == full || name == tool) {
      return OfferedTool{name, ""};
    }
  }
  return std::nullopt;
}

WireAnswer openai_answer(const ScriptedTurn& turn, size_t k, const std::vector<OfferedTool>& tools, const json& body) {
  Stream s;
  s.event("response.created", {{"response", response_object(body, k, "in_progress", json::array())}});
  json output = json::array();
  if (turn.tool_calls.empty()) output.push_back(stream_text(s, turn.text, k));
  for (size_t i = 0; i < turn.tool_calls.size(); ++i) output.push_back(stream_call(s, i, tools[i], turn.tool_calls[i], k));
  s.event("response.completed", {{"response", response_object(body, k, "completed", output)}});
  return s.a;
}

WireAnswer openai_text(const std::string& text, const json& body) {
  ScriptedTurn t;
  t.text = text;
  return openai_answer(t, 9999, {}, body);
}

WireAnswer openai_error(int status, const std::string& type, const std::string& message) {
  WireAnswer a;
  a.status = status;
  a.content_type = "application/json";
  a.chunks.push_back(json{{"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", nullptr}}}}.dump());
  return a;
}

}  // namespace kevo::test
